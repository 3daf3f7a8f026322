"""On PostgreSQL, a query of several words with at most ``EXACT_LIMIT`` matches is counted
by the query that ranks it, which keeps the best ``FIRST_HITS`` for the first pages."""

from __future__ import annotations

import datetime as dt

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from dailies.services import daily_publish
from search.backends import postgres
from search.service import search
from tests.factories import make_daily, make_paper

# Papers with both words (in title, summary or abstract, some several times), with one only.
BOTH = [
    ("Quasar pulsar survey", "Findings.", "Abstract."),
    ("Study one", "On quasar and pulsar.", "Abstract."),
    ("Study two", "Findings.", "About quasar quasar and pulsar."),
    ("Quasar study", "On pulsar pulsar.", "Abstract."),
    ("Study three", "On quasar.", "About pulsar."),
    ("Pulsar timing", "Findings.", "About quasar."),
]
ONE = [("Quasar only", "Findings.", "Abstract."), ("Study four", "On pulsar.", "Abstract.")]


@pytest.fixture
def sky(db, django_capture_on_commit_callbacks, is_postgres):
    if not is_postgres:
        pytest.skip("counting by ranking is the PostgreSQL backend's")
    papers = [
        make_paper(f"sky-{n}", title=title, en=body, zh=None, abstract=abstract)
        for n, (title, body, abstract) in enumerate(BOTH + ONE)
    ]
    with django_capture_on_commit_callbacks(execute=True):
        for day, paper in enumerate(papers, start=1):
            daily = make_daily(date=dt.date(2026, 9, day), papers=[paper], status="draft")
            daily.entries.update(accepted_untranslated=["zh"])  # English only, accepted
            daily_publish(daily=daily)
    return papers


def _statements(captured) -> int:
    return sum(1 for q in captured if q["sql"].lstrip().upper().startswith("SELECT"))


def test_it_counts_and_ranks_in_one_statement(sky):
    with CaptureQueriesContext(connection) as captured:
        results = search("quasar pulsar")  # counts, to know whether to relax the query
        assert results.count() == len(BOTH)
        hits = results[0 : len(BOTH)]
    ranking = [q for q in captured if "ts_rank" in q["sql"]]
    assert len(ranking) == 1 and "count(*) OVER ()" in ranking[0]["sql"]
    assert "count(*) FROM" not in " ".join(q["sql"] for q in captured)
    everything = postgres.PostgresBackend()._exact_all(results.match, offset=0, limit=100)
    assert hits == everything
    assert {h.paper_id for h in hits} == {p.pk for p in sky[: len(BOTH)]}


def test_it_ranks_again_only_past_the_hits_it_kept(sky, monkeypatch):
    monkeypatch.setattr(postgres, "FIRST_HITS", 3)
    results = search("quasar pulsar")
    everything = postgres.PostgresBackend()._exact_all(results.match, offset=0, limit=100)
    with CaptureQueriesContext(connection) as captured:
        assert results[0:3] == everything[0:3]  # exactly the kept hits: no query
        assert results[1:2] == everything[1:2]
    assert _statements(captured) == 0
    with CaptureQueriesContext(connection) as captured:
        assert results[2:5] == everything[2:5]  # one past them: ranked again
    assert _statements(captured) >= 1


def test_it_keeps_every_hit_of_a_match_smaller_than_the_bound(sky, monkeypatch):
    monkeypatch.setattr(postgres, "FIRST_HITS", len(BOTH) + 1)
    results = search("quasar pulsar")
    with CaptureQueriesContext(connection) as captured:
        assert len(results[0:50]) == len(BOTH)  # all of them were kept: no query
    assert _statements(captured) == 0


def test_words_common_alone_but_few_together_are_counted_and_ranked_in_one_statement(
    sky, monkeypatch
):
    # Each word is in 7 papers, more than the bound, so the vocabulary cannot tell that
    # only 6 have both: the count finds it out and ranks them in the same statement.
    monkeypatch.setattr(postgres, "EXACT_LIMIT", len(BOTH))
    with CaptureQueriesContext(connection) as captured:
        results = search("quasar pulsar")
        assert results.count() == len(BOTH)
        hits = results[0 : len(BOTH)]
    ranking = [q for q in captured if "ts_rank" in q["sql"]]
    assert len(ranking) == 1 and "count(*) AS total FROM m" in ranking[0]["sql"]
    assert "count(*) FROM (SELECT 1" not in " ".join(q["sql"] for q in captured)
    assert hits == postgres.PostgresBackend()._exact_all(results.match, offset=0, limit=100)


def test_more_matches_than_the_bound_are_only_counted_then_ranked_by_the_page(sky, monkeypatch):
    monkeypatch.setattr(postgres, "EXACT_LIMIT", len(BOTH) - 1)
    results = search("quasar pulsar")
    assert results.count() == len(BOTH)
    with CaptureQueriesContext(connection) as captured:
        hits = results[0:2]
    assert _statements(captured) >= 1  # nothing was kept: the page is ranked now
    assert len(hits) == 2 and {h.paper_id for h in hits} <= {p.pk for p in sky[: len(BOTH)]}
