"""Dailies and their entries.

``published_q`` is the one definition of "visible to readers": ``Daily.objects.published()``,
``DailyEntry.objects.published()`` and the selectors built on them are the only way public
code reads dailies, entries and the papers in them, through ``visible_to(user)``: the
published for readers, everything for staff who preview (``digest_site.visibility``).
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models
from django.db.models import Max, Min, Q
from django.urls import reverse
from django.utils.translation import gettext_lazy as _

from digest_site.visibility import Reader, may_preview
from papers.models import SCORE_MAX, SCORE_MIN, SCORE_VALIDATORS, Paper, Summary, Track

# The scorer of the scores taken over from a daily as published (the demo's import), which
# pages name as such rather than as a scorer.
IMPORT_SCORER = "daily-import"


class DailyStatus(models.TextChoices):
    DRAFT = "draft", _("Draft")
    SCHEDULED = "scheduled", _("Scheduled")
    PUBLISHED = "published", _("Published")


def published_q(prefix: str = "") -> Q:
    """The condition a daily meets when readers may see it; ``prefix`` reaches it via joins."""
    return Q(**{f"{prefix}status": DailyStatus.PUBLISHED})


class DailyQuerySet(models.QuerySet):
    def published(self) -> DailyQuerySet:
        return self.filter(published_q())

    def visible_to(self, user: Reader) -> DailyQuerySet:
        """What ``user`` may read: every daily when they preview, else the published ones."""
        return self.all() if may_preview(user) else self.published()

    def for_track(self, track: Track) -> DailyQuerySet:
        return self.filter(track=track)


class IntroFields(models.Model):
    """The intro in both languages, who wrote each, and the machine draft's drafter and open
    grounding flags: a daily's and a week's roundup's, drafted by ``dailies.drafting``."""

    intro_en = models.TextField(_("intro (English)"), blank=True)
    intro_zh = models.TextField(_("intro (Chinese)"), blank=True)
    # Who wrote each intro: a machine draft (replaced by re-drafting) or an editor (never).
    intro_en_provenance = models.CharField(
        _("intro (English) written by"),
        max_length=10,
        choices=Summary.Provenance.choices,
        default=Summary.Provenance.EDITOR,
    )
    intro_zh_provenance = models.CharField(
        _("intro (Chinese) written by"),
        max_length=10,
        choices=Summary.Provenance.choices,
        default=Summary.Provenance.EDITOR,
    )
    intro_drafter = models.CharField(
        max_length=200, blank=True, editable=False, help_text=_("Drafter, version and model.")
    )
    intro_drafted_at = models.DateTimeField(null=True, blank=True, editable=False)
    intro_flags = models.JSONField(
        default=list,
        blank=True,
        editable=False,
        help_text=_("Open grounding flags of the machine-drafted intros."),
    )

    class Meta:
        abstract = True

    def intro_provenance(self, language: str) -> str:
        return getattr(self, f"intro_{language}_provenance")


