"""The SQLite backend: an FTS5 table of each paper's terms by weight class.

The FTS5 table ``dailies_search_fts`` (rowid = paper id; made by dailies' migration 0004 on
SQLite only) holds the terms made by ``search.text``, space-separated, in three columns (A,
B and C fields); ``SearchDocument`` rows carry the day each paper last appeared. FTS5 finds
the matches, and the rank is computed in Python with the formula PostgreSQL uses
(``search.backends.ranking.rank_or``), so both backends order hits the same way.

It bounds its work with the PostgreSQL backend's own bounds, read from there so that the two
give the same hits in the same order: it ranks every match when there are at most
``postgres.EXACT_LIMIT`` of them; for more (a very common word matches half the corpus, and
ranking 50,000 rows in Python takes seconds), it ranks the ``postgres.POOL_SIZE`` newest
papers whose head column (the A fields) holds every query term, and lists the other matches
after them, newest first.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from functools import lru_cache
from typing import TYPE_CHECKING

from django.db import connection
from django.db.models import OuterRef, Q, Subquery
from django.db.models.functions import Length
from django.utils import timezone

from search.backends import postgres
from search.backends.base import Hit, Match, filter_sql, pooled_hits
from search.backends.ranking import occurrences, rank_or
from search.backends.vocabulary import apply_term_deltas, recount_from
from search.models import SearchDocument, SearchTerm, SearchWord

if TYPE_CHECKING:
    from search.index import IndexDocument

# Trigram similarity a vocabulary word needs to be offered as the spelling of a query word.
SIMILARITY_THRESHOLD = 0.3
FTS_TABLE = "dailies_search_fts"


def trigram_similarity(a: str, b: str) -> float:
    """pg_trgm's ``similarity()``: shared trigrams of the padded words over all trigrams."""
    return _similarity(_trigrams(a), _trigrams(b))


def _similarity(ta: set[str], tb: set[str]) -> float:
    if not ta or not tb:
        return 0.0
    shared = len(ta & tb)
    return shared / (len(ta) + len(tb) - shared)


def _trigrams(word: str) -> set[str]:
    padded = f"  {word.lower()} "
    return {padded[i : i + 3] for i in range(len(padded) - 2)}


def fts_quote(term: str) -> str:
    return '"' + term.replace('"', '""') + '"'


