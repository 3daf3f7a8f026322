"""Feed parsers: pure functions from a response body (bytes) to a :class:`ParsedFeed`.

No database and no network. All XML goes through one hardened lxml parser: entities are never
expanded and nothing is fetched, so a hostile document cannot read local files or call out;
recovery is on, so a damaged document still yields the entries that survived. Entries that
cannot be trusted become :class:`Rejection` rows with a reason; only a document that is
unusable as a whole (HTML, empty, an API error feed) raises :class:`FeedError`.

- :func:`parse_arxiv_api` — Atom from export.arxiv.org/api/query (2016 and 2026 formats).
- :func:`parse_arxiv_rss` — arXiv RSS 2.0 listings (rss.arxiv.org).
- :func:`parse_oai_pmh` — OAI-PMH ``ListRecords`` with ``metadataPrefix=arXiv``.
- :func:`parse_feed` — any ordinary RSS / Atom feed (research blogs), through feedparser.
"""

from __future__ import annotations

import bisect
import codecs
import datetime as dt
import email.utils
import io
import re
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from email.message import Message
from typing import Any
from urllib.parse import unquote, urljoin, urlsplit

import feedparser
import lxml.html
from lxml import etree
from lxml.etree import _Element

from papers.identity import canonical_id
from papers.ingest import limits
from papers.ingest.items import FeedError, ParsedFeed, RawItem, Rejection
from papers.validators import url_problem

ATOM = "http://www.w3.org/2005/Atom"
ARXIV = "http://arxiv.org/schemas/atom"
OPENSEARCH = ("http://a9.com/-/spec/opensearch/1.1/", "http://a9.com/-/spec/opensearchrss/1.0/")
DC = "http://purl.org/dc/elements/1.1/"
OAI = "http://www.openarchives.org/OAI/2.0/"
OAI_ARXIV = "http://arxiv.org/OAI/arXiv/"
RSS1 = "http://purl.org/rss/1.0/"

HTML_PAGE = "expected an XML feed but got an HTML page"
_REPLACEMENT = "\ufffd"

# An arXiv id at the end of a URL, guid or OAI identifier: new style (2610.01234v2) or old
# style (astro-ph/0601001v1, math.GT/0309136). Must start the string or follow "/" or ":" so
# that "12610.01234" is not read as "2610.01234".
_ARXIV_ID_AT_END = re.compile(
    r"(?:^|(?<=[/:]))(?P<id>\d{4}\.\d{4,5}|[a-z][a-z\-]*(?:\.[A-Z]{2})?/\d{7})"
    r"(?:v(?P<version>\d+))?$"
)
_API_ERROR_ID = re.compile(r"^https?://(?:export\.)?arxiv\.org/api/errors(?:#|$)")
_DOI = re.compile(r"^10\.\d{4,9}/\S+$")
_DOI_HOSTS = {"doi.org", "dx.doi.org", "www.doi.org"}
_XML_DECLARATION = re.compile(r"<\?xml\b[^>]*\?>")
_DECLARED_ENCODING = re.compile(
    rb"""^\s*<\?xml\b[^>]*\bencoding\s*=\s*["']([A-Za-z0-9._\-]+)["']"""
)
_HTML_DOCTYPE = re.compile(
    r"^\s*(?:<\?xml\b[^>]*\?>\s*)?(?:<!--.*?-->\s*)*<!doctype\s+html\b", re.IGNORECASE | re.DOTALL
)
# The five predefined entities, outside CDATA sections and comments (left as they are).
_PREDEFINED_ENTITY = re.compile(
    r"<!\[CDATA\[.*?(?:\]\]>|\Z)|<!--.*?(?:-->|\Z)|&(amp|lt|gt|quot|apos);", re.DOTALL
)
_CHARACTER_REFERENCE = {
    "amp": "&#38;",
    "lt": "&#60;",
    "gt": "&#62;",
    "quot": "&#34;",
    "apos": "&#39;",
}
_ANNOUNCE_IN_DESCRIPTION = re.compile(r"Announce Type:\s*([\w-]+)")
_VERSION_IN_DESCRIPTION = re.compile(r"^\s*arXiv:\S*?v(\d+)\b")
_HTML_BLOCKS = (
    "p", "div", "br", "li", "ul", "ol", "h1", "h2", "h3", "h4", "h5", "h6", "tr", "td", "th",
    "table", "blockquote", "pre", "section", "article", "figure", "figcaption", "hr", "dd", "dt",
)  # fmt: skip


