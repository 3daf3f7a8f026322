"""The PostgreSQL backend: weighted tsvectors with GIN indexes, pg_trgm for spellings.

It stores and matches the terms made by ``search.text`` as tsvector and tsquery literals,
never through a text search configuration, and ranks with ``ts_rank`` (``search.backends.
ranking``).

It ranks every match with ``ts_rank`` when there are at most ``EXACT_LIMIT`` of them. A query
made only of very common words ("model", "模型") can match half the corpus, and ranking that
many rows costs hundreds of milliseconds; for those, the backend ranks the ``POOL_SIZE``
newest papers whose A-weighted fields (``head_vector``, small and inline) hold every query
term, which are the papers ``ts_rank`` puts first anyway, and lists the other matches after
them, newest first.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING

from django.db import connection, transaction
from django.db.backends.utils import CursorWrapper
from django.utils import timezone

from search.backends.base import Hit, Match, filter_sql, match_key, pooled_hits
from search.backends.ranking import FIELD_CLASSES, MAX_POSITION, MAX_POSITIONS, TS_RANK_WEIGHTS
from search.backends.vocabulary import apply_term_deltas, recount_from

if TYPE_CHECKING:
    from search.index import IndexDocument

EXACT_LIMIT = 1000
POOL_SIZE = 500
# Above this many matching papers, counting and exact ranking are made to use the GIN index.
PLAN_GUARD_ABOVE = 500
# What a guarded statement is sent after (``_guarded``): the planner's sequential and plain
# index scans off, to the end of the statement's transaction.
PLAN_GUARD_SQL = "SET LOCAL enable_seqscan = off; SET LOCAL enable_indexscan = off; "
# An "any of these terms" match (a paper's related papers) gathers its pool from at most
# this many papers found through the GIN index before it walks the newest papers instead.
POOL_FOUND_AT_MOST = 5000
# How many of the best hits PostgreSQL keeps when it counts a match by ranking it: the
# first pages of the index (30 a page) and of the API come from them with no query.
FIRST_HITS = 100


def ts_quote(term: str) -> str:
    """A lexeme quoted for a tsvector or tsquery literal (no parser, no dictionary)."""
    return "'" + term.replace("\\", "\\\\").replace("'", "''") + "'"


def vector_literals(fields: dict[str, list[str]]) -> tuple[str, str]:
    """The literals of ``vector`` and ``head_vector`` from each weight class's terms, in order.

    ``vector``: ``'term':1A,7B ...``, every occurrence with its position and class
    (numbered as ``positions`` numbers them). ``head_vector``: the same for the terms of the
    A fields alone, with every position of theirs (B and C ones too). ``ts_rank`` sums, for
    each query term, over that term's own positions, so a query whose terms are all among
    them ranks the same on ``head_vector`` as on ``vector``: the pool of papers with every
    query term in their A fields is ranked from the small, inline column, not the toasted
    vectors (``HEAD_RANK_SQL``)."""
    found: dict[str, list[str]] = {}
    position = 0
    for weight in FIELD_CLASSES:
        for term in fields[weight]:
            position = min(position + 1, MAX_POSITION)
            seen = found.setdefault(term, [])
            if len(seen) < MAX_POSITIONS:
                seen.append(f"{position}{weight}")
    entries = {t: f"{ts_quote(t)}:{','.join(p)}" for t, p in found.items()}
    head = dict.fromkeys(fields[FIELD_CLASSES[0]])  # the A fields' terms, in order
    return " ".join(entries.values()), " ".join(entries[t] for t in head)


def tsquery_literal(match: Match, *, any_term: bool | None = None) -> str:
    """The tsquery of ``match``; ``any_term`` True gives the OR form the ranking uses."""
    parts = [ts_quote(t) for t in match.terms] + [f"{ts_quote(p)}:*" for p in match.prefixes]
    any_term = match.any_term if any_term is None else any_term
    return (" | " if any_term else " & ").join(parts)


# ts_rank over the "any term" query (the second parameter of every ranking statement).
RANK_SQL = f"ts_rank('{TS_RANK_WEIGHTS}', d.vector, CAST(%s AS tsquery))"
# The same rank from ``head_vector``, for papers that hold every query term (no prefix) in
# their A fields (``vector_literals``).
HEAD_RANK_SQL = f"ts_rank('{TS_RANK_WEIGHTS}', d.head_vector, CAST(%s AS tsquery))"


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
                    (d.paper_id, d.last_appeared, *vector_literals(d.term_fields()), now)
                    for d in docs
                ],
            )
        if count_terms:
            apply_term_deltas(old, docs)

    def recount_terms(self) -> None:
        """Count every term's papers again (ts_stat reads the whole index)."""
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT word, ndoc FROM ts_stat('SELECT vector FROM dailies_searchdocument')"
            )
            rows = cursor.fetchall()
        recount_from(rows)

    # Reading. Every statement takes the query as one tsquery literal parameter.

    @contextmanager
    def _guarded(self, match: Match) -> Iterator[CursorWrapper | _Guarded]:
        """A cursor for a statement that must find its rows through the GIN index.

        The planner prices ``vector @@ query`` as if checking a row were free, but each
        check reads the row's toasted vector: for a common word it would scan the table and
        read 100,000 vectors where the GIN index answers without reading one. So when the
        words are in more than ``PLAN_GUARD_ABOVE`` papers each statement runs with
        sequential and plain index scans off (a bitmap scan is left): sent after
        ``PLAN_GUARD_SQL`` in one simple query, its own implicit transaction, which the
        settings end with. One round trip: a transaction of its own took four (BEGIN, the
        settings, the statement, COMMIT). Inside a transaction (the settings would last
        to its end) the statements run in a savepoint of their own with the settings made
        there, as they did before.
        """
        guarded = match.estimate is None or match.estimate > PLAN_GUARD_ABOVE
        if guarded and connection.in_atomic_block:
            with transaction.atomic(), connection.cursor() as cursor:
                cursor.execute(PLAN_GUARD_SQL)
                yield cursor
            return
        with connection.cursor() as cursor:
            yield _Guarded(cursor) if guarded else cursor

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
            self._first[match_key(match)] = hits
            return min(total, limit)
        if not self._single_word(match) and limit > EXACT_LIMIT:
            hits, total = self._counted_ranked_if_few(match, limit=limit)
            if total <= EXACT_LIMIT:
                self._first[match_key(match)] = hits
            return total
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
        first = self._first.get(match_key(match))
        if first is not None and (offset + limit <= len(first) or len(first) < FIRST_HITS):
            return first[offset : offset + limit]
        if match.estimate is not None and match.estimate <= EXACT_LIMIT:
            return self._exact(match, offset=offset, limit=limit)
        return self._pooled(match, offset=offset, limit=limit)

    def _exact(self, match: Match, *, offset: int, limit: int) -> list[Hit]:
        if self._single_word(match):
            return self._exact_head_first(match, offset=offset, limit=limit)
        return self._exact_all(match, offset=offset, limit=limit)

    @staticmethod
    def _single_word(match: Match) -> bool:
        return len(match.terms) == 1 and not match.prefixes

    @classmethod
    def _ranks_every_match(cls, match: Match) -> bool:
        estimate = match.estimate
        return estimate is not None and estimate <= EXACT_LIMIT and not cls._single_word(match)

    def _counted_ranked_if_few(self, match: Match, *, limit: int) -> tuple[list[Hit], int]:
        """The matches counted up to ``limit`` and, when there are at most ``EXACT_LIMIT``
        of them (every one will be ranked, whatever the page), their best ``FIRST_HITS``
        ranked in the same statement: words common alone are often rare together, and this
        spares the second pass over them that ``ranked`` would make."""
        where, params = self._where(match)
        sql = (
            "WITH m AS MATERIALIZED (SELECT d.paper_id, d.last_appeared, d.vector"
            f" FROM dailies_searchdocument d WHERE {where} LIMIT %s),"
            " n AS (SELECT count(*) AS total FROM m)"
            " SELECT r.paper_id, r.s, n.total FROM n LEFT JOIN LATERAL ("
            f" SELECT d.paper_id, {RANK_SQL} AS s, d.last_appeared FROM m d"
            " WHERE n.total <= %s"
            " ORDER BY s DESC, d.last_appeared DESC, d.paper_id DESC LIMIT %s"
            ") r ON true ORDER BY r.s DESC, r.last_appeared DESC, r.paper_id DESC"
        )
        with self._guarded(match) as cursor:
            cursor.execute(sql, [*params, limit, rank_literal(match), EXACT_LIMIT, FIRST_HITS])
            rows = cursor.fetchall()
        hits = [Hit(pk, float(score)) for pk, score, _ in rows if pk is not None]
        return hits, rows[0][2]

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
        has the word (a tenth of the matches, typically), from that column (it holds the
        word's every position: the same rank), and only a page past those ranks the others:
        the same hits in the same order, with far fewer vectors read.
        """
        head_where, head_params = self._where(match, "d.head_vector")
        with self._guarded(match) as cursor:
            cursor.execute(
                f"SELECT d.paper_id, {HEAD_RANK_SQL} AS s, count(*) OVER ()"
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
        """The pool (newest ``POOL_SIZE`` papers with every term in their A fields) ranked
        (from their ``head_vector`` when the match has no prefix and wants every term: the
        same rank, ``vector_literals``), then the other matches newest first. Left to the
        planner: it knows how common the words are in the small, inline ``head_vector``, and
        either plan of the remainder (newest rows first, or the bitmap) reads few vectors."""
        head_where, head_params = self._where(match, "d.head_vector")
        # Every term (no prefix) in the A fields: the same rank from the inline head_vector.
        ranked = "d.vector" if match.any_term or match.prefixes else "d.head_vector AS vector"
        pool = (
            f"SELECT d.paper_id, d.last_appeared, {ranked} FROM dailies_searchdocument d"
            f" WHERE {head_where} ORDER BY d.last_appeared DESC, d.paper_id DESC LIMIT %s"
        )
        pool_params = [*head_params, POOL_SIZE]
        where, params = self._where(match)
        rank = rank_literal(match)
        if match.any_term and offset < POOL_SIZE:
            return self._pooled_any_term(match, offset=offset, limit=limit)
        with connection.cursor() as cursor:
            return pooled_hits(
                cursor,
                offset=offset,
                limit=limit,
                pool_limit=POOL_SIZE,
                ranked_pool=(
                    f"WITH pool AS MATERIALIZED ({pool})"
                    f" SELECT d.paper_id, {RANK_SQL} AS s, count(*) OVER () FROM pool d"
                    " ORDER BY s DESC, d.last_appeared DESC, d.paper_id DESC LIMIT %s OFFSET %s",
                    [*pool_params, rank, limit, offset],
                ),
                pool_count=(f"SELECT count(*) FROM ({pool}) p", pool_params),
                # Past the pool: the remaining matches, newest first. Ranked once the page
                # is cut: ranked in the scan, each of the matches' toasted vectors was read
                # (1,536 for 16 hits, 15 ms, for 'dalsar 存在' in bench/search.py; 4 ms so).
                remainder=lambda rest, skip: (
                    f"SELECT d.paper_id, {RANK_SQL} AS s FROM ("
                    "SELECT d.paper_id, d.last_appeared, d.vector FROM dailies_searchdocument d"
                    f" WHERE {where} AND d.paper_id NOT IN (SELECT paper_id FROM ({pool}) p)"
                    " ORDER BY d.last_appeared DESC, d.paper_id DESC LIMIT %s OFFSET %s"
                    ") d ORDER BY d.last_appeared DESC, d.paper_id DESC",
                    [rank, *params, *pool_params, rest, skip],
                ),
            )

    def _pooled_any_term(self, match: Match, *, offset: int, limit: int) -> list[Hit]:
        """``_pooled``'s page for an "any of these terms" match starting in the pool, in one
        statement whatever the data (a paper's related papers cost the same on the demo and
        at a year's scale).

        The pool (the newest ``POOL_SIZE`` head matches) is found through the GIN index when
        at most ``POOL_FOUND_AT_MOST`` papers match in their head fields: the pool's walk over
        the newest papers checks each one's head terms, which the planner prices as free, and
        for the dozen terms of a paper's related papers (a few percent of the papers each) it
        checked 6,000 rows to fill a pool of 500 at a year's scale (8 ms) where the index
        finds the 1,500 matches in 2 ms; a match in more papers is left to the walk, which
        then stops soon. Each branch is gated by the count, so only one runs. The matches
        past the pool fill the page when the pool does not (newest first), under a limit
        that is zero, and reads nothing, when it does."""
        head_where, head_params = self._where(match, "d.head_vector")
        where, params = self._where(match)
        rank = rank_literal(match)
        with connection.cursor() as cursor:
            cursor.execute(
                "WITH found AS MATERIALIZED (SELECT d.paper_id, d.last_appeared, d.vector"
                f" FROM dailies_searchdocument d WHERE {head_where} LIMIT %s),"
                " n AS (SELECT count(*) AS found FROM found),"
                " pool AS MATERIALIZED ((SELECT * FROM found WHERE (SELECT found FROM n) <= %s"
                " ORDER BY last_appeared DESC, paper_id DESC LIMIT %s)"
                " UNION ALL (SELECT d.paper_id, d.last_appeared, d.vector"
                f" FROM dailies_searchdocument d WHERE {head_where}"
                " AND (SELECT found FROM n) > %s"
                " ORDER BY d.last_appeared DESC, d.paper_id DESC LIMIT %s)),"
                f" page AS (SELECT d.paper_id, {RANK_SQL} AS s, d.last_appeared FROM pool d"
                " ORDER BY s DESC, d.last_appeared DESC, d.paper_id DESC LIMIT %s OFFSET %s),"
                f" rest AS (SELECT d.paper_id, {RANK_SQL} AS s, d.last_appeared FROM ("
                "SELECT d.paper_id, d.last_appeared, d.vector FROM dailies_searchdocument d"
                f" WHERE {where} AND d.paper_id NOT IN (SELECT paper_id FROM pool)"
                " ORDER BY d.last_appeared DESC, d.paper_id DESC"
                " LIMIT GREATEST(%s - (SELECT count(*) FROM page), 0)"
                " OFFSET GREATEST(%s - (SELECT count(*) FROM pool), 0)) d)"
                " SELECT paper_id, s FROM (SELECT *, 0 AS part FROM page"
                " UNION ALL SELECT *, 1 AS part FROM rest) r"
                " ORDER BY part, CASE WHEN part = 0 THEN s END DESC,"
                " last_appeared DESC, paper_id DESC",
                [*head_params, POOL_FOUND_AT_MOST + 1, POOL_FOUND_AT_MOST, POOL_SIZE,
                 *head_params, POOL_FOUND_AT_MOST, POOL_SIZE, rank, limit, offset,
                 rank, *params, limit, offset],
            )  # fmt: skip
            return [Hit(pk, float(score)) for pk, score in cursor.fetchall()]

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


class _Guarded:
    """A cursor whose every statement is sent after ``PLAN_GUARD_SQL``, in the same simple
    query (``PostgresBackend._guarded``)."""

    def __init__(self, cursor: CursorWrapper) -> None:
        self._cursor = cursor

    def execute(self, sql: str, params: list) -> None:
        self._cursor.execute(PLAN_GUARD_SQL + sql, params)
        for _ in range(PLAN_GUARD_SQL.count(";")):  # past the settings' results
            self._cursor.nextset()

    def fetchone(self):
        return self._cursor.fetchone()

    def fetchall(self) -> list[tuple]:
        return self._cursor.fetchall()
