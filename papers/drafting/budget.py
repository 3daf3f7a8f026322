"""The day's token use across every request to a model (scoring and drafting alike)."""

from __future__ import annotations

import datetime as dt
import zoneinfo

from django.conf import settings
from django.db.models import Sum
from django.db.models.functions import Coalesce
from django.utils import timezone

from papers.models import LLMRequest


def start_of_today(now: dt.datetime | None = None) -> dt.datetime:
    """Midnight of today in the editorial time zone (the budget's day)."""
    now = now or timezone.now()
    local = now.astimezone(zoneinfo.ZoneInfo(settings.EDITORIAL_TIME_ZONE))
    return local.replace(hour=0, minute=0, second=0, microsecond=0)


def llm_tokens_used_today(now: dt.datetime | None = None) -> int:
    """Prompt + completion tokens of today's requests (one query, on the created_at index).

    "Today" is the editorial day of ``now``; requests later than ``now`` are not counted."""
    now = now or timezone.now()
    totals = LLMRequest.objects.filter(
        created_at__gte=start_of_today(now), created_at__lte=now
    ).aggregate(
        prompt=Coalesce(Sum("prompt_tokens"), 0), completion=Coalesce(Sum("completion_tokens"), 0)
    )
    return totals["prompt"] + totals["completion"]
