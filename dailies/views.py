"""Public pages of the dailies: home, daily, track archive, cross-day index and search,
topics, paper."""

from __future__ import annotations

import datetime as dt

from django.conf import settings
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.utils.translation import get_language

from dailies import selectors
from dailies.models import DailyStats
from dailies.search.page import (
    SearchParams,
    browse,
    page_topics,
    page_tracks,
    result_rows,
    topic_chips,
    topics_with_papers,
)
from dailies.search.service import ordered_papers, search
from papers.models import Topic, Track


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
    staff = selectors.reader_is_staff(request)
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
    """The cross-day index; with ``q`` a ranked search, with filters only the index narrowed.

    Without parameters it is the plain index, at its pinned query count: the topic chips
    and track choices come from the papers already on the page.
    """
    params = SearchParams.from_query(request.GET)
    if params.q:
        return _search_results(request, params)
    papers_qs = browse(params.filters) if params.active else selectors.index_papers()
    page = _page(request, papers_qs)
    papers = list(page.object_list)
    return render(
        request,
        "dailies/paper_index.html",
        {
            **_search_context(params, papers),
            "page": page,
            "papers": papers,
            "filter_topic": _topic(params.topic),
        },
    )


def _search_results(request: HttpRequest, params: SearchParams) -> HttpResponse:
    language = get_language()
    results = search(
        params.q,
        topic=params.topic,
        track=params.track,
        date_from=params.date_from,
        date_to=params.date_to,
        language=language,
    )
    page = _page(request, results)
    pairs = ordered_papers(page.object_list, selectors.index_papers())
    papers = [paper for paper, _ in pairs]
    return render(
        request,
        "dailies/paper_index.html",
        {
            **_search_context(params, papers),
            "page": page,
            "results": results,
            "rows": result_rows(pairs, results.highlighter, language),
            "suggested_topics": [] if pairs else list(topics_with_papers()[:12]),
            "filter_topic": _topic(params.topic),
        },
    )


def _search_context(params: SearchParams, papers: list) -> dict:
    query = params.query_string()
    return {
        "search": params,
        "chips": topic_chips(page_topics(papers), params),
        "tracks": page_tracks(papers),
        "page_query": f"{query}&" if query else "",
        "clear_filters": params.query_string(topic=None, track=None, from_=None, to=None),
    }


def _topic(slug: str) -> Topic | None:
    return Topic.objects.filter(slug=slug).first() if slug else None


def topic_index(request: HttpRequest) -> HttpResponse:
    return render(request, "dailies/topic_index.html", {"topics": topics_with_papers()})


def topic_detail(request: HttpRequest, slug: str) -> HttpResponse:
    """A topic's published papers across days, newest first."""
    topic = get_object_or_404(Topic, slug=slug)
    page = _page(request, selectors.index_papers().filter(topics=topic))
    return render(
        request,
        "dailies/topic.html",
        {"topic": topic, "page": page, "papers": list(page.object_list)},
    )


def paper_detail(request: HttpRequest, slug: str) -> HttpResponse:
    staff = selectors.reader_is_staff(request)
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
            # A summary an editor changed after this is marked as corrected.
            "first_published_at": min(
                (e.daily.published_at for e in paper.published_entries if e.daily.published_at),
                default=None,
            ),
        },
    )
