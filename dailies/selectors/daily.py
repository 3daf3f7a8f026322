"""The daily page's reads: a daily with its entries, the dailies before and after it and its
selection chart (the API and the mail share its entries)."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from django.db.models import OuterRef, Subquery, prefetch_related_objects

from dailies.models import Daily, DailyEntry
from dailies.selection import Selection, daily_selection
from dailies.selectors.common import paper_lists
from digest_site.visibility import Reader


def daily_entries(daily: Daily, *, lists: bool = True) -> list[DailyEntry]:
    """A daily's entries in order, with everything its page shows (a fixed 6+ queries); with
    only their papers' summaries when not ``lists`` (2 queries: ``with_paper_lists`` reads
    the rest for the entries that need it)."""
    entries = daily.entries.select_related("paper__venue")
    if not lists:
        return list(entries.prefetch_related("paper__summaries"))
    return list(entries.prefetch_related(*paper_lists("paper__")))


def with_paper_lists(entries: list[DailyEntry]) -> None:
    """Read what an entry prints of its paper's lists (``paper_lists``) for ``entries``: a
    query for each list not read yet, none when ``entries`` is empty."""
    prefetch_related_objects(entries, *paper_lists("paper__"))


def daily_neighbours(daily: Daily, *, user: Reader) -> tuple[Daily | None, Daily | None]:
    """The previous and next daily of the same track that ``user`` may see (2 queries)."""
    same_track = (
        Daily.objects.visible_to(user).filter(track_id=daily.track_id).select_related("track")
    )
    previous = same_track.filter(date__lt=daily.date).order_by("-date").first()
    following = same_track.filter(date__gt=daily.date).order_by("date").first()
    return previous, following


@dataclass(frozen=True)
class DailyPage:
    """What a daily's page prints: the daily with its track, its entries in order, the
    dates of the dailies the pager links and the selection chart."""

    daily: Daily
    entries: list[DailyEntry]
    previous: dt.date | None
    following: dt.date | None
    selection: Selection


def daily_page(track: str, date: dt.date, *, user: Reader, lists: bool = True) -> DailyPage | None:
    """The daily of ``track`` (its slug) on ``date`` if ``user`` may see it, with the dates
    of the previous and next daily of the track ``user`` may see (a fixed 8 queries; 4 when
    not ``lists``: the entries' papers without their lists, ``with_paper_lists``)."""
    same_track = Daily.objects.visible_to(user).filter(track_id=OuterRef("track_id"))
    before = same_track.filter(date__lt=OuterRef("date")).order_by("-date")
    after = same_track.filter(date__gt=OuterRef("date")).order_by("date")
    daily = (
        Daily.objects.visible_to(user)
        .select_related("track")
        .filter(track__slug=track, date=date)
        .annotate(
            previous_date=Subquery(before.values("date")[:1]),
            following_date=Subquery(after.values("date")[:1]),
        )
        .first()
    )
    if daily is None:
        return None
    entries = daily_entries(daily, lists=lists)
    return DailyPage(
        daily,
        entries,
        daily.previous_date,
        daily.following_date,
        daily_selection(daily, entries),
    )
