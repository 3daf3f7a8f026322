"""Public pages to follow: a lab's and an author's published papers across days, and the
follow builder that turns a filter set into a feed URL and a mail subscription."""

from __future__ import annotations

from django.conf import settings
from django.db.models import Count, QuerySet
from django.http import Http404, HttpRequest, HttpResponse, HttpResponsePermanentRedirect
from django.shortcuts import render
from django.urls import reverse

from dailies import selectors
from dailies.models import DailyEntry, published_q
from dailies.paging import keyset_page_or_404
from digest_site.page_cache import tag
from digest_site.visibility import PUBLIC, is_public, published_objects
from follow.filters import FilterError, FollowFilters, public_author_or_none
from papers.models import Organization, Paper, PaperAuthor, Track

# The minimum scores the builder offers (the URL takes any score in steps of 0.05).
SCORE_CHOICES = ["2.00", "2.50", "3.00", "3.50", "4.00", "4.50"]


def _published_count(links: QuerySet) -> int:
    """How many of the papers ``links`` (rows of a paper's link table, unique per paper)
    name readers see: one query, the links counted against the published entries' papers
    rather than the entries joined and made distinct (119 ms for a lab of a year's scale)."""
    return links.filter(
        paper_id__in=DailyEntry.objects.visible_to(PUBLIC).values("paper_id")
    ).count()


def _paper_page(request: HttpRequest, lookup: dict, links: QuerySet):
    """The page of published papers matching ``lookup`` (keyset paging, as the topic page)
    with what the items print; a fixed number of queries whatever the number of papers."""
    page = keyset_page_or_404(
        request.GET,
        selectors.index_papers().filter(**lookup),
        count=_published_count(links),
    )
    papers = list(page.object_list)
    # Any publication or paper change retires ``index``: a lab's or author's list is one.
    tag(request, "index", *(f"paper:{paper.pk}" for paper in papers))
    return page, papers


def lab_detail(request: HttpRequest, slug: str) -> HttpResponse:
    """An organisation's published papers, newest appearance first."""
    lab = Organization.objects.filter(slug=slug).first()
    if lab is None or not is_public(lab):
        raise Http404("no such lab")
    tag(request, f"org:{lab.pk}")
    page, papers = _paper_page(
        request,
        {"organizations": lab},
        Paper.organizations.through.objects.filter(organization=lab),
    )
    return render(request, "follow/lab.html", {"lab": lab, "page": page, "papers": papers})


def author_detail(request: HttpRequest, slug: str) -> HttpResponse:
    """An author's published papers, newest appearance first; a name an editor merged into
    another leads to that author's page."""
    author = public_author_or_none(slug)
    if author is None:
        raise Http404("no such author")
    if author.merged_into is not None:
        return HttpResponsePermanentRedirect(
            reverse("follow:author", args=[author.merged_into.slug])
        )
    tag(request, f"author:{author.pk}")
    page, papers = _paper_page(
        request, {"author_links__author": author}, PaperAuthor.objects.filter(author=author)
    )
    return render(request, "follow/author.html", {"author": author, "page": page, "papers": papers})


def builder(request: HttpRequest) -> HttpResponse:
    """``/<lang>/follow/?track=…&topic=…&lab=…&author=…&min_score=…``: the choices, the
    feed URL of the filter set and its newest matching papers; unknown values are a 400."""
    try:
        filters = FollowFilters.parse(request.GET)
    except FilterError as error:
        return render(request, "follow/invalid.html", {"problems": error.problems}, status=400)
    papers = []
    if filters:
        papers = list(filters.papers()[: settings.PAGE_SIZE])
    tag(request, "index", "topics", "tracks")
    # Counted over the published papers only: the join the filter makes is the one counted.
    labs = (
        Organization.objects.filter(published_q("papers__daily_entries__daily__"))
        .annotate(n=Count("papers", distinct=True))
        .order_by("label")
    )
    return render(
        request,
        "follow/builder.html",
        {
            "filters": filters,
            "query": filters.query_string(),
            "papers": papers,
            "tracks": published_objects(Track).order_by("position", "slug"),
            "topics": selectors.published_topics(),
            "labs": labs,
            "scores": SCORE_CHOICES,
        },
    )
