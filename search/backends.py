"""The two search backends: PostgreSQL (weighted tsvectors, GIN, pg_trgm) and SQLite (FTS5).

Both store and match the terms made by ``search.text``; neither parses text itself.
Both rank with the same formula, PostgreSQL's ``ts_rank`` with weights A 1.0 (title,
takeaways, headlines, topic names), B 0.4 (summaries), C 0.2 (abstract, organisations),
computed against the "any term" form of the query so that every matched term counts the
same whatever their distance; SQLite computes it with ``rank_or`` below, a line-for-line copy
of PostgreSQL's ``calc_rank_or``. Ties go to the newer paper, then the higher id. Each query
returns at most ``MAX_RESULTS`` results.

PostgreSQL ranks every match with ``ts_rank`` when there are at most ``EXACT_LIMIT`` of them.
A query made only of very common words ("model", "模型") can match half the corpus, and
ranking that many rows costs hundreds of milliseconds; for those, the backend ranks the
``POOL_SIZE`` newest papers whose A-weighted fields (``head_vector``, small and inline) hold
every query term, which are the papers ``ts_rank`` puts first anyway, and lists the other
matches after them, newest first.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from django.db import connection, transaction
from django.db.backends.utils import CursorWrapper
from django.db.models import OuterRef, Subquery
from django.db.models.functions import Length
from django.utils import timezone

from dailies.models import DailyEntry
from papers.models import Paper
from search.models import SearchDocument, SearchTerm, SearchWord

if TYPE_CHECKING:
    import datetime as dt

    from search.index import IndexDocument

MAX_RESULTS = 1000
EXACT_LIMIT = 1000
POOL_SIZE = 500
# Above this many matching papers, counting and exact ranking are made to use the GIN index.
PLAN_GUARD_ABOVE = 500
# How many of the best hits PostgreSQL keeps when it counts a match by ranking it: the
# first pages of the index (30 a page) and of the API come from them with no query.
FIRST_HITS = 100
# ts_rank's weights, in PostgreSQL's order {D, C, B, A}, and by class letter for rank_or.
TS_RANK_WEIGHTS = "{0.1, 0.2, 0.4, 1.0}"
WEIGHT_OF = {"A": 1.0, "B": 0.4, "C": 0.2}
FIELD_CLASSES = ("A", "B", "C")
# PostgreSQL keeps at most 256 positions per lexeme, and positions up to 16383.
MAX_POSITIONS = 256
MAX_POSITION = 16383
# Trigram similarity a vocabulary word needs to be offered as the spelling of a query word.
SIMILARITY_THRESHOLD = 0.3
FTS_TABLE = "dailies_search_fts"


@dataclass(frozen=True)
class Filters:
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


def _match_key(match: Match) -> tuple:
    """What identifies a match's hits (not its estimate, which counting narrows)."""
    return (match.terms, match.prefixes, match.any_term, match.filters)


def filter_sql(filters: Filters, column: str) -> tuple[str, list]:
    """SQL restricting ``column`` (a paper id) to the filters, built with the ORM so that
    "published" keeps its one definition. Returns ("", []) without filters."""
    clauses, params = [], []
    if filters.track or filters.date_from or filters.date_to:
        entries = DailyEntry.objects.published()
        if filters.track:
            entries = entries.filter(daily__track__slug=filters.track)
        if filters.date_from:
            entries = entries.filter(daily__date__gte=filters.date_from)
        if filters.date_to:
            entries = entries.filter(daily__date__lte=filters.date_to)
        sql, p = entries.values("paper_id").query.sql_with_params()
        clauses.append(f"{column} IN ({sql})")
        params.extend(p)
    if filters.topic:
        tagged = Paper.topics.through.objects.filter(topic__slug=filters.topic)
        sql, p = tagged.values("paper_id").query.sql_with_params()
        clauses.append(f"{column} IN ({sql})")
        params.extend(p)
    return " AND ".join(clauses), params


def trigram_similarity(a: str, b: str) -> float:
    """pg_trgm's ``similarity()``: shared trigrams of the padded words over all trigrams."""
    ta, tb = _trigrams(a), _trigrams(b)
    if not ta or not tb:
        return 0.0
    return len(ta & tb) / len(ta | tb)


