from __future__ import annotations

from django import forms
from django.contrib import admin
from django.db import models
from django.db.models import Count, Q
from django.utils.translation import gettext_lazy as _

from papers.languages import Language
from papers.models import (
    IngestRun,
    Organization,
    OrganizationAlias,
    Paper,
    Score,
    Source,
    Summary,
    Topic,
    Track,
    TrackProfileItem,
    Venue,
    VenueAlias,
)
from papers.services import missing_languages, paper_record_edits, summary_set

# Links typed without a scheme are https (Django 6's default, chosen now).
URL_OVERRIDES = {models.URLField: {"assume_scheme": "https"}}


def _formfield(field: models.Field, **kwargs):
    kwargs.update(URL_OVERRIDES.get(type(field), {}))
    return field.formfield(**kwargs)


@admin.register(Track)
class TrackAdmin(admin.ModelAdmin):
    list_display = ["slug", "name_en", "name_zh", "daily_size", "min_score", "is_active"]
    list_filter = ["is_active"]
    search_fields = ["slug", "name_en", "name_zh", "description_en", "description_zh"]
    fieldsets = [
        (None, {"fields": ["slug", ("name_en", "name_zh"), "is_active", "position"]}),
        (_("Profile"), {"fields": [("description_en", "description_zh"), "keywords"]}),
        (_("Daily"), {"fields": [("daily_size", "min_score")]}),
    ]


@admin.register(Source)
class SourceAdmin(admin.ModelAdmin):
    list_display = ["name", "kind", "enabled", "interval_minutes", "last_run_at"]
    list_filter = ["kind", "enabled", "tracks"]
    search_fields = ["name", "url"]
    filter_horizontal = ["tracks"]
    readonly_fields = ["last_run_at", "etag", "last_modified"]
    fieldsets = [
        (None, {"fields": ["name", "kind", "enabled", "tracks"]}),
        (
            _("What to fetch"),
            {
                "fields": ["url", "config"],
                "description": _(
                    'arXiv API: {"search_query": "cat:cs.DC", "page_size": 100} or '
                    '{"categories": ["cs.DC", "cs.LG"]}. arXiv RSS: {"categories": '
                    '["cs.DC"], "announce_types": ["new", "cross"]}. OAI-PMH: '
                    '{"set": "cs"} with the endpoint as URL. Feeds: the URL only.'
                ),
            },
        ),
        (_("Schedule"), {"fields": ["interval_minutes", "last_run_at", "etag", "last_modified"]}),
    ]
    formfield_overrides = URL_OVERRIDES


@admin.register(Organization)
class OrganizationAdmin(admin.ModelAdmin):
    list_display = ["label", "name", "name_zh", "slug"]
    search_fields = ["label", "name", "name_zh", "slug"]
    prepopulated_fields = {"slug": ["label"]}


@admin.register(Venue)
class VenueAdmin(admin.ModelAdmin):
    list_display = ["short_name", "year", "full_name"]
    list_filter = ["year"]
    search_fields = ["short_name", "full_name"]


@admin.register(Topic)
class TopicAdmin(admin.ModelAdmin):
    list_display = ["name_en", "name_zh", "slug", "paper_count"]
    search_fields = ["name_en", "name_zh", "slug"]
    prepopulated_fields = {"slug": ["name_en"]}

    def get_queryset(self, request):
        return super().get_queryset(request).annotate(n_papers=Count("papers"))

    @admin.display(description=_("papers"), ordering="n_papers")
    def paper_count(self, obj: Topic) -> int:
        return obj.n_papers


class ScoreInline(admin.TabularInline):
    model = Score
    extra = 0
    can_delete = False
    fields = ["track", "total", "criteria", "scorer", "scorer_version", "created_at"]
    readonly_fields = fields
    ordering = ["-created_at"]

    def has_add_permission(self, request, obj=None) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False


def _lines(value: str) -> list[str]:
    return [line.strip() for line in value.splitlines() if line.strip()]


def _headline(label: str) -> forms.CharField:
    return forms.CharField(label=label, required=False, max_length=200)


