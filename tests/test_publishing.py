"""Publishing, scheduling and unpublishing dailies, and who may do it."""

from __future__ import annotations

import datetime as dt

import pytest
import time_machine
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import OperationalError
from django.utils import timezone

from dailies import services
from dailies.models import Daily
from dailies.tasks import publish_due_dailies
from tests.factories import make_daily, make_paper


def test_it_publishes_a_complete_draft(db, editor):
    daily = make_daily(status=Daily.Status.DRAFT)
    services.daily_publish(daily=daily, user=editor)
    daily.refresh_from_db()
    assert daily.status == Daily.Status.PUBLISHED and daily.published_at is not None


def test_it_refuses_a_contributor_the_publish_action(db, contributor):
    daily = make_daily(status=Daily.Status.DRAFT)
    with pytest.raises(PermissionDenied):
        services.daily_publish(daily=daily, user=contributor)
    daily.refresh_from_db()
    assert daily.status == Daily.Status.DRAFT


def test_it_will_not_publish_a_daily_without_exactly_one_lead(db, editor):
    daily = make_daily(status=Daily.Status.DRAFT)
    daily.entries.update(is_lead=False)
    with pytest.raises(ValidationError, match="exactly one lead"):
        services.daily_publish(daily=daily, user=editor)


def test_it_will_not_publish_an_empty_daily(db, editor):
    daily = make_daily(status=Daily.Status.DRAFT, papers=[])
    with pytest.raises(ValidationError, match="no entries"):
        services.daily_publish(daily=daily, user=editor)


@time_machine.travel(dt.datetime(2026, 10, 28, 0, 0, tzinfo=dt.UTC), tick=False)
def test_the_periodic_task_publishes_only_due_dailies(db, eager_tasks):
    due = make_daily(date=dt.date(2026, 10, 28), status=Daily.Status.DRAFT)
    later = make_daily(date=dt.date(2026, 10, 29), status=Daily.Status.DRAFT, papers=[make_paper()])
    services.daily_schedule(daily=due, publish_at=timezone.now() - dt.timedelta(minutes=1))
    services.daily_schedule(daily=later, publish_at=timezone.now() + dt.timedelta(hours=1))
    assert publish_due_dailies.delay().get() == [due.pk]
    due.refresh_from_db()
    later.refresh_from_db()
    assert due.status == Daily.Status.PUBLISHED
    assert later.status == Daily.Status.SCHEDULED


@time_machine.travel(dt.datetime(2026, 10, 28, 0, 0, tzinfo=dt.UTC), tick=False)
def test_a_daily_a_database_error_kept_from_going_out_goes_out_at_the_next_tick(
    db, eager_tasks, monkeypatch
):
    """The periodic task is the publisher's retry: a transient error leaves the daily
    scheduled (and is raised, so the worker logs it), the next minute publishes it."""
    daily = make_daily(status=Daily.Status.DRAFT)
    services.daily_schedule(daily=daily, publish_at=timezone.now() - dt.timedelta(minutes=1))
    publish_if_due = services.daily_publish_if_due

    def database_gone(**kwargs):
        raise OperationalError("server closed the connection unexpectedly")

    monkeypatch.setattr(services, "daily_publish_if_due", database_gone)
    with pytest.raises(OperationalError):
        publish_due_dailies.delay().get()
    daily.refresh_from_db()
    assert daily.status == Daily.Status.SCHEDULED
    monkeypatch.setattr(services, "daily_publish_if_due", publish_if_due)
    assert publish_due_dailies.delay().get() == [daily.pk]
    daily.refresh_from_db()
    assert daily.status == Daily.Status.PUBLISHED


def test_it_publishes_a_due_daily_once_even_when_two_workers_race(db):
    daily = make_daily(status=Daily.Status.DRAFT)
    services.daily_schedule(daily=daily, publish_at=timezone.now() - dt.timedelta(seconds=5))
    first = services.daily_publish_if_due(daily_id=daily.pk)
    second = services.daily_publish_if_due(daily_id=daily.pk)
    assert (first, second) == (True, False)


def test_the_bulk_schedule_uses_each_dailys_own_publish_time(db, editor):
    daily = make_daily(status=Daily.Status.DRAFT)
    with pytest.raises(ValidationError, match="Set a publish time first"):
        services.daily_schedule_at_its_time(daily=daily, user=editor)
    when = timezone.now() + dt.timedelta(hours=3)
    Daily.objects.filter(pk=daily.pk).update(publish_at=when)
    daily.refresh_from_db()
    services.daily_schedule_at_its_time(daily=daily, user=editor)
    daily.refresh_from_db()
    assert (daily.status, daily.publish_at) == (Daily.Status.SCHEDULED, when)


def test_unpublish_returns_a_daily_to_draft(db, editor):
    daily = make_daily()
    services.daily_unpublish(daily=daily, user=editor)
    daily.refresh_from_db()
    assert daily.status == Daily.Status.DRAFT and daily.published_at is None


@pytest.mark.parametrize(("group", "may_publish"), [("Editor", True), ("Contributor", False)])
def test_the_groups_from_the_migration_grant_publishing_to_editors_only(
    db, django_user_model, group, may_publish
):
    from django.contrib.auth.models import Group

    user = django_user_model.objects.create_user(f"{group.lower()}-user", password="pw")
    user.is_staff = True
    user.save()
    user.groups.add(Group.objects.get(name=group))
    user = django_user_model.objects.get(pk=user.pk)  # fresh permission cache
    assert user.has_perm("dailies.change_daily")
    daily = make_daily(status=Daily.Status.DRAFT)
    if may_publish:
        services.daily_publish(daily=daily, user=user)
        daily.refresh_from_db()
        assert daily.is_published
    else:
        with pytest.raises(PermissionDenied):
            services.daily_publish(daily=daily, user=user)
