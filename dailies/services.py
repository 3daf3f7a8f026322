"""Writes to dailies: small, typed, keyword-only, atomic. Views, admin actions and tasks call
these; none of them holds business logic of its own."""

from __future__ import annotations

import datetime as dt

from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from dailies.assembly import track_profile_from_daily
from dailies.models import Daily, DailyStatus
from dailies.search.index import daily_paper_ids, search_index_refresh_on_commit

PUBLISH_PERMISSION = "dailies.publish_daily"


def _check_can_publish(user) -> None:
    if user is not None and not user.has_perm(PUBLISH_PERMISSION):
        raise PermissionDenied(_("You may edit dailies but not publish them."))


def daily_validate_for_publishing(*, daily: Daily) -> None:
    """A daily goes out only with entries, exactly one lead and an intro."""
    entries = list(daily.entries.all())
    if not entries:
        raise ValidationError(_("%(daily)s has no entries.") % {"daily": daily})
    leads = sum(1 for e in entries if e.is_lead)
    if leads != 1:
        raise ValidationError(
            _("%(daily)s needs exactly one lead story (it has %(n)d).")
            % {"daily": daily, "n": leads}
        )
    if not (daily.intro_en or daily.intro_zh):
        raise ValidationError(_("%(daily)s has no intro.") % {"daily": daily})


@transaction.atomic
def daily_publish(*, daily: Daily, user=None, now: dt.datetime | None = None) -> Daily:
    """Publish now. ``user`` None means the system (the scheduler or an import)."""
    _check_can_publish(user)
    daily = Daily.objects.select_for_update().get(pk=daily.pk)
    if daily.status == DailyStatus.PUBLISHED:
        return daily
    daily_validate_for_publishing(daily=daily)
    daily.status = DailyStatus.PUBLISHED
    daily.published_at = now or timezone.now()
    daily.full_clean()
    daily.save(update_fields=["status", "published_at", "updated_at"])
    _after_publish(daily)
    search_index_refresh_on_commit(daily_paper_ids(daily.pk))
    return daily


@transaction.atomic
def daily_schedule(*, daily: Daily, publish_at: dt.datetime, user=None) -> Daily:
    _check_can_publish(user)
    daily = Daily.objects.select_for_update().get(pk=daily.pk)
    if daily.status == DailyStatus.PUBLISHED:
        raise ValidationError(_("%(daily)s is already published.") % {"daily": daily})
    daily_validate_for_publishing(daily=daily)
    daily.status = DailyStatus.SCHEDULED
    daily.publish_at = publish_at
    daily.full_clean()
    daily.save(update_fields=["status", "publish_at", "updated_at"])
    return daily


@transaction.atomic
def daily_unpublish(*, daily: Daily, user=None) -> Daily:
    """Back to draft: off every public page at once."""
    _check_can_publish(user)
    daily = Daily.objects.select_for_update().get(pk=daily.pk)
    daily.status = DailyStatus.DRAFT
    daily.published_at = None
    daily.publish_at = None
    daily.save(update_fields=["status", "published_at", "publish_at", "updated_at"])
    search_index_refresh_on_commit(daily_paper_ids(daily.pk))
    return daily


def dailies_due(*, now: dt.datetime | None = None) -> list[int]:
    """Ids of scheduled dailies whose time has come."""
    return list(
        Daily.objects.filter(status=DailyStatus.SCHEDULED, publish_at__lte=now or timezone.now())
        .order_by("publish_at")
        .values_list("pk", flat=True)
    )


def daily_publish_if_due(*, daily_id: int, now: dt.datetime | None = None) -> bool:
    """Publish one scheduled daily if it is due. Safe when two workers race: the conditional
    UPDATE lets exactly one of them flip the status."""
    now = now or timezone.now()
    with transaction.atomic():
        daily = Daily.objects.filter(pk=daily_id).first()
        if daily is None:
            return False
        daily_validate_for_publishing(daily=daily)
        claimed = Daily.objects.filter(
            pk=daily_id, status=DailyStatus.SCHEDULED, publish_at__lte=now
        ).update(status=DailyStatus.PUBLISHED, published_at=now, updated_at=now)
        if claimed:
            _after_publish(daily)
            search_index_refresh_on_commit(daily_paper_ids(daily_id))
    return claimed == 1


def _after_publish(daily: Daily) -> None:
    """What publishing teaches the system: the selection joins the track's profile."""
    track_profile_from_daily(daily=daily)
