"""The audit trail of public content: who published, unpublished, scheduled, edited or
deleted what, when, and what changed (issue 10)."""

from __future__ import annotations

import datetime as dt

import pytest
import time_machine
from django.contrib.contenttypes.models import ContentType
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from audit.admin import HISTORY_PANEL_SIZE
from audit.models import AuditRecord
from audit.services import REPR_LIMIT, VALUE_LIMIT, audit_record
from dailies import services
from dailies.desk import editorial_time_zone
from dailies.models import Daily
from dailies.tasks import publish_due_dailies
from deepdives import services as deep_dive_services
from deepdives.models import DeepDive
from tests.factories import make_daily, make_deep_dive, make_paper

Action = AuditRecord.Action
NOW = dt.datetime(2026, 10, 28, 1, 0, tzinfo=dt.UTC)
CHANGELIST = "admin:dailies_daily_changelist"


def _action(client, name: str, daily: Daily):
    response = client.post(reverse(CHANGELIST), {"action": name, "_selected_action": [daily.pk]})
    assert response.status_code == 302
    return response


@time_machine.travel(NOW, tick=False)
def test_it_records_an_editors_publish_with_who_when_and_what(db, editor, editor_client):
    daily = make_daily(status=Daily.Status.DRAFT)
    _action(editor_client, "publish_now", daily)
    record = AuditRecord.objects.get()
    assert (record.user, record.actor, record.action) == (editor, "editor", Action.PUBLISH)
    assert record.created_at == NOW
    assert record.content_type == ContentType.objects.get_for_model(Daily)
    assert (record.object_id, record.object_repr) == (str(daily.pk), "infra 2026-10-28")
    assert record.changes == {
        "status": ["draft", "published"],
        "published_at": [None, NOW.isoformat()],
    }


@time_machine.travel(NOW, tick=False)
def test_it_records_an_editors_schedule_with_its_time(db, editor, editor_client):
    """The desk's one publish-at control schedules the daily at the time given: one record,
    with who, the new status and the time."""
    daily = make_daily(status=Daily.Status.DRAFT)
    url = reverse("admin:dailies_daily_schedule", args=[daily.pk])
    response = editor_client.post(url, {"date": "2026-10-28", "time": "12:00"})
    assert response.status_code == 302
    schedule = AuditRecord.objects.get()
    at = dt.datetime(2026, 10, 28, 12, 0, tzinfo=editorial_time_zone()).isoformat()
    assert (schedule.user, schedule.action) == (editor, Action.SCHEDULE)
    assert schedule.changes["status"] == ["draft", "scheduled"]
    assert schedule.changes["publish_at"] == [None, at]


@time_machine.travel(NOW, tick=False)
def test_it_records_an_editors_unpublish(db, editor, editor_client):
    daily = make_daily(status=Daily.Status.PUBLISHED)
    published_at = daily.published_at.isoformat()
    _action(editor_client, "unpublish", daily)
    record = AuditRecord.objects.get()
    assert (record.user, record.action, record.created_at) == (editor, Action.UNPUBLISH, NOW)
    assert record.changes == {
        "status": ["published", "draft"],
        "published_at": [published_at, None],
    }


def test_it_records_the_schedulers_publish_as_the_system(db, editor, eager_tasks):
    daily = make_daily(status=Daily.Status.DRAFT)
    due = timezone.now() - dt.timedelta(minutes=1)
    services.daily_schedule(daily=daily, publish_at=due, user=editor)
    with time_machine.travel(NOW + dt.timedelta(days=400), tick=False):
        assert publish_due_dailies.delay().get() == [daily.pk]
    schedule, publish = AuditRecord.objects.order_by("pk")
    assert (schedule.user, schedule.action) == (editor, Action.SCHEDULE)
    assert (publish.user, publish.actor, publish.action) == (None, "system", Action.PUBLISH)
    assert publish.changes["status"] == ["scheduled", "published"]
    assert publish.note == "Its scheduled time came."


def test_it_records_nothing_for_a_publish_that_changes_nothing(db, editor):
    daily = make_daily(status=Daily.Status.PUBLISHED)
    services.daily_publish(daily=daily, user=editor)
    draft = make_daily(date=dt.date(2026, 10, 29), status=Daily.Status.DRAFT)
    services.daily_unpublish(daily=draft, user=editor)
    assert not AuditRecord.objects.exists()


def test_it_records_an_edit_of_a_published_deep_dive_with_clipped_bodies(db, editor):
    dive = make_deep_dive(make_paper(), body_en="old " * 600)
    dive.body_en = "new " * 600
    deep_dive_services.deep_dive_save(deep_dive=dive, user=editor)
    record = AuditRecord.objects.get()
    before, after = record.changes["body_en"]
    assert record.action == Action.EDIT
    assert len(before) == len(after) == VALUE_LIMIT and after.endswith("…")


def test_it_keeps_a_value_of_exactly_the_limit_whole(db, editor):
    daily = make_daily()
    audit_record(
        user=editor,
        action=Action.EDIT,
        obj=daily,
        changes={"intro_en": ["x" * VALUE_LIMIT, "y" * (VALUE_LIMIT + 1)]},
    )
    before, after = AuditRecord.objects.get().changes["intro_en"]
    assert before == "x" * VALUE_LIMIT
    assert after == "y" * (VALUE_LIMIT - 1) + "…"


