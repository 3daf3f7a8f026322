from __future__ import annotations

import datetime as dt
from decimal import Decimal, InvalidOperation

from adminsortable2.admin import SortableAdminBase, SortableTabularInline
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.db.models import Count, OuterRef, Subquery
from django.db.models.functions import Coalesce
from django.http import HttpResponseNotAllowed, HttpResponseRedirect
from django.shortcuts import get_object_or_404
from django.urls import path, reverse
from django.utils.html import format_html, format_html_join
from django.utils.safestring import mark_safe
from django.utils.translation import gettext_lazy as _
from django.utils.translation import ngettext

from audit.admin import audit_history_panel
from dailies import services
from dailies.assembly import daily_assemble_next
from dailies.checklist import entry_name
from dailies.desk import desk_context, desk_history, editorial_time_zone, score_text
from dailies.drafting import daily_draft, daily_paper_draft, roundup_intro_draft
from dailies.models import Daily, DailyEntry, EditorialAction, WeeklyRoundup
from papers.admin import EditorsOnlyOncePublic, ServiceErrorsAsMessages
from papers.languages import LANGUAGE_CODES
from papers.models import Paper, Track


class DailyEntryInline(SortableTabularInline):
    """Dragged into order in the browser: sortable2's script numbers the hidden positions
    1..n before the form is sent, and the one save goes through ``daily_update`` (there is no
    separate reorder endpoint for inlines). A row added without a position goes last."""

    model = DailyEntry
    extra = 0
    fields = ["paper", "is_lead", "score", "score_shown"]
    readonly_fields = ["score_shown"]
    autocomplete_fields = ["paper"]
    ordering = ["position"]

    @admin.display(description=_("score (shown)"))
    def score_shown(self, obj: DailyEntry) -> str:
        return score_text(obj)

    # ``obj`` is the daily: a published or scheduled one's entries are the editors'.
    def _may_change(self, request, obj) -> bool:
        return obj is None or services.daily_may_change(daily=obj, user=request.user)

    def has_add_permission(self, request, obj) -> bool:
        return super().has_add_permission(request, obj) and self._may_change(request, obj)

    def has_change_permission(self, request, obj=None) -> bool:
        return super().has_change_permission(request, obj) and self._may_change(request, obj)

    def has_delete_permission(self, request, obj=None) -> bool:
        return super().has_delete_permission(request, obj) and self._may_change(request, obj)


def _entry_changes(formsets) -> services.EntryChanges:
    """The inline's rows as one set of entry changes, for ``daily_update``."""
    changes = services.EntryChanges()
    fields = set(services.ENTRY_EDITABLE_FIELDS)
    for formset in formsets:
        if formset.model is not DailyEntry:
            continue
        deleted = set(formset.deleted_forms) if formset.can_delete else set()
        for form in formset.initial_forms:
            if form in deleted:
                changes.removed.append(form.instance.pk)
            elif form.has_changed():
                names = [n for n in form.changed_data if n in fields]
                changes.changed[form.instance.pk] = {n: form.cleaned_data[n] for n in names}
        for form in formset.extra_forms:
            if form.has_changed() and form not in deleted:
                values = {n: v for n, v in form.cleaned_data.items() if n in fields}
                changes.added.append(values)
        # The services saved the rows; the admin's change message reads these.
        formset.new_objects, formset.changed_objects, formset.deleted_objects = [], [], []
    return changes