# --------------------------------------------------------------------------------------------
# Public parsers
# --------------------------------------------------------------------------------------------


def parse_arxiv_api(data: bytes, content_type: str = "") -> ParsedFeed:
    """Parse an arXiv API (``/api/query``) Atom response.

    Raises FeedError for the API's error feed (one entry whose id is under
    ``https://arxiv.org/api/errors#``), with the error text as the message.
    """
    doc = _load(data, content_type)
    _expect_root(doc.root, ATOM, "feed", "an arXiv API Atom feed")
    entries = list(doc.root.iter(f"{{{ATOM}}}entry"))
    _raise_api_error(entries)
    feed = ParsedFeed(
        total_results=_int(_opensearch_text(doc.root, "totalResults")),
        start_index=_int(_opensearch_text(doc.root, "startIndex")),
        items_per_page=_int(_opensearch_text(doc.root, "itemsPerPage")),
    )
    _collect(doc, entries, "entry", _api_entry, feed)
    return feed


def parse_arxiv_rss(
    data: bytes, content_type: str = "", keep: set[str] | None = None
) -> ParsedFeed:
    """Parse an arXiv RSS 2.0 listing.

    With ``keep`` (e.g. ``{"new", "cross"}``), items whose announce type is not in it are
    skipped, not rejected: leaving them out is the caller's choice, not a fault of the feed.
    """
    doc = _load(data, content_type)
    _expect_root(doc.root, "", "rss", "an RSS 2.0 feed")
    entries = list(doc.root.iter("item"))
    feed = ParsedFeed()
    wanted = None if keep is None else lambda item: item.announce_type in keep
    _collect(doc, entries, "item", _rss_entry, feed, wanted)
    return feed


def parse_oai_pmh(data: bytes, content_type: str = "") -> ParsedFeed:
    """Parse an OAI-PMH ``ListRecords`` (or ``GetRecord``) response in the arXiv format.

    OAI errors raise FeedError, except ``noRecordsMatch``, which is an empty result. An empty
    ``<resumptionToken>`` marks the last page (``resumption_token`` stays None).
    """
    doc = _load(data, content_type)
    _expect_root(doc.root, OAI, "OAI-PMH", "an OAI-PMH response")
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
        feed.resumption_token = _text(token) or None
        feed.complete_list_size = _int(token.get("completeListSize", ""))
    _collect(doc, list(container.iter(f"{{{OAI}}}record")), "record", _oai_record, feed)
    return feed


def parse_feed(data: bytes, content_type: str = "") -> ParsedFeed:
    """Parse an ordinary RSS (0.9x, 1.0, 2.0) or Atom feed, e.g. a company research blog.

    The document is first read with the hardened parser (to refuse HTML, report damage and
    drop entity references); feedparser then maps the cleaned, re-serialised tree.
    """
    doc = _load(data, content_type)
    root_name = etree.QName(doc.root).localname
    if root_name not in {"rss", "feed", "RDF"}:
        raise FeedError(f"expected an RSS or Atom feed, got <{root_name}>")
    entry_tags = {f"{{{ATOM}}}entry", "item", f"{{{RSS1}}}item"}
    entries = [element for element in doc.root.iter() if element.tag in entry_tags]
    feed = ParsedFeed()
    damage = _assess_damage(doc, entries, "entry" if root_name == "feed" else "item")
    for index, reason in damage.by_entry.items():
        name = limits.entry_name(_element_name(entries[index]) or f"entry #{index + 1}")
        feed.rejected.append(Rejection(name, reason))
        _remove(entries[index])  # never hand feedparser an entry we already rejected
    if damage.document:
        feed.rejected.append(Rejection("document", damage.document))
    cleaned = etree.tostring(doc.root, encoding="utf-8")
    # A file-like object, never bytes or str: feedparser would treat those as a path or URL.
    parsed = feedparser.parse(
        io.BytesIO(cleaned), response_headers={"content-type": "application/xml; charset=utf-8"}
    )
    base = parsed.feed.get("link", "")
    for number, entry in enumerate(parsed.entries, start=1):
        _accept(feed, _blog_entry(entry, base), number, doc.encoding)
    return feed


