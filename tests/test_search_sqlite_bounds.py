"""The SQLite backend bounds its work with the PostgreSQL backend's bounds (``EXACT_LIMIT``,
``POOL_SIZE``, read from ``search.backends.postgres``), so the two give the same hits in the
same order: every match ranked up to the limit, past it the pool of the newest papers with
the words in their A fields ranked, then the other matches newest first. These run on both
databases; the one that counts the rows ranked in Python is SQLite's."""

from __future__ import annotations

import datetime as dt

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from dailies.services import daily_publish
from search import backends
from search.backends import Filters, Match, postgres, sqlite
from search.service import search
from search.text import tokens
from tests.factories import make_daily, make_paper

# (title, summary, abstract) of papers 1 to 8, oldest first; "quasar" is the query word.
PAPERS = [
    ("Quasar quasar study", "Findings.", "Abstract."),  # 1: two A, the best of all
    ("Study of a quasar", "Findings.", "Abstract."),  # 2: A
    ("Study three", "On a quasar.", "Abstract."),  # 3: B
    ("Quasar study", "On a quasar.", "Abstract."),  # 4: A and B
    ("Study five", "Findings.", "About a quasar."),  # 5: C
    ("Quasar survey", "Findings.", "Abstract."),  # 6: A
    ("Study seven", "On quasar after quasar.", "Abstract."),  # 7: B twice
    ("Quasar census", "Findings.", "Abstract."),  # 8: A, the newest
]
# Every match ranked: two A, A and B, then one A each (newest first), then B twice, B, C.
EXACT = [1, 4, 8, 6, 2, 7, 3, 5]


@pytest.fixture
def quasars(db, django_capture_on_commit_callbacks) -> dict[int, int]:
    """Paper number (1-8) → paper id, each paper alone in the daily of 2026-09-<number>."""
    papers = [
        make_paper(f"item-{n}", title=title, en=body, zh=None, abstract=abstract)
        for n, (title, body, abstract) in enumerate(PAPERS, start=1)
    ]
    with django_capture_on_commit_callbacks(execute=True):
        for day, paper in enumerate(papers, start=1):
            daily = make_daily(date=dt.date(2026, 9, day), papers=[paper], status="draft")
            daily.entries.update(accepted_untranslated=["zh"])  # English only, accepted
            daily_publish(daily=daily)
    return {n: p.pk for n, p in enumerate(papers, start=1)}


def _numbers(hits, quasars: dict[int, int]) -> list[int]:
    number = {pk: n for n, pk in quasars.items()}
    return [number[h.paper_id] for h in hits]


def _bounds(monkeypatch, *, exact_limit: int, pool_size: int) -> None:
    monkeypatch.setattr(postgres, "EXACT_LIMIT", exact_limit)
    monkeypatch.setattr(postgres, "POOL_SIZE", pool_size)


def test_it_ranks_every_match_when_there_are_exactly_the_limit(quasars, monkeypatch):
    _bounds(monkeypatch, exact_limit=len(PAPERS), pool_size=3)
    assert _numbers(search("quasar")[0:50], quasars) == EXACT


def test_it_ranks_the_pool_then_lists_the_rest_newest_first_one_past_the_limit(
    quasars, monkeypatch
):
    _bounds(monkeypatch, exact_limit=len(PAPERS) - 1, pool_size=3)
    results = search("quasar")
    assert results.count() == len(PAPERS)
    # The pool is the 3 newest with the word in an A field (8, 6, 4), ranked; then the
    # others newest first, the best paper of all (1, older than the pool) among them.
    assert _numbers(results[0:50], quasars) == [4, 8, 6, 7, 5, 3, 2, 1]


@pytest.mark.parametrize(
    ("pool_size", "expected"),
    [
        (5, [1, 4, 8, 6, 2, 7, 5, 3]),  # every A match in the pool
        (4, [4, 8, 6, 2, 7, 5, 3, 1]),  # one short: the oldest A match waits its turn
        (1, [8, 7, 6, 5, 4, 3, 2, 1]),
    ],
)
def test_its_pool_holds_exactly_the_pool_size_newest_head_matches(
    quasars, monkeypatch, pool_size, expected
):
    _bounds(monkeypatch, exact_limit=1, pool_size=pool_size)
    assert _numbers(search("quasar")[0:50], quasars) == expected


def test_its_pages_across_the_pool_are_windows_of_one_order(quasars, monkeypatch):
    _bounds(monkeypatch, exact_limit=1, pool_size=3)
    results = search("quasar")
    everything = results[0:50]
    assert len(everything) == len(PAPERS)
    for offset in range(len(PAPERS) + 1):
        for limit in (1, 2, 3, 5, len(PAPERS)):
            assert results[offset : offset + limit] == everything[offset : offset + limit], (
                offset,
                limit,
            )


def test_its_pool_and_the_rest_keep_to_the_filters(quasars, monkeypatch):
    _bounds(monkeypatch, exact_limit=1, pool_size=2)
    results = search("quasar", Filters(date_from=dt.date(2026, 9, 3)))
    assert results.count() == 6
    # Pool: the 2 newest A matches from the 3rd on (8, 6), tied; then 7, 5, 4, 3.
    assert _numbers(results[0:50], quasars) == [8, 6, 7, 5, 4, 3]