def test_it_keeps_a_name_of_exactly_the_limit_whole(db, editor):
    whole = make_deep_dive(make_paper(), title_en="w" * REPR_LIMIT)
    clipped = make_deep_dive(make_paper(), title_en="c" * (REPR_LIMIT + 1))
    for dive in (whole, clipped):
        audit_record(user=editor, action=Action.EDIT, obj=dive)
    reprs = dict(AuditRecord.objects.values_list("object_id", "object_repr"))
    assert reprs[str(whole.pk)] == "w" * REPR_LIMIT
    assert reprs[str(clipped.pk)] == "c" * (REPR_LIMIT - 1) + "…"


def test_a_record_outlives_its_object_and_its_user(db, editor, django_user_model):
    daily = make_daily()
    services.daily_delete(daily=daily, user=editor)
    django_user_model.objects.filter(pk=editor.pk).delete()
    record = AuditRecord.objects.get()
    assert (record.user, record.actor, record.action) == (None, "editor", Action.DELETE)


# the admin -----------------------------------------------------------------------------------


@pytest.fixture
def superuser_client(client, django_user_model):
    client.force_login(django_user_model.objects.create_superuser("root", "r@example.org", "pw"))
    return client


def _records(editor, contributor, n: int) -> None:
    start = Daily.objects.count()
    for i in range(n):
        day = dt.date(2026, 1, 1) + dt.timedelta(days=start + i)
        daily = make_daily(date=day, papers=[])
        who = editor if i % 2 else contributor
        audit_record(user=who, action=Action.EDIT, obj=daily, changes={"intro_en": ["a", "b"]})
        dive = make_deep_dive(make_paper())
        audit_record(user=None, action=Action.PUBLISH, obj=dive)


def _changelist_queries(client, **params) -> int:
    with CaptureQueriesContext(connection) as queries:
        response = client.get(reverse("admin:audit_auditrecord_changelist"), params)
    assert response.status_code == 200
    return len(queries)


def test_the_audit_list_costs_the_same_for_few_and_many_records(
    db, editor, contributor, superuser_client
):
    _records(editor, contributor, 2)
    few = _changelist_queries(superuser_client)
    _records(editor, contributor, 30)
    assert _changelist_queries(superuser_client) == few


def test_the_audit_list_filters_by_action_model_and_user(db, editor, contributor, superuser_client):
    _records(editor, contributor, 4)
    url = reverse("admin:audit_auditrecord_changelist")

    def listed(**params) -> int:
        return superuser_client.get(url, params).context["cl"].result_count

    daily_type = ContentType.objects.get_for_model(Daily)
    assert listed() == 8
    assert listed(action__exact=Action.PUBLISH) == 4
    assert listed(content_type__id__exact=daily_type.pk) == 4
    assert listed(user__id__exact=editor.pk) == 2


def test_the_audit_trail_is_read_only_in_the_admin(db, editor, superuser_client):
    daily = make_daily()
    record = audit_record(user=editor, action=Action.EDIT, obj=daily)
    assert superuser_client.get(reverse("admin:audit_auditrecord_add")).status_code == 403
    change = reverse("admin:audit_auditrecord_change", args=[record.pk])
    assert 'name="_save"' not in superuser_client.get(change).content.decode()
    superuser_client.post(change, {"actor": "someone else", "action": "delete"})
    delete = reverse("admin:audit_auditrecord_delete", args=[record.pk])
    assert superuser_client.post(delete, {"post": "yes"}).status_code == 403
    record.refresh_from_db()
    assert (record.actor, record.action) == ("editor", Action.EDIT)


def test_the_daily_page_in_the_admin_shows_and_links_its_history(
    db, editor, editor_client, superuser_client
):
    daily = make_daily()
    other = make_daily(date=dt.date(2026, 10, 29))
    for n in range(HISTORY_PANEL_SIZE + 2):
        services.daily_update(daily=daily, user=editor, changes={"intro_en": f"Intro {n}."})
    services.daily_update(daily=other, user=editor, changes={"intro_en": "Other."})
    html = editor_client.get(reverse("admin:dailies_daily_change", args=[daily.pk]))
    html = html.content.decode()
    panel = html.split('class="audit-history"', 1)[1].split("</table>", 1)[0]
    assert panel.count("<tr>") == HISTORY_PANEL_SIZE and "intro_en" in panel
    link = html.split("Full audit history", 1)[0].rsplit('href="', 1)[1].split('"', 1)[0]
    link = link.replace("&amp;", "&")
    listed = superuser_client.get(link).context["cl"]
    assert listed.result_count == HISTORY_PANEL_SIZE + 2
    assert {r.object_id for r in listed.result_list} == {str(daily.pk)}


def test_a_deep_dive_page_in_the_admin_shows_its_history(db, editor, editor_client):
    dive = make_deep_dive(make_paper(), status=DeepDive.Status.DRAFT)
    deep_dive_services.deep_dive_publish(deep_dive=dive, user=editor)
    html = editor_client.get(reverse("admin:deepdives_deepdive_change", args=[dive.pk]))
    assert "Published" in html.content.decode().split('class="audit-history"', 1)[1]


def test_the_demo_import_is_recorded_once_as_the_system(demo):
    from deepdives.demo import demo_load_deep_dives

    loaded = demo_load_deep_dives()
    records = AuditRecord.objects.all()
    published = Daily.objects.published().count()
    assert {(r.actor, r.action) for r in records} == {("system", Action.PUBLISH)}
    assert records.count() == published + loaded
    demo_load_deep_dives()  # nothing changed: nothing recorded
    assert AuditRecord.objects.count() == published + loaded
