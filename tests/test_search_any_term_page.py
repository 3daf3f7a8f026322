"""An "any of these terms" page starting in the pool (a paper's related papers, a relaxed
search) is one statement on PostgreSQL whatever the data: the pool found through the index
or by the walk, and the matches past it when the pool does not fill the page."""

from __future__ import annotations

from django.db import connection
from django.test.utils import CaptureQueriesContext

from search.backends import Match
from tests.test_search_single_word_ranking import postgres_backend, quasar_papers  # noqa: F401


def test_a_page_costs_one_query_whether_the_pool_fills_it_or_not(
    quasar_papers,  # noqa: F811
    postgres_backend,  # noqa: F811
):
    match = Match(terms=("quasar", "find"), any_term=True)
    pages = {}
    for offset, limit in ((0, 3), (0, 50), (10, 5)):
        with CaptureQueriesContext(connection) as queries:
            pages[offset, limit] = postgres_backend.ranked(match, offset=offset, limit=limit)
        assert len(queries) == 1, (offset, limit)
    every = pages[0, 50]
    # Every paper has "Findings" in its summary; the ones with "quasar" in the title are the
    # pool (head fields), ranked first, best first.
    assert sorted(hit.paper_id for hit in every) == sorted(p.pk for p in quasar_papers)
    assert pages[0, 3] == every[:3] and pages[10, 5] == every[10:15]
    pooled = [hit.score for hit in every[:5]]
    assert pooled == sorted(pooled, reverse=True)