# --------------------------------------------------------------------------------------------
# Loading: bytes -> decoded text -> hardened, recovered tree
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _XmlError:
    line: int
    column: int
    message: str


@dataclass
class _Document:
    root: _Element
    text: str  # decoded, declaration removed; line numbers match the tree's sourceline
    encoding: str  # what the bytes were decoded as, for rejection messages
    errors: list[_XmlError] = field(default_factory=list)


def _hardened_parser() -> etree.XMLParser:
    return etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=False, recover=True)


def _load(data: bytes, content_type: str) -> _Document:
    if not data.strip():
        raise FeedError("empty response body")
    header = Message()
    header["content-type"] = content_type
    if content_type and header.get_content_type() == "text/html":
        raise FeedError(HTML_PAGE)
    encoding = _pick_encoding(data, str(header.get_param("charset") or ""))
    # Undecodable bytes become U+FFFD instead of killing the feed; the entries they land in
    # are rejected later (_problem), the rest ingest.
    text = data.decode(encoding, errors="replace")
    if not text.strip():
        raise FeedError("empty response body")
    if _HTML_DOCTYPE.match(text):
        raise FeedError(HTML_PAGE)
    text = _predefined_as_character_references(_drop_declaration(text))
    parser = _hardened_parser()
    try:
        root = etree.fromstring(text.encode("utf-8"), parser)
    except etree.XMLSyntaxError as exc:  # recover=True rarely raises, but it can
        raise FeedError(f"not an XML document: {exc}") from exc
    errors = [
        _XmlError(entry.line, entry.column, entry.message.strip())
        for entry in parser.error_log
        if entry.level >= etree.ErrorLevels.ERROR
    ]
    if root is None:
        detail = f": {errors[0].message}" if errors else ""
        raise FeedError(f"no XML root element{detail}")
    if etree.QName(root).localname.lower() == "html":
        raise FeedError(HTML_PAGE)
    _drop_entity_references(root)
    return _Document(root=root, text=text, encoding=encoding, errors=errors)


def _pick_encoding(data: bytes, http_charset: str) -> str:
    """BOM, then the HTTP charset (RFC 7303: it overrides the document), then the XML
    declaration, then UTF-8."""
    for bom, name in (
        (codecs.BOM_UTF32_LE, "utf-32"),
        (codecs.BOM_UTF32_BE, "utf-32"),
        (codecs.BOM_UTF8, "utf-8-sig"),
        (codecs.BOM_UTF16_LE, "utf-16"),
        (codecs.BOM_UTF16_BE, "utf-16"),
    ):
        if data.startswith(bom):
            return name
    if data.startswith(b"<\x00?\x00"):
        return "utf-16-le"
    if data.startswith(b"\x00<\x00?"):
        return "utf-16-be"
    if charset := _known_codec(http_charset):
        return charset
    declared = _DECLARED_ENCODING.match(data[:512])
    if declared:
        name = _known_codec(declared.group(1).decode("ascii"))
        # A declaration we could read as ASCII cannot be in a 16/32-bit encoding: it lies.
        if name and not name.startswith(("utf-16", "utf-32")):
            return name
    return "utf-8"


def _known_codec(name: str) -> str:
    try:
        return codecs.lookup(name.strip()).name if name.strip() else ""
    except LookupError:
        return ""


def _drop_declaration(text: str) -> str:
    # The text is decoded now and re-encoded as UTF-8 for lxml, so a declared encoding would
    # be wrong. Keep its newlines so error line numbers still match the document.
    match = _XML_DECLARATION.match(text, len(text) - len(text.lstrip()))
    if not match:
        return text
    return text[: match.start()] + "\n" * match.group().count("\n") + text[match.end() :]


