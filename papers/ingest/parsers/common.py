"""What every feed parser shares: loading bytes into a hardened tree, entries and their
damage, validation and bounds, and small text, id and date helpers.

All XML goes through one hardened lxml parser: entities are never expanded and nothing is
fetched, so a hostile document cannot read local files or call out; recovery is on, so a
damaged document still yields the entries that survived. Entries that cannot be trusted
become :class:`Rejection` rows with a reason; only a document that is unusable as a whole
(HTML, empty, an API error feed) raises :class:`FeedError`.
"""

from __future__ import annotations

import bisect
import codecs
import datetime as dt
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from email.message import Message
from urllib.parse import unquote, urlsplit

from lxml import etree
from lxml.etree import _Element

from papers.identity import canonical_id
from papers.ingest import limits
from papers.ingest.items import FeedError, ParsedFeed, RawItem, Rejection

ATOM = "http://www.w3.org/2005/Atom"
ARXIV = "http://arxiv.org/schemas/atom"

HTML_PAGE = "expected an XML feed but got an HTML page"
_REPLACEMENT = "\ufffd"

# An arXiv id at the end of a URL, guid or OAI identifier: new style (2610.01234v2) or old
# style (astro-ph/0601001v1, math.GT/0309136). Must start the string or follow "/" or ":" so
# that "12610.01234" is not read as "2610.01234".
_ARXIV_ID_AT_END = re.compile(
    r"(?:^|(?<=[/:]))(?P<id>\d{4}\.\d{4,5}|[a-z][a-z\-]*(?:\.[A-Z]{2})?/\d{7})"
    r"(?:v(?P<version>\d+))?$"
)
_DOI = re.compile(r"^10\.\d{4,9}/\S+$")
DOI_HOSTS = {"doi.org", "dx.doi.org", "www.doi.org"}
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


# --------------------------------------------------------------------------------------------
# Loading: bytes -> decoded text -> hardened, recovered tree
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _XmlError:
    line: int
    column: int
    message: str


@dataclass
class Document:
    root: _Element
    text: str  # decoded, declaration removed; line numbers match the tree's sourceline
    encoding: str  # what the bytes were decoded as, for rejection messages
    errors: list[_XmlError] = field(default_factory=list)


def _hardened_parser() -> etree.XMLParser:
    # huge_tree lifts libxml2's 10 MB limit on one text node, which would otherwise cost every
    # entry after it: entities are never expanded and the body is bounded, and an entry with a
    # node over limits.TEXT_NODE is rejected alone (assess_damage).
    return etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=True, recover=True)


def load(data: bytes, content_type: str) -> Document:
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
    return Document(root=root, text=text, encoding=encoding, errors=errors)


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
        remove_element(reference, keep_tail=True)


def remove_element(element: _Element, keep_tail: bool = False) -> None:
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


def expect_root(root: _Element, namespace: str, name: str, what: str) -> None:
    qname = etree.QName(root)
    if qname.localname != name or (qname.namespace or "") != namespace:
        raise FeedError(f"expected {what}, got <{qname.localname}>")


# --------------------------------------------------------------------------------------------
# Entries: damage, validation, collection
# --------------------------------------------------------------------------------------------


class Reject(Exception):
    """An entry builder found an entry that must not become an item."""

    def __init__(self, reason: str, name: str = "") -> None:
        super().__init__(reason)
        self.reason = reason
        self.name = name


def collect(
    doc: Document,
    entries: list[_Element],
    tag: str,
    build: Callable[[_Element], RawItem],
    feed: ParsedFeed,
    wanted: Callable[[RawItem], bool] | None = None,
) -> None:
    damage = assess_damage(doc, entries, tag)
    for index, element in enumerate(entries):
        number = index + 1
        try:
            item = build(element)
        except Reject as rejected:
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
        accept(feed, item, number, doc.encoding)
    if damage.document:
        feed.rejected.append(Rejection("document", damage.document))
    feed.lost += damage.lost


def accept(feed: ParsedFeed, item: RawItem, number: int, encoding: str) -> None:
    limits.links_bound(item)
    if item.arxiv_id:  # a dropped arXiv link is replaced by the one the id gives
        item.abs_url = item.abs_url or arxiv_url("abs", item.arxiv_id, item.version)
        item.url = item.url or item.abs_url
        item.pdf_url = item.pdf_url or arxiv_url("pdf", item.arxiv_id, item.version)
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
class Damage:
    by_entry: dict[int, str] = field(default_factory=dict)  # entry index -> reason
    document: str = ""  # reason, when the damage lies outside every entry
    lost: int = 0  # entries written in the text that the recovered tree does not hold


