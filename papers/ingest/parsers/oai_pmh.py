"""OAI-PMH ``ListRecords`` (or ``GetRecord``) responses with ``metadataPrefix=arXiv``."""

from __future__ import annotations

from lxml.etree import _Element

from papers.ingest.items import FeedError, ParsedFeed, RawItem
from papers.ingest.parsers.common import (
    Reject,
    arxiv_id_and_version,
    arxiv_url,
    bare_doi,
    child_text,
    collect,
    element_text,
    expect_root,
    int_or_none,
    iso_datetime,
    load,
    unique,
)

OAI = "http://www.openarchives.org/OAI/2.0/"
OAI_ARXIV = "http://arxiv.org/OAI/arXiv/"


def parse_oai_pmh(data: bytes, content_type: str = "") -> ParsedFeed:
    """Parse an OAI-PMH ``ListRecords`` (or ``GetRecord``) response in the arXiv format.

    OAI errors raise FeedError, except ``noRecordsMatch``, which is an empty result. An empty
    ``<resumptionToken>`` marks the last page (``resumption_token`` stays None).
    """
    doc = load(data, content_type)
    expect_root(doc.root, OAI, "OAI-PMH", "an OAI-PMH response")
    errors = doc.root.findall(f"{{{OAI}}}error")
    if errors:
        if all(error.get("code") == "noRecordsMatch" for error in errors):
            return ParsedFeed()
        raise FeedError("; ".join(_oai_error_message(error) for error in errors))
    container = doc.root.find(f"{{{OAI}}}ListRecords")
    if container is None:
        container = doc.root.find(f"{{{OAI}}}GetRecord")
    if container is None:
        raise FeedError("OAI-PMH response has neither ListRecords nor GetRecord")
    feed = ParsedFeed()
    token = container.find(f"{{{OAI}}}resumptionToken")
    if token is not None:
        feed.resumption_token = element_text(token) or None
        feed.complete_list_size = int_or_none(token.get("completeListSize", ""))
    collect(doc, list(container.iter(f"{{{OAI}}}record")), "record", _oai_record, feed)
    return feed


def _oai_error_message(error: _Element) -> str:
    text = element_text(error)
    code = error.get("code", "unknown")
    return f"OAI-PMH error {code}: {text}" if text else f"OAI-PMH error {code}"


def _oai_record(record: _Element) -> RawItem:
    header = record.find(f"{{{OAI}}}header")
    identifier = child_text(header, OAI, "identifier") if header is not None else ""
    if header is not None and header.get("status") == "deleted":
        raise Reject("record deleted at the source", identifier)
    metadata = record.find(f"{{{OAI}}}metadata/{{{OAI_ARXIV}}}arXiv")
    if metadata is None:
        raise Reject("no arXiv metadata in the record (metadataPrefix must be arXiv)", identifier)
    arxiv_id, version = arxiv_id_and_version(child_text(metadata, OAI_ARXIV, "id"))
    if not arxiv_id:
        arxiv_id, version = arxiv_id_and_version(identifier)
    authors, affiliations = _oai_authors(metadata)
    categories = child_text(metadata, OAI_ARXIV, "categories").split()
    abs_url = arxiv_url("abs", arxiv_id, version)
    return RawItem(
        title=child_text(metadata, OAI_ARXIV, "title"),
        arxiv_id=arxiv_id,
        version=version,
        doi=bare_doi(child_text(metadata, OAI_ARXIV, "doi")),
        url=abs_url,
        abstract=child_text(metadata, OAI_ARXIV, "abstract"),
        authors=authors,
        affiliations=affiliations,
        categories=categories,
        # The arXiv format lists the primary category first.
        primary_category=categories[0] if categories else "",
        published=iso_datetime(child_text(metadata, OAI_ARXIV, "created")),
        updated=iso_datetime(child_text(metadata, OAI_ARXIV, "updated")),
        abs_url=abs_url,
        pdf_url=arxiv_url("pdf", arxiv_id, version),
        comment=child_text(metadata, OAI_ARXIV, "comments"),
        journal_ref=child_text(metadata, OAI_ARXIV, "journal-ref"),
        license=child_text(metadata, OAI_ARXIV, "license"),
        source_key=identifier or arxiv_id,
    )


def _oai_authors(metadata: _Element) -> tuple[list[str], list[str]]:
    authors: list[str] = []
    affiliations: list[str] = []
    for author in metadata.iterfind(f"{{{OAI_ARXIV}}}authors/{{{OAI_ARXIV}}}author"):
        parts = (child_text(author, OAI_ARXIV, part) for part in ("forenames", "keyname", "suffix"))
        name = " ".join(part for part in parts if part)
        if name:
            authors.append(name)
        affiliations.extend(element_text(a) for a in author.findall(f"{{{OAI_ARXIV}}}affiliation"))
    return authors, unique(affiliations)
