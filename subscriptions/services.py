"""Writes of the email digest: subscribing with double opt-in, preferences, unsubscribing,
and sending each published daily to each confirmed subscriber exactly once.

Exactly once rests on the ``Delivery`` row: a worker inserts it *before* it sends, the
unique (subscriber, daily) constraint lets only one insert win, and only the winner sends.
A row left QUEUED by a worker that died is taken over with a conditional UPDATE once its
lease has run out, never while another worker may still be sending it.
"""

from __future__ import annotations

import logging
import re
import secrets
import smtplib
from collections.abc import Callable
from dataclasses import dataclass, field
from email.utils import make_msgid
from functools import partial
from urllib.parse import urlsplit

from celery import current_app
from django.conf import settings
from django.core import signing
from django.core.exceptions import ValidationError
from django.core.mail import EmailMultiAlternatives, get_connection
from django.db import IntegrityError, transaction
from django.db.models import Count, Exists, F, OuterRef, Q, QuerySet
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import timezone, translation
from django.utils.translation import gettext as _

from dailies.models import Daily, DailyEntry
from dailies.selectors import daily_entries
from papers.models import Topic, Track
from subscriptions import addresses, limits
from subscriptions.models import (
    Bounce,
    Delivery,
    Follow,
    FollowDelivery,
    Subscriber,
    SubscribeRequest,
)

log = logging.getLogger(__name__)

# Signs a subscriber's id, never its token: the token manages the subscription for good.
_CONFIRM_SALT = "subscriptions.confirm-id"
Status = Subscriber.Status


class TooManyRequests(Exception):
    """This mailbox or this client asked to subscribe too often in the window
    (limits.SUBSCRIBE_*)."""


class ConfirmationInvalid(Exception):
    """The link was tampered with, or its subscription is gone or was cancelled since."""


class ConfirmationExpired(ConfirmationInvalid):
    """The link is older than limits.CONFIRM_MAX_AGE."""


def absolute_url(path: str) -> str:
    return f"{settings.SITE_URL}{path}"


_HEADER_BREAKS = re.compile(r"[\s\x00-\x1f\x7f-\x9f]+")


def header_value(text: str) -> str:
    """Stored text made safe for a mail header: a line break would end the header (Django
    refuses the whole message) or start another, so breaks and control characters become
    single spaces."""
    return _HEADER_BREAKS.sub(" ", text).strip()


# --- subscribing -------------------------------------------------------------------------


def subscribe_request_allowed(*, mailbox: str, client: str) -> bool:
    """Record one subscribe request for ``mailbox`` from ``client`` (addresses.mailbox_key,
    addresses.client_key); False once either has used up its allowance in the window
    (limits.SUBSCRIBE_*). It counts again after recording, so of requests arriving together
    no more than the allowance pass; a request refused before recording adds no row. Runs
    four queries."""
    since = timezone.now() - limits.SUBSCRIBE_WINDOW
    SubscribeRequest.objects.filter(created_at__lt=since).delete()
    recent = SubscribeRequest.objects.filter(created_at__gte=since).filter(
        Q(mailbox=mailbox) | Q(client=client)
    )

    def within(extra: int) -> bool:
        counts = recent.aggregate(
            mailbox=Count("pk", filter=Q(mailbox=mailbox)),
            client=Count("pk", filter=Q(client=client)),
        )
        return (
            counts["mailbox"] + extra <= limits.SUBSCRIBE_REQUESTS_PER_ADDRESS
            and counts["client"] + extra <= limits.SUBSCRIBE_REQUESTS_PER_CLIENT
        )

    if not within(1):
        return False
    SubscribeRequest.objects.create(mailbox=mailbox, client=client)
    return within(0)


