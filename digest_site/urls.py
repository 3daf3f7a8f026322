from django.conf.urls.i18n import i18n_patterns
from django.contrib import admin
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView
from rest_framework.negotiation import DefaultContentNegotiation

from digest_site import health, sitemaps


class FormatParameterOnly(DefaultContentNegotiation):
    """The schema in the format ``?format=`` names, YAML without it, whatever Accept says:
    the page cache keys a page by its URL, so the URL alone must decide its format."""

    def select_renderer(self, request, renderers, format_suffix=None):
        if format_suffix or request.query_params.get(self.settings.URL_FORMAT_OVERRIDE):
            return super().select_renderer(request, renderers, format_suffix)
        return renderers[0], renderers[0].media_type


urlpatterns = [
    path("admin/", admin.site.urls),
    path("healthz", health.healthz, name="healthz"),
    path("readyz", health.readyz, name="readyz"),
    path("robots.txt", sitemaps.robots_txt, name="robots"),
    path("sitemap.xml", sitemaps.sitemap, name="sitemap"),
    path("sitemap-<slug:section>.xml", sitemaps.sitemap_section, name="sitemap_section"),
    # The MCP server for agents (streamable HTTP; agents/views.py).
    path("", include("agents.urls")),
    path("api/v1/", include("search.api")),
    path("api/v1/", include("dailies.api")),
    path(
        "api/v1/schema/",
        SpectacularAPIView.as_view(content_negotiation_class=FormatParameterOnly),
        name="api-schema",
    ),
]
# Under /api/ errors are JSON, elsewhere the site's pages.
handler404 = "digest_site.errors.page_not_found"
handler500 = "digest_site.errors.server_error"
# "/" has no page of its own: LocaleMiddleware redirects it by the browser's language.
urlpatterns += i18n_patterns(
    # Before dailies: its /<lang>/<track>/ would otherwise take /<lang>/subscribe/.
    path("", include("subscriptions.urls")),
    path("", include("deepdives.urls")),
    # Before dailies too: /<lang>/papers/, /<lang>/topics/ and /<lang>/feeds/search.atom
    # would otherwise be taken for a track's pages and feeds.
    path("", include("search.urls")),
    # Before dailies too: /<lang>/labs/, /<lang>/authors/, /<lang>/follow/.
    path("", include("follow.urls")),
    path("", include("dailies.urls")),
    prefix_default_language=True,
)