def _text(label: str, rows: int, max_length: int | None = None) -> forms.CharField:
    return forms.CharField(
        label=label,
        required=False,
        max_length=max_length,
        widget=forms.Textarea(attrs={"rows": rows, "cols": 48}),
    )


class PaperAdminForm(forms.ModelForm):
    """A paper with both languages' summaries side by side; saved through ``summary_set``."""

    headline_en = _headline(_("Headline (English)"))
    headline_zh = _headline(_("Headline (Chinese)"))
    summary_en = _text(_("Summary (English)"), rows=9)
    summary_zh = _text(_("Summary (Chinese)"), rows=9)
    takeaway_en = _text(_("Takeaway (English)"), rows=2, max_length=300)
    takeaway_zh = _text(_("Takeaway (Chinese)"), rows=2, max_length=300)
    highlights_en = _text(_("Headline numbers (English), one per line"), rows=3)
    highlights_zh = _text(_("Headline numbers (Chinese), one per line"), rows=3)

    class Meta:
        model = Paper
        fields = [
            "title",
            "short_name",
            "slug",
            "kind",
            "canonical_id",
            "organizations",
            "venue",
            "venue_status",
            "topics",
            "tracks",
            "authors",
            "abstract",
            "abs_url",
            "pdf_url",
            "doi",
            "arxiv_id",
            "version",
            "published_on",
        ]
        formfield_callback = _formfield

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        if self.instance.pk:
            for summary in self.instance.summaries.all():
                code = summary.language
                self.initial[f"headline_{code}"] = summary.headline
                self.initial[f"summary_{code}"] = summary.body
                self.initial[f"takeaway_{code}"] = summary.takeaway
                self.initial[f"highlights_{code}"] = "\n".join(summary.highlights)

    def clean(self):
        cleaned = super().clean()
        for code in Language.values:
            body = cleaned.get(f"summary_{code}", "").strip()
            takeaway = cleaned.get(f"takeaway_{code}", "").strip()
            if body and not takeaway:
                self.add_error(f"takeaway_{code}", _("A summary needs its takeaway sentence."))
            if takeaway and not body:
                self.add_error(f"summary_{code}", _("A takeaway needs a summary."))
        return cleaned

    def save_summaries(self, paper: Paper) -> None:
        for code in Language.values:
            data = self.cleaned_data
            summary_set(
                paper=paper,
                language=code,
                headline=data.get(f"headline_{code}", ""),
                body=data.get(f"summary_{code}", ""),
                takeaway=data.get(f"takeaway_{code}", ""),
                highlights=_lines(data.get(f"highlights_{code}", "")),
                provenance=Summary.Provenance.EDITOR,
            )


class MissingTranslationFilter(admin.SimpleListFilter):
    title = _("summaries")
    parameter_name = "missing"

    def lookups(self, request, model_admin):
        return [
            ("en", _("Missing English")),
            ("zh", _("Missing Chinese")),
            ("any", _("Missing any")),
        ]

    def queryset(self, request, queryset):
        value = self.value()
        if value in Language.values:
            return queryset.exclude(summaries__language=value)
        if value == "any":
            complete = Paper.objects.annotate(
                n=Count("summaries", filter=Q(summaries__language__in=Language.values))
            ).filter(n=len(Language.values))
            return queryset.exclude(pk__in=complete.values("pk"))
        return queryset