def subscriber_subscribe(
    *, email: str, track: Track, language: str, topic: Topic | None = None, client: str
) -> None:
    """Ask for a subscription from ``client`` (addresses.client_key). A new or pending one
    (or one unsubscribed before) will get a confirmation mail; a confirmed or suspended one
    is left as it is. Every case runs the same queries and queues the same task (which mails
    only a pending subscriber), and nothing is returned: neither the answer nor its timing
    tells the cases apart. Raises ValidationError for an address the form would refuse,
    TooManyRequests past a limit."""
    email = addresses.address_canonical(email)
    if not subscribe_request_allowed(mailbox=addresses.mailbox_key(email), client=client):
        raise TooManyRequests(email)
    candidate = Subscriber(email=email, track=track, language=language, topic=topic)
    candidate.full_clean(validate_unique=False, validate_constraints=False)
    with transaction.atomic():
        Subscriber.objects.bulk_create([candidate], ignore_conflicts=True)
        same = Subscriber.objects.filter(email=email, track=track, language=language)
        # Not confirmed: the latest request says what to confirm.
        same.filter(status__in=[Status.PENDING, Status.UNSUBSCRIBED]).update(
            status=Status.PENDING, topic=topic
        )
        pk = same.values_list("pk", flat=True).get()
        transaction.on_commit(lambda: _enqueue_confirmation(pk), robust=True)


def _enqueue_confirmation(subscriber_id: int) -> None:
    # By its name, not imported: the tasks module imports this one.
    current_app.tasks["subscriptions.tasks.send_confirmation"].delay(subscriber_id)


def confirmation_token(subscriber: Subscriber) -> str:
    """The confirmation link's token: the subscriber's id, signed and stamped so that it
    expires (limits.CONFIRM_MAX_AGE). Unlike the manage token, it opens no other page."""
    return signing.TimestampSigner(salt=_CONFIRM_SALT).sign(str(subscriber.pk))


def confirmation_message(subscriber: Subscriber) -> EmailMultiAlternatives:
    with translation.override(subscriber.language):
        context = {
            "subscriber": subscriber,
            "track_name": subscriber.track.name(subscriber.language),
            "confirm_url": absolute_url(
                reverse("subscriptions:confirm", args=[confirmation_token(subscriber)])
            ),
            "days": limits.CONFIRM_MAX_AGE.days,
        }
        subject = header_value(_("Confirm your subscription to Paper Daily"))
        body = render_to_string("subscriptions/email/confirm.txt", context)
    return EmailMultiAlternatives(subject=subject, body=body, to=[subscriber.email])


def subscriber_send_confirmation(*, subscriber_id: int) -> bool:
    """Mail the confirmation link to a pending subscriber; False when there is none."""
    subscriber = (
        Subscriber.objects.select_related("track")
        .filter(pk=subscriber_id, status=Status.PENDING)
        .first()
    )
    if subscriber is None:
        return False
    return confirmation_send(confirmation_message(subscriber))


def confirmation_send(message: EmailMultiAlternatives) -> bool:
    """Send a confirmation mail (a subscriber's or a follow's): False when its address is
    refused for good; a refusal is recorded as a bounce, and a soft one raised for the task
    to retry."""
    try:
        message.send()
    except smtplib.SMTPRecipientsRefused as exc:
        code, detail = refusal(exc)
        kind = Bounce.Kind.HARD if code >= 500 else Bounce.Kind.SOFT
        Bounce.objects.create(email=message.to[0], kind=kind, detail=detail)
        if kind == Bounce.Kind.SOFT:
            raise
        return False
    return True


def confirmation_signed_id(token: str, *, salt: str) -> int:
    """The id a confirmation link's token signs with ``salt``: ConfirmationExpired past
    limits.CONFIRM_MAX_AGE, ConfirmationInvalid when it was tampered with."""
    signer = signing.TimestampSigner(salt=salt)
    try:
        return int(signer.unsign(token, max_age=limits.CONFIRM_MAX_AGE))
    except signing.SignatureExpired:
        raise ConfirmationExpired(token) from None
    except (signing.BadSignature, ValueError):
        raise ConfirmationInvalid(token) from None


def confirmation_subscriber(*, token: str) -> Subscriber:
    """The pending or confirmed subscription a confirmation link names, or
    ConfirmationExpired / ConfirmationInvalid. Changes nothing (a GET of the link runs it)."""
    pk = confirmation_signed_id(token, salt=_CONFIRM_SALT)
    subscriber = (
        Subscriber.objects.select_related("track")
        .filter(pk=pk, status__in=[Status.PENDING, Status.CONFIRMED])
        .first()
    )
    if subscriber is None:
        raise ConfirmationInvalid(token)
    return subscriber