def _predefined_as_character_references(text: str) -> str:
    """``&amp;`` -> ``&#38;`` and so on for the five predefined entities.

    Once libxml2 has met one error, recovery mode stops expanding entity references — even
    the predefined ones — for the rest of the document, so after one damaged entry "Gould
    &amp; Morgan" would read "Gould  Morgan". Character references are always expanded.
    """

    def replace(match: re.Match) -> str:
        return _CHARACTER_REFERENCE[match.group(1)] if match.group(1) else match.group(0)

    return _PREDEFINED_ENTITY.sub(replace, text) if "&" in text else text


def _drop_entity_references(root: _Element) -> None:
    # With resolve_entities=False an entity stays in the tree as a reference node whose text
    # is "&name;". Remove them so neither our text nor feedparser ever sees them.
    for reference in list(root.iter(etree.Entity)):
        _remove(reference, keep_tail=True)


def _remove(element: _Element, keep_tail: bool = False) -> None:
    parent = element.getparent()
    if parent is None:
        return
    if keep_tail and element.tail:
        previous = element.getprevious()
        if previous is not None:
            previous.tail = (previous.tail or "") + element.tail
        else:
            parent.text = (parent.text or "") + element.tail
    parent.remove(element)


def _expect_root(root: _Element, namespace: str, name: str, what: str) -> None:
    qname = etree.QName(root)
    if qname.localname != name or (qname.namespace or "") != namespace:
        raise FeedError(f"expected {what}, got <{qname.localname}>")


# --------------------------------------------------------------------------------------------
# Entries: damage, validation, collection
# --------------------------------------------------------------------------------------------


class _Reject(Exception):
    """An entry builder found an entry that must not become an item."""

    def __init__(self, reason: str, name: str = "") -> None:
        super().__init__(reason)
        self.reason = reason
        self.name = name


def _collect(
    doc: _Document,
    entries: list[_Element],
    tag: str,
    build: Callable[[_Element], RawItem],
    feed: ParsedFeed,
    wanted: Callable[[RawItem], bool] | None = None,
) -> None:
    damage = _assess_damage(doc, entries, tag)
    for index, element in enumerate(entries):
        number = index + 1
        try:
            item = build(element)
        except _Reject as rejected:
            name = limits.entry_name(rejected.name or f"entry #{number}")
            feed.rejected.append(Rejection(name, rejected.reason))
            continue
        if index in damage.by_entry:
            # Recovery may have cut or merged its fields: never ingest half an abstract. This
            # comes before the caller's filter because even the announce type is suspect and
            # the reason may report later entries that were lost.
            feed.rejected.append(Rejection(_entry_name(item, number), damage.by_entry[index]))
            continue
        if wanted is not None and not wanted(item):
            continue  # the caller's choice, not a fault of the feed
        _accept(feed, item, number, doc.encoding)
    if damage.document:
        feed.rejected.append(Rejection("document", damage.document))


def _accept(feed: ParsedFeed, item: RawItem, number: int, encoding: str) -> None:
    limits.links_bound(item)
    if item.arxiv_id:  # a dropped arXiv link is replaced by the one the id gives
        item.abs_url = item.abs_url or _arxiv_url("abs", item.arxiv_id, item.version)
        item.url = item.url or item.abs_url
        item.pdf_url = item.pdf_url or _arxiv_url("pdf", item.arxiv_id, item.version)
    reason = _problem(item, encoding)
    if reason:
        if item.notes:
            reason += f" ({'; '.join(item.notes)})"
        feed.rejected.append(Rejection(_entry_name(item, number), reason))
    else:
        feed.items.append(item)


def _problem(item: RawItem, encoding: str) -> str:
    garbled = [
        name
        for name, value in (
            ("title", item.title),
            ("abstract", item.abstract),
            ("authors", " ".join(item.authors)),
        )
        if _REPLACEMENT in value
    ]
    if garbled:
        label = "UTF-8" if encoding.startswith("utf-8") else encoding.upper()
        return f"text is not valid {label}: undecodable bytes in {', '.join(garbled)}"
    if bound := limits.entry_problem(item):
        return bound
    problems = []
    if not (item.arxiv_id or item.doi or item.url):
        problems.append("no identifier")
    if item.title == "":
        problems.append("no title")
    return "; ".join(problems)


def _entry_name(item: RawItem, number: int) -> str:
    return limits.entry_name(item.source_key or item.url or item.title or f"entry #{number}")


