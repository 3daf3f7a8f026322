"""Atom and RSS feeds of what readers can see: each track's dailies and papers here, a
topic's papers and a search's papers in ``search.feeds`` (on ``PaperListFeed``), in the
language of the URL.

Every feed reads what the public may read, whoever asks (``visible_to(PUBLIC)``, the one
definition of "published"), shows at most ``FEED_ITEMS``
items, and costs a fixed number of queries whatever their number. Item bodies are rendered
with the daily page's own template tags, so their text is escaped exactly as on the pages.

Ids are tag URIs (RFC 4151) built from what never changes for an item — its track, date,
paper and language — so they stay the same across re-renders and edits. Each feed view
answers ``If-None-Match`` / ``If-Modified-Since`` from one cheap query: the ids and content
times of the items it would show (``ContentFeed.stamps``).
"""

from __future__ import annotations

import datetime as dt
import hashlib
from functools import cached_property
from urllib.parse import urlsplit

from django.contrib.syndication.views import Feed
from django.db.models import DateTimeField, F, OuterRef, Prefetch, QuerySet, Subquery
from django.db.models.functions import Coalesce, Greatest
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseBadRequest
from django.shortcuts import get_object_or_404
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils.feedgenerator import Atom1Feed, Rss201rev2Feed
from django.utils.translation import get_language, gettext
from django.views.decorators.http import condition

from dailies import weekly
from dailies.models import Daily, DailyEntry
from dailies.selectors import index_papers
from dailies.templatetags.digest import entry_heading
from digest_site import invalidation, page_cache
from digest_site.visibility import PUBLIC
from papers.languages import Language, localized
from papers.models import Summary, Track

FEED_ITEMS = 30  # the newest items any feed shows
# The date in every tag URI: fixed once, so an item's id never changes.
TAG_DATE = "2026"
FEED_LANGUAGES = {Language.EN: "en", Language.ZH: "zh-CN"}  # as on the pages' <html lang>

# What an item body shows of each paper, prefetched once per feed.
PAPER_LOOKUPS = ("organizations", "summaries")


def latest_of(base: str, *candidates) -> Greatest:
    """The latest of ``base`` (a non-null datetime) and ``candidates``, ignoring missing ones
    (SQLite's MAX(a, NULL) is NULL)."""
    return Greatest(base, *(Coalesce(c, F(base)) for c in candidates), output_field=DateTimeField())


def _summaries_updated(paper_ref: str) -> Subquery:
    """When a summary of the paper ``paper_ref`` (an OuterRef path) last changed."""
    return Subquery(
        Summary.objects.filter(paper=OuterRef(paper_ref))
        .order_by("-updated_at")
        .values("updated_at")[:1]
    )


def _latest_appearance() -> QuerySet[DailyEntry]:
    return (
        DailyEntry.objects.visible_to(PUBLIC)
        .filter(paper=OuterRef("pk"))
        .order_by("-daily__date", "position")
    )


def paper_appeared_at() -> Subquery:
    """For a queryset of published papers: when the latest daily it appeared in went out."""
    return Subquery(_latest_appearance().values("daily__published_at")[:1])


def paper_content_updated() -> Greatest:
    """For published papers: the last change to what their page and feed items show — the
    paper, a summary, or a new appearance in a published daily."""
    return latest_of("updated_at", paper_appeared_at(), _summaries_updated("pk"))


def daily_content_updated() -> Greatest:
    """For dailies: the last change to the daily, one of its papers or their summaries."""
    papers_updated = Subquery(
        DailyEntry.objects.filter(daily=OuterRef("pk"))
        .order_by("-paper__updated_at")
        .values("paper__updated_at")[:1]
    )
    summaries_updated = Subquery(
        Summary.objects.filter(paper__daily_entries__daily=OuterRef("pk"))
        .order_by("-updated_at")
        .values("updated_at")[:1]
    )
    return latest_of("updated_at", papers_updated, summaries_updated)