def subscriber_confirm(*, token: str) -> Subscriber:
    """Confirm the subscription a confirmation link names (idempotent)."""
    pk = confirmation_subscriber(token=token).pk
    with transaction.atomic():
        subscriber = Subscriber.objects.select_for_update().select_related("track").get(pk=pk)
        if subscriber.status not in (Status.PENDING, Status.CONFIRMED):
            raise ConfirmationInvalid(token)  # unsubscribed in between
        if subscriber.status == Status.PENDING:
            subscriber.status = Status.CONFIRMED
            subscriber.confirmed_at = timezone.now()
            subscriber.full_clean()
            subscriber.save(update_fields=["status", "confirmed_at"])
    return subscriber


def subscriber_update(
    *, subscriber: Subscriber, track: Track, language: str, topic: Topic | None
) -> Subscriber:
    """Change what a subscription receives; its address and status stay."""
    with transaction.atomic():
        stored = Subscriber.objects.select_for_update().get(pk=subscriber.pk)
        stored.track, stored.language, stored.topic = track, language, topic
        taken = (
            Subscriber.objects.filter(email=stored.email, track=track, language=language)
            .exclude(pk=stored.pk)
            .exists()
        )
        if taken:
            raise ValidationError(
                _("You already have a subscription to this track in this language.")
            )
        stored.full_clean(validate_unique=False, validate_constraints=False)
        stored.save(update_fields=["track", "language", "topic"])
    return stored


def subscriber_unsubscribe(*, subscriber: Subscriber) -> Subscriber:
    """Stop every mail to this subscription at once (idempotent)."""
    now = timezone.now()
    Subscriber.objects.filter(pk=subscriber.pk).exclude(status=Status.UNSUBSCRIBED).update(
        status=Status.UNSUBSCRIBED, unsubscribed_at=now
    )
    subscriber.refresh_from_db()
    return subscriber


# --- sending -----------------------------------------------------------------------------


def digest_recipients(
    daily: Daily, *, confirmed_by_publication: bool = False
) -> QuerySet[Subscriber]:
    """Confirmed subscribers of the daily's track who should get it and have not had it
    (nor been given up on): those without a topic, and those whose topic one of its papers
    has; with ``confirmed_by_publication``, only those confirmed when it was published.
    Runs no query until evaluated."""
    topics = Topic.objects.filter(papers__daily_entries__daily=daily)
    done = Delivery.objects.filter(
        subscriber=OuterRef("pk"),
        daily=daily,
        status__in=[Delivery.Status.SENT, Delivery.Status.FAILED],
    )
    return (
        Subscriber.objects.confirmed()
        .filter(track_id=daily.track_id)
        .filter(Q(topic__isnull=True) | Q(topic__in=topics))
        .exclude(Exists(done))
        .filter(Q(confirmed_at__lte=daily.published_at) if confirmed_by_publication else Q())
        .order_by("pk")
    )


def digest_batches(*, daily_id: int, resume: bool = False) -> list[list[int]]:
    """The recipients of a published daily in batches of limits.BATCH_SIZE ids; none for a
    daily readers cannot see. ``resume`` (the periodic sweep) keeps to those confirmed when
    it was published: it finishes what a dead worker left, it does not mail new readers."""
    daily = Daily.objects.published().filter(pk=daily_id).first()
    if daily is None:
        return []
    recipients = digest_recipients(daily, confirmed_by_publication=resume)
    ids = list(recipients.values_list("pk", flat=True).distinct())
    return [ids[i : i + limits.BATCH_SIZE] for i in range(0, len(ids), limits.BATCH_SIZE)]


def digest_dailies_to_resume() -> list[int]:
    """Published dailies recent enough (limits.RESUME_WINDOW) that the sweep finishes their
    sending: what a dead worker left, and retries whose time has come."""
    since = timezone.now() - limits.RESUME_WINDOW
    return list(
        Daily.objects.published()
        .filter(published_at__gte=since)
        .order_by("published_at")
        .values_list("pk", flat=True)
    )


def delivery_claim(*, subscriber_id: int, daily_id: int) -> Delivery | None:
    """Take the right to send this daily to this subscriber, or None if it is not ours:
    sent, given up, held by another worker whose lease has not run out, or waiting for its
    retry time."""
    return claim(Delivery, subscriber_id=subscriber_id, daily_id=daily_id)


