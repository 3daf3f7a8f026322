"""What the index page needs around the search service: the reader's parameters, and result
rows with their marked title and excerpt, the topic chips and the track choices."""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlencode

from django.http import QueryDict
from django.utils.html import escape, format_html
from django.utils.safestring import SafeString, mark_safe
from django.utils.translation import gettext

from dailies.selectors import parse_date
from papers.languages import pick_language
from papers.models import Paper, Summary, Topic
from search.backends import Filters, Hit
from search.highlight import EXCERPT_CHARS, best_excerpt, highlight
from search.service import Highlighter
from search.text import normalise_query


@dataclass(frozen=True)
class SearchParams:
    """``?q=…&topic=…&track=…&from=YYYY-MM-DD&to=YYYY-MM-DD``, parsed once: the query text
    normalised, the rest as the ``Filters`` the service and the backend take as they are.
    Anything malformed is dropped, never an error."""

    q: str = ""
    filters: Filters = Filters()
    # ``?like=<paper slug>``: the published papers nearest in meaning to that one.
    like: str | None = None

    @classmethod
    def from_query(cls, data: QueryDict) -> SearchParams:
        return cls(
            q=normalise_query(data.get("q", "")),
            filters=Filters(
                topic=_slug(data.get("topic", "")),
                track=_slug(data.get("track", "")),
                date_from=parse_date(data.get("from", "")[:10]),
                date_to=parse_date(data.get("to", "")[:10]),
            ),
            like=_slug(data.get("like", ""), max_length=120),
        )

    @property
    def active(self) -> bool:
        return bool(self.q or self.filters or self.like)

    def query_string(self, **changes) -> str:
        """These parameters as a query string, with ``changes`` applied (None drops one)."""
        filters = self.filters
        values = {
            "q": self.q,
            "topic": filters.topic,
            "track": filters.track,
            "from": filters.date_from.isoformat() if filters.date_from else "",
            "to": filters.date_to.isoformat() if filters.date_to else "",
            "like": self.like,
        }
        values.update({k.rstrip("_"): v for k, v in changes.items()})
        return urlencode({k: v for k, v in values.items() if v})


def _slug(value: str, max_length: int = 50) -> str | None:
    value = value.strip()[:max_length]
    valid = value.replace("-", "").replace("_", "").isalnum() and value.isascii()
    return value if valid else None


@dataclass
class ResultRow:
    paper: Paper
    hit: Hit
    title: SafeString
    excerpt: SafeString | None
    excerpt_language: str
    # The summary the excerpt was cut from (None: from the abstract, or no excerpt): a
    # machine's draft says so under it.
    excerpt_summary: Summary | None = None
    # The excerpt came from another text than the headline's summary (the abstract, the
    # summary in the other language), which then has no note on the item: a machine's
    # headline is marked beside it (``digest.headline_mark``).
    marks_headline: bool = False


def result_rows(
    pairs: list[tuple[Paper, Hit]], highlighter: Highlighter, language: str
) -> list[ResultRow]:
    """Each hit's paper with its title marked and an excerpt around the first match: from
    the summary in the reader's language, else the other summary, else the abstract.
    Reads the summaries read with the papers (``selectors.search_result_papers``)."""
    rows = []
    for paper, hit in pairs:
        summaries = sorted(paper.summaries.all(), key=lambda s: s.language != language)
        texts = [(s.body, s.language) for s in summaries]
        if paper.abstract:
            texts.append((paper.abstract, "en"))
        row = ResultRow(paper, hit, highlight(paper.title, highlighter), None, language)
        if found := best_excerpt(texts, highlighter):
            row.excerpt, row.excerpt_language, at = found
            row.excerpt_summary = summaries[at] if at < len(summaries) else None
            row.marks_headline = row.excerpt_summary is not pick_language(summaries, language)
        if hit.by_meaning and texts:
            _say_matched_by_meaning(row, texts, summaries)
        rows.append(row)
    return rows


def _say_matched_by_meaning(row: ResultRow, texts: list, summaries: list) -> None:
    """A result the vector index found and the words did not: its excerpt (the opening of
    the reader's text when no word matched) starts by saying so."""
    if row.excerpt is None:
        text, row.excerpt_language = " ".join(texts[0][0].split()), texts[0][1]
        cut = text[:EXCERPT_CHARS]
        row.excerpt = mark_safe(escape(cut) + ("…" if len(text) > len(cut) else ""))
        row.excerpt_summary = summaries[0] if summaries else None
    note = format_html('<span class="match-note">{}</span> ', gettext("Matched by meaning"))
    row.excerpt = mark_safe(note + row.excerpt)


@dataclass(frozen=True)
class Chip:
    topic: Topic
    query: str
    active: bool


def topic_chips(topics: list[Topic], params: SearchParams) -> list[Chip]:
    """A link per topic that narrows the current search to it (or lifts the filter)."""
    current = params.filters.topic
    return [
        Chip(
            topic,
            params.query_string(topic=None if topic.slug == current else topic.slug),
            topic.slug == current,
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
