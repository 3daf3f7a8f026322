"""A track's week: the reads of the weekly roundup page, its feed and the agents' ``get_week``.

A week is an ISO week (Monday to Sunday, by the dailies' dates). Its roundup lists only what
readers may read (``Daily.objects.published()``): the week's published dailies, the editors'
picks (each daily's lead story, chosen by the editor who published it), then the week's
highest scores, the papers with a published deep dive and those whose reference code is
verified. The intro is the ``WeeklyRoundup``'s, shown once an editor has published it.

Each read costs a fixed number of queries whatever the number of papers (tests pin them).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field

from django.db.models import Prefetch, Subquery

from dailies.extensions import paper_filter, paper_prefetches, papers_with_feature
from dailies.models import Daily, DailyEntry, WeeklyRoundup, iso_week_label
from digest_site import invalidation
from papers.models import Paper, Track

# How many of the week's highest-scored papers (after the picks) the roundup lists.
WEEK_TOP_SCORES = 10
# How many weeks the roundup feed goes back from its track's newest published daily.
FEED_WEEKS = 12


def week_monday(day: dt.date) -> dt.date:
    return day - dt.timedelta(days=day.weekday())


@dataclass
class Week:
    """What a week's roundup shows. ``entries``: each paper once (its first appearance that
    week, its best score), the picks first; the sections are lists of those entries."""

    track: Track
    monday: dt.date
    dailies: list[Daily]
    roundup: WeeklyRoundup | None
    picks: list[DailyEntry] = field(default_factory=list)
    top_scores: list[DailyEntry] = field(default_factory=list)
    dived: list[DailyEntry] = field(default_factory=list)
    verified: list[DailyEntry] = field(default_factory=list)
    paper_ids: list[int] = field(default_factory=list)
    # The Mondays of the nearest weeks before and after with a published daily (the pager).
    previous: dt.date | None = None
    following: dt.date | None = None

    @property
    def paper_count(self) -> int:
        return len(self.paper_ids)

    @property
    def cache_tags(self) -> list[str]:
        """What a page printing the week records (``page_cache.tag``): the week (its
        roundup), its dailies and every paper of them (``digest_site.invalidation``)."""
        return [
            *invalidation.week(self.track.slug, self.monday),
            *(f"daily:{d.pk}" for d in self.dailies),
            *(f"paper:{pk}" for pk in self.paper_ids),
        ]

    @property
    def label(self) -> str:
        return iso_week_label(self.monday)

    @property
    def previous_label(self) -> str:
        return iso_week_label(self.previous) if self.previous else ""

    @property
    def following_label(self) -> str:
        return iso_week_label(self.following) if self.following else ""

    @property
    def sunday(self) -> dt.date:
        return self.monday + dt.timedelta(days=6)

    @property
    def intro_roundup(self) -> WeeklyRoundup | None:
        """The roundup whose intro readers may read: a published one, else none."""
        return self.roundup if self.roundup is not None and self.roundup.is_published else None

    @property
    def updated_at(self) -> dt.datetime:
        """The last change to what the week shows (for its feed item)."""
        times = [d.updated_at for d in self.dailies]
        if self.intro_roundup is not None:
            times.append(self.intro_roundup.updated_at)
        return max(times)

    @property
    def published_at(self) -> dt.datetime:
        return max(d.published_at for d in self.dailies)


def published_week_dailies(track: Track, monday: dt.date) -> list[Daily]:
    """The track's published dailies of the week, oldest first, each with the dates of the
    track's published dailies just before and just after the week, ``previous_date`` and
    ``following_date`` (one query)."""
    sunday = monday + dt.timedelta(days=6)
    published = Daily.objects.published().filter(track=track)
    before = published.filter(date__lt=monday).order_by("-date").values("date")[:1]
    after = published.filter(date__gt=sunday).order_by("date").values("date")[:1]
    return list(
        published.filter(date__range=(monday, sunday))
        .annotate(previous_date=Subquery(before), following_date=Subquery(after))
        .order_by("date")
    )


def _entries(dailies: list[Daily]) -> list[DailyEntry]:
    """The entries of ``dailies`` with what the roundup prints of their papers: venue,
    organisations, summaries, topics and what apps above register (deep dives, code)."""
    by_id = {d.pk: d for d in dailies}
    entries = list(
        DailyEntry.objects.filter(daily__in=list(by_id))
        .select_related("paper", "paper__venue")
        .prefetch_related(
            "paper__organizations",
            Prefetch("paper__summaries"),
            "paper__topics",
            *paper_prefetches("paper__"),
        )
        .order_by("daily__date", "position")
    )
    for entry in entries:
        entry.daily = by_id[entry.daily_id]  # the daily as read, with its track
    return entries


def _verified(paper_ids: list[int]) -> set[int]:
    """Those of ``paper_ids`` whose reference code is verified (one query; none when no app
    registered the condition)."""
    if not paper_ids:
        return set()
    return set(
        Paper.objects.filter(paper_filter("has_verified_code"), pk__in=paper_ids).values_list(
            "pk", flat=True
        )
    )


def _sections(week: Week, entries: list[DailyEntry]) -> None:
    """Fill ``week``'s sections from its entries (``entries`` in the week's order; two
    queries: deep dives, verified code). A paper in two dailies of the week is listed once
    in each section: as a pick where it led, else at its best score."""
    best: dict[int, DailyEntry] = {}  # in the order of first appearance
    picks: dict[int, DailyEntry] = {}
    for entry in entries:
        kept = best.get(entry.paper_id)
        if kept is None or (entry.score or 0) > (kept.score or 0):
            best[entry.paper_id] = entry
        if entry.is_lead:
            picks.setdefault(entry.paper_id, entry)
    week.paper_ids = list(best)
    # ``dived``: with a published deep dive; ``verified``: with verified reference code.
    week.picks = list(picks.values())
    rest = [e for pid, e in best.items() if pid not in picks and e.score is not None]
    rest.sort(key=lambda e: (-e.score, e.daily.date, e.position))
    week.top_scores = rest[:WEEK_TOP_SCORES]
    ordered = [*picks, *(pid for pid in best if pid not in picks)]
    dived = papers_with_feature("deep_dive", ordered)
    verified = _verified(ordered)
    week.dived = [picks.get(pid) or best[pid] for pid in ordered if pid in dived]
    week.verified = [picks.get(pid) or best[pid] for pid in ordered if pid in verified]


def week_roundup(track: Track, monday: dt.date) -> Week | None:
    """The week of ``track`` starting ``monday`` as its roundup shows it, or None when it has
    no published daily (a fixed 11 queries: dailies, roundup, entries and their five
    prefetches, deep dives, verified code)."""
    dailies = published_week_dailies(track, monday)
    if not dailies:
        return None
    for daily in dailies:
        daily.track = track
    roundup = WeeklyRoundup.objects.filter(track=track, week_start=monday).first()
    week = Week(track=track, monday=monday, dailies=dailies, roundup=roundup)
    previous, following = dailies[0].previous_date, dailies[0].following_date
    week.previous = week_monday(previous) if previous else None
    week.following = week_monday(following) if following else None
    _sections(week, _entries(dailies))
    return week


def recent_weeks(track: Track, *, weeks: int = FEED_WEEKS) -> list[Week]:
    """The track's weeks with published dailies, newest first, back ``weeks`` weeks from its
    newest published daily; each with its picks only (4 queries: the dailies, the roundups,
    the leads, their summaries)."""
    newest = Daily.objects.published().filter(track=track).order_by("-date").first()
    if newest is None:
        return []
    start = week_monday(newest.date) - dt.timedelta(weeks=weeks - 1)
    dailies = list(Daily.objects.published().filter(track=track, date__gte=start).order_by("-date"))
    roundups = {
        r.week_start: r
        for r in WeeklyRoundup.objects.filter(track=track, week_start__gte=start).published()
    }
    by_week: dict[dt.date, Week] = {}
    for daily in dailies:
        daily.track = track
        monday = week_monday(daily.date)
        if monday not in by_week:
            by_week[monday] = Week(track, monday, [], roundups.get(monday))
        by_week[monday].dailies.insert(0, daily)
    by_daily = {d.pk: d for d in dailies}
    leads = (
        DailyEntry.objects.filter(daily__in=list(by_daily), is_lead=True)
        .select_related("paper")
        .prefetch_related("paper__summaries")
        .order_by("daily__date")
    )
    for entry in leads:
        entry.daily = by_daily[entry.daily_id]
        by_week[week_monday(entry.daily.date)].picks.append(entry)
    return list(by_week.values())
