"""The audit trail: who changed what readers see, when, and how.

A bottom-layer app: other apps record into it; it imports none of them. Records point at
their object through its content type and id, not a foreign key, so they outlive a deleted
daily or deep dive.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

SYSTEM = "system"  # the actor of the scheduler, imports and other unattended writes


class AuditRecord(models.Model):
    class Action(models.TextChoices):
        PUBLISH = "publish", _("Published")
        UNPUBLISH = "unpublish", _("Unpublished")
        SCHEDULE = "schedule", _("Scheduled")
        EDIT = "edit", _("Edited")
        DELETE = "delete", _("Deleted")

    created_at = models.DateTimeField(default=timezone.now, editable=False)
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        help_text=_("Empty when the system did it."),
    )
    actor = models.CharField(
        max_length=150, help_text=_("The username at the time, or “system”; kept if the user goes.")
    )
    action = models.CharField(max_length=10, choices=Action.choices)
    content_type = models.ForeignKey(
        "contenttypes.ContentType", on_delete=models.PROTECT, related_name="+"
    )
    object_id = models.CharField(max_length=64)
    object_repr = models.CharField(max_length=200)
    changes = models.JSONField(
        default=dict,
        blank=True,
        help_text=_("Field → [before, after]; entries added, removed and changed."),
    )
    note = models.TextField(blank=True)

    class Meta:
        ordering = ["-created_at", "-pk"]
        indexes = [
            # the admin's audit list, newest first
            models.Index(fields=["-created_at"], name="audit_record_created_idx"),
            # the history of one object (the daily's and deep dive's change pages)
            models.Index(
                fields=["content_type", "object_id", "-created_at"], name="audit_record_object_idx"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.actor} {self.action} {self.object_repr}"


class PendingBump(models.Model):
    """A change readers see whose retirement of the cached pages failed: the cache was
    unreachable when it was made (``digest_site.cache_tags``). Kept in the database, beside the
    change itself, so that everything is retired once the cache answers again even when the
    process that failed to make it is gone; the periodic publisher makes it and deletes
    the rows."""

    created_at = models.DateTimeField(default=timezone.now, editable=False)

    class Meta:
        verbose_name = _("pending content-version bump")
        verbose_name_plural = _("pending content-version bumps")

    def __str__(self) -> str:
        return f"content-version bump pending since {self.created_at:%Y-%m-%d %H:%M:%S}"
