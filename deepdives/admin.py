from __future__ import annotations

from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.http import HttpResponseNotAllowed, JsonResponse
from django.urls import path
from django.utils.translation import gettext_lazy as _

from audit.admin import audit_history_panel
from dailies.admin import EditorsOnlyOncePublic, ServiceErrorsAsMessages
from deepdives import services
from deepdives.models import DeepDive, ReferenceCode
from deepdives.registry import PROGRAMS
from deepdives.text import MARKDOWN_MAX_CHARS, markdown_problem, render_markdown


@admin.register(DeepDive)
class DeepDiveAdmin(ServiceErrorsAsMessages, EditorsOnlyOncePublic, admin.ModelAdmin):
    publish_only_fields = ("status",)
    list_display = [
        "slug",
        "paper",
        "status",
        "reading_minutes_en",
        "reading_minutes_zh",
        "updated_at",
    ]
    list_filter = ["status"]
    search_fields = ["slug", "title_en", "title_zh", "paper__title", "paper__short_name"]
    autocomplete_fields = ["paper"]
    readonly_fields = ["reading_minutes_en", "reading_minutes_zh", "history"]
    fieldsets = [
        (None, {"fields": [("paper", "slug"), "status", "reference_code"]}),
        (_("Title, side by side"), {"fields": [("title_en", "title_zh")]}),
        (_("Body (Markdown)"), {"fields": [("body_en", "body_zh")]}),
        (_("Reading time (computed)"), {"fields": [("reading_minutes_en", "reading_minutes_zh")]}),
        (_("Audit history"), {"fields": ["history"]}),
    ]
    actions = ["publish", "unpublish"]

    class Media:
        # Fetches the preview endpoint below; no inline script (strict CSP).
        js = ["deepdives/admin/markdown-preview.js"]
        css = {"all": ["deepdives/admin/markdown-preview.css"]}

    @admin.display(description=_("history"))
    def history(self, obj: DeepDive) -> str:
        return audit_history_panel(obj)

    def get_urls(self):
        preview = path(
            "markdown-preview/",
            self.admin_site.admin_view(self.markdown_preview_view),
            name="deepdives_deepdive_markdown_preview",
        )
        return [preview, *super().get_urls()]

    def markdown_preview_view(self, request):
        """The Markdown of a POST, rendered by the page's own sanitiser (``render_markdown``)."""
        if request.method != "POST":
            return HttpResponseNotAllowed(["POST"])
        if not (self.has_add_permission(request) or self.has_change_permission(request)):
            raise PermissionDenied
        text = request.POST.get("text", "")
        # The bounds that the form's save checks; a text over them is not rendered.
        problem = markdown_problem(text)
        if problem is not None:
            status = 413 if len(text) > MARKDOWN_MAX_CHARS else 400
            return JsonResponse({"error": problem}, status=status)
        return JsonResponse({"html": render_markdown(text)})

    def has_publish_permission(self, request) -> bool:
        return services.user_may_publish_deep_dives(request.user)

    # Published deep dives are read-only to those who may not publish them.
    def may_change(self, request, obj) -> bool:
        return services.deep_dive_may_change(deep_dive=obj, user=request.user)

    def save_model(self, request, obj, form, change) -> None:
        services.deep_dive_save(deep_dive=obj, user=request.user)

    def delete_model(self, request, obj) -> None:
        services.deep_dive_delete(deep_dive=obj, user=request.user)

    def delete_queryset(self, request, queryset) -> None:
        with transaction.atomic():
            for deep_dive in queryset:
                services.deep_dive_delete(deep_dive=deep_dive, user=request.user)

    def _apply(self, request, queryset, action, done: str) -> None:
        ok = 0
        for deep_dive in queryset:
            try:
                action(deep_dive=deep_dive, user=request.user)
                ok += 1
            except (ValidationError, PermissionDenied) as exc:
                message = "; ".join(exc.messages) if isinstance(exc, ValidationError) else str(exc)
                self.message_user(request, f"{deep_dive}: {message}", messages.ERROR)
        if ok:
            self.message_user(request, done % {"n": ok}, messages.SUCCESS)

    @admin.action(description=_("Publish"), permissions=["publish"])
    def publish(self, request, queryset) -> None:
        self._apply(
            request, queryset, services.deep_dive_publish, _("Published %(n)d deep dive(s).")
        )

    @admin.action(description=_("Unpublish (back to draft)"), permissions=["publish"])
    def unpublish(self, request, queryset) -> None:
        self._apply(
            request, queryset, services.deep_dive_unpublish, _("Unpublished %(n)d deep dive(s).")
        )


@admin.register(ReferenceCode)
class ReferenceCodeAdmin(ServiceErrorsAsMessages, admin.ModelAdmin):
    list_display = ["name", "module", "paper", "last_status", "last_duration_ms", "last_run_at"]
    list_filter = ["last_status"]
    search_fields = ["name", "module", "paper__title"]
    autocomplete_fields = ["paper"]
    readonly_fields = ["last_status", "last_output", "last_duration_ms", "last_run_at", "code_hash"]

    # A program readers can see is read-only to those who may not publish; so is its paper.
    def has_change_permission(self, request, obj=None) -> bool:
        return super().has_change_permission(request, obj) and (
            obj is None or services.reference_code_may_change(code=obj, user=request.user)
        )

    def has_delete_permission(self, request, obj=None) -> bool:
        return super().has_delete_permission(request, obj) and (
            obj is None or services.reference_code_may_change(code=obj, user=request.user)
        )

    def get_readonly_fields(self, request, obj=None) -> list[str]:
        fields = list(super().get_readonly_fields(request, obj))
        if not services.user_may_publish_deep_dives(request.user):
            fields.append("paper")
        if obj is not None and obj.slug in PROGRAMS:
            fields.append("slug")  # the registry's name for it
        return fields

    def get_actions(self, request):
        actions = super().get_actions(request)
        if not services.user_may_publish_deep_dives(request.user):
            actions.pop("delete_selected", None)
        return actions

    def save_model(self, request, obj, form, change) -> None:
        services.reference_code_save(code=obj, user=request.user)

    def delete_model(self, request, obj) -> None:
        services.reference_code_delete(code=obj, user=request.user)

    def delete_queryset(self, request, queryset) -> None:
        with transaction.atomic():
            for code in queryset:
                services.reference_code_delete(code=code, user=request.user)
