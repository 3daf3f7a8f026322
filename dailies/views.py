"""Public pages of the dailies: home, daily, track archive, cross-day index, paper."""

from __future__ import annotations

import datetime as dt

from django.conf import settings
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render

from dailies import selectors
from dailies.models import DailyStats
from papers.models import Track


def _is_staff(request: HttpRequest) -> bool:
    user = request.user
    return bool(user.is_authenticated and user.is_active and user.is_staff)


def _page(request: HttpRequest, items, per_page: int | None = None):
    return Paginator(items, per_page or settings.PAGE_SIZE).get_page(request.GET.get("page"))


def home(request: HttpRequest) -> HttpResponse:
    tracks = selectors.latest_dailies_by_track()
    dailies = [d for _, ds in tracks for d in ds]
    return render(
        request,
        "dailies/home.html",
        {
            "tracks": tracks,
            "leads": selectors.lead_entries([ds[0] for _, ds in tracks]),
            "counts": selectors.entry_counts(dailies),
        },
    )


def daily_detail(request: HttpRequest, track: str, date: dt.date) -> HttpResponse:
    staff = _is_staff(request)
    daily = get_object_or_404(
        selectors.visible_dailies(staff=staff).select_related("track"), track__slug=track, date=date
    )
    entries = selectors.daily_entries(daily)
    previous, following = selectors.daily_neighbours(daily, staff=staff)
    return render(
        request,
        "dailies/daily.html",
        {
            "daily": daily,
            "track": daily.track,
            "entries": entries,
            "stats": DailyStats.from_entries(daily.candidates_scored, entries),
            "previous": previous,
            "following": following,
            "preview": not daily.is_published,
        },
    )


def track_archive(request: HttpRequest, track: str) -> HttpResponse:
    track_obj = get_object_or_404(Track, slug=track, is_active=True)
    page = _page(request, selectors.track_archive(track_obj))
    dailies = list(page.object_list)
    return render(
        request,
        "dailies/track.html",
        {
            "track": track_obj,
            "page": page,
            "dailies": dailies,
            "leads": selectors.lead_entries(dailies),
            "counts": selectors.entry_counts(dailies),
        },
    )


def paper_index(request: HttpRequest) -> HttpResponse:
    page = _page(request, selectors.index_papers())
    return render(request, "dailies/paper_index.html", {"page": page, "papers": page.object_list})


def paper_detail(request: HttpRequest, slug: str) -> HttpResponse:
    staff = _is_staff(request)
    paper = get_object_or_404(selectors.visible_papers(staff=staff), slug=slug)
    paper = selectors.paper_page(paper, staff=staff)
    return render(
        request,
        "dailies/paper.html",
        {
            "paper": paper,
            "entries": paper.published_entries,
            "scores": sorted(paper.scores.all(), key=lambda s: (s.created_at, s.pk), reverse=True),
            "preview": staff and not any(e.daily.is_published for e in paper.published_entries),
        },
    )
