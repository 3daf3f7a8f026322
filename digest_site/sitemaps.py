"""``/sitemap.xml`` and ``/robots.txt``.

The sections come from the apps (``dailies.sitemaps``, ``deepdives.sitemaps``). While every
URL fits in one file (``I18nSitemap.limit``), ``/sitemap.xml`` is that file; past it, it is
an index of the sections at ``/sitemap-<section>.xml``, each paginated at the same limit.
"""

from __future__ import annotations

from django.contrib.sitemaps import views as sitemap_views
from django.http import Http404, HttpRequest, HttpResponse
from django.urls import reverse
from django.views.decorators.http import require_safe

from dailies import sitemaps as dailies_sitemaps
from dailies.sitemaps import I18nSitemap
from deepdives import sitemaps as deepdives_sitemaps


def sections() -> dict[str, I18nSitemap]:
    return {**dailies_sitemaps.sitemaps(), **deepdives_sitemaps.sitemaps()}


@require_safe
def sitemap(request: HttpRequest) -> HttpResponse:
    """One sitemap while it fits in a file, else the index of the sections."""
    sitemaps = sections()
    if sum(s.size() for s in sitemaps.values()) <= I18nSitemap.limit:
        return sitemap_views.sitemap(request, sitemaps=sitemaps)
    return sitemap_views.index(request, sitemaps=sitemaps, sitemap_url_name="sitemap_section")


@require_safe
def sitemap_section(request: HttpRequest, section: str) -> HttpResponse:
    sitemaps = sections()
    if section not in sitemaps:
        raise Http404("no such sitemap section")
    return sitemap_views.sitemap(request, sitemaps=sitemaps, section=section)


# Crawlers may read every public page and feed; the admin and the JSON API are not pages.
ROBOTS_DISALLOW = ("/admin/", "/api/")


@require_safe
def robots_txt(request: HttpRequest) -> HttpResponse:
    lines = [
        "User-agent: *",
        *(f"Disallow: {path}" for path in ROBOTS_DISALLOW),
        "Allow: /",
        "",
        f"Sitemap: {request.build_absolute_uri(reverse('sitemap'))}",
    ]
    return HttpResponse("\n".join(lines) + "\n", content_type="text/plain; charset=utf-8")
