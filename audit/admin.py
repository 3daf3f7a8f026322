from __future__ import annotations

import json

from django.contrib import admin
from django.contrib.contenttypes.models import ContentType
from django.db import models
from django.urls import NoReverseMatch, reverse
from django.utils.html import format_html, format_html_join
from django.utils.http import urlencode
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from audit.models import AuditRecord
from audit.selectors import audit_records_for

HISTORY_PANEL_SIZE = 10  # latest records shown on an object's change page


@admin.register(AuditRecord)
class AuditRecordAdmin(admin.ModelAdmin):
    """Read-only: the trail is written by the services, never by hand."""

    list_display = ["created_at", "actor", "action", "content_type", "object_link", "summary"]
    list_filter = ["action", "content_type", "user"]
    search_fields = ["object_repr", "actor", "note"]
    date_hierarchy = "created_at"
    # one query for the page, whatever the number of rows
    list_select_related = ["content_type", "user"]
    fields = [
        "created_at",
        "actor",
        "user",
        "action",
        "content_type",
        "object_id",
        "object_repr",
        "pretty_changes",
        "note",
    ]
    readonly_fields = fields

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False

    @admin.display(description=gettext_lazy("object"), ordering="object_repr")
    def object_link(self, obj: AuditRecord) -> str:
        if obj.action == AuditRecord.Action.DELETE:
            return obj.object_repr
        ct = obj.content_type
        try:
            url = reverse(f"admin:{ct.app_label}_{ct.model}_change", args=[obj.object_id])
        except NoReverseMatch:
            return obj.object_repr
        return format_html('<a href="{}">{}</a>', url, obj.object_repr)

    @admin.display(description=gettext_lazy("changes"))
    def summary(self, obj: AuditRecord) -> str:
        return ", ".join(obj.changes) if obj.changes else "—"

    @admin.display(description=gettext_lazy("what changed"))
    def pretty_changes(self, obj: AuditRecord) -> str:
        text = json.dumps(obj.changes, ensure_ascii=False, indent=2)
        return format_html("<pre>{}</pre>", text)


def audit_history_url(obj: models.Model) -> str:
    """The audit list filtered to one object."""
    content_type = ContentType.objects.get_for_model(obj, for_concrete_model=False)
    query = urlencode({"content_type__id__exact": content_type.pk, "object_id": obj.pk})
    return f"{reverse('admin:audit_auditrecord_changelist')}?{query}"


def audit_history_panel(obj: models.Model) -> str:
    """A read-only panel for a change page: the latest records and a link to all of them
    (two queries)."""
    if obj.pk is None:
        return "—"
    records = list(audit_records_for(obj)[:HISTORY_PANEL_SIZE])
    if not records:
        return _("No audited changes yet.")
    rows = format_html_join(
        "",
        "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
        (
            (
                f"{r.created_at:%Y-%m-%d %H:%M:%S}",
                r.actor,
                r.get_action_display(),
                ", ".join(r.changes) or "—",
            )
            for r in records
        ),
    )
    return format_html(
        '<table class="audit-history"><tbody>{}</tbody></table><p><a href="{}">{}</a></p>',
        rows,
        audit_history_url(obj),
        _("Full audit history"),
    )
