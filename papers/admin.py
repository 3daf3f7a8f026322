from __future__ import annotations

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import models, transaction
from django.db.models import Count, Exists, OuterRef, Q
from django.http import HttpResponseNotAllowed, HttpResponseRedirect
from django.shortcuts import get_object_or_404
from django.urls import path, reverse
from django.utils.html import format_html, format_html_join
from django.utils.translation import gettext_lazy as _

from digest_site.visibility import may_change, may_change_public
from papers.authors import author_merge, paper_authors_sync
from papers.drafting.edits import (
    summary_confirm,
    summary_delete,
    summary_edit,
    summary_flags_confirm,
    summary_restore_version,
    summary_write,
)
from papers.languages import Language
from papers.models import (
    Author,
    DraftRun,
    GlossaryTerm,
    IngestRun,
    LLMRequest,
    Organization,
    OrganizationAlias,
    Paper,
    Score,
    Source,
    Summary,
    SummaryFlag,
    SummaryVersion,
    Topic,
    Track,
    TrackProfileItem,
    Venue,
    VenueAlias,
)
from papers.services import (
    missing_languages,
    paper_record_edits,
    public_content_delete,
    public_content_save,
)

# Links typed without a scheme are https (Django 6's default, chosen now).
URL_OVERRIDES = {models.URLField: {"assume_scheme": "https"}}


def _formfield(field: models.Field, **kwargs):
    kwargs.update(URL_OVERRIDES.get(type(field), {}))
    return field.formfield(**kwargs)


class ServiceErrorsAsMessages:
    """A refusal or a validation error from a service while saving comes back as a message
    on the same page; the admin's transaction has already rolled everything back."""

    def changeform_view(self, request, object_id=None, form_url="", extra_context=None):
        try:
            return super().changeform_view(request, object_id, form_url, extra_context)
        except (PermissionDenied, ValidationError) as exc:
            messages_ = exc.messages if isinstance(exc, ValidationError) else [str(exc)]
            if request.method != "POST" or not any(messages_):
                raise  # the admin's own refusal: a plain 403
            for message in messages_:
                self.message_user(request, message, messages.ERROR)
            return HttpResponseRedirect(request.get_full_path())


class EditorsOnlyOncePublic:
    """What readers see is changed only by those who may publish: a public object is read-only
    to the others, the fields in ``publish_only_fields`` always are, and they get no bulk
    delete (it would reach public objects; they delete drafts one by one). The services
    enforce the same; this keeps the admin from offering what they would refuse.

    By default the rule is ``digest_site.visibility``'s; dailies and deep dives, public from
    their own status, say theirs."""

    publish_only_fields: tuple[str, ...] = ()

    def has_publish_permission(self, request) -> bool:
        return may_change_public(request.user)

    def may_change(self, request, obj) -> bool:
        return may_change(request.user, obj)

    def has_change_permission(self, request, obj=None) -> bool:
        return super().has_change_permission(request, obj) and (
            obj is None or self.may_change(request, obj)
        )

    def has_delete_permission(self, request, obj=None) -> bool:
        return super().has_delete_permission(request, obj) and (
            obj is None or self.may_change(request, obj)
        )

    def get_readonly_fields(self, request, obj=None) -> list[str]:
        fields = list(super().get_readonly_fields(request, obj))
        if not self.has_publish_permission(request):
            fields += [f for f in self.publish_only_fields if f not in fields]
        return fields

    def get_actions(self, request):
        actions = super().get_actions(request)
        if not self.has_publish_permission(request):
            actions.pop("delete_selected", None)
        return actions


class PublicContentAdmin(ServiceErrorsAsMessages, EditorsOnlyOncePublic):
    """A model readers see through the published papers and tracks: each save and delete,
    of the row and of its inlines' rows, goes through the services that enforce the rule
    and audit an editor's change of what readers see."""

    def save_model(self, request, obj, form, change) -> None:
        public_content_save(obj=obj, user=request.user, related_changes=_related_changes(form))

    def save_formset(self, request, form, formset, change) -> None:
        rows = formset.save(commit=False)
        for obj in formset.deleted_objects:
            public_content_delete(obj=obj, user=request.user)
        for obj in rows:
            public_content_save(obj=obj, user=request.user)
        formset.save_m2m()

    def delete_model(self, request, obj) -> None:
        public_content_delete(obj=obj, user=request.user)

    def delete_queryset(self, request, queryset) -> None:
        with transaction.atomic():
            for obj in queryset:
                public_content_delete(obj=obj, user=request.user)


