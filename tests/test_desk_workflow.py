"""The workflow buttons of the desk: Preview, Publish now, Schedule, Unpublish, each through
the publishing checklist; only the Editor group publishes, by any path."""

from __future__ import annotations

import datetime as dt
import zoneinfo

import pytest
from django.conf import settings
from django.urls import reverse

from audit.models import AuditRecord
from dailies.models import Daily, EditorialAction
from papers.models import Summary, SummaryFlag
from tests.factories import make_daily, make_paper


def _url(daily) -> str:
    return reverse("admin:dailies_daily_change", args=[daily.pk])


def _flag(paper, language="zh") -> SummaryFlag:
    summary = Summary.objects.get(paper=paper, language=language)
    return SummaryFlag.objects.create(
        summary=summary, kind="number", field="body", text="42", detail="Not in it.", start=0, end=2
    )


@pytest.fixture
def draft(db) -> Daily:
    return make_daily(status=Daily.Status.DRAFT)


def _status(daily) -> tuple:
    daily = Daily.objects.get(pk=daily.pk)
    return daily.status, daily.publish_at, daily.published_at


def test_the_editor_sees_the_workflow_buttons_and_the_preview_link(draft, editor_client):
    html = editor_client.get(_url(draft)).content.decode()
    for name in ("desk-preview", 'name="_publish_now"', 'name="_schedule"'):
        assert name in html
    assert draft.get_absolute_url() in html
    assert settings.EDITORIAL_TIME_ZONE in html


def test_the_preview_banner_links_back_to_the_desk(draft, editor_client, anonymous):
    html = editor_client.get(draft.get_absolute_url()).content.decode()
    banner = html.split('class="status-flag"', 1)[1].split("</p>", 1)[0]
    assert f'href="{_url(draft)}"' in banner


def test_publish_now_is_refused_while_a_flag_is_open_then_goes_out(draft, editor, editor_client):
    entry = draft.entries.order_by("position")[1]
    flag = _flag(entry.paper)
    url = reverse("admin:dailies_daily_publish", args=[draft.pk])
    response = editor_client.post(url, follow=True)
    html = response.content.decode()
    assert "Fix the text or confirm it" in html
    assert f'href="#desk-entry-{entry.pk}-zh"' in html  # the blocker links to the entry
    assert _status(draft)[0] == Daily.Status.DRAFT
    confirm = reverse("admin:dailies_daily_confirm", args=[draft.pk, entry.pk, "zh"])
    assert editor_client.post(confirm).status_code == 302
    flag.refresh_from_db()
    assert flag.resolution == SummaryFlag.Resolution.CONFIRMED and flag.resolved_by == editor
    assert editor_client.post(url).status_code == 302
    assert _status(draft)[0] == Daily.Status.PUBLISHED
    record = AuditRecord.objects.get(action=AuditRecord.Action.PUBLISH)
    assert record.user == editor


def test_schedule_takes_a_date_and_time_in_the_editorial_time_zone(draft, editor_client):
    url = reverse("admin:dailies_daily_schedule", args=[draft.pk])
    assert editor_client.post(url, {"date": "2099-10-28", "time": "08:30"}).status_code == 302
    status, publish_at, _ = _status(draft)
    zone = zoneinfo.ZoneInfo(settings.EDITORIAL_TIME_ZONE)
    assert status == Daily.Status.SCHEDULED
    assert publish_at == dt.datetime(2099, 10, 28, 8, 30, tzinfo=zone)


def test_schedule_refuses_a_malformed_time_and_stores_nothing(draft, editor_client):
    before = _status(draft)
    url = reverse("admin:dailies_daily_schedule", args=[draft.pk])
    response = editor_client.post(url, {"date": "2099-13-40", "time": "8h"}, follow=True)
    assert "Give the publish date and time" in response.content.decode()
    assert _status(draft) == before


def test_unpublish_takes_a_published_daily_off_the_site(db, editor_client, anonymous):
    daily = make_daily()
    assert anonymous.get(daily.get_absolute_url()).status_code == 200
    url = reverse("admin:dailies_daily_unpublish", args=[daily.pk])
    assert editor_client.post(url).status_code == 302
    assert _status(daily) == (Daily.Status.DRAFT, None, None)
    assert anonymous.get(daily.get_absolute_url()).status_code == 404


@pytest.mark.parametrize("view", ["publish", "schedule", "unpublish"])
def test_a_contributor_cannot_use_the_workflow_views(view, db, contributor_client):
    daily = make_daily(status=Daily.Status.DRAFT if view != "unpublish" else Daily.Status.PUBLISHED)
    before = _status(daily)
    url = reverse(f"admin:dailies_daily_{view}", args=[daily.pk])
    response = contributor_client.post(url, {"date": "2099-10-28", "time": "08:30"})
    assert response.status_code == 403
    assert _status(daily) == before


def test_a_contributor_cannot_publish_by_any_path(draft, contributor_client):
    before = _status(draft)
    # the form: no workflow buttons, and the form's own save leaves the status alone
    html = contributor_client.get(_url(draft)).content.decode()
    for name in ('name="_publish_now"', 'name="_schedule"', 'name="_unpublish"'):
        assert name not in html
    assert "an editor publishes it" in html
    # the list action: not offered, and a forged POST is refused
    changelist = reverse("admin:dailies_daily_changelist")
    assert "publish_now" not in contributor_client.get(changelist).content.decode()
    response = contributor_client.post(
        changelist, {"action": "publish_now", "_selected_action": [draft.pk]}
    )
    assert response.status_code in (200, 302, 403)
    # the direct POST to the desk's publish view
    url = reverse("admin:dailies_daily_publish", args=[draft.pk])
    assert contributor_client.post(url).status_code == 403
    assert _status(draft) == before
    assert not AuditRecord.objects.exists()


def test_a_contributor_still_prepares_the_daily(draft, contributor, contributor_client):
    newcomer = make_paper("newcomer")
    url = reverse("admin:dailies_daily_add_candidate", args=[draft.pk])
    assert contributor_client.post(url, {"paper": newcomer.pk, "score": "3.00"}).status_code == 302
    action = EditorialAction.objects.get(kind=EditorialAction.Kind.ADDED)
    assert action.user == contributor