class ContentFeed(Feed):
    """An Atom feed made for one request (``as_view``), so it may keep what it has read.

    Subclasses say which object the URL names (``target``), which items it shows
    (``item_rows``, annotated with ``content_updated``) and how to describe them.
    """

    feed_type = Atom1Feed
    item_guid_is_permalink = False
    author_name = "Paper Daily"

    def __init__(self, request: HttpRequest) -> None:
        self.request = request
        self.lang = get_language()

    @classmethod
    def as_view(cls):
        def view(request: HttpRequest, *args, **kwargs) -> HttpResponse:
            feed = cls(request)
            problem = feed.invalid(request)
            if problem:
                return HttpResponseBadRequest(problem, content_type="text/plain; charset=utf-8")
            conditional = condition(
                etag_func=lambda r, *a, **k: feed.validators(*a, **k)[0],
                last_modified_func=lambda r, *a, **k: feed.validators(*a, **k)[1],
            )
            return conditional(feed)(request, *args, **kwargs)

        view.feed_class = cls
        return view

    # --- what subclasses provide ---------------------------------------------------------

    def target(self, **kwargs):
        return None

    def item_rows(self, obj) -> QuerySet:
        raise NotImplementedError

    def invalid(self, request: HttpRequest) -> str | None:
        """Why the query string cannot be served (a 400), or None."""
        return None

    # --- shared machinery ----------------------------------------------------------------

    @property
    def language(self) -> str:
        return FEED_LANGUAGES.get(self.lang, self.lang)

    @cached_property
    def host(self) -> str:
        """The host readers reached the site by, without a port (tag URIs take none)."""
        return urlsplit(f"//{self.request.get_host()}").hostname or "localhost"

    def tag(self, *parts: object) -> str:
        return f"tag:{self.host},{TAG_DATE}:" + "/".join(str(p) for p in parts)

    def absolute(self, path: str) -> str:
        return self.request.build_absolute_uri(path)

    # What the feed prints, for the page cache (``page_cache.tag``): any paper or daily.
    cache_tags = ("index", "dailies")

    def get_object(self, request: HttpRequest, *args, **kwargs):
        if not hasattr(self, "_object"):
            page_cache.tag(request, *self.cache_tags)
            self._object = self.target(**kwargs)
        return self._object

    def items(self, obj) -> list:
        if not hasattr(self, "_items"):
            self._items = list(self.item_rows(obj)[:FEED_ITEMS])
        return self._items

    def stamps(self, obj) -> list[tuple[int, dt.datetime]]:
        """(id, content time) of each item the feed shows: one query, no prefetches."""
        return list(
            self.item_rows(obj)
            .prefetch_related(None)
            .values_list("pk", "content_updated")[:FEED_ITEMS]
        )

    def validators(self, *args, **kwargs) -> tuple[str | None, dt.datetime | None]:
        """ETag and Last-Modified of the feed; (None, None) when the URL names nothing."""
        if not hasattr(self, "_validators"):
            try:
                obj = self.get_object(self.request, *args, **kwargs)
            except Http404:  # the view raises it again and answers 404
                self._validators = (None, None)
                return self._validators
            stamps = self.stamps(obj)
            digest = hashlib.sha256(
                repr((type(self).__name__, self.lang, stamps)).encode()
            ).hexdigest()[:24]
            self._validators = (
                f'"{digest}"',
                max((at for _, at in stamps), default=None),
            )
        return self._validators

    def item_updateddate(self, item) -> dt.datetime:
        return item.content_updated

    def render(self, template: str, **context) -> str:
        """An item body; no request, so no context processor runs once per item."""
        base = self.absolute("/").rstrip("/")
        return render_to_string(template, {"LANG": self.lang, "base": base, **context})


def _paper_prefetches(prefix: str) -> list:
    return [f"{prefix}{lookup}" for lookup in PAPER_LOOKUPS]


def _newest(queryset: QuerySet, *ordering: str) -> QuerySet:
    """The ids of the ``FEED_ITEMS`` first rows of ``queryset`` (a subquery), so that the
    content times are computed for the rows shown, not for a track's whole history."""
    return queryset.order_by(*ordering).values("pk")[:FEED_ITEMS]


