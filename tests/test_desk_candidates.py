"""The candidates panel of a draft daily: every candidate of the window, ranked by its newest
score, with its rubric, rationale, organisation, venue, abstract and flags; one-click add and
remove through ``daily_update``."""

from __future__ import annotations

import re
from decimal import Decimal

import pytest
from django.urls import reverse

from dailies.models import Daily, EditorialAction
from papers.models import Score, Summary, SummaryFlag, Venue
from tests.factories import make_daily, make_paper, make_track, upcoming_date

Kind = EditorialAction.Kind


def _score(paper, track, total: str, **fields) -> Score:
    return Score.objects.create(
        paper=paper,
        track=track,
        total=Decimal(total),
        scorer="test",
        scorer_version=fields.pop("scorer_version", "1"),
        **fields,
    )


@pytest.fixture
def desk(db):
    """A draft daily of a coming day with one entry, and three more candidates in its window."""
    track = make_track()
    tomorrow = upcoming_date(track)
    kept = make_paper("kept")
    daily = make_daily(track=track, date=tomorrow, papers=[kept], status=Daily.Status.DRAFT)
    venue = Venue.objects.create(short_name="NSDI", year=2027, full_name="NSDI 2027")
    low = make_paper("low", abstract="A low abstract.")
    high = make_paper("high", orgs=("Microsoft",), abstract="The high abstract.", venue=venue)
    mid = make_paper("mid")
    for paper in (kept, low, high, mid):
        paper.tracks.add(track)
    _score(kept, track, "4.00")
    _score(low, track, "2.50")
    _score(high, track, "3.10", scorer_version="1")
    _score(
        high,
        track,
        "4.45",
        scorer_version="2",
        criteria={"relevance": 5, "novelty": 4},
        rationale_en="Whole-product degradation, in production.",
    )
    _score(mid, track, "3.60")
    summary = Summary.objects.get(paper=high, language="en")
    SummaryFlag.objects.create(
        summary=summary,
        kind="number",
        field="body",
        text="2.38×",
        detail="Not in it.",
        start=0,
        end=5,
    )
    return daily


def _url(daily) -> str:
    return reverse("admin:dailies_daily_change", args=[daily.pk])


def test_it_lists_every_candidate_ranked_by_its_newest_score(desk, editor_client):
    html = editor_client.get(_url(desk)).content.decode()
    panel = html.split('id="desk-candidates"', 1)[1]
    rows = re.findall(r'id="desk-candidate-(\d+)"', panel)
    slugs = [desk.track.papers.get(pk=pk).slug for pk in rows]
    assert slugs == ["high", "kept", "mid", "low"]
    high = panel.split('id="desk-candidate-', 2)[1]
    assert "4.45" in high and "3.10" not in high  # the newest score, not the first
    assert "relevance 5" in high and "novelty 4" in high
    assert "Whole-product degradation, in production." in high
    assert "Microsoft" in high and "NSDI" in high
    assert "<details><summary>Abstract</summary><p>The high abstract.</p></details>" in high
    assert "2.38×" in high  # its open grounding flag
    assert "4 candidates" in panel


def test_it_adds_a_candidate_with_its_newest_score_in_one_click(desk, editor, editor_client):
    high = desk.track.papers.get(slug="high")
    url = reverse("admin:dailies_daily_add_candidate", args=[desk.pk])
    response = editor_client.post(url, {"paper": high.pk, "score": ""})
    assert response.status_code == 302
    assert response["Location"].endswith(f"{_url(desk)}#desk-candidates")
    entry = desk.entries.get(paper=high)
    assert (entry.position, entry.score, entry.score_computed) == (
        2,
        Decimal("4.45"),
        Decimal("4.45"),
    )
    action = EditorialAction.objects.get(kind=Kind.ADDED)
    assert (action.user, action.paper, action.score_after) == (editor, high, Decimal("4.45"))


def test_it_adds_a_candidate_with_an_editor_s_score_shown_as_an_override(desk, editor_client):
    mid = desk.track.papers.get(slug="mid")
    url = reverse("admin:dailies_daily_add_candidate", args=[desk.pk])
    assert editor_client.post(url, {"paper": mid.pk, "score": "4.10"}).status_code == 302
    entry = desk.entries.get(paper=mid)
    assert (entry.score, entry.score_computed) == (Decimal("4.10"), Decimal("3.60"))
    html = editor_client.get(_url(desk)).content.decode()
    assert "4.10 (editor; computed 3.60)" in html


def test_it_refuses_a_score_out_of_range_and_stores_nothing(desk, editor_client):
    mid = desk.track.papers.get(slug="mid")
    url = reverse("admin:dailies_daily_add_candidate", args=[desk.pk])
    response = editor_client.post(url, {"paper": mid.pk, "score": "5.05"}, follow=True)
    assert response.status_code == 200
    assert "5.00" in response.content.decode()  # the bound, in the message
    assert not desk.entries.filter(paper=mid).exists()
    response = editor_client.post(url, {"paper": mid.pk, "score": "high"}, follow=True)
    assert "is not a score" in response.content.decode()
    assert not EditorialAction.objects.exists()


def test_it_removes_an_entry_in_one_click_and_records_it(desk, editor, editor_client):
    entry = desk.entries.get()
    url = reverse("admin:dailies_daily_remove", args=[desk.pk, entry.pk])
    assert editor_client.post(url).status_code == 302
    assert not desk.entries.exists()
    action = EditorialAction.objects.get(kind=Kind.REMOVED)
    assert (action.user, action.paper_id, action.detail) == (editor, entry.paper_id, "#1")


def test_the_one_click_views_take_only_a_post_with_a_csrf_token(desk, editor):
    from django.test import Client

    client = Client(enforce_csrf_checks=True)
    client.force_login(editor)
    high = desk.track.papers.get(slug="high")
    url = reverse("admin:dailies_daily_add_candidate", args=[desk.pk])
    assert client.get(url).status_code == 405
    assert client.post(url, {"paper": high.pk}).status_code == 403
    assert not desk.entries.filter(paper=high).exists()


def test_a_viewer_without_change_permission_cannot_add(desk, django_user_model):
    from django.contrib.auth.models import Permission
    from django.test import Client

    viewer = django_user_model.objects.create_user("viewer", "v@example.org", "pw", is_staff=True)
    viewer.user_permissions.set(Permission.objects.filter(codename="view_daily"))
    client = Client()
    client.force_login(viewer)
    high = desk.track.papers.get(slug="high")
    url = reverse("admin:dailies_daily_add_candidate", args=[desk.pk])
    assert client.post(url, {"paper": high.pk}).status_code == 403
    assert not desk.entries.filter(paper=high).exists()
