"""The interface every search backend implements, and the types it speaks.

The service (``search.service``) hands a backend a ``Match`` (the terms to find, how, and
the ``Filters`` parsed from the reader's request) and gets ``Hit``s back, best first; the
index (``search.index``) hands it ``IndexDocument``s to store. ``filter_sql`` is the
translation of the filters into the SQL both backends splice into their statements, built
from ``appearances``, which the unranked listing (``search.service.browse``) uses too.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from django.db.models import QuerySet

from dailies.models import DailyEntry
from papers.models import Paper

if TYPE_CHECKING:
    import datetime as dt

    from search.index import IndexDocument

# Each query returns at most this many results.
MAX_RESULTS = 1000


@dataclass(frozen=True)
class Filters:
    """What narrows the papers searched or listed: a topic, a track, the days they appeared
    in a published daily (both ends included). Parsed once from the request (the index
    page's ``SearchParams``, the API's serializer, the search feed's form); the service, the
    backend and the unranked listing (``search.service.browse``) take it as it is."""

    topic: str | None = None
    track: str | None = None
    date_from: dt.date | None = None
    date_to: dt.date | None = None

    def __bool__(self) -> bool:
        return any((self.topic, self.track, self.date_from, self.date_to))


@dataclass(frozen=True)
class Match:
    """What to match: every term (``any_term`` False) or any of them; ``prefixes`` are terms
    matched as word beginnings. ``estimate`` is an upper bound on the matches, if known."""

    terms: tuple[str, ...]
    prefixes: tuple[str, ...] = ()
    any_term: bool = False
    filters: Filters = field(default_factory=Filters)
    estimate: int | None = None
    exact_count: int | None = None

    @property
    def empty(self) -> bool:
        return not (self.terms or self.prefixes)


@dataclass(frozen=True)
class Hit:
    paper_id: int
    score: float
    # Found by the vector index alone (its meaning is close to the query's), not by its words.
    by_meaning: bool = False


def match_key(match: Match) -> tuple:
    """What identifies a match's hits (not its estimate, which counting narrows)."""
    return (match.terms, match.prefixes, match.any_term, match.filters)


def appearances(filters: Filters) -> QuerySet[DailyEntry] | None:
    """The published entries in the filters' track and days (lazy); None when neither
    narrows. The one definition of these filters, for the SQL below and for the listing."""
    if not (filters.track or filters.date_from or filters.date_to):
        return None
    entries = DailyEntry.objects.published()
    if filters.track:
        entries = entries.filter(daily__track__slug=filters.track)
    if filters.date_from:
        entries = entries.filter(daily__date__gte=filters.date_from)
    if filters.date_to:
        entries = entries.filter(daily__date__lte=filters.date_to)
    return entries


def tagged_paper_ids(topic: str) -> QuerySet:
    """The ids of the papers with the topic ``topic`` (a slug), from its links alone."""
    return Paper.topics.through.objects.filter(topic__slug=topic).values("paper_id")


def filter_sql(filters: Filters, column: str) -> tuple[str, list]:
    """SQL restricting ``column`` (a paper id) to the filters, built with the ORM so that
    "published" keeps its one definition. Returns ("", []) without filters."""
    clauses, params = [], []
    entries = appearances(filters)
    if entries is not None:
        sql, p = entries.values("paper_id").query.sql_with_params()
        clauses.append(f"{column} IN ({sql})")
        params.extend(p)
    if filters.topic:
        sql, p = tagged_paper_ids(filters.topic).query.sql_with_params()
        clauses.append(f"{column} IN ({sql})")
        params.extend(p)
    return " AND ".join(clauses), params


Statement = tuple[str, list]


def pooled_hits(
    cursor,
    *,
    offset: int,
    limit: int,
    pool_limit: int,
    ranked_pool: Statement,
    pool_count: Statement,
    remainder: Callable[[int, int], Statement],
) -> list[Hit]:
    """A page of a very common match, as both backends rank one: the pool (the newest
    ``pool_limit`` papers with every term in their head fields) ranked first, then the
    other matches newest first. ``ranked_pool`` gives (paper id, score, pool size) rows,
    best first, from ``offset``; ``pool_count`` the pool's size when the page starts past it;
    ``remainder(limit, offset)`` the (paper id, score) rows after the pool."""
    hits: list[Hit] = []
    pool_size = None
    if offset < pool_limit:
        cursor.execute(*ranked_pool)
        rows = cursor.fetchall()
        hits = [Hit(pk, float(score)) for pk, score, _ in rows]
        pool_size = rows[0][2] if rows else None
    if len(hits) == limit:
        return hits
    if pool_size is None:
        cursor.execute(*pool_count)
        pool_size = cursor.fetchone()[0]
    cursor.execute(*remainder(limit - len(hits), max(0, offset - pool_size)))
    return hits + [Hit(pk, float(score)) for pk, score in cursor.fetchall()]


class Backend(Protocol):
    """What the index and the service ask of a database: store documents (writers serialised
    by ``lock_for_writing`` in their transaction), count and rank a ``Match``'s hits, and
    offer the vocabulary words spelled like an unknown query word."""

    def lock_for_writing(self) -> None: ...

    def write(
        self, docs: list[IndexDocument], *, replace: Sequence[int], count_terms: bool = True
    ) -> None: ...

    def recount_terms(self) -> None: ...

    def count(self, match: Match, *, limit: int) -> int: ...

    def ranked(self, match: Match, *, offset: int, limit: int) -> list[Hit]: ...

    def similar_words(self, word: str, *, limit: int = 3) -> list[tuple[str, str]]: ...
