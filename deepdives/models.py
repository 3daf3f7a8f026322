"""Deep dives (long bilingual write-ups) and the reference programs they link to."""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.db import models
from django.db.models import Q
from django.urls import reverse
from django.utils.translation import gettext_lazy as _

from dailies.selectors import published_papers
from deepdives.text import markdown_problem, reading_minutes
from digest_site.visibility import Reader, may_preview
from papers.languages import Language, localized
from papers.models import Paper


class ReferenceCodeQuerySet(models.QuerySet):
    def published(self) -> ReferenceCodeQuerySet:
        """Programs readers may see: those of published papers, and those with no paper."""
        return self.filter(Q(paper__isnull=True) | Q(paper__in=published_papers()))

    def visible_to(self, user: Reader) -> ReferenceCodeQuerySet:
        """What ``user`` may read: every program when they preview, else the published."""
        return self.all() if may_preview(user) else self.published()


class ReferenceCode(models.Model):
    """The stored record of a program registered in ``deepdives.registry``.

    The program itself (module, chart, limits) is defined in the repository; this row holds
    its link to a paper, its descriptions and the outcome of its last verified run.
    """

    class RunStatus(models.TextChoices):
        NEVER = "never", _("Not run yet")
        PASSED = "passed", _("Passed")
        FAILED = "failed", _("Failed")

    slug = models.SlugField(unique=True, help_text=_("The registered program's name."))
    name = models.CharField(max_length=120)
    module = models.CharField(max_length=120, unique=True, editable=False)
    paper = models.ForeignKey(
        Paper, null=True, blank=True, on_delete=models.SET_NULL, related_name="reference_codes"
    )
    # An editor set, moved or removed the link: the registry's sync no longer makes it.
    paper_set_by_editor = models.BooleanField(default=False, editable=False)
    description_en = models.TextField(_("description (English)"), blank=True)
    description_zh = models.TextField(_("description (Chinese)"), blank=True)
    last_status = models.CharField(
        max_length=10, choices=RunStatus.choices, default=RunStatus.NEVER, editable=False
    )
    last_error = models.TextField(blank=True, editable=False)
    last_output = models.TextField(blank=True, editable=False)
    last_measurements = models.JSONField(null=True, blank=True, editable=False)
    last_duration_ms = models.PositiveIntegerField(null=True, blank=True, editable=False)
    last_run_at = models.DateTimeField(null=True, blank=True, editable=False)
    code_hash = models.CharField(max_length=64, blank=True, editable=False)

    objects = ReferenceCodeQuerySet.as_manager()

    class Meta:
        ordering = ["name"]
        verbose_name = _("reference code")
        verbose_name_plural = _("reference code")

    def __str__(self) -> str:
        return self.name

    def get_absolute_url(self) -> str:
        return reverse("deepdives:code", args=[self.slug])

    @property
    def command(self) -> str:
        return f"python -m {self.module}"

    def description(self, language: str):
        return localized(self, "description", language)


class DeepDiveQuerySet(models.QuerySet):
    def published(self) -> DeepDiveQuerySet:
        """Published deep dives of papers readers can see (a subquery on dailies)."""
        return self.filter(status=DeepDive.Status.PUBLISHED, paper__in=published_papers())

    def visible_to(self, user: Reader) -> DeepDiveQuerySet:
        """What ``user`` may read: every deep dive when they preview, else the published."""
        return self.all() if may_preview(user) else self.published()


class DeepDive(models.Model):
    class Status(models.TextChoices):
        DRAFT = "draft", _("Draft")
        PUBLISHED = "published", _("Published")

    paper = models.ForeignKey(Paper, on_delete=models.CASCADE, related_name="deep_dives")
    slug = models.SlugField(max_length=120, unique=True)
    title_en = models.CharField(_("title (English)"), max_length=300, blank=True)
    title_zh = models.CharField(_("title (Chinese)"), max_length=300, blank=True)
    body_en = models.TextField(_("body (English, Markdown)"), blank=True)
    body_zh = models.TextField(_("body (Chinese, Markdown)"), blank=True)
    reading_minutes_en = models.PositiveSmallIntegerField(default=0, editable=False)
    reading_minutes_zh = models.PositiveSmallIntegerField(default=0, editable=False)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.DRAFT)
    reference_code = models.ForeignKey(
        ReferenceCode, null=True, blank=True, on_delete=models.SET_NULL, related_name="deep_dives"
    )
    updated_at = models.DateTimeField(auto_now=True)

    objects = DeepDiveQuerySet.as_manager()

    class Meta:
        ordering = ["slug"]
        permissions = [("publish_deepdive", _("Can publish deep dives and relink reference code"))]
        constraints = [
            models.UniqueConstraint(fields=["paper"], name="deepdives_deepdive_one_per_paper"),
            models.CheckConstraint(
                name="deepdives_deepdive_has_a_body",
                condition=~Q(body_en="") | ~Q(body_zh=""),
            ),
        ]

    def __str__(self) -> str:
        return self.title_en or self.title_zh or self.slug

    def save(self, *args, **kwargs) -> None:
        # Reading time is a pure function of the bodies; keep the stored copy in step.
        self.reading_minutes_en = reading_minutes(self.body_en, Language.EN)
        self.reading_minutes_zh = reading_minutes(self.body_zh, Language.ZH)
        update_fields = kwargs.get("update_fields")
        if update_fields is not None and {"body_en", "body_zh"} & set(update_fields):
            kwargs["update_fields"] = {*update_fields, "reading_minutes_en", "reading_minutes_zh"}
        super().save(*args, **kwargs)

    def get_absolute_url(self) -> str:
        return reverse("deepdives:detail", args=[self.slug])

    def clean(self) -> None:
        # A body over the rendering bounds would show as plain text: refuse it to its editor.
        errors = {}
        for field in ("body_en", "body_zh"):
            problem = markdown_problem(getattr(self, field))
            if problem is not None:
                errors[field] = problem
        if errors:
            raise ValidationError(errors)

    def title(self, language: str):
        return localized(self, "title", language)

    def body(self, language: str):
        return localized(self, "body", language)

    def minutes(self, language: str) -> int:
        """Reading time of the text the reader gets in ``language`` (after fallback).

        Uses the stored minutes (0 for an empty body), so list pages can defer the bodies.
        """
        own = self.reading_minutes_zh if language == Language.ZH else self.reading_minutes_en
        other = self.reading_minutes_en if language == Language.ZH else self.reading_minutes_zh
        return own or other
