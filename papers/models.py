"""Papers and what describes them: tracks, sources, organisations, venues, topics,
per-language summaries and rubric scores.

This app knows nothing of dailies; whether a paper is visible to readers is decided by the
``dailies`` app, which is the only place that defines "published".
"""

from __future__ import annotations

import datetime
from decimal import Decimal

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

from digest_site.urlwords import RESERVED_WORDS
from papers.author_names import AUTHOR_NAME_MAX_LENGTH, AUTHOR_SLUG_MAX_LENGTH
from papers.languages import LANGUAGE_CODES, Language, pick_language
from papers.validators import URL_MAX_LENGTH, validate_public_url

SCORE_MIN = Decimal("1.00")
SCORE_MAX = Decimal("5.00")
SCORE_VALIDATORS = [MinValueValidator(SCORE_MIN), MaxValueValidator(SCORE_MAX)]


def validate_track_slug(value: str) -> None:
    """A track's slug is a URL word (/<lang>/<track>/): never one the site's layout takes."""
    if value in RESERVED_WORDS:
        raise ValidationError(
            _("“%(slug)s” is reserved for a section of the site."), params={"slug": value}
        )


def validate_step_of_005(value: Decimal | None) -> None:
    if value is not None and (Decimal(value) * 20) % 1 != 0:
        raise ValidationError(_("Scores go in steps of 0.05."))


class Track(models.Model):
    slug = models.SlugField(unique=True, validators=[validate_track_slug])
    name_en = models.CharField(_("name (English)"), max_length=80)
    name_zh = models.CharField(_("name (Chinese)"), max_length=80)
    description_en = models.TextField(_("description (English)"), blank=True)
    description_zh = models.TextField(_("description (Chinese)"), blank=True)
    keywords = models.JSONField(
        default=list, blank=True, help_text=_("Words and phrases that describe the track.")
    )
    daily_size = models.PositiveSmallIntegerField(default=10)
    min_score = models.DecimalField(
        max_digits=3, decimal_places=2, default=Decimal("3.00"), validators=SCORE_VALIDATORS
    )
    position = models.PositiveSmallIntegerField(
        default=0, help_text=_("Order of the track on the home page.")
    )
    assemble_at = models.TimeField(
        default=datetime.time(7, 0),
        help_text=_("Local time (editorial time zone) the draft daily is assembled."),
    )
    is_active = models.BooleanField(default=True)
    require_review = models.BooleanField(
        _("require review of machine drafts"),
        default=True,
        help_text=_(
            "A daily publishes only when an editor has reviewed every machine-drafted summary "
            "of its entries."
        ),
    )

    class Meta:
        ordering = ["position", "slug"]
        constraints = [
            models.CheckConstraint(
                name="papers_track_min_score_in_range",
                condition=Q(min_score__gte=SCORE_MIN) & Q(min_score__lte=SCORE_MAX),
            ),
        ]

    def __str__(self) -> str:
        return self.name_en

    def name(self, language: str) -> str:
        return self.name_zh if language == Language.ZH else self.name_en

    def description(self, language: str) -> str:
        return self.description_zh if language == Language.ZH else self.description_en


class Source(models.Model):
    class Kind(models.TextChoices):
        ARXIV_API = "arxiv_api", _("arXiv API query")
        ARXIV_RSS = "arxiv_rss", _("arXiv RSS listing")
        OAI_PMH = "oai_pmh", _("arXiv OAI-PMH")
        FEED = "feed", _("RSS/Atom feed")
        MANUAL = "manual", _("Manual entry")

    name = models.CharField(max_length=120, unique=True)
    kind = models.CharField(max_length=20, choices=Kind.choices)
    url = models.URLField(
        blank=True,
        validators=[validate_public_url],
        help_text=_("Feed or API address; blank for manual entry."),
    )
    config = models.JSONField(
        default=dict, blank=True, help_text=_("Query, categories, page size, announce types.")
    )
    tracks = models.ManyToManyField(Track, related_name="sources", blank=True)
    enabled = models.BooleanField(default=True)
    interval_minutes = models.PositiveIntegerField(
        default=24 * 60, help_text=_("How often the source is fetched.")
    )
    last_run_at = models.DateTimeField(null=True, blank=True, editable=False)
    # Validators from the last 200 response, sent back as If-None-Match / If-Modified-Since.
    etag = models.CharField(max_length=300, blank=True, editable=False)
    last_modified = models.CharField(max_length=100, blank=True, editable=False)

    class Meta:
        ordering = ["name"]
        indexes = [
            # the periodic fan-out: enabled sources, least recently run first
            models.Index(fields=["enabled", "last_run_at"], name="papers_source_due_idx"),
        ]

    def __str__(self) -> str:
        return self.name