def _related_changes(form) -> dict[str, list]:
    """The form's changed many-to-many fields, name → [ids before, ids after], for the
    audit (they are saved after the row)."""
    related = {f.name for f in form._meta.model._meta.many_to_many}

    def ids(values) -> list:
        return sorted(getattr(v, "pk", v) for v in values or [])

    return {
        name: [ids(form.initial.get(name)), ids(form.cleaned_data.get(name))]
        for name in form.changed_data
        if name in related
    }


class GlossaryTermInline(admin.TabularInline):
    model = GlossaryTerm
    extra = 1
    fields = ["en", "zh", "zh_alternatives", "avoid"]


@admin.register(Track)
class TrackAdmin(PublicContentAdmin, admin.ModelAdmin):
    inlines = [GlossaryTermInline]
    list_display = ["slug", "name_en", "name_zh", "daily_size", "min_score", "is_active"]
    list_filter = ["is_active"]
    search_fields = ["slug", "name_en", "name_zh", "description_en", "description_zh"]
    fieldsets = [
        (None, {"fields": ["slug", ("name_en", "name_zh"), "is_active", "position"]}),
        (_("Profile"), {"fields": [("description_en", "description_zh"), "keywords"]}),
        (
            _("Daily"),
            {"fields": [("daily_size", "min_score"), "suggested_minimum", "require_review"]},
        ),
    ]
    readonly_fields = ["suggested_minimum"]

    @admin.display(description=_("suggested minimum"))
    def suggested_minimum(self, obj: Track) -> str:
        """From editors' past decisions; a suggestion only: the minimum is the editor's."""
        from papers.scoring.service import SUGGESTION_MIN_DECISIONS, track_minimum_suggestion

        if obj.pk is None:
            return "—"
        s = track_minimum_suggestion(obj)
        counts = {"selected": s.selected, "turned_down": s.turned_down}
        if s.value is None:
            return _(
                "Not enough decisions yet (%(selected)d selected, %(turned_down)d turned down; "
                "%(needed)d of each needed)."
            ) % {**counts, "needed": SUGGESTION_MIN_DECISIONS}
        return _(
            "%(value)s, from editors' decisions on %(selected)d selected and %(turned_down)d "
            "turned-down papers (at it: precision %(precision).2f, recall %(recall).2f)."
        ) % {**counts, "value": s.value, "precision": s.precision, "recall": s.recall}

    def get_changeform_initial_data(self, request) -> dict:
        initial = super().get_changeform_initial_data(request)
        # An active track is public: a contributor's new one starts inactive, for an editor
        # to open.
        if not self.has_publish_permission(request):
            initial.setdefault("is_active", False)
        return initial


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
class OrganizationAdmin(PublicContentAdmin, admin.ModelAdmin):
    list_display = ["label", "name", "name_zh", "slug"]
    search_fields = ["label", "name", "name_zh", "slug"]
    prepopulated_fields = {"slug": ["label"]}


class AuthorAdminForm(forms.ModelForm):
    merge_into = forms.SlugField(
        label=_("merge into"),
        required=False,
        help_text=_(
            "The slug of the author this name is the same person as: their papers and page "
            "become that author's (recorded with who and when)."
        ),
    )

    class Meta:
        model = Author
        fields = ["name"]

    def clean_merge_into(self) -> Author | None:
        slug = self.cleaned_data["merge_into"]
        if not slug:
            return None
        target = Author.objects.filter(slug=slug).first()
        if target is None:
            raise ValidationError(_("No author has this slug."))
        return target


@admin.register(Author)
class AuthorAdmin(ServiceErrorsAsMessages, admin.ModelAdmin):
    """Authors are made by ingest; an editor renames one or merges two names of one person."""

    form = AuthorAdminForm
    list_display = ["name", "slug", "merged_into", "merged_by", "merged_at"]
    search_fields = ["name", "key", "slug"]
    list_filter = [("merged_into", admin.EmptyFieldListFilter)]
    readonly_fields = ["key", "slug", "merged_into", "merged_by", "merged_at"]
    fields = ["name", "merge_into", *readonly_fields]

    def has_add_permission(self, request) -> bool:
        return False

    def save_model(self, request, obj, form, change) -> None:
        target = form.cleaned_data.get("merge_into")
        with transaction.atomic():
            if "name" in form.changed_data:
                public_content_save(obj=obj, user=request.user)
            if target is not None:
                author_merge(source=obj, target=target, user=request.user)


