"""Recording into the audit trail."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping
from decimal import Decimal
from typing import Any

from django.contrib.contenttypes.models import ContentType
from django.db import models

from audit.models import SYSTEM, AuditRecord

# Characters of each before/after text value kept: enough to read an intro edit, without
# copying whole Markdown bodies into every record.
VALUE_LIMIT = 1000
REPR_LIMIT = AuditRecord._meta.get_field("object_repr").max_length


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def audit_value(value: Any) -> Any:
    """``value`` as plain JSON, the way a record stores it."""
    if isinstance(value, models.Model):
        return value.pk
    if isinstance(value, dt.datetime | dt.date | dt.time):
        return value.isoformat()
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, str):
        return _clip(value, VALUE_LIMIT)
    if isinstance(value, Mapping):
        return {str(k): audit_value(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set):
        return [audit_value(v) for v in value]
    return value


def audit_diff(
    *, before: models.Model, after: models.Model, fields: Iterable[str] | None = None
) -> dict[str, list]:
    """Field name → [before, after] for the concrete fields that differ (foreign keys by id)."""
    opts = after._meta
    names = fields or [f.name for f in opts.concrete_fields if f.editable and not f.primary_key]
    changes = {}
    for name in names:
        attname = opts.get_field(name).attname
        old, new = getattr(before, attname), getattr(after, attname)
        if old != new:
            changes[name] = [old, new]
    return changes


def audit_record(
    *,
    user,
    action: str,
    obj: models.Model,
    changes: Mapping[str, Any] | None = None,
    note: str = "",
) -> AuditRecord:
    """Record that ``user`` (None: the system) did ``action`` to ``obj``.

    Call it before deleting ``obj`` (it needs the primary key), inside the same transaction
    as the change, so a change that rolls back leaves no record."""
    return AuditRecord.objects.create(
        user=user,
        actor=user.get_username() if user is not None else SYSTEM,
        action=AuditRecord.Action(action),
        content_type=ContentType.objects.get_for_model(obj, for_concrete_model=False),
        object_id=str(obj.pk),
        object_repr=_clip(str(obj), REPR_LIMIT),
        changes=audit_value(dict(changes or {})),
        note=note,
    )
