"""Public pages of the dailies: home, daily, track archive, paper. The cross-day index,
search and topic pages are the search app's (``search.views``)."""

from __future__ import annotations

import datetime as dt

from django.conf import settings
from django.core.paginator import InvalidPage, Paginator
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import get_object_or_404, render
from django.template.loader import render_to_string
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.safestring import SafeString, mark_safe
from django.utils.translation import get_language

from dailies import selectors, weekly
from dailies.citation import ris
from dailies.extensions import related_papers
from dailies.models import DailyStats
from dailies.templatetags.digest import bibtex, paper_links
from digest_site import part_cache
from digest_site.context_processors import THEME_COOKIE, THEMES
from digest_site.page_cache import tag
from digest_site.visibility import may_preview
from papers.languages import localized
from papers.models import Paper, Summary, Track


def page_or_404(request: HttpRequest, items, per_page: int | None = None):
    """The requested page; a page that does not exist (past the end, not a number) is a 404
    rather than silently the last page."""
    paginator = Paginator(items, per_page or settings.PAGE_SIZE)
    try:
        return paginator.page(request.GET.get("page") or 1)
    except InvalidPage as error:
        raise Http404(str(error)) from error


def home(request: HttpRequest) -> HttpResponse:
    tag(request, "dailies", "tracks", "topics", "index")
    return render(
        request,
        "dailies/home.html",
        {"sections": selectors.home_sections(), "topics": selectors.published_topics()},
    )


def daily_detail(request: HttpRequest, track: str, date: dt.date) -> HttpResponse:
    # A preview prints what readers may not see: it neither reads nor stores cached entries.
    started = None if may_preview(request.user) else part_cache.clock_before_reads()
    page = selectors.daily_page(track, date, user=request.user, lists=False)
    if page is None:
        raise Http404("no such daily")
    daily, entries = page.daily, page.entries
    tag(request, f"daily:{daily.pk}", f"track:{daily.track.slug}")
    tag(request, *(f"paper:{entry.paper_id}" for entry in entries))
    return render(
        request,
        "dailies/daily.html",
        {
            "daily": daily,
            "track": daily.track,
            "entries": entries,
            "entries_html": _entries_html(page, started if daily.is_published else None),
            "selection": page.selection,
            "any_score": any(e.score is not None for e in entries),
            "stats": DailyStats.from_entries(daily.candidates_scored, entries),
            "previous": page.previous,
            "following": page.following,
            "preview": not daily.is_published,
        },
    )


def _entries_html(page: selectors.DailyPage, started: int | None) -> list[SafeString]:
    """Each entry of ``page`` as its page prints it: from the cache when its tags (its daily,
    paper and track) are where they were when it was stored, else rendered (reading its
    paper's lists) and stored, unless ``started`` is None (``digest_site.part_cache``)."""
    daily, track = page.daily, page.daily.track
    tags = {
        entry.pk: (f"daily:{daily.pk}", f"paper:{entry.paper_id}", f"track:{track.slug}")
        for entry in page.entries
    }
    language = get_language()
    cached = part_cache.parts("daily-entry", tags, started=started, vary=(language,))
    missing = [entry for entry in page.entries if entry.pk not in cached.found]
    selectors.with_paper_lists(missing)
    context = {"daily": daily, "track": track, "selection": page.selection, "LANG": language}
    rendered = {
        entry.pk: render_to_string("dailies/_entry.html", {**context, "entry": entry})
        for entry in missing
    }
    cached.store(rendered)
    return [mark_safe(cached.found.get(entry.pk) or rendered[entry.pk]) for entry in page.entries]


def track_archive(request: HttpRequest, track: str) -> HttpResponse:
    track_obj = get_object_or_404(Track, slug=track, is_active=True)
    page = page_or_404(request, selectors.track_archive(track_obj))
    dailies = list(page.object_list)
    tag(request, f"track:{track_obj.slug}", "dailies")
    tag(request, *(f"paper:{lead.paper_id}" for daily in dailies for lead in daily.leads))
    return render(
        request,
        "dailies/track.html",
        {"track": track_obj, "page": page, "dailies": dailies},
    )


def week_detail(request: HttpRequest, track: str, week: dt.date) -> HttpResponse:
    """A track's weekly roundup: what readers may read of the week, whoever asks (a preview
    of an unpublished intro is the admin's), so the page never shows a draft."""
    track_obj = get_object_or_404(selectors.published_tracks(), slug=track)
    roundup = weekly.week_roundup(track_obj, week)
    if roundup is None:
        raise Http404("no published daily that week")
    # Its sections come from every paper of the week's dailies (one gaining a deep dive joins).
    tag(request, f"track:{track_obj.slug}", *roundup.cache_tags)
    published = roundup.intro_roundup
    intro = localized(published, "intro", get_language()) if published else ""
    return render(
        request,
        "dailies/week.html",
        {
            "track": track_obj,
            "week": roundup,
            "intro": intro,
            "intro_is_machine": bool(intro)
            and published.intro_provenance(intro.language) == Summary.Provenance.MACHINE,
        },
    )


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


def paper_detail(request: HttpRequest, slug: str) -> HttpResponse:
    staff = may_preview(request.user)
    paper = selectors.paper_page(slug, user=request.user)
    if paper is None:
        raise Http404("no such paper")
    language = get_language()
    related = related_papers(paper, language=language)
    # Which papers are related changes as papers are published (``dailies``) and as they
    # are embedded (``related``).
    tag(request, f"paper:{paper.pk}", "dailies", "related")
    tag(request, *(f"paper:{other.pk}" for other in related))
    tag(request, *(f"daily:{entry.daily_id}" for entry in paper.published_entries))
    return render(
        request,
        "dailies/paper.html",
        {
            "paper": paper,
            "summary": paper.summary(language),
            # Each with its summary in the page's language, else the other's.
            "related": [(other, other.summary(language)) for other in related],
            "entries": paper.published_entries,
            "scores": paper.score_list,
            "preview": staff and not any(e.daily.is_published for e in paper.published_entries),
            # A summary an editor changed after this is marked as corrected.
            "first_published_at": min(
                (e.daily.published_at for e in paper.published_entries if e.daily.published_at),
                default=None,
            ),
        },
    )


def _cited_paper(request: HttpRequest, slug: str) -> Paper:
    """The paper of ``slug`` as its page would show it to ``request.user`` (one query)."""
    paper = selectors.visible_papers(request.user).select_related("venue").filter(slug=slug).first()
    if paper is None:
        raise Http404("no such paper")
    tag(request, f"paper:{paper.pk}")
    return paper


def _download(body: str, *, content_type: str, filename: str) -> HttpResponse:
    response = HttpResponse(body, content_type=content_type)
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


def paper_bibtex(request: HttpRequest, slug: str) -> HttpResponse:
    """The paper's BibTeX entry (the cite box's) as a file for reference managers."""
    paper = _cited_paper(request, slug)
    return _download(
        bibtex(paper) + "\n",
        content_type="application/x-bibtex; charset=utf-8",
        filename=f"{paper.slug}.bib",
    )


def paper_ris(request: HttpRequest, slug: str) -> HttpResponse:
    """The paper's RIS record as a file (Zotero, EndNote, Mendeley import it)."""
    paper = _cited_paper(request, slug)
    return _download(
        ris(paper, paper_links(paper)),
        content_type="application/x-research-info-systems; charset=utf-8",
        filename=f"{paper.slug}.ris",
    )
