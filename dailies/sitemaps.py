"""Sitemap sections of the dailies: the fixed pages, dailies, track archives, papers and
topics, each URL in both languages with ``hreflang`` alternates and an ``x-default``.

Only what readers can see is listed (``visible_to(PUBLIC)``, the one definition of
"published", whoever asks); ``lastmod``
is when the content last changed (the same times the feeds use).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from functools import lru_cache

from django.contrib.sitemaps import Sitemap
from django.db.models import Max, QuerySet
from django.urls import reverse
from django.utils import translation

from dailies.feeds import daily_content_updated, paper_content_updated
from dailies.models import Daily, published_q
from dailies.selectors import visible_papers
from digest_site.visibility import PUBLIC
from papers.models import Paper, Topic, Track


@lru_cache(maxsize=256)
def _route(name: str, language: str, kinds: tuple[str, ...]) -> tuple[str, tuple[str, ...]]:
    # Stand-ins each converter accepts and no real value is: year 1 is no daily's date.
    slots = tuple(
        f"0001-01-{i + 1:02d}" if kind == "date" else f"zz-slot-{i}-zz"
        for i, kind in enumerate(kinds)
    )
    with translation.override(language):
        return reverse(name, args=slots), slots


def fast_reverse(name: str, *args: str | dt.date) -> str:
    """``reverse(name, args=args)`` in the active language for slugs and dates, by filling in
    a route reversed once: a sitemap builds four URLs per item (its own and three
    alternates) and ``reverse()`` costs ~85 µs each, most of a large sitemap's time."""
    kinds = tuple("date" if isinstance(a, dt.date) else "slug" for a in args)
    path, slots = _route(name, translation.get_language(), kinds)
    for slot, arg in zip(slots, args, strict=True):
        path = path.replace(slot, arg.isoformat() if isinstance(arg, dt.date) else arg, 1)
    return path


class I18nSitemap(Sitemap):
    """A section listing each item once per language, with alternates and x-default."""

    # URLs per file: the framework's default (the protocol's 50,000). Past it, /sitemap.xml
    # becomes an index of paginated sections (digest_site.sitemaps).
    limit = Sitemap.limit
    i18n = True
    alternates = True
    x_default = True

    def size(self) -> int:
        """How many URLs the section lists (a COUNT query for querysets)."""
        items = self.items()
        count = items.count() if isinstance(items, QuerySet) else len(items)
        return count * len(self._languages())

    def lastmod(self, item) -> dt.datetime | None:
        return item.lastmod

    def get_latest_lastmod(self) -> dt.datetime | None:
        items = self.items()
        if isinstance(items, QuerySet):
            return items.order_by("-lastmod").values_list("lastmod", flat=True).first()
        return super().get_latest_lastmod()


def latest_daily_change() -> dt.datetime | None:
    """When a published daily last changed (one query): the fixed pages list them."""
    return Daily.objects.visible_to(PUBLIC).aggregate(at=Max("updated_at"))["at"]


class PagesSitemap(I18nSitemap):
    """Fixed pages, each with a function that says when its content last changed."""

    def __init__(self, pages: dict[str, Callable[[], dt.datetime | None]]) -> None:
        self.pages = pages

    def items(self) -> list[str]:
        return list(self.pages)

    def location(self, name: str) -> str:
        return fast_reverse(name)

    def lastmod(self, name: str) -> dt.datetime | None:
        return self.pages[name]()


def pages_sitemap() -> PagesSitemap:
    return PagesSitemap(
        {
            "dailies:home": latest_daily_change,
            "search:paper_index": latest_daily_change,
            "search:topic_index": latest_daily_change,
            "follow:builder": latest_daily_change,
        }
    )


class DailySitemap(I18nSitemap):
    def items(self) -> QuerySet[Daily]:
        return (
            Daily.objects.visible_to(PUBLIC)
            .select_related("track")
            .only("pk", "date", "track__slug", "updated_at")
            .annotate(lastmod=daily_content_updated())
            .order_by("-date", "track__position", "pk")
        )

    def location(self, daily: Daily) -> str:
        return fast_reverse("dailies:daily", daily.track.slug, daily.date)


class TrackSitemap(I18nSitemap):
    def items(self) -> QuerySet[Track]:
        return (
            Track.objects.filter(is_active=True)
            .annotate(lastmod=Max("dailies__updated_at", filter=published_q("dailies__")))
            .filter(lastmod__isnull=False)
            .order_by("position", "slug")
        )

    def location(self, track: Track) -> str:
        return fast_reverse("dailies:track", track.slug)


class PaperSitemap(I18nSitemap):
    def items(self) -> QuerySet[Paper]:
        return (
            visible_papers(PUBLIC)
            .only("pk", "slug", "updated_at")
            .annotate(lastmod=paper_content_updated())
            .order_by("pk")
        )

    def location(self, paper: Paper) -> str:
        return fast_reverse("dailies:paper", paper.slug)


class TopicSitemap(I18nSitemap):
    def items(self) -> QuerySet[Topic]:
        published = published_q("papers__daily_entries__daily__")
        return (
            Topic.objects.annotate(
                lastmod=Max("papers__daily_entries__daily__published_at", filter=published)
            )
            .filter(lastmod__isnull=False)
            .order_by("slug")
        )

    def location(self, topic: Topic) -> str:
        return fast_reverse("search:topic", topic.slug)


def sitemaps() -> dict[str, I18nSitemap]:
    return {
        "pages": pages_sitemap(),
        "dailies": DailySitemap(),
        "tracks": TrackSitemap(),
        "papers": PaperSitemap(),
        "topics": TopicSitemap(),
    }