@dataclass
class _Damage:
    by_entry: dict[int, str] = field(default_factory=dict)  # entry index -> reason
    document: str = ""  # reason, when the damage lies outside every entry


def _assess_damage(doc: _Document, entries: list[_Element], tag: str) -> _Damage:
    """One rejection reason per damaged part of the document.

    When some entry is damaged, errors outside every entry are almost always libxml2's
    recovery cascading from it (closing every open element), so they are counted with the
    first damaged entry rather than reported as a second part.
    Entries the recovery dropped altogether are counted by their start tags in the text, so
    the loss is at least stated.
    """
    inside, stray = _locate_damage(doc, entries)
    if inside and stray:
        first = min(inside)
        inside[first] = inside[first] + stray
        stray = []
    damage = _Damage({index: _malformed(errors) for index, errors in inside.items()})
    damage.document = _malformed(stray) if stray else ""
    lost = _lost_entries(doc, entries, tag) if doc.errors else 0
    if lost:
        note = f"; {lost} later {'entry' if lost == 1 else 'entries'} could not be recovered"
        if damage.by_entry:
            damage.by_entry[min(damage.by_entry)] += note
        else:
            damage.document += note
    return damage


def _lost_entries(doc: _Document, entries: list[_Element], tag: str) -> int:
    written = len(re.findall(rf"<(?:[\w.-]+:)?{re.escape(tag)}[\s/>]", doc.text))
    return max(written - len(entries), 0)


def _locate_damage(
    doc: _Document, entries: list[_Element]
) -> tuple[dict[int, list[_XmlError]], list[_XmlError]]:
    """Map parser errors to the entry they fall in (by index); the rest are stray.

    An error belongs to the last entry that starts at or before its line, unless that entry's
    closing tag appears before the error's line (then the damage is between or after entries).
    """
    inside: dict[int, list[_XmlError]] = {}
    stray: list[_XmlError] = []
    if not doc.errors:
        return inside, stray
    starts = [element.sourceline or 0 for element in entries]
    line_starts = [0] + [match.end() for match in re.finditer("\n", doc.text)]
    for error in doc.errors:
        index = bisect.bisect_right(starts, error.line) - 1
        if index >= 0 and not _closed_before(doc.text, line_starts, entries[index], error.line):
            inside.setdefault(index, []).append(error)
        else:
            stray.append(error)
    return inside, stray


def _closed_before(text: str, line_starts: list[int], element: _Element, line: int) -> bool:
    start = line_starts[min(max((element.sourceline or 1) - 1, 0), len(line_starts) - 1)]
    end = line_starts[line - 1] if 0 < line <= len(line_starts) else len(text)
    qname = etree.QName(element).localname
    if element.prefix:
        qname = f"{element.prefix}:{qname}"
    return re.search(rf"</{re.escape(qname)}\s*>", text[start:end]) is not None


def _malformed(errors: list[_XmlError]) -> str:
    first = errors[0]
    reason = f"malformed XML at line {first.line}: {first.message}"
    if len(errors) > 1:
        reason += f" (and {len(errors) - 1} more parser errors)"
    return reason


# --------------------------------------------------------------------------------------------
# arXiv API (Atom)
# --------------------------------------------------------------------------------------------


def _raise_api_error(entries: list[_Element]) -> None:
    for entry in entries:
        if _API_ERROR_ID.match(_child_text(entry, ATOM, "id")):
            message = _child_text(entry, ATOM, "summary") or _child_text(entry, ATOM, "title")
            raise FeedError(message or "arXiv API error")


@dataclass
class _Links:
    abs: str = ""
    pdf: str = ""
    doi: str = ""


