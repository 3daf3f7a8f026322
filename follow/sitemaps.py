"""Sitemap sections of the pages to follow: each lab and author with published papers, in
both languages, ``lastmod`` when a daily with one of their papers was last published."""

from __future__ import annotations

from django.db.models import Max, QuerySet

from dailies.models import published_q
from dailies.sitemaps import I18nSitemap, fast_reverse
from papers.models import Author, Organization


class LabSitemap(I18nSitemap):
    def items(self) -> QuerySet[Organization]:
        published = published_q("papers__daily_entries__daily__")
        return (
            Organization.objects.annotate(
                lastmod=Max("papers__daily_entries__daily__published_at", filter=published)
            )
            .filter(lastmod__isnull=False)
            .only("pk", "slug")
            .order_by("slug")
        )

    def location(self, lab: Organization) -> str:
        return fast_reverse("follow:lab", lab.slug)


class AuthorSitemap(I18nSitemap):
    def items(self) -> QuerySet[Author]:
        published = published_q("paper_links__paper__daily_entries__daily__")
        return (
            Author.objects.filter(merged_into__isnull=True)
            .annotate(
                lastmod=Max(
                    "paper_links__paper__daily_entries__daily__published_at", filter=published
                )
            )
            .filter(lastmod__isnull=False)
            .only("pk", "slug")
            .order_by("slug")
        )

    def location(self, author: Author) -> str:
        return fast_reverse("follow:author", author.slug)


def sitemaps() -> dict[str, I18nSitemap]:
    return {"labs": LabSitemap(), "authors": AuthorSitemap()}
