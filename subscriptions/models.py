"""Email digest subscribers, the deliveries made to them and the bounces their addresses got.

An address is never shown publicly: pages reach a subscriber only by its random token.
"""

from __future__ import annotations

import secrets

from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

from dailies.models import Daily
from papers.languages import Language
from papers.models import Topic, Track
from subscriptions.limits import EMAIL_MAX_LENGTH, FILTERS_MAX_LENGTH, TOKEN_BYTES


def new_token() -> str:
    return secrets.token_urlsafe(TOKEN_BYTES)


class SubscriberQuerySet(models.QuerySet):
    def confirmed(self) -> SubscriberQuerySet:
        return self.filter(status=Recipient.Status.CONFIRMED)


class Recipient(models.Model):
    """An address that asked for mail (a ``Subscriber``, a ``Follow``): confirmed by a
    signed link, then managed and stopped by its random token, suspended after bounces."""

    class Status(models.TextChoices):
        PENDING = "pending", _("Waiting for confirmation")
        CONFIRMED = "confirmed", _("Confirmed")
        UNSUBSCRIBED = "unsubscribed", _("Unsubscribed")
        SUSPENDED = "suspended", _("Suspended (bounced)")

    email = models.EmailField(max_length=EMAIL_MAX_LENGTH)
    language = models.CharField(max_length=5, choices=Language.choices)
    status = models.CharField(max_length=12, choices=Status.choices, default=Status.PENDING)
    # In the preferences and unsubscribe links; whoever holds it manages this subscription.
    token = models.CharField(max_length=64, unique=True, default=new_token, editable=False)
    failure_count = models.PositiveIntegerField(
        default=0, editable=False, help_text=_("Failed deliveries in a row.")
    )
    created_at = models.DateTimeField(auto_now_add=True)
    confirmed_at = models.DateTimeField(null=True, blank=True, editable=False)
    unsubscribed_at = models.DateTimeField(null=True, blank=True, editable=False)
    suspended_at = models.DateTimeField(null=True, blank=True, editable=False)

    objects = SubscriberQuerySet.as_manager()

    class Meta:
        abstract = True


class Subscriber(Recipient):
    track = models.ForeignKey(Track, on_delete=models.CASCADE, related_name="subscribers")
    topic = models.ForeignKey(
        Topic,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="subscribers",
        help_text=_("Only dailies with a paper on this topic; blank for every daily."),
    )

    class Meta:
        ordering = ["-created_at", "-pk"]
        constraints = [
            models.UniqueConstraint(
                fields=["email", "track", "language"],
                name="subscriptions_subscriber_unique_email_track_language",
            ),
            models.CheckConstraint(
                name="subscriptions_subscriber_confirmed_has_time",
                condition=~Q(status="confirmed") | Q(confirmed_at__isnull=False),
            ),
        ]
        indexes = [
            # the fan-out: a track's confirmed subscribers
            models.Index(fields=["track", "status"], name="subscriptions_sub_track_idx"),
        ]

    def __str__(self) -> str:
        return f"#{self.pk} {self.track.slug}/{self.language} ({self.status})"


