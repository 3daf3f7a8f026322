"""Argument helpers the dailies commands share."""

from __future__ import annotations

import datetime as dt

from django.core.management.base import CommandError

from dailies.models import Daily
from papers.models import Track


def track_and_date_from_args(track: str, date: str) -> tuple[Track, dt.date]:
    """The track named by its slug and the ISO date, or the error a command prints."""
    try:
        day = dt.date.fromisoformat(date)
    except ValueError:
        raise CommandError(f"not a date (YYYY-MM-DD): {date!r}") from None
    track_obj = Track.objects.filter(slug=track).first()
    if track_obj is None:
        raise CommandError(f"no track {track!r}")
    return track_obj, day


def daily_from_args(track: str, date: str) -> Daily:
    track_obj, day = track_and_date_from_args(track, date)
    daily = Daily.objects.select_related("track").filter(track=track_obj, date=day).first()
    if daily is None:
        raise CommandError(f"no daily of {track} for {day} (assemble it first)")
    return daily
