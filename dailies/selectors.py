"""Reads for the public pages. Each list has its own prefetching queryset so that its page
costs a fixed number of queries, whatever the number of entries."""

from __future__ import annotations

import datetime as dt

from django.db.models import Count, Exists, F, OuterRef, Prefetch, Q, QuerySet, Subquery

from dailies.extensions import paper_prefetches
from dailies.models import Daily, DailyEntry, published_q
from digest_site.content import kept_per_version
from digest_site.visibility import PUBLIC, Reader, may_preview
from papers.models import Paper, Summary, Topic, Track


def published_papers() -> QuerySet[Paper]:
    """Papers that appear in at least one published daily — the only papers readers see."""
    return Paper.objects.filter(Exists(DailyEntry.objects.published().filter(paper=OuterRef("pk"))))


def visible_papers(user: Reader) -> QuerySet[Paper]:
    """The papers ``user`` may read: every paper when they preview, else the published ones
    (``Paper`` cannot say which are: publication is the dailies')."""
    return Paper.objects.all() if may_preview(user) else published_papers()


def _paper_lookups(prefix: str) -> list:
    return [
        f"{prefix}organizations",
        f"{prefix}summaries",
        f"{prefix}topics",
        *paper_prefetches(prefix),
    ]


def daily_entries(daily: Daily) -> list[DailyEntry]:
    """A daily's entries in order, with everything its page shows (a fixed 5+ queries)."""
    return list(
        daily.entries.select_related("paper", "paper__venue")
        .prefetch_related(*_paper_lookups("paper__"))
        .order_by("position")
    )


def daily_page_entries(daily: Daily) -> list[DailyEntry]:
    """``daily_entries`` for the daily's own page, each paper's organizations, summaries and
    topics in plain lists (``organization_list``, ``summary_list``, ``topic_list``).

    Prefetching into a related manager makes a queryset for each paper and relation (a
    clone and a filter, some 50 µs each: 1.5 ms of a daily's page); a list is only set.
    """
    return list(
        daily.entries.select_related("paper", "paper__venue")
        .prefetch_related(
            Prefetch("paper__organizations", to_attr="organization_list"),
            Prefetch("paper__summaries", to_attr="summary_list"),
            Prefetch("paper__topics", to_attr="topic_list"),
            *paper_prefetches("paper__"),
        )
        .order_by("position")
    )


def dailies_with_neighbours(*, user: Reader) -> QuerySet[Daily]:
    """The dailies ``user`` may see, each with its track and the dates of the same track's
    dailies just before and after it that ``user`` may see (``previous_date``,
    ``next_date``, None at either end): the daily page reads its pager in the same query."""
    visible = Daily.objects.visible_to(user)
    same_track = visible.filter(track_id=OuterRef("track_id"))
    before = same_track.filter(date__lt=OuterRef("date")).order_by("-date").values("date")[:1]
    after = same_track.filter(date__gt=OuterRef("date")).order_by("date").values("date")[:1]
    return visible.select_related("track").annotate(
        previous_date=Subquery(before), next_date=Subquery(after)
    )


def daily_neighbours(daily: Daily, *, user: Reader) -> tuple[Daily | None, Daily | None]:
    """The previous and next daily of the same track that ``user`` may see (2 queries)."""
    same_track = (
        Daily.objects.visible_to(user).filter(track_id=daily.track_id).select_related("track")
    )
    previous = same_track.filter(date__lt=daily.date).order_by("-date").first()
    following = same_track.filter(date__gt=daily.date).order_by("date").first()
    return previous, following


def latest_dailies_by_track(*, recent: int = 6) -> list[tuple[Track, list[Daily]]]:
    """For the home page: each active track with its newest published dailies (2 queries).

    The tracks come with the date of their ``recent``-th newest published daily (an offset
    into the track's newest-first index), and only dailies from that date on are read: the
    same few index entries and rows however long the archives grow."""
    nth_newest = (
        Daily.objects.visible_to(PUBLIC)
        .filter(track=OuterRef("pk"))
        .order_by("-date")
        .values("date")[recent - 1 : recent]
    )
    tracks = list(Track.objects.filter(is_active=True).annotate(since=Subquery(nth_newest)))
    newest = Q(pk__in=[])
    for track in tracks:
        # No ``since``: the track has fewer than ``recent`` published dailies, all shown.
        newest |= Q(track=track, date__gte=track.since) if track.since else Q(track=track)
    by_track: dict[int, list[Daily]] = {t.pk: [] for t in tracks}
    track_of = {t.pk: t for t in tracks}
    for daily in Daily.objects.visible_to(PUBLIC).filter(newest).order_by("track_id", "-date"):
        daily.track = track_of[daily.track_id]  # its URL names the track: no query each
        by_track[daily.track_id].append(daily)
    return [(t, by_track[t.pk]) for t in tracks if by_track[t.pk]]


# What a daily card and a home entry print of a paper and its summaries (its heading, and
# the takeaway): the home page lists some 80 papers at a year's scale, whose abstracts,
# author lists and summary checks it does not print. Tests pin those pages' query counts as
# the lists grow, so a template that prints another field (a query per paper) fails them.
_HEADING_FIELDS = ("paper__slug", "paper__title", "paper__short_name")
_SUMMARY_FIELDS = ("paper_id", "language", "headline", "body", "takeaway")


def _summary_list(prefix: str) -> Prefetch:
    # A plain list (``paper.summary_list``), not a queryset made for each paper.
    queryset = Summary.objects.only(*_SUMMARY_FIELDS)
    return Prefetch(f"{prefix}summaries", queryset=queryset, to_attr="summary_list")


