"""The long lists editors work from: a fixed number of queries whatever the number of rows,
and the filters they use (track, date, status, has flags, missing language)."""

from __future__ import annotations

import datetime as dt

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from dailies.models import Daily
from papers.models import Summary, SummaryFlag
from tests.factories import make_daily, make_paper, make_track


def _queries(client, url: str, params=None) -> tuple[int, str]:
    with CaptureQueriesContext(connection) as ctx:
        response = client.get(url, params or {})
    assert response.status_code == 200
    return len(ctx.captured_queries), response.content.decode()


def _dailies(n: int, start: int = 0) -> None:
    track = make_track()
    for i in range(start, start + n):
        make_daily(track=track, date=dt.date(2026, 1, 1) + dt.timedelta(days=i))


def test_the_dailies_list_costs_the_same_for_3_and_30_dailies(db, editor_client):
    url = reverse("admin:dailies_daily_changelist")
    _dailies(3)
    few, html = _queries(editor_client, url)
    assert html.count('class="field-selected">3<') == 3  # the annotated count
    _dailies(27, start=3)
    with CaptureQueriesContext(connection) as ctx:
        html = editor_client.get(url).content.decode()
    assert html.count('class="field-selected">3<') == 30
    # session, user, its two permission lists, the track filter, the two counts, the page,
    # the tracks to assemble, the date hierarchy's bounds and its days
    assert len(ctx.captured_queries) == few == 11
    # The entries are counted in the page's query alone, not joined into the list's counts.
    assert sum("dailies_dailyentry" in q["sql"] for q in ctx.captured_queries) == 1


def test_the_dailies_list_filters_by_track_date_and_status(db, editor_client):
    _dailies(2)
    data = make_track("data")
    make_daily(track=data, date=dt.date(2026, 1, 1), status=Daily.Status.DRAFT)
    url = reverse("admin:dailies_daily_changelist")
    _, html = _queries(editor_client, url, {"track__id__exact": data.pk})
    assert "data 2026-01-01" in html and "infra 2026-01-01" not in html
    _, html = _queries(editor_client, url, {"status__exact": "draft"})
    assert "data 2026-01-01" in html and "infra 2026-01-01" not in html
    _, html = _queries(editor_client, url, {"date__gte": "2026-01-02"})
    assert "infra 2026-01-02" in html and "infra 2026-01-01" not in html


def test_the_papers_list_costs_the_same_for_3_and_12_papers(db, editor_client):
    url = reverse("admin:papers_paper_changelist")
    for _ in range(3):
        make_paper(orgs=("Microsoft",))
    few, _ = _queries(editor_client, url)
    for _ in range(9):
        make_paper(orgs=("NVIDIA",))
    many, _ = _queries(editor_client, url)
    assert many == few


@pytest.mark.parametrize("url_name", ["papers_score_changelist", "papers_ingestrun_changelist"])
def test_the_scores_and_ingest_runs_lists_open(db, editor, editor_client, url_name):
    from django.contrib.auth.models import Permission

    editor.user_permissions.add(
        *Permission.objects.filter(codename__in=["view_score", "view_ingestrun"])
    )
    assert editor_client.get(reverse(f"admin:{url_name}")).status_code == 200


def test_the_papers_list_filters_papers_with_open_flags_and_missing_languages(db, editor_client):
    flagged = make_paper("flagged")
    make_paper("clean")
    make_paper("untranslated", zh=None)
    summary = Summary.objects.get(paper=flagged, language="en")
    SummaryFlag.objects.create(
        summary=summary, kind="number", field="body", text="9", start=0, end=1
    )
    url = reverse("admin:papers_paper_changelist")
    _, html = _queries(editor_client, url, {"flags": "open"})
    assert "Flagged" in html and "Clean" not in html
    _, html = _queries(editor_client, url, {"missing": "zh"})
    assert "Untranslated" in html and "Flagged" not in html
