from django.conf.urls.i18n import i18n_patterns
from django.contrib import admin
from django.http import HttpRequest, HttpResponse
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView


def healthz(request: HttpRequest) -> HttpResponse:
    return HttpResponse("ok", content_type="text/plain")


urlpatterns = [
    path("admin/", admin.site.urls),
    path("healthz", healthz, name="healthz"),
    path("api/v1/", include("dailies.api")),
    path("api/v1/schema/", SpectacularAPIView.as_view(), name="api-schema"),
]
# "/" has no page of its own: LocaleMiddleware redirects it by the browser's language.
urlpatterns += i18n_patterns(
    path("", include("deepdives.urls")),
    path("", include("dailies.urls")),
    prefix_default_language=True,
)
