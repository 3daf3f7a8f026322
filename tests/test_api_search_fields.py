"""GET /api/v1/search keeps its shape and adds the summary in ``lang``, the relevance by that
name and the editorial score apart from it."""

from __future__ import annotations

import datetime as dt

import pytest

from tests.factories import make_daily, make_paper

pytestmark = pytest.mark.django_db


def _results(client, query: str) -> list[dict]:
    response = client.get(f"/api/v1/search?{query}")
    assert response.status_code == 200, response.content
    return response.json()["results"]


def test_it_names_relevance_apart_from_the_editorial_score(indexed_demo, anonymous):
    for row in _results(anonymous, "q=cache&limit=100"):
        assert row["relevance"] == row["score"] and row["relevance"] > 0
    listed = _results(anonymous, "topic=vector-search")
    assert all(r["relevance"] is None for r in listed)


def test_it_gives_the_editorial_score_of_the_latest_daily(
    anonymous, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        paper = make_paper("scored", title="Graceful degradation under surges")
        make_daily(date=dt.date(2026, 10, 27), papers=[paper], scores=["3.50"])
        make_daily(date=dt.date(2026, 10, 28), papers=[paper], scores=["4.25"])
    [row] = _results(anonymous, "topic=&track=infra")
    assert row["editorial_score"] == 4.25 and row["relevance"] is None


def test_it_gives_the_summary_in_the_language_asked_for(indexed_demo, anonymous):
    [zh] = _results(anonymous, "q=wakman&lang=zh&limit=1")
    assert zh["summary"]["language"] == "zh" and zh["summary"]["not_yet_translated"] is False
    assert zh["summary"]["headline"] and zh["summary"]["takeaway"] in zh["summary"]["body"]
    [en] = _results(anonymous, "q=wakman&lang=en&limit=1")
    assert (
        en["summary"]["language"] == "en" and en["summary"]["headline"] != zh["summary"]["headline"]
    )