@admin.register(Daily)
class DailyAdmin(
    ServiceErrorsAsMessages, EditorsOnlyOncePublic, SortableAdminBase, admin.ModelAdmin
):
    publish_only_fields = ("publish_at",)
    list_display = [
        "__str__",
        "track",
        "date",
        "status",
        "publish_at",
        "selected",
        "candidates_scored",
    ]
    list_filter = ["status", "track", "date"]
    search_fields = ["intro_en", "intro_zh", "entries__paper__title", "entries__paper__short_name"]
    change_list_template = "admin/dailies/daily/change_list.html"
    # The desk's summary has the one Preview; the admin's "View on site" would be a second.
    view_on_site = False
    date_hierarchy = "date"
    inlines = [DailyEntryInline]
    # The publish time is set by the desk's one Publish at control (Schedule), not here.
    readonly_fields = [
        "status",
        "publish_at",
        "published_at",
        "candidates_scored",
        "stats_line",
        "history",
        "editorial_history",
        "english_only",
        "intro_provenance",
    ]
    fieldsets = [
        (None, {"fields": [("track", "date"), ("status", "publish_at", "published_at")]}),
        (_("Languages"), {"fields": ["english_only"]}),
        (_("Intro, side by side"), {"fields": [("intro_en", "intro_zh"), "intro_provenance"]}),
        (_("Stats (derived)"), {"fields": ["candidates_scored", "stats_line"]}),
        (_("History"), {"fields": ["editorial_history", "history"]}),
    ]
    actions = [
        "publish_now",
        "schedule",
        "unpublish",
        "draft_writing",
        "confirm_intros",
        "accept_untranslated",
        "publish_english_only",
    ]
    list_select_related = ["track"]

    class Media:
        css = {"all": ["dailies/admin/desk.css"]}
        js = ["dailies/admin/desk.js"]

    def get_queryset(self, request):
        # The list's "selected" column: a count in the page's own query, not a COUNT per
        # row; a subquery rather than a join, so the list's counts and date bounds drop it.
        selected = (
            DailyEntry.objects.filter(daily=OuterRef("pk"))
            .order_by()
            .values("daily")
            .annotate(n=Count("pk"))
            .values("n")
        )
        return super().get_queryset(request).annotate(n_selected=Coalesce(Subquery(selected), 0))

    @admin.display(description=_("selected"), ordering="n_selected")
    def selected(self, obj: Daily) -> int:
        return obj.n_selected

    @admin.display(description=_("stats line"))
    def stats_line(self, obj: Daily) -> str:
        if obj.pk is None:
            return "—"
        stats = obj.stats()
        parts = [
            f"candidates {stats.candidates if stats.candidates is not None else '—'}",
            f"selected {stats.selected}",
        ]
        if stats.has_range:
            parts.append(f"scores {stats.low:.2f}–{stats.high:.2f}")
        return " · ".join(parts)

    def _apply(self, request, queryset, action, done: str) -> None:
        ok = 0
        for daily in queryset:
            try:
                action(daily=daily, user=request.user)
                ok += 1
            except (ValidationError, PermissionDenied) as exc:
                message = "; ".join(exc.messages) if isinstance(exc, ValidationError) else str(exc)
                self.message_user(request, f"{daily}: {message}", messages.ERROR)
        if ok:
            self.message_user(request, done % {"n": ok}, messages.SUCCESS)

    @admin.action(description=_("Publish now"), permissions=["publish"])
    def publish_now(self, request, queryset) -> None:
        self._apply(request, queryset, services.daily_publish, _("Published %(n)d daily(ies)."))

    @admin.action(description=_("Schedule at their publish time"), permissions=["publish"])
    def schedule(self, request, queryset) -> None:
        self._apply(
            request, queryset, services.daily_schedule_at_its_time, _("Scheduled %(n)d daily(ies).")
        )

    @admin.action(description=_("Unpublish (back to draft)"), permissions=["publish"])
    def unpublish(self, request, queryset) -> None:
        self._apply(request, queryset, services.daily_unpublish, _("Unpublished %(n)d daily(ies)."))

    @admin.action(description=_("Draft the missing writing (summaries and intros)"))
    def draft_writing(self, request, queryset) -> None:
        for daily in queryset.select_related("track"):
            outcome = daily_draft(daily=daily)
            line = outcome.summary_line()
            level = messages.WARNING if outcome.stopped or line["flagged"] else messages.SUCCESS
            text = _(
                "%(daily)s: drafted %(drafted)d entries (%(flagged)d flagged); intro: %(intro)s."
            ) % {
                "daily": daily,
                "drafted": line["drafted"],
                "flagged": line["flagged"],
                "intro": ", ".join(line["intro"]) or "—",
            }
            if outcome.stopped:
                text += " " + _("Stopped: %(why)s") % {"why": outcome.stopped}
            self.message_user(request, text, level)

    @admin.action(description=_("Confirm the machine intros' flags as they stand"))
    def confirm_intros(self, request, queryset) -> None:
        self._apply(request, queryset, services.daily_intro_confirm, _("Confirmed %(n)d intro(s)."))

    @admin.action(description=_("Accept “not yet translated” for entries missing a language"))
    def accept_untranslated(self, request, queryset) -> None:
        self._apply(
            request,
            queryset,
            services.daily_accept_untranslated,
            _("Accepted missing translations in %(n)d daily(ies)."),
        )

    @admin.action(description=_("Publish in English only (records who chose it, and when)"))
    def publish_english_only(self, request, queryset) -> None:
        self._apply(
            request,
            queryset,
            services.daily_english_only_set,
            _("Marked %(n)d daily(ies) to be published in English only."),
        )

    @admin.display(description=_("English only"))
    def english_only(self, obj: Daily) -> str:
        if obj.english_only_at is None:
            return _("No: both languages are checked.")
        return _("Yes, chosen by %(who)s on %(when)s.") % {
            "who": obj.english_only_by or _("a deleted user"),
            "when": obj.english_only_at.strftime("%Y-%m-%d %H:%M"),
        }

    @admin.display(description=_("intro written by"))
    def intro_provenance(self, obj: Daily) -> str:
        parts = [
            f"{language}: {getattr(obj, f'get_intro_{language}_provenance_display')()}"
            for language in LANGUAGE_CODES
        ]
        if obj.intro_drafter:
            when = obj.intro_drafted_at.strftime("%Y-%m-%d %H:%M") if obj.intro_drafted_at else ""
            who = {"who": obj.intro_drafter, "when": when}
            parts.append(_("drafted by %(who)s %(when)s") % who)
        for flag in obj.intro_flags or []:
            parts.append(
                _("open flag [%(language)s] %(kind)s: “%(text)s”")
                % {
                    "language": flag.get("language"),
                    "kind": flag.get("kind"),
                    "text": flag.get("text"),
                }
            )
        return " · ".join(parts)

    @admin.display(description=_("public changes (audit)"))
    def history(self, obj: Daily) -> str:
        return audit_history_panel(obj)

    @admin.display(description=_("editorial history"))
    def editorial_history(self, obj: Daily) -> str:
        """Every reorder, lead change, addition, removal, score override and text edit,
        newest first, with who and when."""
        actions = desk_history(daily=obj) if obj.pk else []
        if not actions:
            return format_html('<span id="desk-history">{}</span>', _("No editorial actions yet."))
        rows = format_html_join(
            "",
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            (
                (
                    f"{a.created_at.astimezone(editorial_time_zone()):%Y-%m-%d %H:%M:%S}",
                    a.user.get_username() if a.user else "system",
                    a.get_kind_display(),
                    entry_name(a.paper) if a.paper else "—",
                    _action_detail(a),
                )
                for a in actions
            ),
        )
        return format_html(
            '<table class="desk-history" id="desk-history"><tbody>{}</tbody></table>', rows
        )

    # Published and scheduled dailies are read-only to those who may not publish.
    def may_change(self, request, obj) -> bool:
        return services.daily_may_change(daily=obj, user=request.user)

    def save_model(self, request, obj, form, change) -> None:
        """Nothing yet: ``save_related`` saves the daily and its entries in one service call,
        which checks who may do it."""

    def save_related(self, request, form, formsets, change) -> None:
        form.save_m2m()
        entries = _entry_changes(formsets)
        if change:
            changes = {name: form.cleaned_data[name] for name in form.changed_data}
            services.daily_update(
                daily=form.instance, user=request.user, changes=changes, entries=entries
            )
        else:
            services.daily_create(daily=form.instance, user=request.user, entries=entries.added)

    # -- the editor's desk: panels of the change page and the small views they post to -----

    def change_view(self, request, object_id, form_url="", extra_context=None):
        daily = self.get_object(request, object_id)
        extra_context = dict(extra_context or {})
        if daily is not None and request.method == "GET":
            extra_context["desk"] = desk_context(daily=daily)
            extra_context["may_publish"] = self.has_publish_permission(request)
            extra_context["may_edit"] = self.has_change_permission(request, daily)
            extra_context["languages"] = LANGUAGE_CODES
        return super().change_view(request, object_id, form_url, extra_context)

    def get_urls(self):
        def desk(route: str, view, name: str):
            return path(route, self.admin_site.admin_view(view), name=f"dailies_daily_{name}")

        return [
            desk("<int:daily_id>/desk/add/", self.add_candidate_view, "add_candidate"),
            desk("<int:daily_id>/desk/<int:entry_id>/remove/", self.remove_entry_view, "remove"),
            desk("<int:daily_id>/desk/<int:entry_id>/texts/", self.entry_texts_view, "texts"),
            desk("<int:daily_id>/desk/<int:entry_id>/redraft/", self.redraft_view, "redraft"),
            desk(
                "<int:daily_id>/desk/<int:entry_id>/confirm/<str:language>/",
                self.confirm_view,
                "confirm",
            ),
            desk(
                "<int:daily_id>/desk/<int:entry_id>/accept/<str:language>/",
                self.accept_untranslated_view,
                "accept_untranslated",
            ),
            desk("<int:daily_id>/desk/review/", self.mark_reviewed_view, "mark_reviewed"),
            desk("<int:daily_id>/desk/publish/", self.publish_view, "publish"),
            desk("<int:daily_id>/desk/schedule/", self.schedule_view, "schedule"),
            desk("<int:daily_id>/desk/unpublish/", self.unpublish_view, "unpublish"),
            desk("assemble-next/", self.assemble_next_view, "assemble_next"),
            *super().get_urls(),
        ]

    def _desk_post(self, request, daily_id: int, *, publish: bool = False) -> Daily:
        """The daily a desk POST acts on, after the admin's own permission checks: change
        permission for preparing, the publish permission for the workflow buttons."""
        if request.method != "POST":
            raise _NotPost
        daily = get_object_or_404(Daily.objects.select_related("track"), pk=daily_id)
        allowed = self.has_publish_permission(request) if publish else True
        if not (allowed and self.has_change_permission(request, daily)):
            raise PermissionDenied
        return daily

    def _desk_run(self, request, daily_id: int, work, *, publish: bool = False, anchor=""):
        """Run ``work(daily)`` (a service call); its refusal or validation error comes back
        as messages on the change page, having stored nothing."""
        try:
            daily = self._desk_post(request, daily_id, publish=publish)
        except _NotPost:
            return HttpResponseNotAllowed(["POST"])
        try:
            with transaction.atomic():
                done = work(daily)
        except (PermissionDenied, ValidationError) as exc:
            messages_ = exc.messages if isinstance(exc, ValidationError) else [str(exc)]
            for message in messages_:
                self.message_user(request, message, messages.ERROR)
        else:
            if done:
                self.message_user(request, done, messages.SUCCESS)
        url = reverse("admin:dailies_daily_change", args=[daily_id])
        return HttpResponseRedirect(url + anchor)

    def add_candidate_view(self, request, daily_id: int):
        def add(daily: Daily) -> str:
            paper = Paper.objects.filter(pk=request.POST.get("paper")).first()
            if paper is None:
                raise ValidationError(_("Choose a paper to add."))
            values: dict = {"paper": paper}
            override = request.POST.get("score", "").strip()
            if override:
                values["score"] = _decimal(override)
            services.daily_update(
                daily=daily,
                user=request.user,
                changes={},
                entries=services.EntryChanges(added=[values]),
            )
            return _("Added %(paper)s.") % {"paper": paper}

        return self._desk_run(request, daily_id, add, anchor="#desk-candidates")

    def remove_entry_view(self, request, daily_id: int, entry_id: int):
        def remove(daily: Daily) -> str:
            entry = get_object_or_404(DailyEntry, pk=entry_id, daily=daily)
            services.daily_update(
                daily=daily,
                user=request.user,
                changes={},
                entries=services.EntryChanges(removed=[entry.pk]),
            )
            return _("Removed %(paper)s.") % {"paper": entry.paper}

        return self._desk_run(request, daily_id, remove, anchor="#desk-candidates")

    def entry_texts_view(self, request, daily_id: int, entry_id: int):
        def edit(daily: Daily) -> str:
            entry = get_object_or_404(
                DailyEntry.objects.select_related("paper"), pk=entry_id, daily=daily
            )
            texts = {}
            for code in LANGUAGE_CODES:
                if f"{code}-body" not in request.POST:
                    continue
                texts[code] = {
                    "headline": request.POST.get(f"{code}-headline", ""),
                    "body": request.POST.get(f"{code}-body", ""),
                    "takeaway": request.POST.get(f"{code}-takeaway", ""),
                    "highlights": request.POST.get(f"{code}-highlights", "").splitlines(),
                }
            changed = services.daily_entry_texts_edit(
                daily=daily, entry=entry, user=request.user, texts=texts
            )
            if not changed:
                return _("Nothing changed.")
            return _("Saved the %(languages)s text of %(paper)s.") % {
                "languages": ", ".join(changed),
                "paper": entry.paper,
            }

        return self._desk_run(request, daily_id, edit, anchor=f"#desk-entry-{entry_id}")

    def redraft_view(self, request, daily_id: int, entry_id: int):
        def redraft(daily: Daily) -> str:
            entry = get_object_or_404(
                DailyEntry.objects.select_related("paper"), pk=entry_id, daily=daily
            )
            outcome = daily_paper_draft(paper=entry.paper, track=daily.track, redraft=True)
            parts = [
                _("written: %(l)s") % {"l": ", ".join(outcome.languages) or "—"},
                _("proposed: %(l)s") % {"l": ", ".join(outcome.proposed) or "—"},
            ]
            if outcome.editor_languages:
                parts.append(
                    _("editor's text kept: %(l)s") % {"l": ", ".join(outcome.editor_languages)}
                )
            return _("Re-drafted %(paper)s (%(parts)s).") % {
                "paper": entry.paper,
                "parts": "; ".join(parts),
            }

        return self._desk_run(request, daily_id, redraft, anchor=f"#desk-entry-{entry_id}")

    def confirm_view(self, request, daily_id: int, entry_id: int, language: str):
        def confirm(daily: Daily) -> str:
            entry = get_object_or_404(
                DailyEntry.objects.select_related("paper"), pk=entry_id, daily=daily
            )
            n = services.daily_entry_confirm(
                daily=daily, entry=entry, language=language, user=request.user
            )
            return _("Confirmed %(n)d flag(s) of %(paper)s (%(language)s).") % {
                "n": n,
                "paper": entry.paper,
                "language": language,
            }

        return self._desk_run(request, daily_id, confirm, anchor=f"#desk-entry-{entry_id}")

    def accept_untranslated_view(self, request, daily_id: int, entry_id: int, language: str):
        def accept(daily: Daily) -> str:
            entry = get_object_or_404(
                DailyEntry.objects.select_related("paper"), pk=entry_id, daily=daily
            )
            services.daily_entry_accept_untranslated(
                daily=daily, entry=entry, language=language, user=request.user
            )
            return _("Accepted “not yet translated” (%(language)s) for %(paper)s.") % {
                "language": language,
                "paper": entry_name(entry.paper),
            }

        return self._desk_run(request, daily_id, accept, anchor="#desk-summary")

    def mark_reviewed_view(self, request, daily_id: int):
        """Mark reviewed the machine drafts named ``review=<entry id>-<language>``: one from
        its checklist line or entry, or the ones the editor ticked as read."""

        def mark(daily: Daily) -> str:
            texts = []
            for value in request.POST.getlist("review"):
                entry_id, _sep, language = value.partition("-")
                if not entry_id.isdigit():
                    raise ValidationError(_("Choose a text to mark reviewed."))
                texts.append((int(entry_id), language))
            n = services.daily_entries_mark_reviewed(daily=daily, texts=texts, user=request.user)
            return ngettext("Marked %(n)d text reviewed.", "Marked %(n)d texts reviewed.", n) % {
                "n": n
            }

        return self._desk_run(request, daily_id, mark, anchor="#desk-summary")

    def publish_view(self, request, daily_id: int):
        def publish(daily: Daily) -> str:
            services.daily_publish(daily=daily, user=request.user)
            return _("Published %(daily)s.") % {"daily": daily}

        return self._desk_run(request, daily_id, publish, publish=True)

    def schedule_view(self, request, daily_id: int):
        def schedule(daily: Daily) -> str:
            publish_at = _editorial_datetime(
                request.POST.get("date", ""), request.POST.get("time", "")
            )
            services.daily_schedule(daily=daily, publish_at=publish_at, user=request.user)
            return _("Scheduled %(daily)s for %(when)s.") % {
                "daily": daily,
                "when": f"{publish_at:%Y-%m-%d %H:%M} ({editorial_time_zone().key})",
            }

        return self._desk_run(request, daily_id, schedule, publish=True)

    def unpublish_view(self, request, daily_id: int):
        def unpublish(daily: Daily) -> str:
            services.daily_unpublish(daily=daily, user=request.user)
            return _("%(daily)s is a draft again.") % {"daily": daily}

        return self._desk_run(request, daily_id, unpublish, publish=True)

    def assemble_next_view(self, request):
        """Assemble the next daily of a track: the day after its newest daily (today in the
        editorial time zone when it has none)."""
        if request.method != "POST":
            return HttpResponseNotAllowed(["POST"])
        if not self.has_add_permission(request):
            raise PermissionDenied
        track = get_object_or_404(Track, pk=request.POST.get("track"))
        result = daily_assemble_next(track=track)
        text = f"{track.slug} {result.date:%Y-%m-%d}: {result.status}: {result.message}"
        if result.daily is not None:
            self.message_user(request, text, messages.SUCCESS)
            return HttpResponseRedirect(
                reverse("admin:dailies_daily_change", args=[result.daily.pk])
            )
        self.message_user(request, text, messages.WARNING)
        return HttpResponseRedirect(reverse("admin:dailies_daily_changelist"))

    def changelist_view(self, request, extra_context=None):
        extra_context = dict(extra_context or {})
        if self.has_add_permission(request):
            extra_context["assemble_tracks"] = Track.objects.filter(is_active=True)
        return super().changelist_view(request, extra_context)

    def get_deleted_objects(self, objs, request):
        deleted, counts, perms_needed, protected = super().get_deleted_objects(objs, request)
        # A daily's editorial actions go with it; nobody deletes them one by one.
        perms_needed.discard(EditorialAction._meta.verbose_name)
        return deleted, counts, perms_needed, protected

    def delete_model(self, request, obj) -> None:
        services.daily_delete(daily=obj, user=request.user)

    def delete_queryset(self, request, queryset) -> None:
        with transaction.atomic():
            for daily in queryset:
                services.daily_delete(daily=daily, user=request.user)