def lead_entries(dailies: list[Daily]) -> dict[int, DailyEntry]:
    """The lead entry of each daily, with its paper's heading and its summaries
    (``paper.summary_list``): 2 queries."""
    entries = (
        DailyEntry.objects.filter(daily__in=dailies, is_lead=True)
        .select_related("paper")
        .only("daily_id", "paper_id", *_HEADING_FIELDS)
        .prefetch_related(_summary_list("paper__"))
    )
    return {e.daily_id: e for e in entries}


def entry_counts(dailies: list[Daily]) -> dict[int, int]:
    rows = DailyEntry.objects.filter(daily__in=dailies).values("daily_id").annotate(n=Count("pk"))
    return {row["daily_id"]: row["n"] for row in rows}


def track_archive(track: Track) -> QuerySet[Daily]:
    # Each card links its daily, whose URL names the track: join it, not one query a card.
    return (
        Daily.objects.visible_to(PUBLIC)
        .filter(track=track)
        .select_related("track")
        .order_by("-date")
    )


def index_papers() -> QuerySet[Paper]:
    """Papers of published dailies, newest daily first, then by their place in that daily
    (``last_appeared``, ``last_position``, then ``pk``).

    Each paper is read through its latest published appearance: the join keeps the entries
    that no later published entry of the same paper outranks (newer day; on the same day a
    better place, then the older entry). The order is then the dailies' own, so the
    database walks the published dailies newest first (``dailies_daily_status_date_idx``)
    and stops when a page is full, instead of ranking every published paper: a page costs
    the same on the first day and after years. The page slices this queryset; prefetches
    then run once per page (fixed query count).
    """
    published_entries = (
        DailyEntry.objects.visible_to(PUBLIC)
        .select_related("daily", "daily__track")
        .order_by("-daily__date", "daily__track__position")
    )
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
        .prefetch_related(
            *_paper_lookups(""),
            Prefetch("daily_entries", queryset=published_entries, to_attr="published_entries"),
        )
        .order_by("-last_appeared", "last_position", "pk")
    )


def index_paper_count(*, topic: Topic | None = None) -> int:
    """How many papers ``index_papers()`` lists (of ``topic``): the distinct papers of the
    published entries. Worked out once per content version, as the topics' counts are
    (``published_topics``), since every page of the index shows it; a topic's is its count
    among those."""
    if topic is not None:
        return dict(_kept_topic_counts()).get(topic.pk, 0)
    return kept_per_version(
        "index-count",
        lambda: DailyEntry.objects.visible_to(PUBLIC).values("paper_id").distinct().count(),
    )


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


def _kept_topic_counts(counted: list[Topic] | None = None) -> list[tuple[int, int]]:
    """(topic id, papers) of ``topics_with_papers()``, kept per content version; when they
    are counted here, the topics counted are added to ``counted``."""

    def count() -> list[tuple[int, int]]:
        topics = list(topics_with_papers())
        if counted is not None:
            counted.extend(topics)
        return [(topic.pk, topic.n) for topic in topics]

    return kept_per_version("topic-counts", count)


def published_topics() -> list[Topic]:
    """``topics_with_papers()`` as a list, its counts worked out once per content version
    (``digest_site.content.kept_per_version``): the home page, the index's chips and the
    topic index show them on every render, and counting them reads the topic links of every
    published paper (tens of milliseconds at a year's scale). One query either way: the
    count when the version's counts are not kept yet, else the topics they name."""
    counted: list[Topic] = []
    counts = _kept_topic_counts(counted)
    if counted:
        return counted
    by_pk = Topic.objects.in_bulk([pk for pk, _ in counts])
    topics = []
    for pk, n in counts:
        if topic := by_pk.get(pk):  # a topic deleted since it was counted is left out
            topic.n = n
            topics.append(topic)
    return topics


def paper_pages(*, user: Reader) -> QuerySet[Paper]:
    """The papers ``user`` may read (``visible_papers``), each with what its page shows:
    organisations, summaries, topics, what apps above us add, scores, and the entries
    ``user`` may see, newest first. The page reads its paper from it in one query (+7)."""
    entries = (
        DailyEntry.objects.visible_to(user)
        .select_related("daily", "daily__track")
        .order_by("-daily__date")
    )
    return (
        visible_papers(user)
        .select_related("venue")
        .prefetch_related(
            *_paper_lookups(""),
            Prefetch("daily_entries", queryset=entries, to_attr="published_entries"),
            "scores__track",
        )
    )


def parse_date(value: str) -> dt.date | None:
    try:
        return dt.date.fromisoformat(value)
    except ValueError:
        return None


def entries_of_dailies(dailies: list[Daily]) -> dict[int, list[DailyEntry]]:
    """For the home page: the entries of each of ``dailies``, in order, with what an entry
    shows there (heading, ``paper.organization_list``, ``paper.summary_list``: 3 queries,
    however many dailies and entries). Its five tracks' newest dailies list 50 entries at a
    year's scale, so it reads nothing the home page does not print (topics, deep dives,
    code), into lists rather than a queryset made for each paper and relation."""
    entries = (
        DailyEntry.objects.filter(daily__in=dailies)
        .select_related("paper")
        .only("daily_id", "position", "is_lead", "score", "paper_id", *_HEADING_FIELDS)
        .prefetch_related(
            Prefetch("paper__organizations", to_attr="organization_list"),
            _summary_list("paper__"),
        )
        .order_by("daily_id", "position")
    )
    grouped: dict[int, list[DailyEntry]] = {d.pk: [] for d in dailies}
    for entry in entries:
        grouped[entry.daily_id].append(entry)
    return grouped
