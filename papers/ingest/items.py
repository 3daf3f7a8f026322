"""What parsers hand to the rest of ingest: plain data, no database."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field


@dataclass
class RawItem:
    """One entry as a source described it, after parsing and light normalisation.

    ``arxiv_id`` is without version (``2610.01234`` or ``cs/0701001``); ``version`` is the
    integer after ``v`` when the source gave one. Text fields have their whitespace collapsed.
    """

    title: str
    arxiv_id: str = ""
    version: int | None = None
    doi: str = ""
    url: str = ""  # the item's own page (abstract page for arXiv, post URL for a blog)
    abstract: str = ""
    authors: list[str] = field(default_factory=list)
    affiliations: list[str] = field(default_factory=list)  # all authors' affiliations, in order
    categories: list[str] = field(default_factory=list)
    primary_category: str = ""
    published: dt.datetime | None = None
    updated: dt.datetime | None = None
    abs_url: str = ""
    pdf_url: str = ""
    comment: str = ""
    journal_ref: str = ""
    announce_type: str = ""  # arXiv RSS: new, cross, replace, replace-cross
    license: str = ""
    source_key: str = ""  # how the entry was named in the feed, for rejection reports
    notes: list[str] = field(default_factory=list)  # what ingest changed, e.g. a dropped link


@dataclass
class Rejection:
    entry: str  # an id, a title or "entry #N" — whatever identifies it in the feed
    reason: str


@dataclass
class ParsedFeed:
    items: list[RawItem] = field(default_factory=list)
    rejected: list[Rejection] = field(default_factory=list)
    total_results: int | None = None  # arXiv API: opensearch:totalResults
    start_index: int | None = None
    items_per_page: int | None = None
    resumption_token: str | None = None  # OAI-PMH
    complete_list_size: int | None = None  # OAI-PMH
    skipped: int = 0  # entries left out on purpose (arXiv RSS announce types not kept)
    lost: int = 0  # entries written in the document that could be neither read nor named


class FeedError(Exception):
    """The whole document is unusable (an error feed, HTML, not XML at all)."""
