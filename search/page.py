"""What the index page needs around the search service: the reader's parameters, the
filtered index without a query, and result rows with their marked title and excerpt."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from urllib.parse import urlencode

from django.db.models import Exists, OuterRef, QuerySet
from django.http import QueryDict
from django.utils.safestring import SafeString

from dailies.models import DailyEntry
from dailies.selectors import index_papers, parse_date
from papers.models import Paper, Topic
from search.backends import Filters, Hit
from search.highlight import best_excerpt, highlight
from search.service import Highlighter
from search.text import normalise_query


@dataclass(frozen=True)
class SearchParams:
    """``?q=…&topic=…&track=…&from=YYYY-MM-DD&to=YYYY-MM-DD``; anything malformed is
    dropped, never an error."""

    q: str = ""
    topic: str = ""
    track: str = ""
    date_from: dt.date | None = None
    date_to: dt.date | None = None

    @classmethod
    def from_query(cls, data: QueryDict) -> SearchParams:
        return cls(
            q=normalise_query(data.get("q", "")),
            topic=_slug(data.get("topic", "")),
            track=_slug(data.get("track", "")),
            date_from=parse_date(data.get("from", "")[:10]),
            date_to=parse_date(data.get("to", "")[:10]),
        )

    @property
    def filters(self) -> Filters:
        return Filters(
            topic=self.topic or None,
            track=self.track or None,
            date_from=self.date_from,
            date_to=self.date_to,
        )

    @property
    def active(self) -> bool:
        return bool(self.q or self.filters)

    def query_string(self, **changes) -> str:
        """These parameters as a query string, with ``changes`` applied (None drops one)."""
        values = {
            "q": self.q,
            "topic": self.topic,
            "track": self.track,
            "from": self.date_from.isoformat() if self.date_from else "",
            "to": self.date_to.isoformat() if self.date_to else "",
        }
        values.update({k.rstrip("_"): v for k, v in changes.items()})
        return urlencode({k: v for k, v in values.items() if v})


def _slug(value: str) -> str:
    value = value.strip()[:50]
    return value if value.replace("-", "").replace("_", "").isalnum() and value.isascii() else ""


def browse(filters: Filters) -> QuerySet[Paper]:
    """The index narrowed by the filters, newest first, prefetched like the index (lazy)."""
    papers = index_papers()
    if filters.topic:
        papers = papers.filter(topics__slug=filters.topic)
    if filters.track or filters.date_from or filters.date_to:
        entries = DailyEntry.objects.published().filter(paper=OuterRef("pk"))
        if filters.track:
            entries = entries.filter(daily__track__slug=filters.track)
        if filters.date_from:
            entries = entries.filter(daily__date__gte=filters.date_from)
        if filters.date_to:
            entries = entries.filter(daily__date__lte=filters.date_to)
        papers = papers.filter(Exists(entries))
    return papers


@dataclass
class ResultRow:
    paper: Paper
    hit: Hit
    title: SafeString
    excerpt: SafeString | None
    excerpt_language: str


def result_rows(
    pairs: list[tuple[Paper, Hit]], highlighter: Highlighter, language: str
) -> list[ResultRow]:
    """Each hit's paper with its title marked and an excerpt around the first match: from
    the summary in the reader's language, else the other summary, else the abstract.
    Reads prefetched summaries only."""
    rows = []
    for paper, hit in pairs:
        summaries = sorted(paper.summaries.all(), key=lambda s: s.language != language)
        texts = [(s.body, s.language) for s in summaries]
        if paper.abstract:
            texts.append((paper.abstract, "en"))
        found = best_excerpt(texts, highlighter)
        marked, found_language = found if found else (None, language)
        rows.append(
            ResultRow(paper, hit, highlight(paper.title, highlighter), marked, found_language)
        )
    return rows


def page_topics(papers: list[Paper], limit: int = 12) -> list[Topic]:
    """The topics of the listed papers, most frequent first: the chips to narrow by.
    Reads prefetched topics only, so the page's query count does not change."""
    counts: dict[int, tuple[int, Topic]] = {}
    for paper in papers:
        for topic in paper.topics.all():
            n, _ = counts.get(topic.pk, (0, topic))
            counts[topic.pk] = (n + 1, topic)
    ranked = sorted(counts.values(), key=lambda item: (-item[0], item[1].name_en))
    return [topic for _, topic in ranked[:limit]]


@dataclass(frozen=True)
class Chip:
    topic: Topic
    query: str
    active: bool


def topic_chips(topics: list[Topic], params: SearchParams) -> list[Chip]:
    """A link per topic that narrows the current search to it (or lifts the filter)."""
    return [
        Chip(
            topic,
            params.query_string(topic=None if topic.slug == params.topic else topic.slug),
            topic.slug == params.topic,
        )
        for topic in topics
    ]


def page_tracks(papers: list[Paper]) -> list:
    """The tracks the listed papers appeared in (reads the prefetched appearances)."""
    tracks = {}
    for paper in papers:
        for entry in getattr(paper, "published_entries", []):
            tracks.setdefault(entry.daily.track.slug, entry.daily.track)
    return sorted(tracks.values(), key=lambda t: (t.position, t.slug))
