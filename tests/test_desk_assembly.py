"""Assembly that explains itself: the message names the requested date's cut-off window and,
when papers exist for a later one, the date they belong to; the admin assembles the next
daily of a track."""

from __future__ import annotations

import datetime as dt

import pytest
from django.urls import reverse

from dailies.assembly import daily_assemble, daily_assemble_next
from dailies.models import Daily
from papers.models import Paper
from tests.factories import make_daily, make_paper, make_track

DAY = dt.date(2026, 11, 5)  # its cut-off: 07:00 Asia/Shanghai = 23:00 UTC on the 4th


def _ingested(track, slug: str, at: dt.datetime) -> Paper:
    paper = make_paper(slug)
    paper.tracks.add(track)
    Paper.objects.filter(pk=paper.pk).update(created_at=at)
    return paper


@pytest.fixture
def track(db):
    return make_track()


def test_it_names_the_window_and_the_date_later_papers_belong_to(track):
    make_daily(track=track, date=DAY - dt.timedelta(days=1), papers=[])
    # 23:30 UTC on the 4th = 07:30 on the 5th in Shanghai: after DAY's cut-off.
    _ingested(track, "late", dt.datetime(2026, 11, 4, 23, 30, tzinfo=dt.UTC))
    result = daily_assemble(track=track, date=DAY)
    assert result.status == "no-candidates"
    assert "in the window of 2026-11-05 (2026-11-04 07:00 – 2026-11-05 07:00" in result.message
    assert "Asia/Shanghai" in result.message
    assert "belong to the daily of 2026-11-06" in result.message


def test_a_paper_right_at_the_cut_off_belongs_to_that_day(track):
    make_daily(track=track, date=DAY - dt.timedelta(days=1), papers=[])
    # Exactly the next day's cut-off (07:00 on the 6th in Shanghai): that day's daily.
    _ingested(track, "edge", dt.datetime(2026, 11, 5, 23, 0, tzinfo=dt.UTC))
    result = daily_assemble(track=track, date=DAY)
    assert "belong to the daily of 2026-11-06" in result.message
    assert daily_assemble(track=track, date=dt.date(2026, 11, 6)).status == "created"


def test_without_later_papers_it_says_only_the_window(track):
    result = daily_assemble(track=track, date=DAY)
    assert "in the window of 2026-11-05 (up to 2026-11-05 07:00" in result.message
    assert "belong to" not in result.message


def test_the_admin_assembles_the_next_daily_of_a_track(track, editor_client):
    make_daily(track=track, date=DAY, papers=[])
    _ingested(track, "next", dt.datetime(2026, 11, 5, 12, 0, tzinfo=dt.UTC))
    changelist = reverse("admin:dailies_daily_changelist")
    assert 'name="_assemble_next"' in editor_client.get(changelist).content.decode()
    response = editor_client.post(reverse("admin:dailies_daily_assemble_next"), {"track": track.pk})
    daily = Daily.objects.get(track=track, date=DAY + dt.timedelta(days=1))
    assert response.status_code == 302
    assert response["Location"] == reverse("admin:dailies_daily_change", args=[daily.pk])
    assert daily.candidates_scored == 1  # "next", scored by the default scorer


def test_assembling_with_nothing_to_assemble_explains_why_on_the_list(track, editor_client):
    make_daily(track=track, date=DAY, papers=[])
    url = reverse("admin:dailies_daily_assemble_next")
    response = editor_client.post(url, {"track": track.pk}, follow=True)
    assert "in the window of 2026-11-06" in response.content.decode()
    assert Daily.objects.count() == 1


def test_the_next_daily_of_a_track_without_one_is_todays_in_the_editorial_time_zone(track):
    # 20:00 UTC on the 5th is 04:00 on the 6th in Shanghai.
    now = dt.datetime(2026, 11, 5, 20, 0, tzinfo=dt.UTC)
    assert daily_assemble_next(track=track, now=now).date == dt.date(2026, 11, 6)
    make_daily(track=track, date=dt.date(2026, 11, 9), papers=[])
    assert daily_assemble_next(track=track, now=now).date == dt.date(2026, 11, 10)