@admin.register(Venue)
class VenueAdmin(PublicContentAdmin, admin.ModelAdmin):
    list_display = ["short_name", "year", "full_name"]
    list_filter = ["year"]
    search_fields = ["short_name", "full_name"]


@admin.register(Topic)
class TopicAdmin(PublicContentAdmin, admin.ModelAdmin):
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
    """A paper with both languages' summaries side by side; saved through ``summary_write``."""

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
            # A machine card leaves the takeaway to the editor: asked for once they edit it.
            edited = {f"summary_{code}", f"takeaway_{code}"} & set(self.changed_data)
            if body and not takeaway and edited:
                self.add_error(f"takeaway_{code}", _("A summary needs its takeaway sentence."))
            if takeaway and not body:
                self.add_error(f"summary_{code}", _("A takeaway needs a summary."))
            if body and takeaway and takeaway not in body:
                self.add_error(f"takeaway_{code}", _("The takeaway must occur inside the summary."))
        return cleaned

    def save_summaries(self, paper: Paper, user) -> None:
        """Only a language whose fields the editor changed becomes the editor's text; saving
        the paper leaves machine drafts in the other language as they are."""
        for code in Language.values:
            names = [f"{n}_{code}" for n in ("headline", "summary", "takeaway", "highlights")]
            if not set(names) & set(self.changed_data):
                continue
            data = self.cleaned_data
            summary_write(
                paper=paper,
                language=code,
                user=user,
                headline=data.get(f"headline_{code}", ""),
                body=data.get(f"summary_{code}", ""),
                takeaway=data.get(f"takeaway_{code}", ""),
                highlights=_lines(data.get(f"highlights_{code}", "")),
            )


