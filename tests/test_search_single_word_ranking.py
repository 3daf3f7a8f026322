"""One word ranks the same when PostgreSQL ranks only the papers with it in an A field first
(``PostgresBackend._exact_head_first``) as when it ranks every match."""

from __future__ import annotations

import datetime as dt

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.test.utils import CaptureQueriesContext

from dailies.services import daily_publish
from search.backends import Match, postgres
from search.service import search
from tests.factories import make_daily, make_paper

# (where the word is, how often): title (A), summary (B), abstract (C), or a mix.
PLACES = [
    ("title", 1),
    ("title", 1),
    ("summary", 3),
    ("summary", 1),
    ("abstract", 1),
    ("abstract", 4),
    ("title+summary", 2),
    ("summary+abstract", 2),
    ("title", 1),
    ("summary", 2),
    ("abstract", 2),
    ("title+abstract", 1),
]


@pytest.fixture
def quasar_papers(db, django_capture_on_commit_callbacks):
    papers = []
    for n, (place, times) in enumerate(PLACES):
        words = " ".join(["quasar"] * times)
        papers.append(
            make_paper(
                f"item-{n}",
                title=f"Study {n}" + (f" of {words}" if "title" in place else ""),
                en=f"Findings {n}." + (f" On {words}." if "summary" in place else ""),
                zh=None,
                abstract=f"Abstract {n}." + (f" About {words}." if "abstract" in place else ""),
            )
        )
    with django_capture_on_commit_callbacks(execute=True):
        for day, paper in enumerate(papers, start=1):
            daily = make_daily(date=dt.date(2026, 9, day), papers=[paper], status="draft")
            daily.entries.update(accepted_untranslated=["zh"])  # English only, accepted
            daily_publish(daily=daily)
    return papers


@pytest.fixture
def postgres_backend(is_postgres):
    if not is_postgres:
        pytest.skip("the head-first ranking is the PostgreSQL backend's")
    return postgres.PostgresBackend()


def test_it_ranks_one_word_exactly_as_ranking_every_match(quasar_papers, postgres_backend):
    match = search("quasar").match
    assert match.terms == ("quasar",)
    everything = postgres_backend._exact_all(match, offset=0, limit=100)
    assert len(everything) == len(PLACES)
    # Every window, including those across the last paper with the word in its title.
    for offset in range(len(PLACES) + 1):
        for limit in (1, 2, 3, 5, len(PLACES)):
            page = postgres_backend._exact_head_first(match, offset=offset, limit=limit)
            assert page == everything[offset : offset + limit], (offset, limit)


def test_it_puts_every_title_match_above_every_other_match(quasar_papers):
    hits = search("quasar")[0:100]
    in_title = {
        p.pk for p, (place, _) in zip(quasar_papers, PLACES, strict=True) if "title" in place
    }
    ranks = [h.paper_id in in_title for h in hits]
    assert ranks == sorted(ranks, reverse=True)
    assert min(h.score for h in hits if h.paper_id in in_title) > 0.6
    assert max(h.score for h in hits if h.paper_id not in in_title) < 0.4


def _documents() -> list[tuple]:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT paper_id, vector::text, head_vector::text, tsvector_to_array(head_vector)"
            " FROM dailies_searchdocument ORDER BY paper_id"
        )
        return cursor.fetchall()


def test_head_vector_holds_the_a_terms_with_every_position_of_theirs(
    quasar_papers, postgres_backend
):
    """``head_vector`` is ``vector`` cut to the A fields' terms, positions and all, so ranking
    a query whose every term is among them gives the same score from either."""
    documents = _documents()
    assert len(documents) == len(PLACES)
    with connection.cursor() as cursor:
        for paper_id, _vector, head, head_terms in documents:
            place = PLACES[[p.pk for p in quasar_papers].index(paper_id)][0]
            assert ("quasar" in head_terms) == ("title" in place)
            cursor.execute(
                "SELECT ts_delete(vector, ARRAY(SELECT t FROM unnest(tsvector_to_array(vector))"
                " t WHERE t <> ALL (%s)))::text FROM dailies_searchdocument WHERE paper_id = %s",
                [head_terms, paper_id],
            )
            assert cursor.fetchone()[0] == head
            for term in head_terms:
                cursor.execute(
                    f"SELECT {postgres.RANK_SQL}, {postgres.HEAD_RANK_SQL}"
                    " FROM dailies_searchdocument d WHERE paper_id = %s",
                    [postgres.ts_quote(term), postgres.ts_quote(term), paper_id],
                )
                on_vector, on_head = cursor.fetchone()
                assert on_vector == on_head > 0, (paper_id, term)


@pytest.mark.parametrize("any_term", [False, True])
def test_a_pool_of_papers_with_every_term_in_their_a_fields_is_ranked_from_head_vector(
    quasar_papers, postgres_backend, monkeypatch, any_term
):
    """Past ``EXACT_LIMIT`` the pool is ranked from the inline ``head_vector`` (same scores
    as from ``vector``); an "any of these terms" pool may hold papers with only some of the
    terms in their A fields, and is ranked from ``vector``."""
    monkeypatch.setattr(postgres, "EXACT_LIMIT", 1)
    monkeypatch.setattr(postgres, "POOL_SIZE", 3)
    monkeypatch.setattr(postgres, "POOL_FOUND_AT_MOST", 0)  # the walk, for either
    match = Match(terms=("quasar",), any_term=any_term)
    scores = {h.paper_id: h.score for h in postgres_backend._exact_all(match, offset=0, limit=99)}
    with CaptureQueriesContext(connection) as queries:
        hits = postgres_backend._pooled(match, offset=0, limit=99)
    assert len(hits) == len(PLACES)
    assert all(hit.score == scores[hit.paper_id] for hit in hits)
    (pool,) = [q["sql"] for q in queries.captured_queries if "pool AS MATERIALIZED" in q["sql"]]
    assert ("d.head_vector AS vector" in pool) is not any_term


@pytest.mark.django_db(transaction=True)
def test_the_migration_gives_head_vectors_indexed_before_their_positions(
    quasar_papers, postgres_backend
):
    """Rows indexed when ``head_vector`` held its terms without positions get them from
    their ``vector`` (search migration 0002); back, they keep them (they match the same)."""
    written = _documents()
    executor = MigrationExecutor(connection)
    executor.migrate([("search", "0001_initial")])
    with connection.cursor() as cursor:
        cursor.execute(  # as the old index wrote it: the terms alone
            "UPDATE dailies_searchdocument"
            " SET head_vector = array_to_tsvector(tsvector_to_array(head_vector))"
        )
    assert _documents() != written
    MigrationExecutor(connection).migrate(MigrationExecutor(connection).loader.graph.leaf_nodes())
    assert _documents() == written