class MailClaim(models.Model):
    """A mail's claim and attempts (a ``Delivery``, a ``FollowDelivery``). The row is the
    claim: it is inserted before the mail is sent, and a unique constraint lets only one
    worker insert it."""

    class Status(models.TextChoices):
        QUEUED = "queued", _("Queued")
        SENT = "sent", _("Sent")
        FAILED = "failed", _("Failed")

    status = models.CharField(max_length=10, choices=Status.choices, default=Status.QUEUED)
    attempts = models.PositiveSmallIntegerField(default=0)
    # Set while a worker holds the claim; cleared when an attempt fails and waits for a retry.
    claimed_at = models.DateTimeField(null=True, blank=True)
    # After a failed attempt: no new attempt before this time (the backoff).
    retry_after = models.DateTimeField(null=True, blank=True)
    last_error = models.TextField(blank=True)
    sent_at = models.DateTimeField(null=True, blank=True)
    message_id = models.CharField(max_length=255, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        abstract = True


class Delivery(MailClaim):
    """One daily to one subscriber, claimed once per subscriber and daily."""

    subscriber = models.ForeignKey(Subscriber, on_delete=models.CASCADE, related_name="deliveries")
    daily = models.ForeignKey(Daily, on_delete=models.CASCADE, related_name="deliveries")

    class Meta:
        ordering = ["-created_at", "-pk"]
        verbose_name_plural = _("deliveries")
        constraints = [
            models.UniqueConstraint(
                fields=["subscriber", "daily"], name="subscriptions_delivery_once_per_daily"
            ),
            models.CheckConstraint(
                name="subscriptions_delivery_sent_has_time",
                condition=~Q(status="sent") | Q(sent_at__isnull=False),
            ),
        ]
        indexes = [
            # the admin and send_digest: a daily's deliveries by status
            models.Index(fields=["daily", "status"], name="subscriptions_deliv_daily_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.daily} → subscriber #{self.subscriber_id} ({self.status})"


class Bounce(models.Model):
    class Kind(models.TextChoices):
        HARD = "hard", _("Hard (permanent)")
        SOFT = "soft", _("Soft (temporary)")

    email = models.EmailField(max_length=EMAIL_MAX_LENGTH)
    kind = models.CharField(max_length=4, choices=Kind.choices)
    detail = models.TextField(blank=True)
    delivery = models.ForeignKey(
        Delivery, null=True, blank=True, on_delete=models.SET_NULL, related_name="bounces"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-pk"]
        indexes = [
            # the admin: an address's bounces
            models.Index(fields=["email", "-created_at"], name="subscriptions_bounce_email_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.kind} bounce #{self.pk}"


class SubscribeRequest(models.Model):
    """One request of the subscribe form, kept for limits.SUBSCRIBE_WINDOW. The limits per
    mailbox and per client count these rows: in the database, they hold without the cache."""

    # sha256 of addresses.mailbox_key: the table keeps no address
    mailbox = models.CharField(max_length=64)
    client = models.CharField(max_length=64)  # addresses.client_key
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        indexes = [
            # the limit per mailbox
            models.Index(fields=["mailbox", "created_at"], name="subscriptions_req_mailbox_idx"),
            # the limit per client
            models.Index(fields=["client", "created_at"], name="subscriptions_req_client_idx"),
            # forgetting requests older than the window
            models.Index(fields=["created_at"], name="subscriptions_req_created_idx"),
        ]

    def __str__(self) -> str:
        return f"subscribe request #{self.pk}"


class Follow(Recipient):
    """A mail subscription to a filter set (``follow.filters``: tracks, topics, labs,
    authors, a minimum score), delivered daily or weekly. Confirmed, managed and stopped as
    a ``Subscriber`` is: by a signed link, then by its random token."""

    class Frequency(models.TextChoices):
        DAILY = "daily", _("Every day")
        WEEKLY = "weekly", _("Every week")

    filters = models.CharField(
        max_length=FILTERS_MAX_LENGTH, help_text=_("The filter set, as its canonical query string.")
    )
    # sha256 of ``filters``: the unique constraint's column (the query string may be long).
    filters_digest = models.CharField(max_length=64, editable=False)
    frequency = models.CharField(max_length=6, choices=Frequency.choices)

    class Meta:
        ordering = ["-created_at", "-pk"]
        constraints = [
            models.UniqueConstraint(
                fields=["email", "filters_digest", "language", "frequency"],
                name="subscriptions_follow_unique_email_filters",
            ),
            models.CheckConstraint(
                name="subscriptions_follow_confirmed_has_time",
                condition=~Q(status="confirmed") | Q(confirmed_at__isnull=False),
            ),
            models.CheckConstraint(
                name="subscriptions_follow_frequency_known",
                condition=Q(frequency__in=["daily", "weekly"]),
            ),
        ]
        indexes = [
            # the periodic send: confirmed follows of one frequency
            models.Index(fields=["frequency", "status"], name="subscriptions_follow_freq_idx"),
        ]

    def __str__(self) -> str:
        return f"#{self.pk} follow {self.frequency}/{self.language} ({self.status})"


class FollowDelivery(MailClaim):
    """One period's mail (a day, or an ISO week) to one follow, claimed once per follow and
    period."""

    follow = models.ForeignKey(Follow, on_delete=models.CASCADE, related_name="deliveries")
    # "2026-10-28" for a day, "2026-W44" for an ISO week.
    period = models.CharField(max_length=10)
    papers = models.PositiveIntegerField(default=0, help_text=_("Papers the mail listed."))

    class Meta:
        ordering = ["-created_at", "-pk"]
        verbose_name_plural = _("follow deliveries")
        constraints = [
            models.UniqueConstraint(
                fields=["follow", "period"], name="subscriptions_followdelivery_once_per_period"
            ),
            models.CheckConstraint(
                name="subscriptions_followdelivery_sent_has_time",
                condition=~Q(status="sent") | Q(sent_at__isnull=False),
            ),
        ]

    def __str__(self) -> str:
        return f"{self.period} → follow #{self.follow_id} ({self.status})"