def _active_track(slug: str) -> Track:
    return get_object_or_404(Track, slug=slug, is_active=True)


def feed_title(name: str) -> str:
    return f"{name} — {gettext('Paper Daily')}"


class TrackFeed(ContentFeed):
    """What the feeds of one track share: the track, its description, its archive page and a
    feed id of the feed's ``kind``."""

    kind = ""

    def target(self, *, track: str) -> Track:
        return _active_track(track)

    def subtitle(self, track: Track) -> str:
        return track.description(self.lang)

    def description(self, track: Track) -> str:
        return self.subtitle(track)

    def link(self, track: Track) -> str:
        return self.absolute(reverse("dailies:track", args=[track.slug]))

    def feed_guid(self, track: Track) -> str:
        return self.tag("feed", self.kind, track.slug, self.lang)


class TrackDailiesFeed(TrackFeed):
    """``/<lang>/feeds/<track>.atom``: one item per published daily, newest first."""

    kind = "dailies"

    def item_rows(self, track: Track) -> QuerySet[Daily]:
        entries = (
            DailyEntry.objects.select_related("paper", "paper__venue")
            .prefetch_related(*_paper_prefetches("paper__"))
            .order_by("position")
        )
        return (
            Daily.objects.visible_to(PUBLIC)
            .filter(pk__in=_newest(Daily.objects.visible_to(PUBLIC).filter(track=track), "-date"))
            .select_related("track")
            .annotate(content_updated=daily_content_updated())
            .prefetch_related(Prefetch("entries", queryset=entries, to_attr="feed_entries"))
            .order_by("-date")
        )

    def title(self, track: Track) -> str:
        return feed_title(track.name(self.lang))

    def item_title(self, daily: Daily) -> str:
        # The daily page's own heading, in the page's language.
        return gettext("%(track_name)s — Paper Daily, %(date)s") % {
            "track_name": daily.track.name(self.lang),
            "date": daily.date.isoformat(),
        }

    def item_link(self, daily: Daily) -> str:
        return self.absolute(daily.get_absolute_url())

    def item_guid(self, daily: Daily) -> str:
        return self.tag("daily", daily.track.slug, daily.date.isoformat(), self.lang)

    def item_pubdate(self, daily: Daily) -> dt.datetime:
        return daily.published_at

    def item_description(self, daily: Daily) -> str:
        return self.render(
            "dailies/feeds/daily.html",
            daily=daily,
            entries=daily.feed_entries,
            intro=localized(daily, "intro", self.lang),
            daily_url=self.item_link(daily),
        )


class TrackDailiesRssFeed(TrackDailiesFeed):
    """``/<lang>/feeds/<track>.rss``: the same items as RSS 2.0."""

    feed_type = Rss201rev2Feed


class TrackPapersFeed(TrackFeed):
    """``/<lang>/feeds/<track>/papers.atom``: one item per selected paper, newest daily first
    and in each daily's order."""

    kind = "papers"

    def item_rows(self, track: Track) -> QuerySet[DailyEntry]:
        shown = _newest(
            DailyEntry.objects.visible_to(PUBLIC).filter(daily__track=track),
            "-daily__date",
            "position",
        )
        return (
            DailyEntry.objects.visible_to(PUBLIC)
            .filter(pk__in=shown)
            .select_related("daily", "daily__track", "paper", "paper__venue")
            .prefetch_related(*_paper_prefetches("paper__"))
            .annotate(
                content_updated=latest_of(
                    "daily__published_at", F("paper__updated_at"), _summaries_updated("paper_id")
                )
            )
            .order_by("-daily__date", "position")
        )

    def title(self, track: Track) -> str:
        return feed_title(f"{track.name(self.lang)} · {gettext('Papers')}")

    def item_title(self, entry: DailyEntry) -> str:
        return _paper_heading(entry.paper, self.lang)

    def item_link(self, entry: DailyEntry) -> str:
        return self.absolute(reverse("dailies:paper", args=[entry.paper.slug]))

    def item_guid(self, entry: DailyEntry) -> str:
        daily = entry.daily
        return self.tag(
            "daily", daily.track.slug, daily.date.isoformat(), "paper", entry.paper_id, self.lang
        )

    def item_pubdate(self, entry: DailyEntry) -> dt.datetime:
        return entry.daily.published_at

    def item_description(self, entry: DailyEntry) -> str:
        return self.render(
            "dailies/feeds/paper.html",
            paper=entry.paper,
            score=entry.score,
            is_lead=entry.is_lead,
            appearances=[entry.daily],
        )


