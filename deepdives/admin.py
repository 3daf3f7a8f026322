from __future__ import annotations

from django.contrib import admin
from django.utils.translation import gettext_lazy as _

from deepdives.models import DeepDive, ReferenceCode


@admin.register(DeepDive)
class DeepDiveAdmin(admin.ModelAdmin):
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
    readonly_fields = ["reading_minutes_en", "reading_minutes_zh"]
    fieldsets = [
        (None, {"fields": [("paper", "slug"), "status", "reference_code"]}),
        (_("Title, side by side"), {"fields": [("title_en", "title_zh")]}),
        (_("Body (Markdown)"), {"fields": [("body_en", "body_zh")]}),
        (_("Reading time (computed)"), {"fields": [("reading_minutes_en", "reading_minutes_zh")]}),
    ]


@admin.register(ReferenceCode)
class ReferenceCodeAdmin(admin.ModelAdmin):
    list_display = ["name", "module", "paper", "last_status", "last_duration_ms", "last_run_at"]
    list_filter = ["last_status"]
    search_fields = ["name", "module", "paper__title"]
    autocomplete_fields = ["paper"]
    readonly_fields = ["last_status", "last_output", "last_duration_ms", "last_run_at", "code_hash"]