def claim(model: type[Delivery] | type[FollowDelivery], **identity) -> Delivery | None:
    """The claim of the delivery row of ``model`` that ``identity`` names (its unique
    fields): inserted, or taken over once its lease ran out and its retry time came."""
    now = timezone.now()
    try:
        with transaction.atomic():
            return model.objects.create(**identity, claimed_at=now, attempts=1)
    except IntegrityError:
        pass  # the row exists: someone claimed it before
    row = model.objects.filter(**identity)
    free = Q(claimed_at__isnull=True) | Q(claimed_at__lt=now - limits.DELIVERY_LEASE)
    due = Q(retry_after__isnull=True) | Q(retry_after__lte=now)
    taken = row.filter(
        free, due, status=Delivery.Status.QUEUED, attempts__lt=limits.DELIVERY_MAX_ATTEMPTS
    ).update(claimed_at=now, attempts=F("attempts") + 1)
    if taken:
        return row.get()
    # A worker died during the last allowed attempt: give the delivery up.
    row.filter(
        free, status=Delivery.Status.QUEUED, attempts__gte=limits.DELIVERY_MAX_ATTEMPTS
    ).update(status=Delivery.Status.FAILED, claimed_at=None)
    return None


@dataclass
class BatchOutcome:
    sent: list[int] = field(default_factory=list)
    skipped: list[int] = field(default_factory=list)  # not ours, or not for them
    failed: list[int] = field(default_factory=list)  # given up
    retry: list[int] = field(default_factory=list)  # try again after ``retry_in`` seconds
    retry_in: float = 0.0

    def as_dict(self) -> dict:
        return {
            "sent": len(self.sent),
            "skipped": len(self.skipped),
            "failed": len(self.failed),
            "retry": len(self.retry),
        }


def site_domain() -> str:
    return urlsplit(settings.SITE_URL).hostname or "localhost"


def _daily_topics(entries: list[DailyEntry]) -> set[int]:
    return {t.pk for e in entries for t in e.paper.topics.all()}


@dataclass(frozen=True)
class RenderedDigest:
    """A daily rendered once for one language; ``slot`` stands where each subscriber's token
    goes (their preferences and unsubscribe links)."""

    language: str
    slot: str
    subject: str
    text: str
    html: str
    unsubscribe_url: str


def digest_render(*, daily: Daily, entries: list[DailyEntry], language: str) -> RenderedDigest:
    """The daily as plain text and HTML in ``language``, with absolute links (no query)."""
    slot = f"token{secrets.token_hex(8)}"  # random: no text in the daily can contain it
    with translation.override(language):
        unsubscribe_url = absolute_url(reverse("subscriptions:unsubscribe", args=[slot]))
        track_name = daily.track.name(language)
        context = {
            "daily": daily,
            "track": daily.track,
            "track_name": track_name,
            "entries": entries,
            "LANG": language,
            "site_url": settings.SITE_URL,
            "daily_url": absolute_url(daily.get_absolute_url()),
            "unsubscribe_url": unsubscribe_url,
            "preferences_url": absolute_url(reverse("subscriptions:preferences", args=[slot])),
        }
        subject = header_value(
            _("%(track_name)s — Paper Daily, %(date)s")
            % {"track_name": track_name, "date": daily.date.isoformat()}
        )
        text = render_to_string("subscriptions/email/digest.txt", context)
        html = render_to_string("subscriptions/email/digest.html", context)
    return RenderedDigest(language, slot, subject, text, html, unsubscribe_url)


