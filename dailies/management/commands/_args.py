"""Argument helpers the dailies commands share."""

from __future__ import annotations

import datetime as dt

from django.core.management.base import CommandError

from dailies.models import Daily
from papers.models import Track


def daily_from_args(track: str, date: str) -> Daily:
    try:
        day = dt.date.fromisoformat(date)
    except ValueError:
        raise CommandError(f"not a date (YYYY-MM-DD): {date!r}") from None
    track_obj = Track.objects.filter(slug=track).first()
    if track_obj is None:
        raise CommandError(f"no track {track!r}")
    daily = Daily.objects.select_related("track").filter(track=track_obj, date=day).first()
    if daily is None:
        raise CommandError(f"no daily of {track} for {day} (assemble it first)")
    return daily
