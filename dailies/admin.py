from __future__ import annotations

from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied, ValidationError
from django.utils.translation import gettext_lazy as _

from dailies import services
from dailies.assembly import daily_record_editor_changes
from dailies.models import Daily, DailyEntry, EditorialAction


class DailyEntryInline(admin.TabularInline):
    model = DailyEntry
    extra = 0
    fields = ["position", "paper", "is_lead", "score"]
    autocomplete_fields = ["paper"]
    ordering = ["position"]


@admin.register(Daily)
class DailyAdmin(admin.ModelAdmin):
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
    readonly_fields = ["status", "published_at", "candidates_scored", "stats_line"]
    fieldsets = [
        (None, {"fields": [("track", "date"), ("status", "publish_at", "published_at")]}),
        (_("Intro, side by side"), {"fields": [("intro_en", "intro_zh")]}),
        (_("Stats (derived)"), {"fields": ["candidates_scored", "stats_line"]}),
    ]
    actions = ["publish_now", "schedule", "unpublish"]
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

    def has_publish_permission(self, request) -> bool:
        return request.user.has_perm(services.PUBLISH_PERMISSION)

    def save_model(self, request, obj, form, change) -> None:
        # Remember the selection as it was, to record what the editor changed in it.
        request._entries_before = (
            {e.paper_id: (e.score, e.is_lead) for e in obj.entries.all()} if change else {}
        )
        super().save_model(request, obj, form, change)
        if change and form.changed_data and not obj.edited_by_editor:
            obj.edited_by_editor = True
            obj.save(update_fields=["edited_by_editor"])

    def save_related(self, request, form, formsets, change) -> None:
        super().save_related(request, form, formsets, change)
        if change:
            daily_record_editor_changes(
                daily=form.instance, before=request._entries_before, user=request.user
            )


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
