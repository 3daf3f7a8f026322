"""Writes of follows: a mail subscription to a filter set (``follow.filters``), daily or
weekly, with the digest's protections: the same limits on subscribe requests, a signed
confirmation link that expires, headers made safe, one-click unsubscribe, and each period's
mail sent at most once per follow (the ``FollowDelivery`` row is the claim, as
``Delivery`` is the digest's).

A daily follow gets the matching papers of the dailies of the day before (their date, in
the editorial time zone), a weekly one those of the ISO week before, on its Monday: a
period is mailed once it is over, so a daily published late in its day is in it.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import logging
from dataclasses import dataclass
from functools import partial
from zoneinfo import ZoneInfo

from celery import current_app
from django.conf import settings
from django.core import signing
from django.core.mail import EmailMultiAlternatives
from django.db import transaction
from django.db.models import Exists, F, OuterRef
from django.http import QueryDict
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import timezone, translation
from django.utils.translation import gettext as _

from dailies.models import DailyEntry
from follow.filters import FilterError, FollowFilters
from papers.languages import pick_language
from subscriptions import addresses, limits
from subscriptions.models import Follow, FollowDelivery
from subscriptions.services import (
    BatchOutcome,
    ConfirmationInvalid,
    Mail,
    TooManyRequests,
    absolute_url,
    batch_send,
    claim,
    confirmation_send,
    confirmation_signed_id,
    header_value,
    site_domain,
    subscribe_request_allowed,
)

log = logging.getLogger(__name__)

_CONFIRM_SALT = "subscriptions.confirm-follow-id"
Status = Follow.Status
Frequency = Follow.Frequency


def filters_digest(query: str) -> str:
    return hashlib.sha256(query.encode()).hexdigest()


# --- subscribing -------------------------------------------------------------------------


def follow_subscribe(
    *, email: str, filters: FollowFilters, language: str, frequency: str, client: str
) -> None:
    """Ask for a follow of ``filters`` from ``client``: as ``subscriber_subscribe``, the
    same answer and the same queries whether the address is new, pending, confirmed or
    suspended, a confirmation mail queued for a pending one only; TooManyRequests past a
    limit (shared with the digest's subscribe form)."""
    if not filters:
        raise ValueError("a follow needs at least one filter")
    email = addresses.address_canonical(email)
    if not subscribe_request_allowed(mailbox=addresses.mailbox_key(email), client=client):
        raise TooManyRequests(email)
    query = filters.query_string()
    identity = {
        "email": email,
        "filters_digest": filters_digest(query),
        "language": language,
        "frequency": frequency,
    }
    candidate = Follow(**identity, filters=query)
    candidate.full_clean(validate_unique=False, validate_constraints=False)
    with transaction.atomic():
        Follow.objects.bulk_create([candidate], ignore_conflicts=True)
        same = Follow.objects.filter(**identity)
        same.filter(status=Status.UNSUBSCRIBED).update(status=Status.PENDING)
        pk = same.values_list("pk", flat=True).get()
        transaction.on_commit(lambda: _enqueue_confirmation(pk), robust=True)


def _enqueue_confirmation(follow_id: int) -> None:
    # By its name, not imported: the tasks module imports this one.
    current_app.tasks["subscriptions.tasks.send_follow_confirmation"].delay(follow_id)


def follow_confirmation_token(follow: Follow) -> str:
    return signing.TimestampSigner(salt=_CONFIRM_SALT).sign(str(follow.pk))


def follow_described(follow: Follow) -> str:
    """The filter set in words, for the mails and pages (its query string, decoded)."""
    params = QueryDict(follow.filters)
    parts = [f"{key}: {', '.join(params.getlist(key))}" for key in params]
    return "; ".join(parts)


def follow_send_confirmation(*, follow_id: int) -> bool:
    """Mail the confirmation link to a pending follow; False when there is none."""
    follow = Follow.objects.filter(pk=follow_id, status=Status.PENDING).first()
    if follow is None:
        return False
    with translation.override(follow.language):
        context = {
            "follow": follow,
            "described": follow_described(follow),
            "frequency": follow.get_frequency_display(),
            "confirm_url": absolute_url(
                reverse("subscriptions:follow_confirm", args=[follow_confirmation_token(follow)])
            ),
            "days": limits.CONFIRM_MAX_AGE.days,
        }
        subject = header_value(_("Confirm what you follow on Paper Daily"))
        body = render_to_string("subscriptions/email/follow_confirm.txt", context)
    return confirmation_send(EmailMultiAlternatives(subject=subject, body=body, to=[follow.email]))


def follow_confirmation(*, token: str) -> Follow:
    """The pending or confirmed follow a confirmation link names; ConfirmationExpired or
    ConfirmationInvalid otherwise. Changes nothing."""
    pk = confirmation_signed_id(token, salt=_CONFIRM_SALT)
    follow = Follow.objects.filter(pk=pk, status__in=[Status.PENDING, Status.CONFIRMED]).first()
    if follow is None:
        raise ConfirmationInvalid(token)
    return follow


def follow_confirm(*, token: str) -> Follow:
    """Confirm the follow a confirmation link names (idempotent)."""
    pk = follow_confirmation(token=token).pk
    with transaction.atomic():
        follow = Follow.objects.select_for_update().get(pk=pk)
        if follow.status not in (Status.PENDING, Status.CONFIRMED):
            raise ConfirmationInvalid(token)
        if follow.status == Status.PENDING:
            follow.status, follow.confirmed_at = Status.CONFIRMED, timezone.now()
            follow.full_clean()
            follow.save(update_fields=["status", "confirmed_at"])
    return follow


def follow_unsubscribe(*, follow: Follow) -> Follow:
    """Stop every mail of this follow at once (idempotent)."""
    Follow.objects.filter(pk=follow.pk).exclude(status=Status.UNSUBSCRIBED).update(
        status=Status.UNSUBSCRIBED, unsubscribed_at=timezone.now()
    )
    follow.refresh_from_db()
    return follow


# --- periods -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Period:
    """The days one follow mail covers: a day, or an ISO week (Monday to Sunday)."""

    frequency: str
    first: dt.date
    last: dt.date

    @property
    def key(self) -> str:
        if self.frequency == Frequency.WEEKLY:
            year, week, _ = self.first.isocalendar()
            return f"{year}-W{week:02d}"
        return self.first.isoformat()

    @classmethod
    def of(cls, frequency: str, key: str) -> Period:
        """The period ``key`` names (ValueError for one that names none)."""
        if frequency == Frequency.WEEKLY:
            year, week = key.split("-W")
            first = dt.date.fromisocalendar(int(year), int(week), 1)
            return cls(frequency, first, first + dt.timedelta(days=6))
        day = dt.date.fromisoformat(key)
        return cls(frequency, day, day)


def follow_period_due(frequency: str, now: dt.datetime | None = None) -> Period:
    """The last period of ``frequency`` that is over, by the editorial time zone's date:
    yesterday, or the ISO week before this one."""
    today = (now or timezone.now()).astimezone(ZoneInfo(settings.EDITORIAL_TIME_ZONE)).date()
    if frequency == Frequency.WEEKLY:
        monday = today - dt.timedelta(days=today.weekday() + 7)
        return Period(frequency, monday, monday + dt.timedelta(days=6))
    yesterday = today - dt.timedelta(days=1)
    return Period(frequency, yesterday, yesterday)


# --- sending -----------------------------------------------------------------------------


def follow_batches(*, period: Period) -> list[list[int]]:
    """The confirmed follows of the period's frequency, confirmed before it ended, that have
    not had its mail (nor been given up on), in batches of limits.FOLLOW_BATCH_SIZE ids."""
    done = FollowDelivery.objects.filter(
        follow=OuterRef("pk"),
        period=period.key,
        status__in=[FollowDelivery.Status.SENT, FollowDelivery.Status.FAILED],
    )
    ended = dt.datetime.combine(
        period.last + dt.timedelta(days=1), dt.time(), ZoneInfo(settings.EDITORIAL_TIME_ZONE)
    )
    ids = list(
        Follow.objects.confirmed()
        .filter(frequency=period.frequency, confirmed_at__lt=ended)
        .exclude(Exists(done))
        .order_by("pk")
        .values_list("pk", flat=True)
    )
    size = limits.FOLLOW_BATCH_SIZE
    return [ids[i : i + size] for i in range(0, len(ids), size)]


def follow_entries(filters: FollowFilters, period: Period) -> list[DailyEntry]:
    """The published entries of the period's dailies that ``filters`` match, one per paper
    (its best score, then its earliest daily), highest score first, at most
    limits.FOLLOW_MAIL_PAPERS: three queries."""
    rows = (
        filters.entries()
        .filter(daily__date__range=(period.first, period.last))
        .select_related("daily", "daily__track", "paper")
        .prefetch_related("paper__summaries", "paper__organizations")
        .order_by(
            F("score").desc(nulls_last=True), "daily__date", "daily__track__position", "position"
        )
    )
    chosen: dict[int, DailyEntry] = {}
    for entry in rows:
        chosen.setdefault(entry.paper_id, entry)
    return list(chosen.values())[: limits.FOLLOW_MAIL_PAPERS]


def follow_message(
    *, follow: Follow, period: Period, entries: list[DailyEntry], message_id: str
) -> EmailMultiAlternatives:
    """The follow's mail for ``period``: plain text and HTML in its language, its headers
    made safe, with one-click unsubscribe (RFC 8058)."""
    language = follow.language
    with translation.override(language):
        unsubscribe_url = absolute_url(
            reverse("subscriptions:follow_unsubscribe", args=[follow.token])
        )
        weeks = sorted({(e.daily.track.slug, e.daily.track.name(language)) for e in entries})
        context = {
            "follow": follow,
            "period": period,
            "weekly": period.frequency == Frequency.WEEKLY,
            "items": [(e, pick_language(list(e.paper.summaries.all()), language)) for e in entries],
            "described": follow_described(follow),
            "LANG": language,
            "site_url": settings.SITE_URL,
            "follow_url": absolute_url(f"{reverse('follow:builder')}?{follow.filters}"),
            # The weekly roundup of each track in the mail (its page is the roundup's).
            "roundups": [
                (name, absolute_url(f"/{language}/{slug}/week/{period.key}/"))
                for slug, name in weeks
            ]
            if period.frequency == Frequency.WEEKLY
            else [],
            "unsubscribe_url": unsubscribe_url,
        }
        if period.frequency == Frequency.WEEKLY:
            subject = _("What you follow — Paper Daily, week %(week)s") % {"week": period.key}
        else:
            subject = _("What you follow — Paper Daily, %(date)s") % {"date": period.key}
        text = render_to_string("subscriptions/email/follow.txt", context)
        html = render_to_string("subscriptions/email/follow.html", context)
    unsubscribe = [f"<{unsubscribe_url}>"]
    if settings.DIGEST_UNSUBSCRIBE_MAILTO:
        unsubscribe.append(
            f"<mailto:{settings.DIGEST_UNSUBSCRIBE_MAILTO}?subject=unsubscribe%20{follow.token}>"
        )
    message = EmailMultiAlternatives(
        subject=header_value(subject),
        body=text,
        to=[follow.email],
        headers={
            "Message-ID": message_id,
            "List-Id": header_value(f"<follow.{follow.frequency}.{language}.{site_domain()}>"),
            "List-Unsubscribe": ", ".join(unsubscribe),
            "List-Unsubscribe-Post": "List-Unsubscribe=One-Click",
            "Auto-Submitted": "auto-generated",
        },
    )
    message.attach_alternative(html, "text/html")
    return message


def follow_send_batch(*, frequency: str, period_key: str, follow_ids: list[int]) -> BatchOutcome:
    """Mail the period's matching papers to those of ``follow_ids`` still due them, each at
    most once: safe to run twice, or in two workers at once (only the claim's holder sends).
    A follow nothing matched in the period gets no mail and no row."""
    period = Period.of(frequency, period_key)
    follows = {
        f.pk: f for f in Follow.objects.confirmed().filter(pk__in=follow_ids, frequency=frequency)
    }

    def mail_for(pk: int) -> Mail | None:
        follow = follows.get(pk)
        if follow is None:
            return None
        try:
            filters = FollowFilters.parse(QueryDict(follow.filters))
        except FilterError as error:  # a value readers no longer see: nothing to match
            log.info("follow %s: %s", pk, error)
            return None
        entries = follow_entries(filters, period)
        still = Follow.objects.confirmed().filter(pk=pk).exists()
        delivery = (
            claim(FollowDelivery, follow_id=pk, period=period.key) if entries and still else None
        )
        if delivery is None:
            return None
        return Mail(
            follow,
            delivery,
            partial(follow_message, follow=follow, period=period, entries=entries),
            sent_fields={"papers": len(entries)},
        )

    return batch_send(follow_ids, mail_for, what=f"follow mail for {period.key}")