class IngestRun(models.Model):
    """One fetch of one source (or one imported file): what came in and what became of it."""

    class Status(models.TextChoices):
        RUNNING = "running", _("Running")
        SUCCEEDED = "succeeded", _("Succeeded")
        FAILED = "failed", _("Failed")

    source = models.ForeignKey(
        Source, null=True, blank=True, on_delete=models.SET_NULL, related_name="runs"
    )
    label = models.CharField(max_length=300, help_text=_("The source, or the imported file."))
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.RUNNING)
    started_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    requests = models.PositiveIntegerField(default=0)
    fetched = models.PositiveIntegerField(default=0)
    new = models.PositiveIntegerField(default=0)
    updated = models.PositiveIntegerField(default=0)
    unchanged = models.PositiveIntegerField(default=0)
    skipped = models.PositiveIntegerField(
        default=0, help_text=_("Entries left out on purpose (e.g. announce types not kept).")
    )
    lost = models.PositiveIntegerField(
        default=0,
        help_text=_("Entries the source sent that could be neither read nor named (damaged XML)."),
    )
    rejected = models.JSONField(default=list, blank=True, help_text=_("[{entry, reason}, …]"))
    message = models.TextField(blank=True)

    class Meta:
        ordering = ["-started_at", "-pk"]
        indexes = [
            # admin and "last run of this source"
            models.Index(fields=["source", "-started_at"], name="papers_ingestrun_source_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.label} {self.started_at:%Y-%m-%d %H:%M} {self.status}"

    @property
    def rejected_count(self) -> int:
        return len(self.rejected)


class OrganizationAlias(models.Model):
    """Text that, found in an affiliation, means an organisation ("Microsoft Research")."""

    pattern = models.CharField(
        max_length=200, unique=True, help_text=_("Matched case-insensitively as whole words.")
    )
    organization = models.ForeignKey(
        "Organization", on_delete=models.CASCADE, related_name="aliases"
    )

    class Meta:
        ordering = ["pattern"]
        verbose_name_plural = _("organisation aliases")

    def __str__(self) -> str:
        return f"{self.pattern} → {self.organization}"


class VenueAlias(models.Model):
    """A way a venue is written in comments and journal references ("Networked Systems
    Design and Implementation" → NSDI)."""

    alias = models.CharField(max_length=200, unique=True)
    short_name = models.CharField(max_length=40, help_text=_("The venue's short name, e.g. NSDI"))
    full_name = models.CharField(max_length=200, blank=True)

    class Meta:
        ordering = ["short_name", "alias"]
        verbose_name_plural = _("venue aliases")

    def __str__(self) -> str:
        return f"{self.alias} → {self.short_name}"


class Organization(models.Model):
    slug = models.SlugField(unique=True)
    label = models.CharField(
        max_length=60, help_text=_("Short label shown on entries, e.g. Microsoft.")
    )
    name = models.CharField(max_length=200, blank=True, help_text=_("Full name."))
    name_zh = models.CharField(_("name (Chinese)"), max_length=200, blank=True)

    class Meta:
        ordering = ["label"]

    def __str__(self) -> str:
        return self.label


class Venue(models.Model):
    slug = models.SlugField(unique=True)
    short_name = models.CharField(max_length=40, help_text=_("e.g. NSDI"))
    year = models.PositiveSmallIntegerField()
    full_name = models.CharField(max_length=200, blank=True)

    class Meta:
        ordering = ["-year", "short_name"]
        constraints = [
            models.UniqueConstraint(
                fields=["short_name", "year"], name="papers_venue_unique_name_year"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.short_name} {self.year}"


class Topic(models.Model):
    slug = models.SlugField(unique=True)
    name_en = models.CharField(_("name (English)"), max_length=80)
    name_zh = models.CharField(_("name (Chinese)"), max_length=80)
    keywords = models.JSONField(
        default=list,
        blank=True,
        help_text=_("Words and phrases that suggest the topic for an ingested paper."),
    )

    class Meta:
        ordering = ["name_en"]

    def __str__(self) -> str:
        return self.name_en

    def name(self, language: str) -> str:
        return self.name_zh if language == Language.ZH else self.name_en


class Paper(models.Model):
    class Kind(models.TextChoices):
        PAPER = "paper", _("Paper")
        PRODUCT = "product", _("Product")
        POST = "post", _("Post")

    class VenueStatus(models.TextChoices):
        NONE = "", _("—")
        SUBMITTED = "submitted", _("Submitted to")
        ACCEPTED = "accepted", _("Accepted at")
        TO_APPEAR = "to_appear", _("To appear at")
        PUBLISHED = "published", _("Published at")

    # What ingest writes (from the source, or matched from it: organisations, venue, topics);
    # the rest (short name, slug, tracks, the texts) is the editors'. An editor's change to
    # one of these is recorded in edited_fields, and no later ingest overwrites it.
    INGEST_OWNED_FIELDS = frozenset(
        {
            "title",
            "abstract",
            "authors",
            "affiliations",
            "arxiv_id",
            "version",
            "doi",
            "abs_url",
            "pdf_url",
            "published_on",
            "source_updated_at",
            "categories",
            "primary_category",
            "comment",
            "journal_ref",
            "kind",
            "organizations",
            "venue",
            "venue_status",
            "topics",
        }
    )
    # What drafting writes when the paper has none (a model's short name). An editor's change
    # to it, clearing it included, is recorded in edited_fields too, and no draft undoes it.
    DRAFT_OWNED_FIELDS = frozenset({"short_name"})

    canonical_id = models.CharField(
        max_length=300,
        help_text=_("arxiv:<id without version>, doi:<doi>, url:<normalised URL> or title:…"),
    )
    slug = models.SlugField(max_length=120, unique=True)
    kind = models.CharField(max_length=10, choices=Kind.choices, default=Kind.PAPER)
    title = models.CharField(max_length=500)
    short_name = models.CharField(
        max_length=80, blank=True, help_text=_("The system's name, e.g. HiLO.")
    )
    authors = models.JSONField(default=list, blank=True)
    abstract = models.TextField(blank=True)
    abs_url = models.URLField(
        _("abstract link"), max_length=URL_MAX_LENGTH, blank=True, validators=[validate_public_url]
    )
    pdf_url = models.URLField(
        _("PDF link"), max_length=URL_MAX_LENGTH, blank=True, validators=[validate_public_url]
    )
    doi = models.CharField(max_length=200, blank=True)
    arxiv_id = models.CharField(max_length=40, blank=True)
    version = models.PositiveSmallIntegerField(null=True, blank=True)
    published_on = models.DateField(null=True, blank=True)
    organizations = models.ManyToManyField(Organization, related_name="papers", blank=True)
    venue = models.ForeignKey(
        Venue, null=True, blank=True, on_delete=models.SET_NULL, related_name="papers"
    )
    venue_status = models.CharField(
        max_length=12, choices=VenueStatus.choices, blank=True, default=VenueStatus.NONE
    )
    topics = models.ManyToManyField(Topic, related_name="papers", blank=True)
    tracks = models.ManyToManyField(
        Track, related_name="papers", blank=True, help_text=_("Tracks it is a candidate for.")
    )
    primary_category = models.CharField(max_length=40, blank=True)
    categories = models.JSONField(default=list, blank=True)
    affiliations = models.JSONField(default=list, blank=True)
    comment = models.TextField(blank=True)
    journal_ref = models.CharField(max_length=500, blank=True)
    source_updated_at = models.DateTimeField(
        null=True, blank=True, help_text=_("When the source last updated the item.")
    )
    source = models.ForeignKey(
        Source,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="papers",
        help_text=_("Where the paper first came from."),
    )
    first_run = models.ForeignKey(
        IngestRun,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="new_papers",
        editable=False,
        help_text=_("The ingest run that created the paper."),
    )
    source_hash = models.CharField(
        max_length=40,
        blank=True,
        editable=False,
        help_text=_("Digest of what the source last said; unchanged items skip the update."),
    )
    edited_fields = models.JSONField(
        default=list,
        blank=True,
        editable=False,
        help_text=_("Fields an editor changed; ingest never overwrites them."),
    )
    needs_scoring = models.BooleanField(
        default=True, help_text=_("New or changed since it was last scored.")
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at"]
        indexes = [
            # the scorer's queue: papers new or changed since they were last scored
            models.Index(
                fields=["created_at"],
                condition=Q(needs_scoring=True),
                name="papers_paper_needs_scoring_idx",
            ),
            # the papers ingested in a daily's window (its selection chart's candidates)
            models.Index(fields=["created_at"], name="papers_paper_created_idx"),
        ]
        constraints = [
            models.UniqueConstraint(
                fields=["canonical_id"], name="papers_paper_unique_canonical_id"
            ),
            models.CheckConstraint(
                name="papers_paper_venue_status_needs_venue",
                condition=Q(venue_status="") | Q(venue__isnull=False),
            ),
        ]

    def __str__(self) -> str:
        return self.short_name or self.title

    @property
    def display_name(self) -> str:
        return self.short_name or self.title

    def summary(self, language: str) -> Summary | None:
        """The summary in ``language``, else the other one (check ``.language``).

        Reads ``self.summaries.all()``, so prefetch ``summaries`` on list pages.
        """
        return pick_language(list(self.summaries.all()), language)

    def latest_score(self, track_id: int | None = None) -> Score | None:
        """The newest score (for a track). Reads ``self.scores.all()``: prefetch on lists."""
        scores = [s for s in self.scores.all() if track_id is None or s.track_id == track_id]
        return max(scores, key=lambda s: (s.created_at, s.pk), default=None)


class Summary(models.Model):
    class Provenance(models.TextChoices):
        MACHINE = "machine", _("Machine draft")
        EDITOR = "editor", _("Editor")

    # Who wrote the text and how a machine draft was made: set with the text, never typed.
    DRAFT_FIELDS = (
        "provenance",
        "drafter",
        "drafter_version",
        "model_name",
        "prompt_version",
        "source_digest",
        "drafted_at",
    )

    paper = models.ForeignKey(Paper, on_delete=models.CASCADE, related_name="summaries")
    language = models.CharField(max_length=5, choices=Language.choices)
    headline = models.CharField(max_length=200, blank=True)
    body = models.TextField(help_text=_("The summary. Contains the takeaway sentence."))
    takeaway = models.CharField(
        max_length=300,
        blank=True,  # an offline draft leaves it for the editor
        help_text=_("One sentence, shown emphasised inside the summary."),
    )
    highlights = models.JSONField(
        default=list, blank=True, help_text=_("Headline figures, each with its conditions.")
    )
    provenance = models.CharField(
        max_length=10, choices=Provenance.choices, default=Provenance.EDITOR
    )
    # How a machine draft was made (blank for an editor's own text).
    drafter = models.CharField(max_length=60, blank=True, editable=False)
    drafter_version = models.CharField(max_length=30, blank=True, editable=False)
    model_name = models.CharField(max_length=100, blank=True, editable=False)
    prompt_version = models.CharField(max_length=30, blank=True, editable=False)
    source_digest = models.CharField(
        max_length=64,
        blank=True,
        editable=False,
        help_text=_("SHA-256 of the title, abstract and comments it was drafted from."),
    )
    drafted_at = models.DateTimeField(null=True, blank=True, editable=False)
    # An editor confirmed the machine draft as it stands ("machine draft, reviewed by an editor").
    reviewed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        editable=False,
    )
    reviewed_at = models.DateTimeField(null=True, blank=True, editable=False)
    # An editor changed the text: it is the editor's from then on ("written by an editor").
    edited_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        editable=False,
    )
    edited_at = models.DateTimeField(null=True, blank=True, editable=False)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["paper", "language"]
        verbose_name_plural = _("summaries")
        constraints = [
            models.UniqueConstraint(
                fields=["paper", "language"], name="papers_summary_unique_paper_language"
            ),
            models.CheckConstraint(
                name="papers_summary_language_known", condition=Q(language__in=LANGUAGE_CODES)
            ),
        ]

    def __str__(self) -> str:
        return f"{self.paper} [{self.language}]"


class Score(models.Model):
    paper = models.ForeignKey(Paper, on_delete=models.CASCADE, related_name="scores")
    track = models.ForeignKey(Track, on_delete=models.CASCADE, related_name="scores")
    total = models.DecimalField(
        max_digits=3,
        decimal_places=2,
        validators=[*SCORE_VALIDATORS, validate_step_of_005],
    )
    criteria = models.JSONField(
        default=dict, blank=True, help_text=_("Rubric criterion → value 1–5.")
    )
    features = models.JSONField(default=dict, blank=True)
    rationale_en = models.TextField(blank=True)
    rationale_zh = models.TextField(blank=True)
    scorer = models.CharField(max_length=60)
    scorer_version = models.CharField(max_length=30)
    notes = models.TextField(blank=True, help_text=_("e.g. why the LLM judge fell back."))
    prompt_tokens = models.PositiveIntegerField(null=True, blank=True)
    completion_tokens = models.PositiveIntegerField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-pk"]
        constraints = [
            models.CheckConstraint(
                name="papers_score_total_in_range",
                condition=Q(total__gte=SCORE_MIN) & Q(total__lte=SCORE_MAX),
            ),
        ]
        indexes = [
            # "the newest score of this paper for this track"
            models.Index(fields=["paper", "track", "-created_at"], name="papers_score_latest_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.paper} {self.total} ({self.scorer} {self.scorer_version})"

    def rationale(self, language: str) -> str:
        if language == Language.ZH:
            return self.rationale_zh or self.rationale_en
        return self.rationale_en or self.rationale_zh


class TrackProfileItem(models.Model):
    """A paper in a track's relevance profile: what editors selected (weight > 0) or turned
    down (weight < 0) for the track. The scorer compares candidates with these."""

    track = models.ForeignKey(Track, on_delete=models.CASCADE, related_name="profile")
    paper = models.ForeignKey(Paper, on_delete=models.CASCADE, related_name="profile_items")
    weight = models.FloatField(default=1.0)
    reason = models.CharField(max_length=40)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["track", "-updated_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["track", "paper"], name="papers_profile_unique_track_paper"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.track} {self.paper} {self.weight:+.1f}"


class SummaryVersion(models.Model):
    """A text a summary had before (or a re-draft proposed for it), for an editor to see and
    restore or apply."""

    class Reason(models.TextChoices):
        REPLACED_BY_REDRAFT = "replaced_by_redraft", _("Replaced by a re-draft")
        REPLACED_BY_EDITOR = "replaced_by_editor", _("Replaced by an editor")
        # A re-draft of a text readers already see: kept aside until an editor applies it.
        PROPOSED = "proposed", _("Proposed re-draft")

    # The summary's fields a version keeps, and a restore puts back.
    KEPT_FIELDS = ("headline", "body", "takeaway", "highlights", *Summary.DRAFT_FIELDS)

    summary = models.ForeignKey(Summary, on_delete=models.CASCADE, related_name="versions")
    headline = models.CharField(max_length=200, blank=True)
    body = models.TextField()
    takeaway = models.CharField(max_length=300, blank=True)
    highlights = models.JSONField(default=list, blank=True)
    provenance = models.CharField(max_length=10, choices=Summary.Provenance.choices)
    drafter = models.CharField(max_length=60, blank=True)
    drafter_version = models.CharField(max_length=30, blank=True)
    model_name = models.CharField(max_length=100, blank=True)
    prompt_version = models.CharField(max_length=30, blank=True)
    source_digest = models.CharField(max_length=64, blank=True)
    drafted_at = models.DateTimeField(null=True, blank=True)
    reason = models.CharField(max_length=20, choices=Reason.choices)
    created_at = models.DateTimeField(auto_now_add=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    class Meta:
        ordering = ["-created_at", "-pk"]
        indexes = [
            # the summary admin: "versions of this summary, newest first"
            models.Index(fields=["summary", "-created_at"], name="papers_summaryversion_idx"),
        ]
        constraints = [
            models.CheckConstraint(
                name="papers_summaryversion_reason_known",
                condition=Q(reason__in=["replaced_by_redraft", "replaced_by_editor", "proposed"]),
            ),
        ]

    def __str__(self) -> str:
        return f"{self.summary} {self.get_reason_display()} {self.created_at:%Y-%m-%d %H:%M}"


# Bounds of what a grounding flag stores: the offending span and the editor's sentence.
FLAG_TEXT_MAX_LENGTH = 200
FLAG_DETAIL_MAX_LENGTH = 300


class SummaryFlag(models.Model):
    """A grounding check's finding on a summary: a span the source does not support."""

    class Kind(models.TextChoices):
        NUMBER = "number", _("Number not in the source")
        ORGANIZATION = "organization", _("Organisation not the paper's")
        VENUE = "venue", _("Venue not the paper's")
        GLOSSARY = "glossary", _("Glossary term rendered otherwise")

    class Field(models.TextChoices):
        HEADLINE = "headline", _("Headline")
        BODY = "body", _("Summary")
        TAKEAWAY = "takeaway", _("Takeaway")
        NUMBERS = "numbers", _("Headline numbers")

    class Resolution(models.TextChoices):
        OPEN = "", _("Open")
        FIXED = "fixed", _("Fixed")
        CONFIRMED = "confirmed", _("Confirmed by an editor")

    summary = models.ForeignKey(Summary, on_delete=models.CASCADE, related_name="flags")
    kind = models.CharField(max_length=20, choices=Kind.choices)
    field = models.CharField(max_length=10, choices=Field.choices)
    # For field=numbers: which of the headline numbers (0-based); offsets are within it.
    item = models.PositiveSmallIntegerField(null=True, blank=True)
    text = models.CharField(max_length=FLAG_TEXT_MAX_LENGTH)
    detail = models.CharField(max_length=FLAG_DETAIL_MAX_LENGTH, blank=True)
    start = models.PositiveIntegerField()
    end = models.PositiveIntegerField()
    resolution = models.CharField(
        max_length=10, choices=Resolution.choices, blank=True, default=Resolution.OPEN
    )
    resolved_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    resolved_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["summary", "field", "item", "start", "pk"]
        indexes = [
            # the publishing checklist and the admin: "open flags of these summaries"
            models.Index(
                fields=["summary"],
                condition=Q(resolution=""),
                name="papers_summaryflag_open_idx",
            ),
        ]
        constraints = [
            models.CheckConstraint(
                name="papers_summaryflag_span_ordered", condition=Q(start__lte=models.F("end"))
            ),
            models.CheckConstraint(
                name="papers_summaryflag_resolution_known",
                condition=Q(resolution__in=["", "fixed", "confirmed"]),
            ),
            models.CheckConstraint(
                name="papers_summaryflag_kind_known",
                condition=Q(kind__in=["number", "organization", "venue", "glossary"]),
            ),
        ]

    def __str__(self) -> str:
        return f"{self.summary} {self.kind}: {self.text}"

    @property
    def is_open(self) -> bool:
        return self.resolution == self.Resolution.OPEN


class GlossaryTerm(models.Model):
    """A term of a track's glossary: how the Chinese texts render an English term."""

    track = models.ForeignKey(Track, on_delete=models.CASCADE, related_name="glossary")
    en = models.CharField(_("English term"), max_length=100)
    zh = models.CharField(_("Chinese rendering"), max_length=100)
    zh_alternatives = models.JSONField(
        default=list, blank=True, help_text=_("Other accepted Chinese renderings.")
    )
    avoid = models.JSONField(
        default=list, blank=True, help_text=_("Renderings that are wrong for this track.")
    )

    class Meta:
        ordering = ["track", "en"]
        constraints = [
            models.UniqueConstraint(fields=["track", "en"], name="papers_glossaryterm_unique_en"),
        ]

    def __str__(self) -> str:
        return f"{self.en} → {self.zh}"


class DraftRun(models.Model):
    """One drafting of one paper (or of one daily's intro, then ``paper`` is empty and
    ``label`` names the daily): what was written, what stays missing and why."""

    paper = models.ForeignKey(
        Paper, null=True, blank=True, on_delete=models.CASCADE, related_name="draft_runs"
    )
    label = models.CharField(max_length=300, blank=True)
    drafter = models.CharField(max_length=60)
    drafter_version = models.CharField(max_length=30, blank=True)
    model_name = models.CharField(max_length=100, blank=True)
    prompt_version = models.CharField(max_length=30, blank=True)
    started_at = models.DateTimeField()
    finished_at = models.DateTimeField(null=True, blank=True)
    languages = models.JSONField(default=list, blank=True, help_text=_("Languages written."))
    skipped = models.JSONField(
        default=dict, blank=True, help_text=_("{language: why it was left as it was}")
    )
    missing = models.JSONField(default=dict, blank=True, help_text=_("{language: reason}"))
    notes = models.JSONField(default=list, blank=True)
    prompt_tokens = models.PositiveIntegerField(default=0)
    completion_tokens = models.PositiveIntegerField(default=0)
    error = models.TextField(blank=True, help_text=_("Why drafting stopped, when it did."))

    class Meta:
        ordering = ["-started_at", "-pk"]
        indexes = [
            # the paper admin: "the drafting history of this paper"
            models.Index(fields=["paper", "-started_at"], name="papers_draftrun_paper_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.label or self.paper} {self.drafter} {self.started_at:%Y-%m-%d %H:%M}"


class LLMRequest(models.Model):
    """One request to a model, with its token usage (the daily budget sums these)."""

    class Purpose(models.TextChoices):
        SCORE = "score", _("Scoring")
        DRAFT_PAPER = "draft_paper", _("Drafting a paper")
        DRAFT_INTRO = "draft_intro", _("Drafting an intro")

    purpose = models.CharField(max_length=20, choices=Purpose.choices)
    model_name = models.CharField(max_length=100)
    paper = models.ForeignKey(
        Paper, null=True, blank=True, on_delete=models.SET_NULL, related_name="llm_requests"
    )
    prompt_tokens = models.PositiveIntegerField(null=True, blank=True)
    completion_tokens = models.PositiveIntegerField(null=True, blank=True)
    ok = models.BooleanField(default=False)
    error = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-pk"]
        verbose_name = _("LLM request")
        verbose_name_plural = _("LLM requests")
        indexes = [
            # the daily token budget: "tokens of requests made since the start of today"
            models.Index(fields=["created_at"], name="papers_llmrequest_created_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.purpose} {self.model_name} {self.created_at:%Y-%m-%d %H:%M}"


class Author(models.Model):
    """A person who wrote papers: every way of writing their name that normalises to
    ``key`` is them (``papers.authors.author_key``); an editor merges two keys that are the
    same person (``author_merge``), recorded with who and when."""

    key = models.CharField(
        max_length=AUTHOR_NAME_MAX_LENGTH,
        unique=True,
        help_text=_("The name normalised: folded case and accents, no punctuation."),
    )
    slug = models.SlugField(max_length=AUTHOR_SLUG_MAX_LENGTH, unique=True)
    name = models.CharField(
        max_length=AUTHOR_NAME_MAX_LENGTH, help_text=_("The name as first written.")
    )
    merged_into = models.ForeignKey(
        "self",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="merged",
        editable=False,
        help_text=_("The author this name was merged into by an editor."),
    )
    merged_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        editable=False,
    )
    merged_at = models.DateTimeField(null=True, blank=True, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]
        constraints = [
            models.CheckConstraint(
                name="papers_author_not_merged_into_itself",
                condition=~Q(merged_into=models.F("pk")),
            ),
            models.CheckConstraint(
                name="papers_author_merge_recorded",
                condition=Q(merged_into__isnull=True) | Q(merged_at__isnull=False),
            ),
        ]

    def __str__(self) -> str:
        return self.name


class PaperAuthor(models.Model):
    """A paper's author at a place in its byline (written from ``Paper.authors``)."""

    paper = models.ForeignKey(Paper, on_delete=models.CASCADE, related_name="author_links")
    author = models.ForeignKey(Author, on_delete=models.CASCADE, related_name="paper_links")
    position = models.PositiveSmallIntegerField()

    class Meta:
        ordering = ["paper", "position"]
        constraints = [
            models.UniqueConstraint(
                fields=["paper", "author"], name="papers_paperauthor_unique_paper_author"
            ),
        ]
        indexes = [
            # the author page: "this author's papers"
            models.Index(fields=["author", "paper"], name="papers_paperauthor_author_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.paper_id} #{self.position}: {self.author_id}"