@admin.register(Paper)
class PaperAdmin(admin.ModelAdmin):
    form = PaperAdminForm
    formfield_overrides = URL_OVERRIDES
    list_display = ["display_name", "kind", "org_labels", "venue", "missing", "created_at"]
    list_filter = ["kind", MissingTranslationFilter, "tracks", "topics", "organizations", "venue"]
    search_fields = ["title", "short_name", "canonical_id", "abstract", "summaries__body"]
    prepopulated_fields = {"slug": ["short_name"]}
    filter_horizontal = ["organizations", "topics", "tracks"]
    inlines = [ScoreInline]
    fieldsets = [
        (None, {"fields": ["title", ("short_name", "slug"), ("kind", "canonical_id")]}),
        (
            _("Summaries, side by side"),
            {
                "fields": [
                    ("headline_en", "headline_zh"),
                    ("summary_en", "summary_zh"),
                    ("takeaway_en", "takeaway_zh"),
                    ("highlights_en", "highlights_zh"),
                ]
            },
        ),
        (
            _("Classification"),
            {"fields": ["organizations", ("venue", "venue_status"), "topics", "tracks"]},
        ),
        (
            _("Source record"),
            {
                "classes": ["collapse"],
                "fields": [
                    "authors",
                    "abstract",
                    ("abs_url", "pdf_url"),
                    ("doi", "arxiv_id"),
                    ("version", "published_on"),
                ],
            },
        ),
    ]

    def get_queryset(self, request):
        return super().get_queryset(request).prefetch_related("summaries", "organizations")

    @admin.display(description=_("organisations"))
    def org_labels(self, obj: Paper) -> str:
        return ", ".join(o.label for o in obj.organizations.all())

    @admin.display(description=_("missing languages"))
    def missing(self, obj: Paper) -> str:
        return ", ".join(missing_languages(obj)) or "—"

    def save_model(self, request, obj, form, change) -> None:
        super().save_model(request, obj, form, change)
        if change:
            paper_record_edits(paper=obj, fields=form.changed_data)

    def save_related(self, request, form, formsets, change) -> None:
        super().save_related(request, form, formsets, change)
        form.save_summaries(form.instance)


@admin.register(Summary)
class SummaryAdmin(admin.ModelAdmin):
    list_display = ["paper", "language", "headline", "provenance", "updated_at"]
    list_filter = ["language", "provenance"]
    search_fields = ["paper__title", "paper__short_name", "body", "takeaway", "headline"]
    autocomplete_fields = ["paper"]


@admin.register(Score)
class ScoreAdmin(admin.ModelAdmin):
    list_display = ["paper", "track", "total", "scorer", "scorer_version", "created_at"]
    list_filter = ["track", "scorer"]
    search_fields = ["paper__title", "paper__short_name"]
    list_select_related = ["paper", "track"]

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        # Scores are a record of what a scorer said; rescoring adds a row.
        return False


@admin.register(TrackProfileItem)
class TrackProfileItemAdmin(admin.ModelAdmin):
    """The papers each track's relevance scoring compares with (kept by publishing and by
    editors' additions and removals)."""

    list_display = ["track", "paper", "weight", "reason", "updated_at"]
    list_filter = ["track", "reason"]
    search_fields = ["paper__title", "paper__short_name"]
    list_select_related = ["track", "paper"]

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False


@admin.register(IngestRun)
class IngestRunAdmin(admin.ModelAdmin):
    """Read-only audit of every fetch: reconcile what a source listed with what we stored."""

    list_display = [
        "label",
        "started_at",
        "status",
        "fetched",
        "new",
        "updated",
        "unchanged",
        "rejected_total",
        "message",
    ]
    list_filter = ["status", "source"]
    search_fields = ["label", "message"]
    date_hierarchy = "started_at"
    list_select_related = ["source"]
    readonly_fields = [
        "source",
        "label",
        "status",
        "started_at",
        "finished_at",
        "requests",
        "fetched",
        "new",
        "updated",
        "unchanged",
        "skipped",
        "message",
        "rejected_entries",
    ]
    exclude = ["rejected"]

    @admin.display(description=_("rejected"))
    def rejected_total(self, obj: IngestRun) -> int:
        return obj.rejected_count

    @admin.display(description=_("rejected entries"))
    def rejected_entries(self, obj: IngestRun) -> str:
        return "\n".join(f"{r['entry']}: {r['reason']}" for r in obj.rejected) or "—"

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False


@admin.register(OrganizationAlias)
class OrganizationAliasAdmin(admin.ModelAdmin):
    list_display = ["pattern", "organization"]
    search_fields = ["pattern", "organization__label"]
    list_select_related = ["organization"]


@admin.register(VenueAlias)
class VenueAliasAdmin(admin.ModelAdmin):
    list_display = ["alias", "short_name", "full_name"]
    search_fields = ["alias", "short_name", "full_name"]