def assess_damage(doc: Document, entries: list[_Element], tag: str) -> Damage:
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
    damage = Damage({index: _malformed(errors) for index, errors in inside.items()})
    damage.document = _malformed(stray) if stray else ""
    for index, element in enumerate(entries):
        if index not in damage.by_entry and (size := _longest_text(element)) > limits.TEXT_NODE:
            damage.by_entry[index] = (
                f"a text node is {size} characters; the limit is {limits.TEXT_NODE}"
            )
    lost = damage.lost = _lost_entries(doc, entries, tag) if doc.errors else 0
    if lost:
        note = f"; {lost} later {'entry' if lost == 1 else 'entries'} could not be recovered"
        if damage.by_entry:
            damage.by_entry[min(damage.by_entry)] += note
        else:
            damage.document += note
    return damage


def _longest_text(element: _Element) -> int:
    """Characters in the entry's longest text node (an element's text or a child's tail)."""
    texts = [node.text for node in element.iter()]
    texts += [node.tail for node in element.iterdescendants()]
    return max((len(text) for text in texts if text), default=0)


def _lost_entries(doc: Document, entries: list[_Element], tag: str) -> int:
    written = len(re.findall(rf"<(?:[\w.-]+:)?{re.escape(tag)}[\s/>]", doc.text))
    return max(written - len(entries), 0)


def _locate_damage(
    doc: Document, entries: list[_Element]
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
# Small helpers
# --------------------------------------------------------------------------------------------


def collapse(text: str) -> str:
    return " ".join(text.split())


def element_text(element: _Element) -> str:
    if len(element) == 0:  # no children (the common case): its own text is all there is
        return " ".join(element.text.split()) if element.text else ""
    return collapse("".join(element.itertext()))


def child_text(parent: _Element, namespace: str, name: str) -> str:
    """Collapsed text of the first direct child, "" when absent. ``name`` may be a Clark name."""
    tag = name if name.startswith("{") or not namespace else f"{{{namespace}}}{name}"
    child = parent.find(tag)
    return element_text(child) if child is not None else ""


def int_or_none(value: str) -> int | None:
    try:
        return int(value.strip())
    except ValueError:
        return None


def unique(values: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(value for value in values if value))


def arxiv_id_and_version(text: str) -> tuple[str, int | None]:
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


def arxiv_url(kind: str, arxiv_id: str, version: int | None) -> str:
    if not arxiv_id:
        return ""
    return f"https://arxiv.org/{kind}/{arxiv_id}" + (f"v{version}" if version else "")


def url_parts(url: str) -> tuple[str, str, str]:
    """(scheme, host, path); all empty for a URL too broken to split, as a hostile feed's."""
    try:
        parts = urlsplit(url)
        return parts.scheme.lower(), parts.hostname or "", parts.path
    except ValueError:
        return "", "", ""


ARXIV_HOSTS = {"arxiv.org", "www.arxiv.org", "export.arxiv.org"}


def https_url(url: str) -> str:
    """arXiv's own http links as https (arXiv serves both); any other link as given."""
    scheme, host, _ = url_parts(url)
    if scheme == "http" and host in ARXIV_HOSTS and url.lower().startswith(f"http://{host}/"):
        return "https://" + url[len("http://") :]
    return url


def bare_doi(value: str) -> str:
    """A bare DOI from "10.x/y", "doi:10.x/y" or a doi.org URL; "" for anything else."""
    tokens = value.split()
    if not tokens:
        return ""
    candidate = tokens[0]  # arXiv sometimes lists several DOIs separated by spaces
    if candidate.lower().startswith("doi:"):
        candidate = candidate[4:]
    elif (parts := url_parts(candidate))[1] in DOI_HOSTS:
        candidate = unquote(parts[2].lstrip("/"))
    return candidate if _DOI.match(candidate) else ""


def iso_datetime(value: str) -> dt.datetime | None:
    """ISO 8601 (or a bare date) as an aware datetime; UTC when no offset is given."""
    if not value:
        return None
    try:
        parsed = dt.datetime.fromisoformat(value)
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=dt.UTC)
