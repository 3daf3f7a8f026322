"""The readers the pages share: which papers and tracks readers see, what a page prints of a
paper's lists and appearances, a daily's card, and the date in a URL."""

from __future__ import annotations

import datetime as dt

from django.db.models import (
    Count,
    Exists,
    IntegerField,
    OuterRef,
    Prefetch,
    Q,
    QuerySet,
    Subquery,
    Value,
)
from django.db.models.functions import Coalesce

from dailies.extensions import paper_prefetches
from dailies.models import Daily, DailyEntry
from digest_site.visibility import PUBLIC, Reader, may_preview
from papers.models import Paper, Track


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


def parse_date(value: str) -> dt.date | None:
    try:
        return dt.date.fromisoformat(value)
    except ValueError:
        return None