class _NotPost(Exception):
    pass


def _decimal(text: str) -> Decimal:
    try:
        return Decimal(text)
    except InvalidOperation as exc:
        raise ValidationError(_("“%(text)s” is not a score.") % {"text": text}) from exc


def _editorial_datetime(date: str, time: str) -> dt.datetime:
    """A date and a time typed in the editorial time zone, as an aware datetime."""
    try:
        day = dt.date.fromisoformat(date)
        clock = dt.time.fromisoformat(time)
    except ValueError as exc:
        raise ValidationError(_("Give the publish date and time (YYYY-MM-DD, HH:MM).")) from exc
    return dt.datetime.combine(day, clock, tzinfo=editorial_time_zone())


def _action_detail(action: EditorialAction) -> str:
    parts = [action.detail] if action.detail else []
    if action.kind == EditorialAction.Kind.SCORE_OVERRIDE:
        parts.append(f"{action.score_before} → {action.score_after}")
    elif action.kind == EditorialAction.Kind.ADDED and action.score_after is not None:
        parts.append(f"score {action.score_after}")
    return " · ".join(parts) or "—"


@admin.register(EditorialAction)
class EditorialActionAdmin(admin.ModelAdmin):
    """What editors did to the proposed dailies; the scorer's relevance profile learns it."""

    list_display = [
        "daily",
        "kind",
        "paper",
        "detail",
        "score_before",
        "score_after",
        "user",
        "created_at",
    ]
    list_filter = ["kind", "daily__track"]
    search_fields = ["paper__title", "paper__short_name"]
    list_select_related = ["daily", "daily__track", "paper", "user"]

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False