def _api_entry(entry: _Element) -> RawItem:
    raw_id = _child_text(entry, ATOM, "id")
    links = _arxiv_links(entry.findall(f"{{{ATOM}}}link"))
    arxiv_id, version = _arxiv_id_and_version(raw_id)
    if not arxiv_id:
        arxiv_id, version = _arxiv_id_and_version(links.abs)
    authors, affiliations = _api_authors(entry)
    abs_url = links.abs or _arxiv_url("abs", arxiv_id, version)
    primary = entry.find(f"{{{ARXIV}}}primary_category")
    return RawItem(
        title=_child_text(entry, ATOM, "title"),
        arxiv_id=arxiv_id,
        version=version,
        doi=_doi(_child_text(entry, ARXIV, "doi")) or _doi(links.doi),
        url=abs_url,
        abstract=_child_text(entry, ATOM, "summary"),
        authors=authors,
        affiliations=affiliations,
        categories=[
            term for c in entry.findall(f"{{{ATOM}}}category") if (term := c.get("term", ""))
        ],
        primary_category=primary.get("term", "") if primary is not None else "",
        published=_iso_datetime(_child_text(entry, ATOM, "published")),
        updated=_iso_datetime(_child_text(entry, ATOM, "updated")),
        abs_url=abs_url,
        pdf_url=links.pdf or _arxiv_url("pdf", arxiv_id, version),
        comment=_child_text(entry, ARXIV, "comment"),
        journal_ref=_child_text(entry, ARXIV, "journal_ref"),
        source_key=raw_id,
    )


def _api_authors(entry: _Element) -> tuple[list[str], list[str]]:
    authors: list[str] = []
    affiliations: list[str] = []
    for author in entry.findall(f"{{{ATOM}}}author"):
        name = _child_text(author, ATOM, "name")
        if name:
            authors.append(name)
        for affiliation in author.findall(f"{{{ARXIV}}}affiliation"):
            affiliations.append(_text(affiliation))
    return authors, _unique(affiliations)


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
            setattr(found, kind, href if kind == "doi" else _https(href))
    return found


def _link_kind(href: str, rel: str, title: str, type_: str) -> str:
    if not href:
        return ""
    _, host, path = _url_parts(href)
    if title == "doi" or host in _DOI_HOSTS:
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


# --------------------------------------------------------------------------------------------
# arXiv RSS 2.0
# --------------------------------------------------------------------------------------------


def _rss_entry(item: _Element) -> RawItem:
    description = _child_text(item, "", "description")
    announce_type = _child_text(item, ARXIV, "announce_type").lower()
    if not announce_type:
        found = _ANNOUNCE_IN_DESCRIPTION.search(description)
        announce_type = found.group(1).lower() if found else ""
    guid = _child_text(item, "", "guid")
    link = _child_text(item, "", "link")
    arxiv_id, version = _arxiv_id_and_version(guid)
    if not arxiv_id:
        arxiv_id, version = _arxiv_id_and_version(link)
    if arxiv_id and version is None:
        found = _VERSION_IN_DESCRIPTION.match(description)
        version = int(found.group(1)) if found else None
    _, marker, after = description.partition("Abstract:")
    listed = _rfc822_datetime(_child_text(item, "", "pubDate"))
    abs_url = _https(link) if link else _arxiv_url("abs", arxiv_id, None)
    return RawItem(
        title=_child_text(item, "", "title"),
        arxiv_id=arxiv_id,
        version=version,
        doi=_doi(_child_text(item, ARXIV, "DOI") or _child_text(item, ARXIV, "doi")),
        url=abs_url,
        abstract=after.strip() if marker else description,
        authors=[
            name
            for creator in item.findall(f"{{{DC}}}creator")
            for name in _split_names(_text(creator))
        ],
        categories=[term for c in item.findall("category") if (term := _text(c))],
        # The pubDate is the listing date: the first publication only for a "new" item.
        published=listed if announce_type == "new" else None,
        updated=listed,
        abs_url=abs_url,
        pdf_url=_arxiv_url("pdf", arxiv_id, version),
        announce_type=announce_type,
        license=_child_text(item, DC, "rights"),
        source_key=guid or link,
    )


def _split_names(creators: str) -> list[str]:
    # arXiv joins the names with ", " (sometimes ", and "). A name written with a comma in it
    # ("King, Jr.") would be split; arXiv metadata rarely writes names that way.
    names = (part.strip() for part in creators.split(","))
    return [name.removeprefix("and ").strip() for name in names if name]


# --------------------------------------------------------------------------------------------
# OAI-PMH, metadataPrefix=arXiv
# --------------------------------------------------------------------------------------------


