"""Sitemap sections of deep dives and reference code (composed in digest_site.sitemaps)."""

from __future__ import annotations

from django.db.models import F, Max, QuerySet

from dailies.sitemaps import I18nSitemap, PagesSitemap, fast_reverse
from deepdives.models import DeepDive, ReferenceCode
from deepdives.registry import PROGRAMS
from digest_site.visibility import PUBLIC


def _published_code() -> QuerySet[ReferenceCode]:
    # Only registered programs have a page (deepdives.views._visible_code).
    return ReferenceCode.objects.visible_to(PUBLIC).filter(slug__in=list(PROGRAMS))


class DeepDiveSitemap(I18nSitemap):
    def items(self) -> QuerySet[DeepDive]:
        return (
            DeepDive.objects.visible_to(PUBLIC)
            .only("pk", "slug", "updated_at")
            .annotate(lastmod=F("updated_at"))
            .order_by("slug")
        )

    def location(self, deep_dive: DeepDive) -> str:
        return fast_reverse("deepdives:detail", deep_dive.slug)


class CodeSitemap(I18nSitemap):
    def items(self) -> QuerySet[ReferenceCode]:
        return (
            _published_code()
            .only("pk", "slug", "last_run_at")
            .annotate(lastmod=F("last_run_at"))
            .order_by("slug")
        )

    def location(self, code: ReferenceCode) -> str:
        return fast_reverse("deepdives:code", code.slug)


def sitemaps() -> dict[str, I18nSitemap]:
    return {
        "code-pages": PagesSitemap(
            {
                "deepdives:code_index": lambda: _published_code().aggregate(at=Max("last_run_at"))[
                    "at"
                ]
            }
        ),
        "deep-dives": DeepDiveSitemap(),
        "code": CodeSitemap(),
    }
