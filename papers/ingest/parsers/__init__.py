"""Feed parsers: pure functions from a response body (bytes) to a :class:`ParsedFeed`.

No database and no network. One module per format, keyed like ``Source.Kind``; what they
share (the hardened loading, entries and their damage, bounds, small helpers) is in
:mod:`papers.ingest.parsers.common`.

- :func:`parse_arxiv_api` — Atom from export.arxiv.org/api/query (2016 and 2026 formats).
- :func:`parse_arxiv_rss` — arXiv RSS 2.0 listings (rss.arxiv.org).
- :func:`parse_oai_pmh` — OAI-PMH ``ListRecords`` with ``metadataPrefix=arXiv``.
- :func:`parse_feed` — any ordinary RSS / Atom feed (research blogs), through feedparser.
"""

from papers.ingest.items import FeedError, ParsedFeed, RawItem, Rejection
from papers.ingest.parsers.arxiv_api import parse_arxiv_api
from papers.ingest.parsers.arxiv_rss import parse_arxiv_rss
from papers.ingest.parsers.common import HTML_PAGE
from papers.ingest.parsers.feed import parse_feed
from papers.ingest.parsers.oai_pmh import parse_oai_pmh

__all__ = [
    "HTML_PAGE",
    "FeedError",
    "ParsedFeed",
    "RawItem",
    "Rejection",
    "parse_arxiv_api",
    "parse_arxiv_rss",
    "parse_feed",
    "parse_oai_pmh",
]
