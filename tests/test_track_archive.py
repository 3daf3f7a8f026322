"""The track archive: its published dailies, newest first, at a cost that does not grow with
the dailies on the page."""

from __future__ import annotations

import datetime as dt

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from dailies.models import Daily
from tests.factories import make_daily, make_paper, make_track

pytestmark = pytest.mark.django_db


def _dailies(n: int) -> None:
    track = make_track()
    for day in range(n):
        make_daily(
            track=track, date=dt.date(2026, 9, 1) + dt.timedelta(days=day), papers=[make_paper()]
        )


def _queries(client, settings) -> int:
    settings.PAGE_CACHE_ENABLED = False
    with CaptureQueriesContext(connection) as captured:
        assert client.get("/en/infra/").status_code == 200
    return len(captured)


def test_it_lists_published_dailies_newest_first(anonymous, settings):
    _dailies(3)
    make_daily(track=make_track(), date=dt.date(2026, 9, 10), status=Daily.Status.DRAFT)
    settings.PAGE_CACHE_ENABLED = False
    html = anonymous.get("/en/infra/").content.decode()
    dates = ["2026-09-03", "2026-09-02", "2026-09-01"]
    assert [html.index(d) for d in dates] == sorted(html.index(d) for d in dates)
    assert "2026-09-10" not in html


def test_its_query_count_does_not_grow_with_the_dailies(anonymous, settings):
    _dailies(3)
    few = _queries(anonymous, settings)
    for day in range(12):
        make_daily(track=make_track(), date=dt.date(2026, 10, 1) + dt.timedelta(days=day))
    assert _queries(anonymous, settings) == few