def _trigrams(word: str) -> set[str]:
    padded = f"  {word.lower()} "
    return {padded[i : i + 3] for i in range(len(padded) - 2)}


class Backend(Protocol):
    def lock_for_writing(self) -> None: ...

    def write(
        self, docs: list[IndexDocument], *, replace: Sequence[int], count_terms: bool = True
    ) -> None: ...

    def recount_terms(self) -> None: ...

    def count(self, match: Match, *, limit: int) -> int: ...

    def ranked(self, match: Match, *, offset: int, limit: int) -> list[Hit]: ...

    def similar_words(self, word: str, *, limit: int = 3) -> list[tuple[str, str]]: ...


def current() -> Backend:
    """The backend for the default database's vendor."""
    return PostgresBackend() if connection.vendor == "postgresql" else SqliteBackend()


# --- shared: the vocabulary ------------------------------------------------------------------


def term_counts(terms: Iterable[str]) -> dict[str, int]:
    """How many indexed papers contain each term (one query)."""
    return dict(SearchTerm.objects.filter(term__in=list(terms)).values_list("term", "documents"))


def _apply_term_deltas(old: Counter[str], docs: list[IndexDocument]) -> None:
    """Move the vocabulary's document counts from ``old`` to ``docs``' terms, and learn
    the docs' spellings (3–4 queries)."""
    new: Counter[str] = Counter()
    for doc in docs:
        new.update(doc.distinct_terms())
    delta = Counter(new)
    delta.subtract(old)
    changed = {t: n for t, n in delta.items() if n and len(t) <= 64}
    if changed:
        existing = {s.term: s for s in SearchTerm.objects.filter(term__in=list(changed))}
        for term, n in changed.items():
            if term in existing:
                existing[term].documents = max(0, existing[term].documents + n)
        SearchTerm.objects.bulk_update(existing.values(), ["documents"], batch_size=500)
        SearchTerm.objects.bulk_create(
            [
                SearchTerm(term=t, documents=n)
                for t, n in changed.items()
                if t not in existing and n > 0
            ],
            batch_size=500,
            ignore_conflicts=True,
        )
    learn_spellings(word_pair for doc in docs for word_pair in doc.spellings())


def learn_spellings(pairs: Iterable[tuple[str, str]]) -> None:
    """Remember (word, term) pairs for spelling suggestions (one query per 1,000)."""
    rows = dict(pairs)
    SearchWord.objects.bulk_create(
        [SearchWord(word=w, term=t) for w, t in rows.items()],
        batch_size=1000,
        ignore_conflicts=True,
    )


def _recount_from(rows: Iterable[tuple[str, int]]) -> None:
    SearchTerm.objects.all().delete()
    SearchTerm.objects.bulk_create(
        (SearchTerm(term=t, documents=n) for t, n in rows if len(t) <= 64), batch_size=2000
    )


# --- shared: the ranking formula -------------------------------------------------------------


def positions(fields: Sequence[Sequence[str]]) -> dict[str, list[tuple[int, float]]]:
    """Each term's (position, weight) list, numbered as ``tsvector_literal`` numbers them:
    one position per token across the A, B and C fields, at most 256 per term."""
    found: dict[str, list[tuple[int, float]]] = {}
    position = 0
    for weight_class, terms in zip(FIELD_CLASSES, fields, strict=True):
        weight = WEIGHT_OF[weight_class]
        for term in terms:
            position = min(position + 1, MAX_POSITION)
            seen = found.setdefault(term, [])
            if len(seen) < MAX_POSITIONS and (not seen or seen[-1][0] != position):
                seen.append((position, weight))
    return found


def rank_or(
    doc: dict[str, list[tuple[int, float]]], terms: Sequence[str], prefixes: Sequence[str] = ()
) -> float:
    """PostgreSQL's ``calc_rank_or`` (src/backend/utils/adt/tsrank.c), term for term: per
    query item, the heaviest occurrence counts fully and the others fade as 1/j²; the sum
    is scaled by π²/6 and averaged over the query's items."""
    items = sorted(set(terms)) + sorted(set(prefixes))
    if not items:
        return 0.0
    total = 0.0
    for term in sorted(set(terms)):
        total += _rank_entry(doc.get(term, ()))
    for prefix in sorted(set(prefixes)):
        for term in sorted(t for t in doc if t.startswith(prefix)):
            total += _rank_entry(doc[term])
    return total / len(items)


