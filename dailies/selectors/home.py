"""The home page's reads: each active track's newest published dailies."""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import F, Window
from django.db.models.functions import RowNumber

from dailies.models import Daily, DailyEntry
from dailies.selectors.common import daily_cards
from papers.models import Track


@dataclass(frozen=True)
class HomeSection:
    """A track's section of the home page: its newest published dailies (cards, newest
    first) and the newest one's entries."""

    track: Track
    dailies: list[Daily]
    entries: list[DailyEntry]

    @property
    def latest(self) -> Daily:
        return self.dailies[0]

    @property
    def older(self) -> list[Daily]:
        return self.dailies[1:]


def home_sections(*, recent: int = 6) -> list[HomeSection]:
    """Each active track with published dailies (in order), with its ``recent`` newest
    published dailies and the newest one's entries (eight queries, however many tracks)."""
    tracks = list(Track.objects.filter(is_active=True))
    newest_first = Window(RowNumber(), partition_by=F("track_id"), order_by=F("date").desc())
    dailies = list(
        daily_cards(Daily.objects.published().filter(track__in=tracks))
        .annotate(rank=newest_first)
        .filter(rank__lte=recent)
        .order_by("track_id", "-date")
    )
    by_track: dict[int, list[Daily]] = {}
    for daily in dailies:
        by_track.setdefault(daily.track_id, []).append(daily)
    entries: dict[int, list[DailyEntry]] = {}
    for entry in (
        DailyEntry.objects.filter(daily__in=[found[0] for found in by_track.values()])
        .select_related("paper")
        .prefetch_related("paper__organizations", "paper__summaries")
    ):
        entries.setdefault(entry.daily_id, []).append(entry)
    return [
        HomeSection(track, by_track[track.pk], entries.get(by_track[track.pk][0].pk, []))
        for track in tracks
        if track.pk in by_track
    ]
