"""Reading the audit trail."""

from __future__ import annotations

from django.contrib.contenttypes.models import ContentType
from django.db import models

from audit.models import AuditRecord


def audit_records_for(obj: models.Model) -> models.QuerySet[AuditRecord]:
    """The history of one object, newest first."""
    return AuditRecord.objects.filter(
        content_type=ContentType.objects.get_for_model(obj, for_concrete_model=False),
        object_id=str(obj.pk),
    ).select_related("user")
