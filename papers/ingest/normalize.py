"""From a parsed item to the fields of a Paper: identity, organisations and venue.

Organisation labels and venue names come from alias tables that editors extend in the admin
(``OrganizationAlias``, ``VenueAlias``); this module only applies them.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

from django.utils.text import slugify

from papers.identity import canonical_id
from papers.ingest.items import RawItem
from papers.models import OrganizationAlias, Paper, Topic, VenueAlias

_YEAR = r"(?:(20\d\d)|['’](\d\d))"
_STATUS_WORDS = [
    (Paper.VenueStatus.ACCEPTED, r"accepted\s+(?:to|at|by|in|for)(?:\s+the)?"),
    (Paper.VenueStatus.TO_APPEAR, r"to\s+appear\s+(?:in|at)(?:\s+the)?"),
    (Paper.VenueStatus.PUBLISHED, r"(?:published|presented)\s+(?:in|at)(?:\s+the)?"),
    (Paper.VenueStatus.SUBMITTED, r"(?:submitted|under\s+review)\s+(?:to|at)(?:\s+the)?"),
]


def item_canonical_id(item: RawItem) -> str:
    return canonical_id(arxiv_id=item.arxiv_id, doi=item.doi, url=item.url or item.abs_url)


def slug_for(item: RawItem, cid: str) -> str:
    """Deterministic, so two runs that race to create the same paper pick the same slug."""
    if item.arxiv_id:
        return "arxiv-" + re.sub(r"[^0-9a-z]+", "-", item.arxiv_id.lower()).strip("-")
    base = slugify(item.title)[:80].strip("-") or "item"
    return f"{base}-{hashlib.sha1(cid.encode()).hexdigest()[:8]}"


def paper_fields(item: RawItem) -> dict:
    """The Paper fields ingest owns (an editor's edits to any of them win)."""
    abs_url = item.abs_url or item.url
    return {
        "title": item.title,
        "abstract": item.abstract,
        "authors": list(item.authors),
        "affiliations": list(item.affiliations),
        "arxiv_id": item.arxiv_id,
        "version": item.version,
        "doi": item.doi,
        "abs_url": abs_url.strip(),  # as the source gave it: normalise_url is for identity
        "pdf_url": item.pdf_url,
        "published_on": item.published.date() if item.published else None,
        "source_updated_at": item.updated or item.published,
        "categories": list(item.categories),
        "primary_category": item.primary_category,
        "comment": item.comment,
        "journal_ref": item.journal_ref,
        "kind": Paper.Kind.PAPER if (item.arxiv_id or item.doi) else Paper.Kind.POST,
    }


class OrganizationMatcher:
    """Affiliation text → organisation ids, by whole-word, case-insensitive aliases.

    All aliases are compiled into one alternation (longest first), so each affiliation is
    scanned once however many aliases editors add.
    """

    def __init__(self) -> None:
        aliases = sorted(OrganizationAlias.objects.all(), key=lambda a: -len(a.pattern))
        self.by_text = {a.pattern.casefold(): a.organization_id for a in aliases}
        alternation = "|".join(re.escape(a.pattern) for a in aliases)
        self.pattern = re.compile(rf"(?<!\w)(?:{alternation})(?!\w)", re.I) if aliases else None

    def match(self, affiliations: list[str]) -> list[int]:
        found: list[int] = []
        if self.pattern is None:
            return found
        for text in affiliations:
            for m in self.pattern.finditer(text):
                org_id = self.by_text[m.group(0).casefold()]
                if org_id not in found:
                    found.append(org_id)
        return found


class TopicMatcher:
    """Title and abstract → suggested topic ids, from each topic's names and keywords.

    Editors confirm or change the suggestions in the admin; an edit is never overwritten.
    """

    def __init__(self) -> None:
        phrases: dict[str, int] = {}
        for topic in Topic.objects.all():
            for phrase in [topic.name_en, topic.name_zh, *topic.keywords]:
                if phrase and phrase.strip():
                    phrases.setdefault(phrase.strip().casefold(), topic.pk)
        self.by_text = phrases
        ordered = sorted(phrases, key=len, reverse=True)
        alternation = "|".join(re.escape(p) for p in ordered)
        self.pattern = re.compile(rf"(?<!\w)(?:{alternation})(?!\w)", re.I) if ordered else None

    def match(self, text: str) -> list[int]:
        if self.pattern is None:
            return []
        found: list[int] = []
        for m in self.pattern.finditer(text):
            topic_id = self.by_text[m.group(0).casefold()]
            if topic_id not in found:
                found.append(topic_id)
        return found


@dataclass(frozen=True)
class VenueMatch:
    short_name: str
    full_name: str
    year: int
    status: str


class VenueMatcher:
    """ "Accepted to NSDI 2027", "To appear in OSDI '27" → (NSDI, 2027, accepted)."""

    def __init__(self) -> None:
        aliases = sorted(VenueAlias.objects.all(), key=lambda a: -len(a.alias))
        self.names = [(a.alias, a.short_name, a.full_name) for a in aliases]
        names = "|".join(re.escape(alias) for alias, _, _ in self.names) or r"(?!x)x"
        self.patterns = [
            (
                status,
                re.compile(
                    rf"{words}\s+(?:the\s+)?(?:\d+(?:st|nd|rd|th)\s+)?(?:[\w&]+\s+){{0,6}}?"
                    rf"({names})\b[^.;\n]{{0,40}}?{_YEAR}\b",
                    re.I,
                ),
            )
            for status, words in _STATUS_WORDS
        ]
        self.bare = re.compile(rf"\b({names})\b[^.;\n]{{0,20}}?{_YEAR}\b", re.I)

    def _canonical(self, found: str) -> tuple[str, str]:
        for alias, short, full in self.names:
            if alias.lower() == found.lower():
                return short, full
        return found, ""

    def match(self, comment: str, journal_ref: str) -> VenueMatch | None:
        for status, pattern in self.patterns:
            m = pattern.search(comment)
            if m:
                return self._result(m, status)
        if journal_ref:
            m = self.bare.search(journal_ref)
            if m:
                return self._result(m, Paper.VenueStatus.PUBLISHED)
        return None

    def _result(self, m: re.Match, status: str) -> VenueMatch:
        short, full = self._canonical(m.group(1))
        year = int(m.group(2)) if m.group(2) else 2000 + int(m.group(3))
        return VenueMatch(short, full, year, status)
