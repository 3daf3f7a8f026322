"""Public pages of search: the cross-day index of papers and its search, and the topics."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.utils.translation import get_language

from dailies import selectors
from dailies.paging import keyset_page_or_404
from dailies.views import page_or_404
from digest_site.page_cache import tag
from papers.models import Topic
from search.backends import Hit
from search.limits import LIKE_RESULTS
from search.page import SearchParams, page_tracks, result_rows, topic_chips
from search.related import related_papers, similar_papers
from search.service import Highlighter, browse, browse_count, in_hit_order, search


def paper_index(request: HttpRequest) -> HttpResponse:
    """The cross-day index; with ``q`` a ranked search, with filters only the index narrowed.

    Without parameters it is the plain index, at its pinned query count: the topic chips
    and track choices come from the papers already on the page.
    """
    params = SearchParams.from_query(request.GET)
    tag(request, "index")
    if params.like:
        return _like_results(request, params)
    if params.q:
        return _search_results(request, params)
    if params.active:
        page = keyset_page_or_404(
            request.GET,
            browse(params.filters),
            count=browse_count(params.filters),
            query=params.query_string(),
        )
    else:
        page = keyset_page_or_404(
            request.GET,
            selectors.index_papers(),
            count=selectors.index_paper_count(),
        )
    papers = list(page.object_list)
    return render(
        request,
        "search/paper_index.html",
        {
            **_search_context(params, papers),
            "page": page,
            "papers": papers,
            "filter_topic": _topic(params.filters.topic),
        },
    )


def _search_results(request: HttpRequest, params: SearchParams) -> HttpResponse:
    language = get_language()
    results = search(params.q, params.filters, language=language)
    # "Search instead for …": the query as typed, without the spelling correction. A
    # corrected query is one whose words matched nothing as typed.
    did_you_mean = results.corrected if request.GET.get("exact") == "1" else None
    if did_you_mean:
        results = search("", language=language)
    page = page_or_404(request, results)
    # The hits' papers as readers may see them (the visibility guard), with their venues:
    # the index's latest-appearance join is for its order, which the ranking gives here.
    hits = list(page.object_list)
    pairs = in_hit_order(hits, selectors.search_result_papers([h.paper_id for h in hits]))
    papers = [paper for paper, _ in pairs]
    return render(
        request,
        "search/paper_index.html",
        {
            **_search_context(params, papers),
            "page": page,
            "results": results,
            "rows": result_rows(pairs, results.highlighter, language),
            "did_you_mean": did_you_mean,
            "exact_query": params.query_string() + "&exact=1",
            "suggested_topics": [] if pairs else selectors.published_topics()[:12],
            "filter_topic": _topic(params.filters.topic),
        },
    )


def _like_results(request: HttpRequest, params: SearchParams) -> HttpResponse:
    """``?like=<slug>``: the published papers nearest in meaning to a published paper (404
    for any other), with the filters; the paper's lexical relatives when it has no
    embedding yet or semantic search is off."""
    like = get_object_or_404(selectors.published_papers(), slug=params.like)
    language = get_language()
    hits = similar_papers(like.pk, limit=LIKE_RESULTS, filters=params.filters)
    if hits is None:
        hits = [Hit(p.pk, 0.0) for p in related_papers(like, language=language)]
    # Every one is found by meaning: the heading says so, not each row.
    hits = [Hit(h.paper_id, h.score) for h in hits]
    page = page_or_404(request, hits)
    shown = list(page.object_list)
    pairs = in_hit_order(shown, selectors.search_result_papers([h.paper_id for h in shown]))
    papers = [paper for paper, _ in pairs]
    return render(
        request,
        "search/paper_index.html",
        {
            **_search_context(params, papers),
            "page": page,
            "like_paper": like,
            "rows": result_rows(pairs, Highlighter([]), language),
            "filter_topic": _topic(params.filters.topic),
        },
    )


def _search_context(params: SearchParams, papers: list) -> dict:
    query = params.query_string()
    return {
        "search": params,
        # Every topic with published papers, in a stable order, whatever the page shows.
        "chips": topic_chips(selectors.published_topics(), params),
        "tracks": page_tracks(papers),
        "page_query": f"{query}&" if query else "",
        "clear_filters": params.query_string(topic=None, track=None, from_=None, to=None),
    }


def _topic(slug: str | None) -> Topic | None:
    return Topic.objects.filter(slug=slug).first() if slug else None


def topic_index(request: HttpRequest) -> HttpResponse:
    tag(request, "topics")
    return render(request, "search/topic_index.html", {"topics": selectors.published_topics()})


def topic_detail(request: HttpRequest, slug: str) -> HttpResponse:
    """A topic's published papers across days, newest first."""
    topic = get_object_or_404(Topic, slug=slug)
    page = keyset_page_or_404(
        request.GET,
        selectors.index_papers().filter(topics=topic),
        count=selectors.index_paper_count(topic=topic),
    )
    papers = list(page.object_list)
    tag(request, f"topic:{topic.slug}", *(f"paper:{paper.pk}" for paper in papers))
    return render(request, "search/topic.html", {"topic": topic, "page": page, "papers": papers})