def digest_message(
    *, daily: Daily, rendered: RenderedDigest, subscriber: Subscriber, message_id: str
) -> EmailMultiAlternatives:
    """One subscriber's mail: multipart (plain text + HTML) in their language, with one-click
    unsubscribe headers (RFC 8058)."""
    token = subscriber.token  # URL-safe characters only: no escaping needed in either part
    unsubscribe = [f"<{rendered.unsubscribe_url.replace(rendered.slot, token)}>"]
    if settings.DIGEST_UNSUBSCRIBE_MAILTO:
        unsubscribe.append(
            f"<mailto:{settings.DIGEST_UNSUBSCRIBE_MAILTO}?subject=unsubscribe%20{token}>"
        )
    message = EmailMultiAlternatives(
        subject=rendered.subject,
        body=rendered.text.replace(rendered.slot, token),
        to=[subscriber.email],
        headers={
            "Message-ID": message_id,
            "List-Id": header_value(
                f"<{daily.track.slug}.{rendered.language}.digest.{site_domain()}>"
            ),
            "List-Unsubscribe": ", ".join(unsubscribe),
            "List-Unsubscribe-Post": "List-Unsubscribe=One-Click",
            "Auto-Submitted": "auto-generated",
        },
    )
    message.attach_alternative(rendered.html.replace(rendered.slot, token), "text/html")
    return message


def refusal(exc: smtplib.SMTPRecipientsRefused) -> tuple[int, str]:
    code, reply = next(iter(exc.recipients.values()), (0, b""))
    text = reply.decode(errors="replace") if isinstance(reply, bytes) else str(reply)
    return int(code), f"{code} {text}"[:1000]


def suspend(email: str) -> None:
    """The address bounces: stop mailing it, on every subscription and follow it has."""
    for model in (Subscriber, Follow):
        model.objects.filter(email=email).exclude(status=Status.UNSUBSCRIBED).update(
            status=Status.SUSPENDED, suspended_at=timezone.now()
        )


def delivery_sent(
    delivery: Delivery | FollowDelivery,
    subscriber: Subscriber | Follow,
    message_id: str,
    **recorded,
) -> None:
    """Record a sent delivery (a ``Delivery`` or a ``FollowDelivery``, of its subscriber or
    follow), with what else its row records of the mail (``recorded``): the address works,
    its failures in a row start again."""
    type(delivery).objects.filter(pk=delivery.pk).update(
        status=Delivery.Status.SENT,
        sent_at=timezone.now(),
        claimed_at=None,
        message_id=message_id,
        last_error="",
        **recorded,
    )
    if subscriber.failure_count:
        type(subscriber).objects.filter(pk=subscriber.pk).update(failure_count=0)


def delivery_failed(delivery: Delivery, error: str, *, final: bool) -> bool:
    """Record a failed attempt (of a ``Delivery`` or a ``FollowDelivery``); True when the
    delivery will be retried (not before its backoff has passed)."""
    final = final or delivery.attempts >= limits.DELIVERY_MAX_ATTEMPTS
    type(delivery).objects.filter(pk=delivery.pk).update(
        status=Delivery.Status.FAILED if final else Delivery.Status.QUEUED,
        claimed_at=None,
        retry_after=None if final else timezone.now() + limits.retry_delay(delivery.attempts),
        last_error=error[:1000],
    )
    return not final


def address_failed(subscriber: Subscriber) -> None:
    """One more failure the address itself caused (a subscriber's or a follow's); too many
    in a row suspend it."""
    type(subscriber).objects.filter(pk=subscriber.pk).update(failure_count=F("failure_count") + 1)
    subscriber.refresh_from_db(fields=["failure_count"])
    if subscriber.failure_count >= limits.SUSPEND_AFTER_FAILURES:
        suspend(subscriber.email)


@dataclass(frozen=True)
class Mail:
    """One mail of a batch, claimed: its recipient (a subscriber or a follow), the delivery
    row that holds the claim, its builder (called with ``message_id=``) and what its row
    records once it is sent."""

    recipient: Subscriber | Follow
    delivery: Delivery | FollowDelivery
    build: Callable[..., EmailMultiAlternatives]
    sent_fields: dict = field(default_factory=dict)