def _rank_entry(occurrences: Sequence[tuple[int, float]]) -> float:
    if not occurrences:
        return 0.0
    resj, wjm, jm = 0.0, -1.0, 0
    for j, (_, weight) in enumerate(occurrences):
        resj += weight / ((j + 1) * (j + 1))
        if weight > wjm:
            wjm, jm = weight, j
    return (wjm + resj - wjm / ((jm + 1) * (jm + 1))) / 1.64493406685


# --- PostgreSQL ------------------------------------------------------------------------------


def ts_quote(term: str) -> str:
    """A lexeme quoted for a tsvector or tsquery literal (no parser, no dictionary)."""
    return "'" + term.replace("\\", "\\\\").replace("'", "''") + "'"


def tsvector_literal(fields: dict[str, list[str]]) -> str:
    """``'term':1A,7B ...`` from each weight class's terms, in order: every occurrence with
    its position and class (numbered as ``positions`` numbers them)."""
    found: dict[str, list[str]] = {}
    position = 0
    for weight in FIELD_CLASSES:
        for term in fields[weight]:
            position = min(position + 1, MAX_POSITION)
            seen = found.setdefault(term, [])
            if len(seen) < MAX_POSITIONS:
                seen.append(f"{position}{weight}")
    return " ".join(f"{ts_quote(t)}:{','.join(p)}" for t, p in found.items())


def head_literal(terms: Iterable[str]) -> str:
    """The A-class terms, without positions: ``head_vector`` only has to match."""
    return " ".join(ts_quote(t) for t in sorted(set(terms)))


def tsquery_literal(match: Match, *, any_term: bool | None = None) -> str:
    """The tsquery of ``match``; ``any_term`` True gives the OR form the ranking uses."""
    parts = [ts_quote(t) for t in match.terms] + [f"{ts_quote(p)}:*" for p in match.prefixes]
    any_term = match.any_term if any_term is None else any_term
    return (" | " if any_term else " & ").join(parts)


# ts_rank over the "any term" query (the second parameter of every ranking statement).
RANK_SQL = f"ts_rank('{TS_RANK_WEIGHTS}', d.vector, CAST(%s AS tsquery))"


def rank_literal(match: Match) -> str:
    # With "&", ts_rank switches to a proximity formula; "|" keeps every term's weight.
    return tsquery_literal(match, any_term=True)