def fts_match_literal(match: Match, *, column: str | None = None) -> str:
    """The FTS5 query of ``match``; with ``column``, matched in that column only."""
    parts = [fts_quote(t) for t in match.terms] + [f"{fts_quote(p)}*" for p in match.prefixes]
    literal = (" OR " if match.any_term else " AND ").join(parts)
    return f"{column} : ({literal})" if column else literal


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
            apply_term_deltas(old, docs)

    def recount_terms(self) -> None:
        """Count every term's papers again (reads the whole FTS table)."""
        counts: Counter[str] = Counter()
        with connection.cursor() as cursor:
            cursor.execute(f"SELECT head, body, extra FROM {FTS_TABLE}")
            for row in cursor.fetchall():
                counts.update(set(" ".join(row).split()))
        recount_from(counts.items())

    def _where(self, match: Match, column: str | None = None) -> tuple[str, list]:
        sql, params = f"{FTS_TABLE} MATCH %s", [fts_match_literal(match, column=column)]
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
        """One page of hits, best first (one query; two or three for a page that reaches past
        the pool). The rank is computed in Python, for at most ``postgres.EXACT_LIMIT`` rows,
        or the pool's and the page's."""
        connection.ensure_connection()
        connection.connection.create_function(
            "paperdaily_rank", 4, _sqlite_rank, deterministic=True
        )
        if match.estimate is not None and match.estimate <= postgres.EXACT_LIMIT:
            return self._exact(match, offset=offset, limit=limit)
        return self._pooled(match, offset=offset, limit=limit)

    def _exact(self, match: Match, *, offset: int, limit: int) -> list[Hit]:
        """Every match ranked, one page of them."""
        where, params = self._where(match)
        sql = (
            f"SELECT d.paper_id, {RANK_SQL} AS s FROM {self._from()} WHERE {where}"
            " ORDER BY s DESC, d.last_appeared DESC, d.paper_id DESC LIMIT %s OFFSET %s"
        )
        with connection.cursor() as cursor:
            cursor.execute(sql, [rank_spec(match), *params, limit, offset])
            return [Hit(pk, float(score)) for pk, score in cursor.fetchall()]

    def _pooled(self, match: Match, *, offset: int, limit: int) -> list[Hit]:
        """``PostgresBackend._pooled``: the pool (the newest ``postgres.POOL_SIZE`` papers
        with every term in their head column) ranked, then the other matches newest first.
        Only the rows of the page have their text read and ranked past the pool."""
        pool_limit = postgres.POOL_SIZE
        head_where, head_params = self._where(match, "head")
        pool = (
            f"SELECT d.paper_id, d.last_appeared FROM {self._from()} WHERE {head_where}"
            " ORDER BY d.last_appeared DESC, d.paper_id DESC LIMIT %s"
        )
        pool_params = [*head_params, pool_limit]
        spec = rank_spec(match)
        where, params = self._where(match)
        with connection.cursor() as cursor:
            return pooled_hits(
                cursor,
                offset=offset,
                limit=limit,
                pool_limit=pool_limit,
                ranked_pool=(
                    f"WITH pool AS MATERIALIZED ({pool})"
                    f" SELECT d.paper_id, {RANK_SQL} AS s, count(*) OVER ()"
                    f" FROM pool d JOIN {FTS_TABLE} f ON f.rowid = d.paper_id"
                    " ORDER BY s DESC, d.last_appeared DESC, d.paper_id DESC LIMIT %s OFFSET %s",
                    [*pool_params, spec, limit, offset],
                ),
                pool_count=(f"SELECT count(*) FROM ({pool})", pool_params),
                # Past the pool: the remaining matches, newest first, ranked once paged.
                remainder=lambda rest, skip: (
                    f"SELECT d.paper_id, {RANK_SQL} AS s FROM ("
                    f" SELECT d.paper_id, d.last_appeared FROM {self._from()} WHERE {where}"
                    f" AND d.paper_id NOT IN (SELECT paper_id FROM ({pool}))"
                    " ORDER BY d.last_appeared DESC, d.paper_id DESC LIMIT %s OFFSET %s"
                    f") d JOIN {FTS_TABLE} f ON f.rowid = d.paper_id"
                    " ORDER BY d.last_appeared DESC, d.paper_id DESC",
                    [spec, *params, *pool_params, rest, skip],
                ),
            )

    def similar_words(self, word: str, *, limit: int = 3) -> list[tuple[str, str]]:
        """(term, word) of the vocabulary words spelled like ``word`` (one query; similarity
        computed here, as pg_trgm computes it, over the words of about the same length that
        share a trigram with it: no other word can reach the threshold)."""
        live = SearchTerm.objects.filter(term=OuterRef("term"), documents__gt=0)
        candidates = (
            SearchWord.objects.annotate(length=Length("word"))
            .filter(length__range=(len(word) - 3, len(word) + 3))
            .filter(sharing_a_trigram(word))
            .annotate(documents=Subquery(live.values("documents")[:1]))
            .filter(documents__gt=0)
        )
        wanted = _trigrams(word)
        scored = []
        for term, candidate, documents in candidates.values_list("term", "word", "documents"):
            similarity = _similarity(wanted, _trigrams(candidate))
            if similarity >= SIMILARITY_THRESHOLD:
                scored.append((-similarity, -documents, candidate, term))
        return [(term, w) for _, _, w, term in sorted(scored)[:limit]]


def sharing_a_trigram(word: str) -> Q:
    """The words with at least one of ``word``'s trigrams (as ``_trigrams`` pads them): the
    same first letter ("  w"), the same last two ("rd "), or one of its inner three. A
    similarity above 0 needs one, so this only narrows the words compared, in SQL."""
    lowered = word.lower()
    condition = Q(word__istartswith=lowered[:1]) | Q(word__iendswith=lowered[-2:])
    for i in range(len(lowered) - 2):
        condition |= Q(word__icontains=lowered[i : i + 3])
    return condition


# The rank of one row (f, joined on the paper's rowid), given the query's ``rank_spec``.
RANK_SQL = "paperdaily_rank(f.head, f.body, f.extra, %s)"


def rank_spec(match: Match) -> str:
    """The query's terms for ``_sqlite_rank``: space-separated, "prefix*" for a prefix."""
    return " ".join([*match.terms, *(f"{p}*" for p in match.prefixes)])


@lru_cache(maxsize=64)
def _parse_spec(spec: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    words = spec.split()
    return (
        tuple(w for w in words if not w.endswith("*")),
        tuple(w[:-1] for w in words if w.endswith("*")),
    )


def _sqlite_rank(head: str, body: str, extra: str, spec: str) -> float:
    """``rank_or`` as an SQLite function: the row's three fields and the query's terms
    (``rank_spec``)."""
    terms, prefixes = _parse_spec(spec)
    doc = occurrences((head.split(), body.split(), extra.split()), terms, prefixes)
    # PostgreSQL computes in single precision; rounding keeps ties ties on both backends.
    return round(rank_or(doc, terms, prefixes), 6)


def _chunks(items: list, size: int) -> Iterable[list]:
    for start in range(0, len(items), size):
        yield items[start : start + size]