def batch_send(
    ids: list[int], mail_for: Callable[[int], Mail | None], *, what: str
) -> BatchOutcome:
    """Send each of ``ids`` the mail ``mail_for`` claims for it (None: skipped), on one SMTP
    connection, and record each outcome on its delivery row: sent; a hard bounce suspends
    the address and gives up; a soft bounce or a refused message counts against the address
    and is retried with backoff; a mail that cannot be built fails for good; a server or
    network failure is retried without blaming the address. The batch always goes on.
    ``what`` names the batch in the logs."""
    outcome = BatchOutcome()
    connection = get_connection(fail_silently=False)
    retry_attempts = 0
    try:
        for pk in ids:
            mail = mail_for(pk)
            if mail is None:
                outcome.skipped.append(pk)
                continue
            recipient, delivery = mail.recipient, mail.delivery
            message_id = make_msgid(domain=site_domain())
            try:
                message = mail.build(message_id=message_id)
                connection.open()  # no-op while open; reconnects after a failure closed it
                connection.send_messages([message])
            except smtplib.SMTPRecipientsRefused as exc:
                code, detail = refusal(exc)
                hard = code >= 500
                Bounce.objects.create(
                    email=recipient.email,
                    kind=Bounce.Kind.HARD if hard else Bounce.Kind.SOFT,
                    detail=detail,
                    delivery=delivery if isinstance(delivery, Delivery) else None,
                )
                if hard:
                    suspend(recipient.email)
                else:
                    address_failed(recipient)
                retry = delivery_failed(delivery, detail, final=hard)
            except smtplib.SMTPDataError as exc:
                # The server refused this message (5xx: for good; 4xx: try again later).
                detail = f"{exc.smtp_code} {exc.smtp_error!r}"
                address_failed(recipient)
                retry = delivery_failed(delivery, detail, final=exc.smtp_code >= 500)
            except ValueError as exc:
                # Django cannot build this message (BadHeaderError, or an address with a line
                # break stored before addresses were checked): it never will, so it fails
                # for good, and the batch goes on.
                log.error("%s to %s %s: %r", what, recipient._meta.model_name, pk, exc)
                address_failed(recipient)
                retry = delivery_failed(delivery, repr(exc), final=True)
            except (smtplib.SMTPException, OSError) as exc:
                # The server or the network, not the address: retried, never held against it.
                log.warning("%s to %s %s: %r", what, recipient._meta.model_name, pk, exc)
                connection.close()  # reconnects on the next message
                retry = delivery_failed(delivery, repr(exc), final=False)
            else:
                delivery_sent(delivery, recipient, message_id, **mail.sent_fields)
                outcome.sent.append(pk)
                continue
            if retry:
                outcome.retry.append(pk)
                retry_attempts = max(retry_attempts, delivery.attempts)
            else:
                outcome.failed.append(pk)
    finally:
        connection.close()
    if outcome.retry:
        outcome.retry_in = limits.retry_delay(retry_attempts).total_seconds()
    return outcome


def digest_send_batch(*, daily_id: int, subscriber_ids: list[int]) -> BatchOutcome:
    """Send a published daily to those of ``subscriber_ids`` still due it, each at most once.

    Safe to run twice, or in two workers at once: each mail is sent only by the worker that
    claimed its delivery. A hard bounce suspends the address and the batch goes on."""
    # Re-checked here: a daily unpublished after the fan-out is mailed to no one.
    daily = Daily.objects.published().select_related("track").filter(pk=daily_id).first()
    if daily is None:
        return BatchOutcome(skipped=list(subscriber_ids))
    entries = daily_entries(daily)
    topics = _daily_topics(entries)
    subscribers = {
        s.pk: s
        for s in Subscriber.objects.confirmed().filter(pk__in=subscriber_ids, track=daily.track)
    }
    rendered: dict[str, RenderedDigest] = {}  # once per language, not per subscriber

    def mail_for(pk: int) -> Mail | None:
        subscriber = subscribers.get(pk)
        if subscriber is None or (subscriber.topic_id and subscriber.topic_id not in topics):
            return None
        # Still confirmed now (an unsubscribe, or a bounce earlier in this batch)?
        still = Subscriber.objects.confirmed().filter(pk=pk).exists()
        delivery = delivery_claim(subscriber_id=pk, daily_id=daily.pk) if still else None
        if delivery is None:
            return None
        if subscriber.language not in rendered:
            rendered[subscriber.language] = digest_render(
                daily=daily, entries=entries, language=subscriber.language
            )
        return Mail(
            subscriber,
            delivery,
            partial(
                digest_message,
                daily=daily,
                rendered=rendered[subscriber.language],
                subscriber=subscriber,
            ),
        )

    return batch_send(subscriber_ids, mail_for, what=f"digest {daily}")