class PostgresBackend:
    # Any constant will do: it names the lock that serialises index writers.
    LOCK_KEY = 7_2026_1028

    def __init__(self) -> None:
        # The best FIRST_HITS hits of each match counted by ranking them (see ``count``).
        self._first: dict[tuple, list[Hit]] = {}

    def lock_for_writing(self) -> None:
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(%s)", [self.LOCK_KEY])

    def _old_terms(self, paper_ids: Sequence[int]) -> Counter[str]:
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT unnest(tsvector_to_array(vector)) FROM dailies_searchdocument"
                " WHERE paper_id = ANY(%s)",
                [list(paper_ids)],
            )
            return Counter(term for (term,) in cursor.fetchall())

    def write(
        self, docs: list[IndexDocument], *, replace: Sequence[int], count_terms: bool = True
    ) -> None:
        old = self._old_terms(replace) if count_terms else Counter()
        now = timezone.now()
        with connection.cursor() as cursor:
            cursor.execute(
                "DELETE FROM dailies_searchdocument WHERE paper_id = ANY(%s)", [list(replace)]
            )
            cursor.executemany(
                "INSERT INTO dailies_searchdocument"
                " (paper_id, last_appeared, vector, head_vector, indexed_at)"
                " VALUES (%s, %s, %s::tsvector, %s::tsvector, %s)",
                [
                    (
                        d.paper_id,
                        d.last_appeared,
                        tsvector_literal(d.term_fields()),
                        head_literal(d.terms("A")),
                        now,
                    )
                    for d in docs
                ],
            )
        if count_terms:
            _apply_term_deltas(old, docs)

    def recount_terms(self) -> None:
        """Count every term's papers again (ts_stat reads the whole index)."""
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT word, ndoc FROM ts_stat('SELECT vector FROM dailies_searchdocument')"
            )
            rows = cursor.fetchall()
        _recount_from(rows)

    # Reading. Every statement takes the query as one tsquery literal parameter.

    @contextmanager
    def _guarded(self, match: Match) -> Iterator[CursorWrapper]:
        """A cursor for a statement that must find its rows through the GIN index.

        The planner prices ``vector @@ query`` as if checking a row were free, but each
        check reads the row's toasted vector: for a common word it would scan the table and
        read 100,000 vectors where the GIN index answers without reading one. So when the
        words are in more than ``PLAN_GUARD_ABOVE`` papers the statement runs in its own
        transaction with sequential and plain index scans off (a bitmap scan is left).
        """
        if match.estimate is not None and match.estimate <= PLAN_GUARD_ABOVE:
            with connection.cursor() as cursor:
                yield cursor
            return
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(
                "SELECT set_config('enable_seqscan', 'off', true),"
                " set_config('enable_indexscan', 'off', true)"
            )
            yield cursor

    def _where(self, match: Match, column: str = "d.vector") -> tuple[str, list]:
        sql, params = f"{column} @@ CAST(%s AS tsquery)", [tsquery_literal(match)]
        extra, extra_params = filter_sql(match.filters, "d.paper_id")
        if extra:
            sql, params = f"{sql} AND {extra}", params + extra_params
        return sql, params

    def count(self, match: Match, *, limit: int) -> int:
        """Matches, counted up to ``limit`` (one query, or none when the vocabulary knows).

        When every match will be ranked anyway (at most ``EXACT_LIMIT``, more than one
        query item), the count comes from the ranking query itself, which keeps the best
        ``FIRST_HITS`` for ``ranked``: one pass over the matches instead of two.
        """
        if match.exact_count is not None:
            return min(match.exact_count, limit)
        if self._ranks_every_match(match):
            hits, total = self._exact_all_counted(match, limit=FIRST_HITS)
            self._first[_match_key(match)] = hits
            return min(total, limit)
        where, params = self._where(match)
        with self._guarded(match) as cursor:
            cursor.execute(
                "SELECT count(*) FROM (SELECT 1 FROM dailies_searchdocument d"
                f" WHERE {where} LIMIT %s) s",
                [*params, limit],
            )
            return cursor.fetchone()[0]

    def ranked(self, match: Match, *, offset: int, limit: int) -> list[Hit]:
        """One page of hits, best first (one or two queries; none for a page among the
        best ``FIRST_HITS`` of a match ``count`` ranked)."""
        first = self._first.get(_match_key(match))
        if first is not None and (offset + limit <= len(first) or len(first) < FIRST_HITS):
            return first[offset : offset + limit]
        if match.estimate is not None and match.estimate <= EXACT_LIMIT:
            return self._exact(match, offset=offset, limit=limit)
        return self._pooled(match, offset=offset, limit=limit)

    def _exact(self, match: Match, *, offset: int, limit: int) -> list[Hit]:
        if len(match.terms) == 1 and not match.prefixes:
            return self._exact_head_first(match, offset=offset, limit=limit)
        return self._exact_all(match, offset=offset, limit=limit)

    @staticmethod
    def _ranks_every_match(match: Match) -> bool:
        single_word = len(match.terms) == 1 and not match.prefixes
        return match.estimate is not None and match.estimate <= EXACT_LIMIT and not single_word

    def _exact_all_counted(self, match: Match, *, limit: int) -> tuple[list[Hit], int]:
        """The best ``limit`` hits of every match ranked, and how many matches there are."""
        where, params = self._where(match)
        sql = (
            f"SELECT d.paper_id, {RANK_SQL} AS s, count(*) OVER ()"
            f" FROM dailies_searchdocument d WHERE {where}"
            " ORDER BY s DESC, d.last_appeared DESC, d.paper_id DESC LIMIT %s"
        )
        with self._guarded(match) as cursor:
            cursor.execute(sql, [rank_literal(match), *params, limit])
            rows = cursor.fetchall()
        return [Hit(pk, float(score)) for pk, score, _ in rows], (rows[0][2] if rows else 0)

    def _exact_all(self, match: Match, *, offset: int, limit: int) -> list[Hit]:
        """Every match ranked, one page of them."""
        where, params = self._where(match)
        sql = (
            f"SELECT d.paper_id, {RANK_SQL} AS s FROM dailies_searchdocument d WHERE {where}"
            " ORDER BY s DESC, d.last_appeared DESC, d.paper_id DESC LIMIT %s OFFSET %s"
        )
        with self._guarded(match) as cursor:
            cursor.execute(sql, [rank_literal(match), *params, limit, offset])
            return [Hit(pk, float(score)) for pk, score in cursor.fetchall()]

    def _exact_head_first(self, match: Match, *, offset: int, limit: int) -> list[Hit]:
        """``_exact_all`` for one word, reading fewer vectors (one or two queries).

        With one query item, ``ts_rank`` puts every paper that has the word in an A field
        above every paper that has it only in B or C fields: positions are numbered A, B,
        then C, so the first occurrence is the heaviest and the rank is Σ wⱼ/j² / (π²/6),
        at least 1.0/1.645 ≈ 0.61 with an A occurrence and below 0.4·1.645/1.645 = 0.4
        without. So the page is ranked among the papers whose small, inline ``head_vector``
        has the word (a tenth of the matches, typically), and only a page past those ranks
        the others: the same hits in the same order, with far fewer vectors read.
        """
        head_where, head_params = self._where(match, "d.head_vector")
        with self._guarded(match) as cursor:
            cursor.execute(
                f"SELECT d.paper_id, {RANK_SQL} AS s, count(*) OVER ()"
                f" FROM dailies_searchdocument d WHERE {head_where}"
                " ORDER BY s DESC, d.last_appeared DESC, d.paper_id DESC LIMIT %s OFFSET %s",
                [rank_literal(match), *head_params, limit, offset],
            )
            rows = cursor.fetchall()
            hits = [Hit(pk, float(score)) for pk, score, _ in rows]
            if len(hits) == limit:
                return hits
            if rows:
                in_head = rows[0][2]
            else:
                cursor.execute(
                    f"SELECT count(*) FROM dailies_searchdocument d WHERE {head_where}",
                    head_params,
                )
                in_head = cursor.fetchone()[0]
        head_match = "coalesce(d.head_vector @@ CAST(%s AS tsquery), false)"
        rest = self._exact_all_excluding(
            match, head_match, offset=max(0, offset - in_head), limit=limit - len(hits)
        )
        return hits + rest

    def _exact_all_excluding(
        self, match: Match, excluded: str, *, offset: int, limit: int
    ) -> list[Hit]:
        """``_exact_all`` over the matches that ``excluded`` (taking the match's tsquery as
        its one parameter) does not hold."""
        where, params = self._where(match)
        sql = (
            f"SELECT d.paper_id, {RANK_SQL} AS s FROM dailies_searchdocument d"
            f" WHERE {where} AND NOT ({excluded})"
            " ORDER BY s DESC, d.last_appeared DESC, d.paper_id DESC LIMIT %s OFFSET %s"
        )
        with self._guarded(match) as cursor:
            cursor.execute(
                sql, [rank_literal(match), *params, tsquery_literal(match), limit, offset]
            )
            return [Hit(pk, float(score)) for pk, score in cursor.fetchall()]

    def _pooled(self, match: Match, *, offset: int, limit: int) -> list[Hit]:
        """The pool (newest ``POOL_SIZE`` papers with every term in their A fields) ranked,
        then the other matches newest first. Left to the planner: it knows how common the
        words are in the small, inline ``head_vector``, and either plan of the remainder
        (newest rows first, or the bitmap) reads few vectors."""
        head_where, head_params = self._where(match, "d.head_vector")
        pool = (
            "SELECT d.paper_id, d.last_appeared, d.vector FROM dailies_searchdocument d"
            f" WHERE {head_where} ORDER BY d.last_appeared DESC, d.paper_id DESC LIMIT %s"
        )
        pool_params = [*head_params, POOL_SIZE]
        hits: list[Hit] = []
        pool_size = None
        with connection.cursor() as cursor:
            if offset < POOL_SIZE:
                cursor.execute(
                    f"WITH pool AS MATERIALIZED ({pool})"
                    f" SELECT d.paper_id, {RANK_SQL} AS s, count(*) OVER () FROM pool d"
                    " ORDER BY s DESC, d.last_appeared DESC, d.paper_id DESC LIMIT %s OFFSET %s",
                    [*pool_params, rank_literal(match), limit, offset],
                )
                rows = cursor.fetchall()
                hits = [Hit(pk, float(score)) for pk, score, _ in rows]
                pool_size = rows[0][2] if rows else None
            if len(hits) == limit:
                return hits
            if pool_size is None:
                cursor.execute(f"SELECT count(*) FROM ({pool}) p", pool_params)
                pool_size = cursor.fetchone()[0]
            # Past the pool: the remaining matches, newest first.
            where, params = self._where(match)
            cursor.execute(
                f"SELECT d.paper_id, {RANK_SQL} AS s FROM dailies_searchdocument d"
                f" WHERE {where} AND d.paper_id NOT IN (SELECT paper_id FROM ({pool}) p)"
                " ORDER BY d.last_appeared DESC, d.paper_id DESC LIMIT %s OFFSET %s",
                [
                    rank_literal(match),
                    *params,
                    *pool_params,
                    limit - len(hits),
                    max(0, offset - pool_size),
                ],
            )
            return hits + [Hit(pk, float(score)) for pk, score in cursor.fetchall()]

    def similar_words(self, word: str, *, limit: int = 3) -> list[tuple[str, str]]:
        """(term, word) of the vocabulary words spelled like ``word``, most similar first
        (one query; pg_trgm's ``%`` operator uses the trigram index)."""
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT w.term, w.word FROM dailies_searchword w"
                " JOIN dailies_searchterm t ON t.term = w.term"
                " WHERE w.word %% %s AND t.documents > 0"
                " ORDER BY similarity(w.word, %s) DESC, t.documents DESC, w.word LIMIT %s",
                [word, word, limit],
            )
            return list(cursor.fetchall())


