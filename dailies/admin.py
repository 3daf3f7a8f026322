from __future__ import annotations

from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.http import HttpResponseRedirect
from django.utils.html import format_html_join
from django.utils.safestring import mark_safe
from django.utils.translation import gettext_lazy as _

from audit.admin import audit_history_panel
from dailies import services
from dailies.checklist import daily_publishing_blockers
from dailies.drafting import daily_draft
from dailies.models import Daily, DailyEntry, EditorialAction


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


class DailyEntryInline(admin.TabularInline):
    model = DailyEntry
    extra = 0
    fields = ["position", "paper", "is_lead", "score"]
    autocomplete_fields = ["paper"]
    ordering = ["position"]

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
class DailyAdmin(ServiceErrorsAsMessages, admin.ModelAdmin):
    list_display = [
        "__str__",
        "track",
        "date",
        "status",
        "publish_at",
        "selected",
        "candidates_scored",
    ]
    list_filter = ["status", "track"]
    search_fields = ["intro_en", "intro_zh", "entries__paper__title", "entries__paper__short_name"]
    date_hierarchy = "date"
    inlines = [DailyEntryInline]
    readonly_fields = [
        "status",
        "published_at",
        "candidates_scored",
        "stats_line",
        "history",
        "checklist",
        "intro_provenance",
    ]
    fieldsets = [
        (None, {"fields": [("track", "date"), ("status", "publish_at", "published_at")]}),
        (_("Publishing checklist"), {"fields": ["checklist"]}),
        (_("Intro, side by side"), {"fields": [("intro_en", "intro_zh"), "intro_provenance"]}),
        (_("Stats (derived)"), {"fields": ["candidates_scored", "stats_line"]}),
        (_("Audit history"), {"fields": ["history"]}),
    ]
    actions = [
        "publish_now",
        "schedule",
        "unpublish",
        "draft_writing",
        "confirm_intros",
        "accept_untranslated",
    ]
    list_select_related = ["track"]

    @admin.display(description=_("selected"))
    def selected(self, obj: Daily) -> int:
        return obj.entries.count()

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
        def schedule_one(*, daily: Daily, user) -> Daily:
            if daily.publish_at is None:
                raise ValidationError(_("Set a publish time first."))
            return services.daily_schedule(daily=daily, publish_at=daily.publish_at, user=user)

        self._apply(request, queryset, schedule_one, _("Scheduled %(n)d daily(ies)."))

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

    @admin.display(description=_("what blocks publishing"))
    def checklist(self, obj: Daily) -> str:
        if obj.pk is None:
            return "—"
        blockers = daily_publishing_blockers(daily=obj)
        if not blockers:
            return _("Nothing: the daily may be published.")
        return format_html_join(
            mark_safe("<br>"), "• {}", ((blocker.message,) for blocker in blockers)
        )

    @admin.display(description=_("intro written by"))
    def intro_provenance(self, obj: Daily) -> str:
        parts = [
            f"{language}: {getattr(obj, f'get_intro_{language}_provenance_display')()}"
            for language in ("en", "zh")
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

    @admin.display(description=_("history"))
    def history(self, obj: Daily) -> str:
        return audit_history_panel(obj)

    def has_publish_permission(self, request) -> bool:
        return request.user.has_perm(services.PUBLISH_PERMISSION)

    # Published and scheduled dailies are read-only to those who may not publish.
    def has_change_permission(self, request, obj=None) -> bool:
        return super().has_change_permission(request, obj) and (
            obj is None or services.daily_may_change(daily=obj, user=request.user)
        )

    def has_delete_permission(self, request, obj=None) -> bool:
        return super().has_delete_permission(request, obj) and (
            obj is None or services.daily_may_change(daily=obj, user=request.user)
        )

    def get_readonly_fields(self, request, obj=None) -> list[str]:
        fields = list(super().get_readonly_fields(request, obj))
        if not self.has_publish_permission(request):
            fields.append("publish_at")
        return fields

    def get_actions(self, request):
        actions = super().get_actions(request)
        if not self.has_publish_permission(request):
            # Bulk deletion would reach published dailies; contributors delete drafts one by one.
            actions.pop("delete_selected", None)
        return actions

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


@admin.register(EditorialAction)
class EditorialActionAdmin(admin.ModelAdmin):
    """What editors did to the proposed dailies; the scorer's relevance profile learns it."""

    list_display = ["daily", "kind", "paper", "score_before", "score_after", "user", "created_at"]
    list_filter = ["kind", "daily__track"]
    search_fields = ["paper__title", "paper__short_name"]
    list_select_related = ["daily", "daily__track", "paper", "user"]

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False