def _paper_heading(paper, lang: str) -> str:
    return entry_heading(paper, paper.summary(lang))


class PaperListFeed(ContentFeed):
    """Papers of published dailies, newest appearance first, as on the topic page."""

    def annotated(self, papers: QuerySet) -> QuerySet:
        """The first ``FEED_ITEMS`` of ``papers`` (a filtered ``index_papers()``, in its order),
        with their latest appearance and content time. Which papers those are is read once
        per request (one query), for both the validators and the items."""
        if not hasattr(self, "_shown"):
            self._shown = list(
                papers.prefetch_related(None).values_list("pk", flat=True)[:FEED_ITEMS]
            )
        return (
            index_papers()
            .filter(pk__in=self._shown)
            .annotate(appeared_at=paper_appeared_at(), content_updated=paper_content_updated())
        )

    def item_title(self, paper) -> str:
        return _paper_heading(paper, self.lang)

    def item_link(self, paper) -> str:
        return self.absolute(reverse("dailies:paper", args=[paper.slug]))

    def item_guid(self, paper) -> str:
        return self.tag("paper", paper.pk, self.lang)

    def item_pubdate(self, paper) -> dt.datetime:
        return paper.appeared_at

    def item_description(self, paper) -> str:
        latest = paper.published_entries[0] if paper.published_entries else None
        return self.render(
            "dailies/feeds/paper.html",
            paper=paper,
            score=latest.score if latest else None,
            is_lead=False,
            appearances=list({e.daily_id: e.daily for e in paper.published_entries}.values()),
        )


class TrackWeeksFeed(TrackFeed):
    """``/<lang>/feeds/<track>/weeks.atom``: one item per week of the track with a published
    daily (the ``weekly.FEED_WEEKS`` weeks up to its newest), newest first: the roundup's
    intro once an editor has published it, the week's dailies and the editors' picks."""

    kind = "weeks"

    def items(self, track: Track) -> list:
        if not hasattr(self, "_items"):
            self._items = weekly.recent_weeks(track)
            # Each week's roundup intro; its dailies and papers are the default tags'.
            for week in self._items:
                page_cache.tag(self.request, *invalidation.week(track.slug, week.monday))
        return self._items

    def stamps(self, track: Track) -> list[tuple[str, dt.datetime]]:
        return [(week.label, week.updated_at) for week in self.items(track)]

    def title(self, track: Track) -> str:
        return feed_title(
            gettext("%(track_name)s: weekly roundups") % {"track_name": track.name(self.lang)}
        )

    def item_title(self, week: weekly.Week) -> str:
        return gettext("%(track_name)s — week %(week)s") % {
            "track_name": week.track.name(self.lang),
            "week": week.label,
        }

    def item_link(self, week: weekly.Week) -> str:
        return self.absolute(reverse("dailies:week", args=[week.track.slug, week.monday]))

    def item_guid(self, week: weekly.Week) -> str:
        return self.tag("week", week.track.slug, week.label, self.lang)

    def item_pubdate(self, week: weekly.Week) -> dt.datetime:
        return week.published_at

    def item_updateddate(self, week: weekly.Week) -> dt.datetime:
        return week.updated_at

    def item_description(self, week: weekly.Week) -> str:
        roundup = week.intro_roundup
        intro = localized(roundup, "intro", self.lang) if roundup else ""
        return self.render(
            "dailies/feeds/week.html",
            week=week,
            intro=intro,
            machine_intro=bool(intro)
            and roundup.intro_provenance(intro.language) == Summary.Provenance.MACHINE,
        )