class MissingTranslationFilter(admin.SimpleListFilter):
    title = _("summaries")
    parameter_name = "missing"

    def lookups(self, request, model_admin):
        return [
            (Language.EN, _("Missing English")),
            (Language.ZH, _("Missing Chinese")),
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


class HasOpenFlagsFilter(admin.SimpleListFilter):
    """Summaries with an open grounding flag; ``flag_owner`` is the flag's path to the listed
    model (``summary`` for summaries, ``summary__paper`` for papers)."""

    title = _("grounding flags")
    parameter_name = "flags"
    flag_owner = "summary"

    def lookups(self, request, model_admin):
        return [("open", _("Has open flags")), ("none", _("No open flags"))]

    def queryset(self, request, queryset):
        open_flags = SummaryFlag.objects.filter(
            **{self.flag_owner: OuterRef("pk")}, resolution=SummaryFlag.Resolution.OPEN
        )
        if self.value() == "open":
            return queryset.filter(Exists(open_flags))
        if self.value() == "none":
            return queryset.exclude(Exists(open_flags))
        return queryset


class PaperHasOpenFlagsFilter(HasOpenFlagsFilter):
    """Papers with a summary whose grounding checks left an open flag."""

    flag_owner = "summary__paper"


@admin.register(Paper)
class PaperAdmin(PublicContentAdmin, admin.ModelAdmin):
    form = PaperAdminForm
    formfield_overrides = URL_OVERRIDES
    list_display = ["display_name", "kind", "org_labels", "venue", "missing", "created_at"]
    list_filter = [
        "tracks",
        ("created_at", admin.DateFieldListFilter),
        MissingTranslationFilter,
        PaperHasOpenFlagsFilter,
        "kind",
        "topics",
        "organizations",
        "venue",
    ]
    list_select_related = ["venue"]
    date_hierarchy = "created_at"
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
        if not change or "authors" in form.changed_data:
            paper_authors_sync({obj.pk: obj.authors})

    def save_related(self, request, form, formsets, change) -> None:
        super().save_related(request, form, formsets, change)
        form.save_summaries(form.instance, request.user)


class _SummaryPartInline(admin.TabularInline):
    """A read-only list of what belongs to a summary: who may see the summary sees it."""

    extra = 0
    can_delete = False

    def has_view_permission(self, request, obj=None) -> bool:
        opts = Summary._meta
        return request.user.has_perm(f"papers.view_{opts.model_name}") or request.user.has_perm(
            f"papers.change_{opts.model_name}"
        )

    def has_add_permission(self, request, obj=None) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False


class SummaryFlagInline(_SummaryPartInline):
    """What the grounding checks found; resolved by editing the text or confirming it."""

    model = SummaryFlag
    fields = ["kind", "field", "item", "text", "detail", "resolution", "resolved_by"]
    readonly_fields = fields
    ordering = ["resolution", "field", "item", "start"]


class SummaryVersionInline(_SummaryPartInline):
    model = SummaryVersion
    fields = ["created_at", "reason", "provenance", "drafter", "headline", "takeaway", "restore"]
    readonly_fields = fields
    ordering = ["-created_at", "-pk"]

    @admin.display(description=_("restore"))
    def restore(self, obj: SummaryVersion) -> str:
        # A button of the change form posting to the restore view (no nested form).
        url = reverse("admin:papers_summary_restore", args=[obj.summary_id, obj.pk])
        label = _("Apply") if obj.reason == SummaryVersion.Reason.PROPOSED else _("Restore")
        return format_html(
            '<button type="submit" formaction="{}" formmethod="post" name="_restore">{}</button>',
            url,
            label,
        )


def _flag_label(flag: SummaryFlag) -> str:
    return f"{flag.get_field_display()}: “{flag.text}” — {flag.detail}"


class SummaryAdminForm(forms.ModelForm):
    highlights_text = _text(_("Headline numbers, one per line"), rows=3)
    confirm = forms.BooleanField(
        label=_("Confirm as it stands"),
        required=False,
        help_text=_("Resolve every open flag as checked and mark the text reviewed."),
    )
    confirm_flags = forms.ModelMultipleChoiceField(
        queryset=SummaryFlag.objects.none(),
        required=False,
        widget=forms.CheckboxSelectMultiple,
        label=_("Confirm these flags"),
        help_text=_("Each flag ticked is checked and right as written; the others stay open."),
    )

    class Meta:
        model = Summary
        fields = ["paper", "language", "headline", "body", "takeaway"]

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.initial["highlights_text"] = "\n".join(self.instance.highlights or [])
        if self.instance.pk:
            field = self.fields["confirm_flags"]
            field.queryset = self.instance.flags.filter(resolution=SummaryFlag.Resolution.OPEN)
            field.label_from_instance = _flag_label

    def clean(self):
        cleaned = super().clean()
        body, takeaway = cleaned.get("body") or "", cleaned.get("takeaway") or ""
        if body and takeaway and takeaway.strip() not in body:
            self.add_error("takeaway", _("The takeaway must occur inside the summary."))
        return cleaned


@admin.register(Summary)
class SummaryAdmin(PublicContentAdmin, admin.ModelAdmin):
    """One language of a paper's text: editing it makes it the editor's; the flags and the
    previous versions are listed under it. One readers see (and its versions' restoring)
    is the editors' (the drafting services check it too)."""

    form = SummaryAdminForm
    list_display = ["paper", "language", "headline", "provenance", "open_flags", "updated_at"]
    list_filter = [HasOpenFlagsFilter, "provenance", "language"]
    search_fields = ["paper__title", "paper__short_name", "body", "takeaway", "headline"]
    autocomplete_fields = ["paper"]
    list_select_related = ["paper"]
    actions = ["confirm_selected"]
    inlines = [SummaryFlagInline, SummaryVersionInline]
    readonly_fields = [
        "open_flag_list",
        *Summary.DRAFT_FIELDS,
        "reviewed_by",
        "reviewed_at",
        "edited_by",
        "edited_at",
    ]
    fieldsets = [
        (None, {"fields": [("paper", "language"), "headline", "body", "takeaway"]}),
        (None, {"fields": ["highlights_text", "open_flag_list", "confirm_flags", "confirm"]}),
        (
            _("Provenance"),
            {
                "fields": [
                    "provenance",
                    ("drafter", "drafter_version"),
                    ("model_name", "prompt_version"),
                    ("source_digest", "drafted_at"),
                    ("reviewed_by", "reviewed_at"),
                    ("edited_by", "edited_at"),
                ]
            },
        ),
    ]

    def get_queryset(self, request):
        open_flags = Count("flags", filter=Q(flags__resolution=SummaryFlag.Resolution.OPEN))
        return super().get_queryset(request).annotate(n_open_flags=open_flags)

    def get_readonly_fields(self, request, obj=None):
        fields = list(super().get_readonly_fields(request, obj))
        return [*fields, "paper", "language"] if obj else fields

    @admin.display(description=_("open flags"), ordering="n_open_flags")
    def open_flags(self, obj: Summary) -> int:
        return getattr(obj, "n_open_flags", 0)

    @admin.display(description=_("open flags"))
    def open_flag_list(self, obj: Summary) -> str:
        flags = [f for f in obj.flags.all() if f.is_open] if obj.pk else []
        if not flags:
            return "—"
        return format_html_join(
            "",
            "<div><strong>{}</strong> · {}: “{}” — {}</div>",
            ((f.get_kind_display(), f.get_field_display(), f.text, f.detail) for f in flags),
        )

    def save_model(self, request, obj, form, change) -> None:
        data = form.cleaned_data
        texts = {
            "headline": data.get("headline", ""),
            "body": data.get("body", ""),
            "takeaway": data.get("takeaway", ""),
            "highlights": _lines(data.get("highlights_text", "")),
        }
        if change:
            # The form has set the new text on obj; summary_edit compares with the stored one.
            summary_edit(summary=obj, user=request.user, **texts)
        else:
            summary = summary_write(
                paper=obj.paper, language=obj.language, user=request.user, **texts
            )
            obj.pk = summary.pk if summary else None
            obj._state.adding = False
        if data.get("confirm_flags") and obj.pk:
            ids = [flag.pk for flag in data["confirm_flags"]]
            summary_flags_confirm(summary=obj, flag_ids=ids, user=request.user)
        if data.get("confirm") and obj.pk:
            summary_confirm(summary=obj, user=request.user)

    def delete_model(self, request, obj) -> None:
        summary_delete(summary=obj, user=request.user)

    def delete_queryset(self, request, queryset) -> None:
        with transaction.atomic():
            for summary in queryset:
                summary_delete(summary=summary, user=request.user)

    @admin.action(description=_("Confirm the selected summaries as they stand"))
    def confirm_selected(self, request, queryset) -> None:
        n = flags = 0
        for summary in queryset:
            try:
                flags += summary_confirm(summary=summary, user=request.user)
                n += 1
            except PermissionDenied as exc:
                self.message_user(request, str(exc), messages.ERROR)
        self.message_user(
            request, _("Confirmed %(n)d summaries (%(f)d flags).") % {"n": n, "f": flags}
        )

    def get_urls(self):
        restore = path(
            "<int:summary_id>/restore/<int:version_id>/",
            self.admin_site.admin_view(self.restore_view),
            name="papers_summary_restore",
        )
        return [restore, *super().get_urls()]

    def restore_view(self, request, summary_id: int, version_id: int):
        if request.method != "POST":
            return HttpResponseNotAllowed(["POST"])
        summary = get_object_or_404(Summary, pk=summary_id)
        if not self.has_change_permission(request, summary):
            raise PermissionDenied
        version = get_object_or_404(SummaryVersion, pk=version_id, summary=summary)
        summary_restore_version(version=version, user=request.user)
        self.message_user(request, _("The version is the live text now."), messages.SUCCESS)
        return HttpResponseRedirect(reverse("admin:papers_summary_change", args=[summary.pk]))


@admin.register(GlossaryTerm)
class GlossaryTermAdmin(PublicContentAdmin, admin.ModelAdmin):
    list_display = ["en", "zh", "track"]
    list_filter = ["track"]
    search_fields = ["en", "zh"]
    list_select_related = ["track"]


@admin.register(DraftRun)
class DraftRunAdmin(admin.ModelAdmin):
    """Read-only record of every drafting: what was written, what stays missing and why."""

    list_display = [
        "__str__",
        "drafter",
        "model_name",
        "started_at",
        "languages",
        "missing",
        "prompt_tokens",
        "completion_tokens",
    ]
    list_filter = ["drafter", "model_name"]
    search_fields = ["label", "paper__title", "paper__canonical_id"]
    date_hierarchy = "started_at"
    list_select_related = ["paper"]

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False


@admin.register(LLMRequest)
class LLMRequestAdmin(admin.ModelAdmin):
    list_display = [
        "created_at",
        "purpose",
        "model_name",
        "paper",
        "prompt_tokens",
        "completion_tokens",
        "ok",
    ]
    list_filter = ["purpose", "ok", "model_name"]
    search_fields = ["paper__title", "error"]
    date_hierarchy = "created_at"
    list_select_related = ["paper"]

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False


@admin.register(Score)
class ScoreAdmin(admin.ModelAdmin):
    list_display = ["paper", "track", "total", "scorer", "scorer_version", "created_at"]
    list_filter = ["track", "scorer", ("created_at", admin.DateFieldListFilter)]
    date_hierarchy = "created_at"
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
        "lost",
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
        "lost",
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
