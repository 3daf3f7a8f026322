"""Reads for the public pages, the API, the feeds and the mail. Each page has one selector
that returns what it prints (a typed page object where it is more than a queryset), read
through the ORM with a fixed number of queries, whatever the number of rows."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass

from django.db.models import (
    Count,
    Exists,
    F,
    IntegerField,
    OuterRef,
    Prefetch,
    Q,
    QuerySet,
    Subquery,
    Value,
    Window,
)
from django.db.models.functions import Coalesce, RowNumber

from dailies.extensions import paper_prefetches
from dailies.models import Daily, DailyEntry, published_q
from dailies.selection import Selection, daily_selection
from digest_site.visibility import PUBLIC, Reader, may_preview
from papers.models import Paper, Score, Summary, Topic, Track


def published_papers() -> QuerySet[Paper]:
    """Papers that appear in at least one published daily — the only papers readers see."""
    return Paper.objects.filter(Exists(DailyEntry.objects.published().filter(paper=OuterRef("pk"))))


def published_tracks() -> QuerySet[Track]:
    """Tracks readers see: an active one's pages answer, and a published daily names its
    track whether it is active or not."""
    return Track.objects.filter(
        Q(is_active=True) | Exists(Daily.objects.published().filter(track=OuterRef("pk")))
    )


def visible_papers(user: Reader) -> QuerySet[Paper]:
    """The papers ``user`` may read: every paper when they preview, else the published ones
    (``Paper`` cannot say which are: publication is the dailies')."""
    return Paper.objects.all() if may_preview(user) else published_papers()


def paper_lists(prefix: str = "") -> list:
    """What a page prints of a paper's lists (its organizations, summaries and topics, in
    their models' order) and what apps above us prefetch: a query each."""
    return [
        f"{prefix}organizations",
        f"{prefix}summaries",
        f"{prefix}topics",
        *paper_prefetches(prefix),
    ]


def appearances(user: Reader = PUBLIC) -> Prefetch:
    """A paper's entries ``user`` may see, with their dailies and tracks, newest first, in
    ``published_entries``."""
    entries = (
        DailyEntry.objects.visible_to(user)
        .select_related("daily__track")
        .order_by("-daily__date", "daily__track__position", "pk")
    )
    return Prefetch("daily_entries", queryset=entries, to_attr="published_entries")


def daily_entries(daily: Daily) -> list[DailyEntry]:
    """A daily's entries in order, with everything its page shows (a fixed 6+ queries)."""
    return list(
        daily.entries.select_related("paper__venue").prefetch_related(*paper_lists("paper__"))
    )


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


def daily_page(track: str, date: dt.date, *, user: Reader) -> DailyPage | None:
    """The daily of ``track`` (its slug) on ``date`` if ``user`` may see it, with the dates
    of the previous and next daily of the track ``user`` may see (a fixed 9+ queries)."""
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
    entries = daily_entries(daily)
    return DailyPage(
        daily,
        entries,
        daily.previous_date,
        daily.following_date,
        daily_selection(daily, entries),
    )


def daily_cards(dailies: QuerySet[Daily]) -> QuerySet[Daily]:
    """``dailies`` as cards print them: each with its track, its entry count
    (``entry_count``) and its lead entry's paper and summaries (``leads``)."""
    count = (
        DailyEntry.objects.filter(daily=OuterRef("pk"))
        .order_by()
        .values("daily")
        .annotate(n=Count("pk"))
        .values("n")
    )
    leads = DailyEntry.objects.filter(is_lead=True).select_related("paper")
    return (
        dailies.select_related("track")
        .annotate(entry_count=Coalesce(Subquery(count, output_field=IntegerField()), Value(0)))
        .prefetch_related(
            Prefetch("entries", queryset=leads, to_attr="leads"), "leads__paper__summaries"
        )
    )


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


def track_archive(track: Track) -> QuerySet[Daily]:
    """A track's published dailies as cards, newest first."""
    return daily_cards(Daily.objects.visible_to(PUBLIC).filter(track=track)).order_by("-date")


def paper_page(slug: str, *, user: Reader) -> Paper | None:
    """The paper of ``slug`` if ``user`` may read it (``visible_papers``), with its venue, its
    lists, the entries ``user`` may see (``published_entries``) and its scores with their
    tracks, newest first (``score_list``): a fixed 8 queries."""
    scores = Score.objects.select_related("track")
    return (
        visible_papers(user)
        .filter(slug=slug)
        .select_related("venue")
        .prefetch_related(
            *paper_lists(),
            appearances(user),
            Prefetch("scores", queryset=scores, to_attr="score_list"),
        )
        .first()
    )


def index_papers() -> QuerySet[Paper]:
    """Papers of published dailies, newest daily first, then by their place in that daily
    (``last_appeared``, ``last_position``, then ``pk``), with what an index item prints.

    Each paper is read through its latest published appearance: the join keeps the entries
    that no later published entry of the same paper outranks (newer day; on the same day a
    better place, then the older entry). The order is then the dailies' own, so the
    database walks the published dailies newest first (``dailies_daily_status_date_idx``)
    and stops when a page is full, instead of ranking every published paper: a page costs
    the same on the first day and after years. The page slices this queryset; prefetches
    then run once per page (fixed query count).
    """
    later = DailyEntry.objects.visible_to(PUBLIC).filter(paper=OuterRef("pk"))
    outranked = (
        Q(daily__date__gt=OuterRef("last_appeared"))
        | Q(daily__date=OuterRef("last_appeared"), position__lt=OuterRef("last_position"))
        | Q(
            daily__date=OuterRef("last_appeared"),
            position=OuterRef("last_position"),
            pk__lt=OuterRef("appearance"),
        )
    )
    return (
        Paper.objects.filter(published_q("daily_entries__daily__"))
        .annotate(
            last_appeared=F("daily_entries__daily__date"),
            last_position=F("daily_entries__position"),
            appearance=F("daily_entries__pk"),
        )
        .filter(~Exists(later.filter(outranked)))
        .select_related("venue")
        .prefetch_related(*paper_lists(), appearances())
        .order_by("-last_appeared", "last_position", "pk")
    )


def index_paper_count(*, topic: Topic | None = None) -> int:
    """How many papers ``index_papers()`` lists (of ``topic``): the distinct papers of the
    published entries."""
    entries = DailyEntry.objects.visible_to(PUBLIC)
    if topic is not None:
        entries = entries.filter(paper__topics=topic)
    return entries.values("paper_id").distinct().count()


def search_result_papers(ids: Sequence[int]) -> dict[int, Paper]:
    """The papers of ``ids`` that readers may see (``published_papers()``: a stale search
    index row never shows an unpublished paper), by id, with what a result prints."""
    if not ids:
        return {}
    papers = (
        published_papers()
        .filter(pk__in=ids)
        .select_related("venue")
        .prefetch_related(*paper_lists(), appearances())
    )
    return {paper.pk: paper for paper in papers}


def paper_headings(ids: Sequence[int]) -> dict[int, Paper]:
    """The papers of ``ids`` that readers may see (``published_papers()``), by id, with what
    a list of their headings prints (``digest.entry_heading`` and ``digest.headline_mark``:
    the names and title, and the summaries' headlines and who wrote them): two queries."""
    if not ids:
        return {}
    summaries = Summary.objects.only("paper", "language", "headline", "provenance")
    papers = (
        published_papers()
        .filter(pk__in=ids)
        .only("slug", "title", "short_name")
        .prefetch_related(Prefetch("summaries", queryset=summaries))
    )
    return {paper.pk: paper for paper in papers}


def topics_with_papers() -> QuerySet[Topic]:
    """Topics that have published papers, the most papers first, each with ``n`` (lazy).

    Only the topic links of papers in published entries are joined and counted (a link is
    unique per paper and topic, so each counts one paper): counting every link and testing
    each against the published papers reads the links of every ingested candidate, ten
    times the published papers over a year.
    """
    published = DailyEntry.objects.published().values("paper_id")
    return (
        Topic.objects.filter(papers__in=published)
        .annotate(n=Count("papers"))
        .order_by("-n", "name_en")
    )


def published_topics() -> list[Topic]:
    """``topics_with_papers()`` as a list (one query)."""
    return list(topics_with_papers())


def parse_date(value: str) -> dt.date | None:
    try:
        return dt.date.fromisoformat(value)
    except ValueError:
        return None
