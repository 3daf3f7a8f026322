"""Public pages of the dailies: home, daily, track archive, cross-day index and search,
topics, paper."""

from __future__ import annotations

import datetime as dt

from django.conf import settings
from django.core.paginator import InvalidPage, Paginator
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import get_object_or_404, render
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.translation import get_language

from dailies import selectors
from dailies.models import DailyStats
from dailies.related import related_papers
from dailies.search.page import (
    SearchParams,
    browse,
    page_tracks,
    result_rows,
    topic_chips,
    topics_with_papers,
)
from dailies.search.service import ordered_papers, search
from dailies.selection import daily_selection
from digest_site.context_processors import THEME_COOKIE, THEMES
from papers.models import Topic, Track


def _page(request: HttpRequest, items, per_page: int | None = None):
    """The requested page; a page that does not exist (past the end, not a number) is a 404
    rather than silently the last page."""
    paginator = Paginator(items, per_page or settings.PAGE_SIZE)
    try:
        return paginator.page(request.GET.get("page") or 1)
    except InvalidPage as error:
        raise Http404(str(error)) from error


def home(request: HttpRequest) -> HttpResponse:
    tracks = selectors.latest_dailies_by_track()
    dailies = [d for _, ds in tracks for d in ds]
    latest = [ds[0] for _, ds in tracks]
    return render(
        request,
        "dailies/home.html",
        {
            "tracks": tracks,
            "leads": selectors.lead_entries(dailies),
            "counts": selectors.entry_counts(dailies),
            "latest_entries": selectors.entries_of_dailies(latest),
            "topics": list(topics_with_papers()),
        },
    )


def daily_detail(request: HttpRequest, track: str, date: dt.date) -> HttpResponse:
    staff = selectors.reader_is_staff(request)
    daily = get_object_or_404(
        selectors.visible_dailies(staff=staff).select_related("track"), track__slug=track, date=date
    )
    entries = selectors.daily_entries(daily)
    previous, following = selectors.daily_neighbours(daily, staff=staff)
    selection = daily_selection(daily, entries, previous=previous)
    return render(
        request,
        "dailies/daily.html",
        {
            "daily": daily,
            "track": daily.track,
            "entries": entries,
            "selection": selection,
            "any_score": any(e.score is not None for e in entries),
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
    # "Search instead for …": the query as typed, without the spelling correction. A
    # corrected query is one whose words matched nothing as typed.
    did_you_mean = results.corrected if request.GET.get("exact") == "1" else None
    if did_you_mean:
        results = search(None, language=language)
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
            "did_you_mean": did_you_mean,
            "exact_query": params.query_string() + "&exact=1",
            "suggested_topics": [] if pairs else list(topics_with_papers()[:12]),
            "filter_topic": _topic(params.topic),
        },
    )


def _search_context(params: SearchParams, papers: list) -> dict:
    query = params.query_string()
    return {
        "search": params,
        # Every topic with published papers, in a stable order, whatever the page shows.
        "chips": topic_chips(list(topics_with_papers()), params),
        "tracks": page_tracks(papers),
        "page_query": f"{query}&" if query else "",
        "clear_filters": params.query_string(topic=None, track=None, from_=None, to=None),
    }


THEME_COOKIE_AGE = 365 * 24 * 3600


def theme_set(request: HttpRequest, mode: str) -> HttpResponse:
    """The theme toggle without JavaScript: a link sets the cookie and returns the reader to
    the page (``next``, this site only); "auto" follows the system's preference again."""
    if mode not in (*THEMES, "auto"):
        raise Http404("no such theme")
    target = request.GET.get("next", "")
    if not url_has_allowed_host_and_scheme(
        target, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ) or not target.startswith("/"):
        target = "/"
    response = HttpResponseRedirect(target)
    if mode == "auto":
        response.delete_cookie(THEME_COOKIE, samesite="Lax")
    else:
        response.set_cookie(
            THEME_COOKIE, mode, max_age=THEME_COOKIE_AGE, samesite="Lax", httponly=True
        )
    return response


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
            "related": related_papers(paper, language=get_language()),
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