class Daily(IntroFields):
    Status = DailyStatus

    track = models.ForeignKey(Track, on_delete=models.PROTECT, related_name="dailies")
    date = models.DateField(help_text=_("The day of the daily, in the editorial time zone."))
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.DRAFT)
    publish_at = models.DateTimeField(
        null=True, blank=True, help_text=_("When a scheduled daily goes out.")
    )
    published_at = models.DateTimeField(null=True, blank=True, editable=False)
    candidates_scored = models.PositiveIntegerField(
        null=True,
        blank=True,
        editable=False,
        help_text=_("Recorded by the system when the daily is assembled or imported."),
    )
    assembled_at = models.DateTimeField(null=True, blank=True, editable=False)
    edited_by_editor = models.BooleanField(
        default=False,
        editable=False,
        help_text=_("An editor changed it; re-assembly leaves it alone."),
    )
    # An editor's explicit choice to publish the daily in English only (who and when): the
    # publishing checklist then asks nothing of its Chinese texts.
    english_only_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        editable=False,
        related_name="+",
    )
    english_only_at = models.DateTimeField(null=True, blank=True, editable=False)
    # What readers were shown, pinned when the daily was first published (``dailies.record``):
    # the score rows behind its selection chart and its entries' rubrics, and the track
    # minimum the chart marks. A rescoring, a new scorer or a new candidate adds rows these
    # never include, so a published daily reads the same ever after.
    pinned_scores = models.ManyToManyField(
        "papers.Score", blank=True, editable=False, related_name="+"
    )
    pinned_min_score = models.DecimalField(
        max_digits=3, decimal_places=2, null=True, blank=True, editable=False
    )
    pinned_at = models.DateTimeField(null=True, blank=True, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = DailyQuerySet.as_manager()

    class Meta:
        ordering = ["-date", "track"]
        verbose_name_plural = _("dailies")
        get_latest_by = "date"
        permissions = [("publish_daily", _("Can publish, schedule and unpublish dailies"))]
        constraints = [
            models.UniqueConstraint(
                fields=["track", "date"], name="dailies_daily_unique_track_date"
            ),
            models.CheckConstraint(
                name="dailies_daily_scheduled_has_time",
                condition=~Q(status=DailyStatus.SCHEDULED) | Q(publish_at__isnull=False),
            ),
            models.CheckConstraint(
                name="dailies_daily_published_has_time",
                condition=~Q(status=DailyStatus.PUBLISHED) | Q(published_at__isnull=False),
            ),
        ]
        indexes = [
            # home page and track archive: a track's published dailies, newest first
            models.Index(
                fields=["track", "status", "-date"], name="dailies_daily_track_status_idx"
            ),
            # the periodic publisher: scheduled dailies that are due
            models.Index(fields=["status", "publish_at"], name="dailies_daily_due_idx"),
            # the cross-day index: every track's published dailies, newest first, walked
            # until a page of papers is found (selectors.index_papers)
            models.Index(fields=["status", "-date"], name="dailies_daily_status_date_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.track.slug} {self.date:%Y-%m-%d}"

    def get_absolute_url(self) -> str:
        return reverse("dailies:daily", args=[self.track.slug, self.date])

    @property
    def is_published(self) -> bool:
        return self.status == DailyStatus.PUBLISHED

    @property
    def is_pinned(self) -> bool:
        """Published with its scores pinned: it reads them, not the newest (``dailies.record``)."""
        return self.is_published and self.pinned_at is not None

    def stats(self) -> DailyStats:
        """Selected count and score range, derived from the entries (runs a query)."""
        agg = self.entries.aggregate(
            selected=models.Count("pk"), low=Min("score"), high=Max("score")
        )
        return DailyStats(self.candidates_scored, agg["selected"], agg["low"], agg["high"])


class DailyStats:
    """What the stats line says; always derived, never typed by an editor."""

    def __init__(
        self,
        candidates: int | None,
        selected: int,
        low: Decimal | None,
        high: Decimal | None,
    ) -> None:
        self.candidates = candidates
        self.selected = selected
        self.low = low
        self.high = high

    @classmethod
    def from_entries(cls, candidates: int | None, entries: list[DailyEntry]) -> DailyStats:
        scores = [e.score for e in entries if e.score is not None]
        return cls(candidates, len(entries), min(scores, default=None), max(scores, default=None))

    @property
    def has_range(self) -> bool:
        return self.low is not None


class DailyEntryQuerySet(models.QuerySet):
    def published(self) -> DailyEntryQuerySet:
        return self.filter(published_q("daily__"))

    def visible_to(self, user: Reader) -> DailyEntryQuerySet:
        """The entries of the dailies ``user`` may read (``DailyQuerySet.visible_to``)."""
        return self.all() if may_preview(user) else self.published()


class DailyEntry(models.Model):
    daily = models.ForeignKey(Daily, on_delete=models.CASCADE, related_name="entries")
    paper = models.ForeignKey(Paper, on_delete=models.PROTECT, related_name="daily_entries")
    position = models.PositiveSmallIntegerField()
    is_lead = models.BooleanField(_("lead story"), default=False)
    score = models.DecimalField(
        max_digits=3,
        decimal_places=2,
        null=True,
        blank=True,
        validators=SCORE_VALIDATORS,
        help_text=_("The score shown on the daily."),
    )
    # The scorer's newest score when the entry was made; ``score`` differs from it only when
    # an editor overrode it, and the desk shows both.
    score_computed = models.DecimalField(
        _("computed score"),
        max_digits=3,
        decimal_places=2,
        null=True,
        blank=True,
        editable=False,
        validators=SCORE_VALIDATORS,
    )
    accepted_untranslated = models.JSONField(
        default=list,
        blank=True,
        help_text=_(
            "Languages an editor accepts to publish without a summary of their own "
            "(shown as “not yet translated”)."
        ),
    )

    objects = DailyEntryQuerySet.as_manager()

    class Meta:
        ordering = ["daily", "position"]
        verbose_name_plural = _("daily entries")
        constraints = [
            models.UniqueConstraint(
                fields=["daily", "position"], name="dailies_entry_unique_position"
            ),
            models.UniqueConstraint(fields=["daily", "paper"], name="dailies_entry_unique_paper"),
            models.UniqueConstraint(
                fields=["daily"], condition=Q(is_lead=True), name="dailies_entry_one_lead"
            ),
            models.CheckConstraint(
                name="dailies_entry_score_in_range",
                condition=Q(score__isnull=True)
                | (Q(score__gte=SCORE_MIN) & Q(score__lte=SCORE_MAX)),
            ),
            models.CheckConstraint(
                name="dailies_entry_position_positive", condition=Q(position__gte=1)
            ),
        ]
        indexes = [
            # paper page and index: the dailies a paper appeared in
            models.Index(fields=["paper", "daily"], name="dailies_entry_paper_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.daily} #{self.position} {self.paper}"

    @property
    def score_is_override(self) -> bool:
        return self.score_computed is not None and self.score != self.score_computed


class EditorialAction(models.Model):
    """What an editor did to a daily's selection: the scorer learns from these."""

    class Kind(models.TextChoices):
        ADDED = "added", _("Added a paper")
        REMOVED = "removed", _("Removed a paper")
        SCORE_OVERRIDE = "score", _("Overrode a score")
        LEAD = "lead", _("Chose the lead story")
        REORDERED = "reordered", _("Moved a story")
        TEXT_EDITED = "text", _("Edited a text")

    daily = models.ForeignKey(Daily, on_delete=models.CASCADE, related_name="actions")
    # None for the daily's own texts (the intro).
    paper = models.ForeignKey(
        Paper,
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="editorial_actions",
    )
    kind = models.CharField(max_length=10, choices=Kind.choices)
    detail = models.CharField(
        max_length=200, blank=True, help_text=_("Where it moved, or which text changed.")
    )
    score_before = models.DecimalField(max_digits=3, decimal_places=2, null=True, blank=True)
    score_after = models.DecimalField(max_digits=3, decimal_places=2, null=True, blank=True)
    user = models.ForeignKey(
        "auth.User", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-pk"]
        indexes = [
            # the admin's history of one daily
            models.Index(fields=["daily", "-created_at"], name="dailies_action_daily_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.daily} {self.kind} {self.paper}"


def iso_week_monday(year: int, week: int) -> dt.date:
    """The Monday of ISO ``year``-W``week``; ValueError for a week the year does not have."""
    return dt.date.fromisocalendar(year, week, 1)


def iso_week_label(monday: dt.date) -> str:
    """``2026-W44``: the ISO year and week of ``monday``, as the week's URL writes them."""
    year, week, _day = monday.isocalendar()
    return f"{year}-W{week:02d}"


class WeeklyRoundupQuerySet(models.QuerySet):
    def published(self) -> WeeklyRoundupQuerySet:
        """Roundups whose intro an editor has published (readers see the intro)."""
        return self.filter(status=WeeklyRoundup.Status.PUBLISHED)


class WeeklyRoundup(IntroFields):
    """A track's week: the intro of its roundup page, drafted by the drafting pipeline and
    published by an editor. The page itself lists the week's published dailies whether or
    not there is a roundup; it shows the intro once it is published."""

    class Status(models.TextChoices):
        DRAFT = "draft", _("Draft")
        PUBLISHED = "published", _("Published")

    track = models.ForeignKey(Track, on_delete=models.PROTECT, related_name="weekly_roundups")
    week_start = models.DateField(_("week (its Monday)"))
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.DRAFT)
    # The editor who confirmed the intro by publishing it, and when.
    published_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        editable=False,
        related_name="+",
    )
    published_at = models.DateTimeField(null=True, blank=True, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = WeeklyRoundupQuerySet.as_manager()

    class Meta:
        ordering = ["-week_start", "track"]
        verbose_name = _("weekly roundup")
        verbose_name_plural = _("weekly roundups")
        constraints = [
            models.UniqueConstraint(
                fields=["track", "week_start"], name="dailies_roundup_unique_track_week"
            ),
            models.CheckConstraint(
                name="dailies_roundup_published_has_time",
                condition=~Q(status="published") | Q(published_at__isnull=False),
            ),
        ]

    def __str__(self) -> str:
        return f"{self.track.slug} {self.week_label}"

    def get_absolute_url(self) -> str:
        return reverse("dailies:week", args=[self.track.slug, self.week_start])

    @property
    def week_label(self) -> str:
        return iso_week_label(self.week_start)

    @property
    def week_end(self) -> dt.date:
        return self.week_start + dt.timedelta(days=6)

    @property
    def is_published(self) -> bool:
        return self.status == self.Status.PUBLISHED

    def clean(self) -> None:
        if self.week_start and self.week_start.weekday() != 0:
            raise ValidationError({"week_start": _("A week starts on a Monday.")})