@admin.register(WeeklyRoundup)
class WeeklyRoundupAdmin(admin.ModelAdmin):
    """A week's roundup intro: drafted by the pipeline, corrected and confirmed here, then
    published by an editor (who and when are recorded). The week's page lists the week's
    dailies without it until then."""

    list_display = ["__str__", "track", "week_start", "status", "published_by", "published_at"]
    list_filter = ["track", "status"]
    search_fields = ["intro_en", "intro_zh", "track__slug"]
    date_hierarchy = "week_start"
    fields = [
        "track",
        "week_start",
        "status",
        "intro_en",
        "intro_zh",
        "intro_en_provenance",
        "intro_zh_provenance",
        "open_flags",
        "intro_drafter",
        "intro_drafted_at",
        "published_by",
        "published_at",
    ]
    readonly_fields = [
        "status",
        "intro_en_provenance",
        "intro_zh_provenance",
        "open_flags",
        "intro_drafter",
        "intro_drafted_at",
        "published_by",
        "published_at",
    ]
    actions = ["draft_intro", "confirm_intro", "publish_intro", "unpublish_intro"]

    def get_readonly_fields(self, request, obj=None):
        # A roundup's week is fixed once made: its intro was drafted from that week.
        fixed = ["track", "week_start"] if obj is not None else []
        return [*fixed, *self.readonly_fields]

    @admin.display(description=_("open flags"))
    def open_flags(self, obj: WeeklyRoundup) -> str:
        flags = obj.intro_flags or []
        if not flags:
            return "—"
        return format_html_join(
            mark_safe("<br>"),
            "{} · {}: “{}” {}",
            ((f.get("language"), f.get("kind"), f.get("text"), f.get("detail", "")) for f in flags),
        )

    def has_publish_permission(self, request) -> bool:
        return services.user_may_publish(request.user)

    def has_delete_permission(self, request, obj=None) -> bool:
        # A published intro is public: only editors withdraw it (``roundup_delete``).
        return super().has_delete_permission(request, obj) and (
            obj is None or not obj.is_published or self.has_publish_permission(request)
        )

    def delete_model(self, request, obj) -> None:
        services.roundup_delete(roundup=obj, user=request.user)

    def delete_queryset(self, request, queryset) -> None:
        with transaction.atomic():
            for roundup in queryset:
                services.roundup_delete(roundup=roundup, user=request.user)

    def save_model(self, request, obj, form, change) -> None:
        if not change:
            made = services.roundup_get_or_create(track=obj.track, week_start=obj.week_start)
            obj.pk = made.pk
        services.roundup_edit(
            roundup=obj, user=request.user, intro_en=obj.intro_en, intro_zh=obj.intro_zh
        )

    def _apply(self, request, queryset, action, done: str) -> None:
        ok = 0
        for roundup in queryset:
            try:
                action(roundup=roundup, user=request.user)
                ok += 1
            except (ValidationError, PermissionDenied) as exc:
                message = "; ".join(exc.messages) if isinstance(exc, ValidationError) else str(exc)
                self.message_user(request, f"{roundup}: {message}", messages.ERROR)
        if ok:
            self.message_user(request, done % {"n": ok}, messages.SUCCESS)

    @admin.action(description=_("Draft the intro (machine)"))
    def draft_intro(self, request, queryset) -> None:
        for roundup in queryset:
            drafted, missing = roundup_intro_draft(roundup=roundup)
            reasons = "; ".join(f"{lang}: {why}" for lang, why in sorted(missing.items()))
            level = messages.SUCCESS if drafted else messages.WARNING
            self.message_user(
                request, f"{roundup}: {', '.join(drafted) or '—'} {reasons}".strip(), level
            )

    @admin.action(description=_("Confirm the intro as it stands"))
    def confirm_intro(self, request, queryset) -> None:
        self._apply(
            request, queryset, services.roundup_intro_confirm, _("Confirmed %(n)d intro(s).")
        )

    @admin.action(description=_("Publish the intro"), permissions=["publish"])
    def publish_intro(self, request, queryset) -> None:
        self._apply(request, queryset, services.roundup_publish, _("Published %(n)d intro(s)."))

    @admin.action(description=_("Unpublish the intro"), permissions=["publish"])
    def unpublish_intro(self, request, queryset) -> None:
        self._apply(request, queryset, services.roundup_unpublish, _("Unpublished %(n)d intro(s)."))