# --- SQLite ----------------------------------------------------------------------------------


def fts_quote(term: str) -> str:
    return '"' + term.replace('"', '""') + '"'


def fts_match_literal(match: Match) -> str:
    parts = [fts_quote(t) for t in match.terms] + [f"{fts_quote(p)}*" for p in match.prefixes]
    return (" OR " if match.any_term else " AND ").join(parts)


class SqliteBackend:
    def lock_for_writing(self) -> None:
        # SQLite runs one writing transaction at a time (the settings open them IMMEDIATE).
        pass

    def _old_terms(self, paper_ids: Sequence[int]) -> Counter[str]:
        old: Counter[str] = Counter()
        with connection.cursor() as cursor:
            for chunk in _chunks(list(paper_ids), 500):
                marks = ", ".join("%s" for _ in chunk)
                cursor.execute(
                    f"SELECT head, body, extra FROM {FTS_TABLE} WHERE rowid IN ({marks})", chunk
                )
                for row in cursor.fetchall():
                    old.update(set(" ".join(row).split()))
        return old

    def write(
        self, docs: list[IndexDocument], *, replace: Sequence[int], count_terms: bool = True
    ) -> None:
        old = self._old_terms(replace) if count_terms else Counter()
        with connection.cursor() as cursor:
            for chunk in _chunks(list(replace), 500):
                marks = ", ".join("%s" for _ in chunk)
                cursor.execute(f"DELETE FROM {FTS_TABLE} WHERE rowid IN ({marks})", chunk)
            cursor.executemany(
                f"INSERT INTO {FTS_TABLE} (rowid, head, body, extra) VALUES (%s, %s, %s, %s)",
                [
                    (
                        d.paper_id,
                        " ".join(d.terms("A")),
                        " ".join(d.terms("B")),
                        " ".join(d.terms("C")),
                    )
                    for d in docs
                ],
            )
        SearchDocument.objects.filter(paper_id__in=list(replace)).delete()
        now = timezone.now()
        SearchDocument.objects.bulk_create(
            [
                SearchDocument(paper_id=d.paper_id, last_appeared=d.last_appeared, indexed_at=now)
                for d in docs
            ],
            batch_size=500,
        )
        if count_terms:
            _apply_term_deltas(old, docs)

    def recount_terms(self) -> None:
        """Count every term's papers again (reads the whole FTS table)."""
        counts: Counter[str] = Counter()
        with connection.cursor() as cursor:
            cursor.execute(f"SELECT head, body, extra FROM {FTS_TABLE}")
            for row in cursor.fetchall():
                counts.update(set(" ".join(row).split()))
        _recount_from(counts.items())

    def _where(self, match: Match) -> tuple[str, list]:
        sql, params = f"{FTS_TABLE} MATCH %s", [fts_match_literal(match)]
        extra, extra_params = filter_sql(match.filters, "d.paper_id")
        if extra:
            sql, params = f"{sql} AND {extra}", params + extra_params
        return sql, params

    def _from(self) -> str:
        return f"{FTS_TABLE} f JOIN dailies_searchdocument d ON d.paper_id = f.rowid"

    def count(self, match: Match, *, limit: int) -> int:
        where, params = self._where(match)
        with connection.cursor() as cursor:
            cursor.execute(
                f"SELECT count(*) FROM (SELECT 1 FROM {self._from()} WHERE {where} LIMIT %s)",
                [*params, limit],
            )
            return cursor.fetchone()[0]

    def ranked(self, match: Match, *, offset: int, limit: int) -> list[Hit]:
        """One page of hits, best first (one query; the rank is computed in Python)."""
        where, params = self._where(match)
        connection.ensure_connection()
        connection.connection.create_function(
            "paperdaily_rank", 4, _sqlite_rank, deterministic=True
        )
        sql = (
            "SELECT d.paper_id, paperdaily_rank(f.head, f.body, f.extra, %s) AS s"
            f" FROM {self._from()} WHERE {where}"
            " ORDER BY s DESC, d.last_appeared DESC, d.paper_id DESC LIMIT %s OFFSET %s"
        )
        spec = " ".join([*match.terms, *(f"{p}*" for p in match.prefixes)])
        with connection.cursor() as cursor:
            cursor.execute(sql, [spec, *params, limit, offset])
            return [Hit(pk, float(score)) for pk, score in cursor.fetchall()]

    def similar_words(self, word: str, *, limit: int = 3) -> list[tuple[str, str]]:
        """(term, word) of the vocabulary words spelled like ``word`` (one query; similarity
        computed here, as pg_trgm computes it, over the words of about the same length)."""
        live = SearchTerm.objects.filter(term=OuterRef("term"), documents__gt=0)
        candidates = (
            SearchWord.objects.annotate(length=Length("word"))
            .filter(length__range=(len(word) - 3, len(word) + 3))
            .annotate(documents=Subquery(live.values("documents")[:1]))
            .filter(documents__gt=0)
        )
        scored = []
        rows = candidates.values_list("term", "word", "documents").iterator()
        for term, candidate, documents in rows:
            similarity = trigram_similarity(word, candidate)
            if similarity >= SIMILARITY_THRESHOLD:
                scored.append((-similarity, -documents, candidate, term))
        return [(term, w) for _, _, w, term in sorted(scored)[:limit]]


def _sqlite_rank(head: str, body: str, extra: str, spec: str) -> float:
    """``rank_or`` as an SQLite function: the row's three fields and the query's terms
    ("prefix*" for a prefix), all space-separated."""
    words = spec.split()
    terms = [w for w in words if not w.endswith("*")]
    prefixes = [w[:-1] for w in words if w.endswith("*")]
    doc = positions((head.split(), body.split(), extra.split()))
    # PostgreSQL computes in single precision; rounding keeps ties ties on both backends.
    return round(rank_or(doc, terms, prefixes), 6)


def _chunks(items: list, size: int) -> Iterable[list]:
    for start in range(0, len(items), size):
        yield items[start : start + size]
