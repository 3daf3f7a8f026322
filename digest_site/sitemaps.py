"""``/sitemap.xml`` and ``/robots.txt``.

The sections come from the apps, which register them at start (``dailies.sitemaps``,
``deepdives.sitemaps``): the site's ground floor imports no app. While every URL fits in one
file (the sections' ``limit``), ``/sitemap.xml`` is that file; past it, it is an index of the
sections at ``/sitemap-<section>.xml``, each paginated at the same limit.
"""

from __future__ import annotations

from collections.abc import Callable
from xml.sax.saxutils import escape, quoteattr

from django.contrib.sitemaps import Sitemap
from django.contrib.sitemaps import views as sitemap_views
from django.http import Http404, HttpRequest, HttpResponse
from django.urls import reverse
from django.views.decorators.http import require_safe

from digest_site.page_cache import tag

# What the sitemaps list: dailies, papers (and their labs and authors: ``index``), topics,
# tracks, deep dives and programs.
SITEMAP_TAGS = ("dailies", "index", "topics", "tracks", "deepdives", "programs")


# Each returns an app's sections by name; each section also says how many URLs it lists
# (``size()``).
SectionsFactory = Callable[[], dict[str, Sitemap]]
_section_factories: list[SectionsFactory] = []


def register_sections(factory: SectionsFactory) -> None:
    """An app's sitemap sections, listed after those of the apps registered before it."""
    if factory not in _section_factories:
        _section_factories.append(factory)


def sections() -> dict[str, Sitemap]:
    return {name: s for factory in _section_factories for name, s in factory().items()}


@require_safe
def sitemap(request: HttpRequest) -> HttpResponse:
    """One sitemap while it fits in a file, else the index of the sections."""
    tag(request, *SITEMAP_TAGS)
    sitemaps = sections()
    limit = min((s.limit for s in sitemaps.values()), default=Sitemap.limit)
    if sum(s.size() for s in sitemaps.values()) <= limit:
        return _urlset(sitemap_views.sitemap(request, sitemaps=sitemaps))
    return sitemap_views.index(request, sitemaps=sitemaps, sitemap_url_name="sitemap_section")


@require_safe
def sitemap_section(request: HttpRequest, section: str) -> HttpResponse:
    tag(request, *SITEMAP_TAGS)
    sitemaps = sections()
    if section not in sitemaps:
        raise Http404("no such sitemap section")
    return _urlset(sitemap_views.sitemap(request, sitemaps=sitemaps, section=section))


def _urlset(response) -> HttpResponse:
    """The framework's sitemap response (paging, 404s, headers), written without its
    template: the template costs ~0.4 ms a URL, too slow for 50,000 of them."""
    parts = [
        '<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="http://www.sitemaps.org/'
        'schemas/sitemap/0.9" xmlns:xhtml="http://www.w3.org/1999/xhtml">\n'
    ]
    for url in response.context_data["urlset"]:
        parts.append(f"<url><loc>{escape(url['location'])}</loc>")
        if url["lastmod"]:
            parts.append(f"<lastmod>{url['lastmod']:%Y-%m-%d}</lastmod>")
        for alternate in url["alternates"]:
            parts.append(
                f'<xhtml:link rel="alternate" hreflang={quoteattr(alternate["lang_code"])}'
                f" href={quoteattr(alternate['location'])}/>"
            )
        parts.append("</url>\n")
    parts.append("</urlset>\n")
    written = HttpResponse("".join(parts), content_type=response["Content-Type"])
    for header in ("Last-Modified", "X-Robots-Tag"):
        if response.has_header(header):
            written[header] = response[header]
    return written


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
