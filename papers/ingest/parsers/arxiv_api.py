"""arXiv API (``/api/query``) Atom responses, in both the 2016 and the 2026 formats."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from lxml.etree import _Element

from papers.ingest.items import FeedError, ParsedFeed, RawItem
from papers.ingest.parsers.common import (
    ARXIV,
    ATOM,
    DOI_HOSTS,
    arxiv_id_and_version,
    arxiv_url,
    bare_doi,
    child_text,
    collect,
    element_text,
    expect_root,
    https_url,
    int_or_none,
    iso_datetime,
    load,
    unique,
    url_parts,
)

OPENSEARCH = ("http://a9.com/-/spec/opensearch/1.1/", "http://a9.com/-/spec/opensearchrss/1.0/")
_API_ERROR_ID = re.compile(r"^https?://(?:export\.)?arxiv\.org/api/errors(?:#|$)")


def parse_arxiv_api(data: bytes, content_type: str = "") -> ParsedFeed:
    """Parse an arXiv API (``/api/query``) Atom response.

    Raises FeedError for the API's error feed (one entry whose id is under
    ``https://arxiv.org/api/errors#``), with the error text as the message.
    """
    doc = load(data, content_type)
    expect_root(doc.root, ATOM, "feed", "an arXiv API Atom feed")
    entries = list(doc.root.iter(f"{{{ATOM}}}entry"))
    _raise_api_error(entries)
    feed = ParsedFeed(
        total_results=int_or_none(_opensearch_text(doc.root, "totalResults")),
        start_index=int_or_none(_opensearch_text(doc.root, "startIndex")),
        items_per_page=int_or_none(_opensearch_text(doc.root, "itemsPerPage")),
    )
    collect(doc, entries, "entry", _api_entry, feed)
    return feed


def _raise_api_error(entries: list[_Element]) -> None:
    for entry in entries:
        if _API_ERROR_ID.match(child_text(entry, ATOM, "id")):
            message = child_text(entry, ATOM, "summary") or child_text(entry, ATOM, "title")
            raise FeedError(message or "arXiv API error")


@dataclass
class _Links:
    abs: str = ""
    pdf: str = ""
    doi: str = ""


def _api_entry(entry: _Element) -> RawItem:
    raw_id = child_text(entry, ATOM, "id")
    links = _arxiv_links(entry.findall(f"{{{ATOM}}}link"))
    arxiv_id, version = arxiv_id_and_version(raw_id)
    if not arxiv_id:
        arxiv_id, version = arxiv_id_and_version(links.abs)
    authors, affiliations = _api_authors(entry)
    abs_url = links.abs or arxiv_url("abs", arxiv_id, version)
    primary = entry.find(f"{{{ARXIV}}}primary_category")
    return RawItem(
        title=child_text(entry, ATOM, "title"),
        arxiv_id=arxiv_id,
        version=version,
        doi=bare_doi(child_text(entry, ARXIV, "doi")) or bare_doi(links.doi),
        url=abs_url,
        abstract=child_text(entry, ATOM, "summary"),
        authors=authors,
        affiliations=affiliations,
        categories=[
            term for c in entry.findall(f"{{{ATOM}}}category") if (term := c.get("term", ""))
        ],
        primary_category=primary.get("term", "") if primary is not None else "",
        published=iso_datetime(child_text(entry, ATOM, "published")),
        updated=iso_datetime(child_text(entry, ATOM, "updated")),
        abs_url=abs_url,
        pdf_url=links.pdf or arxiv_url("pdf", arxiv_id, version),
        comment=child_text(entry, ARXIV, "comment"),
        journal_ref=child_text(entry, ARXIV, "journal_ref"),
        source_key=raw_id,
    )


def _api_authors(entry: _Element) -> tuple[list[str], list[str]]:
    authors: list[str] = []
    affiliations: list[str] = []
    for author in entry.findall(f"{{{ATOM}}}author"):
        name = child_text(author, ATOM, "name")
        if name:
            authors.append(name)
        for affiliation in author.findall(f"{{{ARXIV}}}affiliation"):
            affiliations.append(element_text(affiliation))
    return authors, unique(affiliations)


def _arxiv_links(links: Iterable[_Element]) -> _Links:
    """Sort links into abstract page, PDF and DOI.

    The rel/title/type attributes say which is which when present; since Nov 2025 the API
    sometimes sends bare ``<link href>``, so fall back to the URL's shape.
    """
    found = _Links()
    for link in links:
        href = (link.get("href") or "").strip()
        kind = _link_kind(href, link.get("rel", ""), link.get("title", ""), link.get("type", ""))
        if kind and not getattr(found, kind):
            setattr(found, kind, href if kind == "doi" else https_url(href))
    return found


def _link_kind(href: str, rel: str, title: str, type_: str) -> str:
    if not href:
        return ""
    _, host, path = url_parts(href)
    if title == "doi" or host in DOI_HOSTS:
        return "doi"
    if title == "pdf" or type_ == "application/pdf":
        return "pdf"
    if rel == "alternate" and type_ in ("", "text/html"):
        return "abs"
    if "/pdf/" in path:
        return "pdf"
    if "/abs/" in path:
        return "abs"
    return ""


def _opensearch_text(root: _Element, name: str) -> str:
    return next((v for ns in OPENSEARCH if (v := child_text(root, ns, name))), "")