def test_a_pair_of_words_past_the_limit_pools_the_papers_with_both_in_a_fields(
    quasars, monkeypatch
):
    _bounds(monkeypatch, exact_limit=1, pool_size=2)
    results = search("quasar study")
    assert results.count() == 6  # 1, 2, 3, 4, 5, 7
    # Both words in A fields: 1, 2, 4; the pool is the newest two (4, then 2: 4 has the
    # word in its summary too); then the others newest first.
    assert _numbers(results[0:50], quasars) == [4, 2, 7, 5, 3, 1]


@pytest.fixture
def rank_calls(monkeypatch, is_postgres) -> list[int]:
    """Each call of the SQLite backend's Python rank function, counted."""
    if is_postgres:
        pytest.skip("ranking in Python is the SQLite backend's")
    calls: list[int] = []
    rank = sqlite._sqlite_rank

    def counted(*args):
        calls.append(1)
        return rank(*args)

    monkeypatch.setattr(sqlite, "_sqlite_rank", counted)
    return calls


def test_it_ranks_no_more_rows_in_python_than_the_pool(quasars, monkeypatch, rank_calls):
    _bounds(monkeypatch, exact_limit=1, pool_size=3)
    results = search("quasar")
    assert _numbers(results[0:2], quasars) == [4, 8]
    assert len(rank_calls) == 3


def test_it_ranks_only_the_page_past_the_pool(quasars, monkeypatch, rank_calls):
    _bounds(monkeypatch, exact_limit=1, pool_size=3)
    results = search("quasar")
    assert _numbers(results[4:6], quasars) == [5, 3]
    assert len(rank_calls) == 2


@pytest.mark.parametrize("found_at_most", [len(PAPERS), 5, 4, 0])
def test_an_any_term_pool_found_through_the_index_is_the_pool_the_walk_finds(
    quasars, monkeypatch, is_postgres, found_at_most
):
    """PostgreSQL gathers an "any of these terms" pool (a paper's related papers) through the
    GIN index when at most ``POOL_FOUND_AT_MOST`` papers match in their head fields, and by
    walking the newest papers otherwise: the same hits in the same order, page by page."""
    if not is_postgres:
        pytest.skip("the index-found pool is PostgreSQL's")
    _bounds(monkeypatch, exact_limit=1, pool_size=3)
    monkeypatch.setattr(postgres, "POOL_FOUND_AT_MOST", found_at_most)
    match = Match(terms=tuple(t.term for t in tokens("quasar census")), any_term=True)
    backend = backends.current()
    with CaptureQueriesContext(connection) as queries:
        everything = backend.ranked(match, offset=0, limit=50)
    # Head matches: 1, 2, 4, 6, 8. The pool is the newest three (8 has both words), ranked;
    # then every other match newest first.
    assert _numbers(everything, quasars) == [8, 4, 6, 7, 5, 3, 2, 1]
    # Found through the index when the bound admits the five head matches, else walked: one
    # statement either way, so a paper page's related papers cost the same at any scale.
    assert len(queries.captured_queries) == 1
    for offset in range(len(PAPERS) + 1):
        for limit in (1, 2, 3, 6):
            window = backend.ranked(match, offset=offset, limit=limit)
            assert window == everything[offset : offset + limit], (offset, limit)


def _ranked_below_a_limit(plan: dict, under_limit: bool = False) -> bool:
    """Whether a node of ``plan`` (EXPLAIN VERBOSE, JSON) under a Limit computes ts_rank."""
    if under_limit and any("ts_rank" in column for column in plan.get("Output", [])):
        return True
    under_limit = under_limit or plan["Node Type"] == "Limit"
    return any(_ranked_below_a_limit(child, under_limit) for child in plan.get("Plans", []))


def test_past_the_pool_only_the_page_is_ranked_in_postgres(quasars, monkeypatch, is_postgres):
    """The matches past the pool are listed newest first; PostgreSQL ranks (reads the toasted
    vector of) only the page's rows, once the order cut them, not every remaining match."""
    if not is_postgres:
        pytest.skip("the SQLite backend's counterpart is test_it_ranks_only_the_page_past_the_pool")
    _bounds(monkeypatch, exact_limit=1, pool_size=3)
    with CaptureQueriesContext(connection) as queries:
        hits = search("quasar")[4:6]
    assert _numbers(hits, quasars) == [5, 3]
    (remainder,) = [q["sql"] for q in queries.captured_queries if "NOT IN" in q["sql"]]
    with connection.cursor() as cursor:
        for setting in ("enable_indexscan", "enable_bitmapscan"):  # a scan of each kind
            cursor.execute(f"SET LOCAL {setting} = off")
            cursor.execute(f"EXPLAIN (VERBOSE, FORMAT JSON) {remainder}")
            (plan,) = cursor.fetchone()[0]
            assert not _ranked_below_a_limit(plan["Plan"]), plan
            cursor.execute(f"RESET {setting}")