def _oai_error_message(error: _Element) -> str:
    text = _text(error)
    code = error.get("code", "unknown")
    return f"OAI-PMH error {code}: {text}" if text else f"OAI-PMH error {code}"


def _oai_record(record: _Element) -> RawItem:
    header = record.find(f"{{{OAI}}}header")
    identifier = _child_text(header, OAI, "identifier") if header is not None else ""
    if header is not None and header.get("status") == "deleted":
        raise _Reject("record deleted at the source", identifier)
    metadata = record.find(f"{{{OAI}}}metadata/{{{OAI_ARXIV}}}arXiv")
    if metadata is None:
        raise _Reject("no arXiv metadata in the record (metadataPrefix must be arXiv)", identifier)
    arxiv_id, version = _arxiv_id_and_version(_child_text(metadata, OAI_ARXIV, "id"))
    if not arxiv_id:
        arxiv_id, version = _arxiv_id_and_version(identifier)
    authors, affiliations = _oai_authors(metadata)
    categories = _child_text(metadata, OAI_ARXIV, "categories").split()
    abs_url = _arxiv_url("abs", arxiv_id, version)
    return RawItem(
        title=_child_text(metadata, OAI_ARXIV, "title"),
        arxiv_id=arxiv_id,
        version=version,
        doi=_doi(_child_text(metadata, OAI_ARXIV, "doi")),
        url=abs_url,
        abstract=_child_text(metadata, OAI_ARXIV, "abstract"),
        authors=authors,
        affiliations=affiliations,
        categories=categories,
        # The arXiv format lists the primary category first.
        primary_category=categories[0] if categories else "",
        published=_iso_datetime(_child_text(metadata, OAI_ARXIV, "created")),
        updated=_iso_datetime(_child_text(metadata, OAI_ARXIV, "updated")),
        abs_url=abs_url,
        pdf_url=_arxiv_url("pdf", arxiv_id, version),
        comment=_child_text(metadata, OAI_ARXIV, "comments"),
        journal_ref=_child_text(metadata, OAI_ARXIV, "journal-ref"),
        license=_child_text(metadata, OAI_ARXIV, "license"),
        source_key=identifier or arxiv_id,
    )


def _oai_authors(metadata: _Element) -> tuple[list[str], list[str]]:
    authors: list[str] = []
    affiliations: list[str] = []
    for author in metadata.iterfind(f"{{{OAI_ARXIV}}}authors/{{{OAI_ARXIV}}}author"):
        parts = (
            _child_text(author, OAI_ARXIV, part) for part in ("forenames", "keyname", "suffix")
        )
        name = " ".join(part for part in parts if part)
        if name:
            authors.append(name)
        affiliations.extend(_text(a) for a in author.findall(f"{{{OAI_ARXIV}}}affiliation"))
    return authors, _unique(affiliations)


# --------------------------------------------------------------------------------------------
# Ordinary RSS / Atom (feedparser)
# --------------------------------------------------------------------------------------------


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
    return _collapse(value)


def _html_to_text(markup: str) -> str:
    """Visible text of an HTML fragment, whitespace collapsed, blocks kept apart by a space."""
    if not markup.strip():
        return ""
    try:
        root = lxml.html.fragment_fromstring(markup, create_parent="div")
    except (etree.ParserError, ValueError):
        return _collapse(markup)
    etree.strip_elements(root, "script", "style", with_tail=False)
    for block in root.iter(*_HTML_BLOCKS):
        # text_content() would glue "<p>a</p><p>b</p>" into "ab".
        block.text = " " + (block.text or "")
        block.tail = " " + (block.tail or "")
    return _collapse(root.text_content())


def _blog_doi(entry: Any) -> str:
    for key in ("prism_doi", "dc_identifier", "arxiv_doi"):
        if doi := _doi(str(entry.get(key, ""))):
            return doi
    for link in entry.get("links", []):
        if doi := _doi(str(link.get("href", ""))):
            return doi
    return _doi(str(entry.get("id", "")))


def _absolute_url(url: str, base: str) -> str:
    """An absolute URL, resolving a relative one against the feed's own link.

    Whether it is one we may store (public http or https) is the caller's check.
    """
    url = url.strip()
    if url and not _url_parts(url)[0] and base:
        try:
            url = urljoin(base, url)
        except ValueError:
            return ""
    return url


