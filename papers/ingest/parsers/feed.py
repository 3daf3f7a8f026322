"""Ordinary RSS (0.9x, 1.0, 2.0) and Atom feeds, e.g. company research blogs, through
feedparser."""

from __future__ import annotations

import datetime as dt
import io
import time
from typing import Any
from urllib.parse import urljoin

import feedparser
import lxml.html
from lxml import etree
from lxml.etree import _Element

from papers.ingest import limits
from papers.ingest.items import FeedError, ParsedFeed, RawItem, Rejection
from papers.ingest.parsers.common import (
    ATOM,
    accept,
    assess_damage,
    bare_doi,
    child_text,
    collapse,
    load,
    remove_element,
    url_parts,
)
from papers.validators import url_problem

RSS1 = "http://purl.org/rss/1.0/"
_HTML_BLOCKS = (
    "p", "div", "br", "li", "ul", "ol", "h1", "h2", "h3", "h4", "h5", "h6", "tr", "td", "th",
    "table", "blockquote", "pre", "section", "article", "figure", "figcaption", "hr", "dd", "dt",
)  # fmt: skip


def parse_feed(data: bytes, content_type: str = "") -> ParsedFeed:
    """Parse an ordinary RSS (0.9x, 1.0, 2.0) or Atom feed, e.g. a company research blog.

    The document is first read with the hardened parser (to refuse HTML, report damage and
    drop entity references); feedparser then maps the cleaned, re-serialised tree.
    """
    doc = load(data, content_type)
    root_name = etree.QName(doc.root).localname
    if root_name not in {"rss", "feed", "RDF"}:
        raise FeedError(f"expected an RSS or Atom feed, got <{root_name}>")
    entry_tags = {f"{{{ATOM}}}entry", "item", f"{{{RSS1}}}item"}
    entries = [element for element in doc.root.iter() if element.tag in entry_tags]
    feed = ParsedFeed()
    damage = assess_damage(doc, entries, "entry" if root_name == "feed" else "item")
    for index, reason in damage.by_entry.items():
        name = limits.entry_name(_element_name(entries[index]) or f"entry #{index + 1}")
        feed.rejected.append(Rejection(name, reason))
        remove_element(entries[index])  # never hand feedparser an entry we already rejected
    if damage.document:
        feed.rejected.append(Rejection("document", damage.document))
    feed.lost = damage.lost
    cleaned = etree.tostring(doc.root, encoding="utf-8")
    # A file-like object, never bytes or str: feedparser would treat those as a path or URL.
    parsed = feedparser.parse(
        io.BytesIO(cleaned), response_headers={"content-type": "application/xml; charset=utf-8"}
    )
    base = parsed.feed.get("link", "")
    for number, entry in enumerate(parsed.entries, start=1):
        accept(feed, _blog_entry(entry, base), number, doc.encoding)
    return feed


def _blog_entry(entry: Any, base: str) -> RawItem:
    notes = []
    url = _absolute_url(entry.get("link", ""), base)
    if url and (problem := url_problem(url, max_length=limits.URL)):
        notes.append(f"link dropped: {problem}")
        url = ""
    guid = str(entry.get("id", "")).strip()
    if not url and guid.startswith(("http://", "https://")):
        url = "" if url_problem(guid, max_length=limits.URL) else guid
    summary = entry.get("summary_detail") or next(iter(entry.get("content", [])), None)
    return RawItem(
        title=_detail_text(entry.get("title_detail")),
        doi=_blog_doi(entry),
        url=url,
        abstract=_detail_text(summary),
        authors=[a["name"].strip() for a in entry.get("authors", []) if a.get("name", "").strip()],
        categories=[t["term"] for t in entry.get("tags", []) if t.get("term")],
        # dict.get: feedparser's own get() falls back from updated to published, with a warning.
        published=_struct_datetime(dict.get(entry, "published_parsed")),
        updated=_struct_datetime(dict.get(entry, "updated_parsed")),
        source_key=guid or url,
        notes=notes,
    )


def _detail_text(detail: Any) -> str:
    if not detail:
        return ""
    value = str(detail.get("value", ""))
    if detail.get("type", "") in ("text/html", "application/xhtml+xml"):
        return _html_to_text(value)
    return collapse(value)


def _html_to_text(markup: str) -> str:
    """Visible text of an HTML fragment, whitespace collapsed, blocks kept apart by a space."""
    if not markup.strip():
        return ""
    try:
        root = lxml.html.fragment_fromstring(markup, create_parent="div")
    except (etree.ParserError, ValueError):
        return collapse(markup)
    etree.strip_elements(root, "script", "style", with_tail=False)
    for block in root.iter(*_HTML_BLOCKS):
        # text_content() would glue "<p>a</p><p>b</p>" into "ab".
        block.text = " " + (block.text or "")
        block.tail = " " + (block.tail or "")
    return collapse(root.text_content())


def _blog_doi(entry: Any) -> str:
    for key in ("prism_doi", "dc_identifier", "arxiv_doi"):
        if doi := bare_doi(str(entry.get(key, ""))):
            return doi
    for link in entry.get("links", []):
        if doi := bare_doi(str(link.get("href", ""))):
            return doi
    return bare_doi(str(entry.get("id", "")))


def _absolute_url(url: str, base: str) -> str:
    """An absolute URL, resolving a relative one against the feed's own link.

    Whether it is one we may store (public http or https) is the caller's check.
    """
    url = url.strip()
    if url and not url_parts(url)[0] and base:
        try:
            url = urljoin(base, url)
        except ValueError:
            return ""
    return url


def _element_name(element: _Element) -> str:
    """How a raw (possibly damaged) feed entry names itself: id, guid, link, else title."""
    for tag in (f"{{{ATOM}}}id", "guid", "link", f"{{{RSS1}}}link"):
        if value := child_text(element, "", tag):
            return value
    link = element.find(f"{{{ATOM}}}link")
    if link is not None and link.get("href"):
        return link.get("href", "")
    for tag in (f"{{{ATOM}}}title", "title", f"{{{RSS1}}}title"):
        if value := child_text(element, "", tag):
            return value
    return ""


def _struct_datetime(value: time.struct_time | None) -> dt.datetime | None:
    # feedparser normalises every date it understands to a UTC struct_time.
    return dt.datetime(*value[:6], tzinfo=dt.UTC) if value else None
