"""arXiv RSS 2.0 listings (rss.arxiv.org)."""

from __future__ import annotations

import datetime as dt
import email.utils
import re

from lxml.etree import _Element

from papers.ingest.items import ParsedFeed, RawItem
from papers.ingest.parsers.common import (
    ARXIV,
    arxiv_id_and_version,
    arxiv_url,
    bare_doi,
    child_text,
    collect,
    element_text,
    expect_root,
    https_url,
    load,
)

DC = "http://purl.org/dc/elements/1.1/"
_ANNOUNCE_IN_DESCRIPTION = re.compile(r"Announce Type:\s*([\w-]+)")
_VERSION_IN_DESCRIPTION = re.compile(r"^\s*arXiv:\S*?v(\d+)\b")


def parse_arxiv_rss(
    data: bytes, content_type: str = "", keep: set[str] | None = None
) -> ParsedFeed:
    """Parse an arXiv RSS 2.0 listing.

    With ``keep`` (e.g. ``{"new", "cross"}``), items whose announce type is not in it are
    skipped, not rejected: leaving them out is the caller's choice, not a fault of the feed.
    """
    doc = load(data, content_type)
    expect_root(doc.root, "", "rss", "an RSS 2.0 feed")
    entries = list(doc.root.iter("item"))
    feed = ParsedFeed()
    wanted = None if keep is None else lambda item: item.announce_type in keep
    collect(doc, entries, "item", _rss_entry, feed, wanted)
    return feed


def _rss_entry(item: _Element) -> RawItem:
    description = child_text(item, "", "description")
    announce_type = child_text(item, ARXIV, "announce_type").lower()
    if not announce_type:
        found = _ANNOUNCE_IN_DESCRIPTION.search(description)
        announce_type = found.group(1).lower() if found else ""
    guid = child_text(item, "", "guid")
    link = child_text(item, "", "link")
    arxiv_id, version = arxiv_id_and_version(guid)
    if not arxiv_id:
        arxiv_id, version = arxiv_id_and_version(link)
    if arxiv_id and version is None:
        found = _VERSION_IN_DESCRIPTION.match(description)
        version = int(found.group(1)) if found else None
    _, marker, after = description.partition("Abstract:")
    listed = _rfc822_datetime(child_text(item, "", "pubDate"))
    abs_url = https_url(link) if link else arxiv_url("abs", arxiv_id, None)
    return RawItem(
        title=child_text(item, "", "title"),
        arxiv_id=arxiv_id,
        version=version,
        doi=bare_doi(child_text(item, ARXIV, "DOI") or child_text(item, ARXIV, "doi")),
        url=abs_url,
        abstract=after.strip() if marker else description,
        authors=[
            name
            for creator in item.findall(f"{{{DC}}}creator")
            for name in _split_names(element_text(creator))
        ],
        categories=[term for c in item.findall("category") if (term := element_text(c))],
        # The pubDate is the listing date: the first publication only for a "new" item.
        published=listed if announce_type == "new" else None,
        updated=listed,
        abs_url=abs_url,
        pdf_url=arxiv_url("pdf", arxiv_id, version),
        announce_type=announce_type,
        license=child_text(item, DC, "rights"),
        source_key=guid or link,
    )


def _split_names(creators: str) -> list[str]:
    # arXiv joins the names with ", " (sometimes ", and "). A name written with a comma in it
    # ("King, Jr.") would be split; arXiv metadata rarely writes names that way.
    names = (part.strip() for part in creators.split(","))
    return [name.removeprefix("and ").strip() for name in names if name]


def _rfc822_datetime(value: str) -> dt.datetime | None:
    if not value:
        return None
    try:
        parsed = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=dt.UTC)