def _element_name(element: _Element) -> str:
    """How a raw (possibly damaged) feed entry names itself: id, guid, link, else title."""
    for tag in (f"{{{ATOM}}}id", "guid", "link", f"{{{RSS1}}}link"):
        if value := _child_text(element, "", tag):
            return value
    link = element.find(f"{{{ATOM}}}link")
    if link is not None and link.get("href"):
        return link.get("href", "")
    for tag in (f"{{{ATOM}}}title", "title", f"{{{RSS1}}}title"):
        if value := _child_text(element, "", tag):
            return value
    return ""


# --------------------------------------------------------------------------------------------
# Small helpers
# --------------------------------------------------------------------------------------------


def _collapse(text: str) -> str:
    return " ".join(text.split())


def _text(element: _Element) -> str:
    if len(element) == 0:  # no children (the common case): its own text is all there is
        return " ".join(element.text.split()) if element.text else ""
    return _collapse("".join(element.itertext()))


def _child_text(parent: _Element, namespace: str, name: str) -> str:
    """Collapsed text of the first direct child, "" when absent. ``name`` may be a Clark name."""
    tag = name if name.startswith("{") or not namespace else f"{{{namespace}}}{name}"
    child = parent.find(tag)
    return _text(child) if child is not None else ""


def _opensearch_text(root: _Element, name: str) -> str:
    return next((v for ns in OPENSEARCH if (v := _child_text(root, ns, name))), "")


def _int(value: str) -> int | None:
    try:
        return int(value.strip())
    except ValueError:
        return None


def _unique(values: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(value for value in values if value))


def _arxiv_id_and_version(text: str) -> tuple[str, int | None]:
    """``http://arxiv.org/abs/2610.01234v2`` -> ("2610.01234", 2); "" when no arXiv id."""
    candidate = text.strip().split("?")[0].split("#")[0].rstrip("/").removesuffix(".pdf")
    match = _ARXIV_ID_AT_END.search(candidate)
    if not match:
        return "", None
    try:
        canonical_id(arxiv_id=match["id"])  # one definition of a valid id, shared with identity
    except ValueError:
        return "", None
    return match["id"], int(match["version"]) if match["version"] else None


def _arxiv_url(kind: str, arxiv_id: str, version: int | None) -> str:
    if not arxiv_id:
        return ""
    return f"https://arxiv.org/{kind}/{arxiv_id}" + (f"v{version}" if version else "")


def _url_parts(url: str) -> tuple[str, str, str]:
    """(scheme, host, path); all empty for a URL too broken to split, as a hostile feed's."""
    try:
        parts = urlsplit(url)
        return parts.scheme.lower(), parts.hostname or "", parts.path
    except ValueError:
        return "", "", ""


def _https(url: str) -> str:
    return "https://" + url[len("http://") :] if url.startswith("http://") else url


def _doi(value: str) -> str:
    """A bare DOI from "10.x/y", "doi:10.x/y" or a doi.org URL; "" for anything else."""
    tokens = value.split()
    if not tokens:
        return ""
    candidate = tokens[0]  # arXiv sometimes lists several DOIs separated by spaces
    if candidate.lower().startswith("doi:"):
        candidate = candidate[4:]
    elif (parts := _url_parts(candidate))[1] in _DOI_HOSTS:
        candidate = unquote(parts[2].lstrip("/"))
    return candidate if _DOI.match(candidate) else ""


def _iso_datetime(value: str) -> dt.datetime | None:
    """ISO 8601 (or a bare date) as an aware datetime; UTC when no offset is given."""
    if not value:
        return None
    try:
        parsed = dt.datetime.fromisoformat(value)
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=dt.UTC)


def _rfc822_datetime(value: str) -> dt.datetime | None:
    if not value:
        return None
    try:
        parsed = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=dt.UTC)


def _struct_datetime(value: time.struct_time | None) -> dt.datetime | None:
    # feedparser normalises every date it understands to a UTC struct_time.
    return dt.datetime(*value[:6], tzinfo=dt.UTC) if value else None
