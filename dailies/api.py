"""The read-only JSON API: the dailies, papers and topics of ``dailies.public_api`` (with the
docs page), routed below; ``GET /api/v1/search`` is the search app's (``search.api``).

Included by ``digest_site/urls.py`` under ``api/v1/``.
"""

from __future__ import annotations

from django.urls import path, re_path

from dailies.public_api import docs
from dailies.public_api.views import DailyViewSet, PaperViewSet, TopicViewSet

_list, _detail = {"get": "list"}, {"get": "retrieve"}

app_name = "api"
urlpatterns = [
    path("dailies/", DailyViewSet.as_view(_list), name="daily-list"),
    re_path(
        r"^dailies/(?P<track>[-a-zA-Z0-9_]+)/(?P<date>[0-9]{4}-[0-9]{2}-[0-9]{2})/$",
        DailyViewSet.as_view(_detail),
        name="daily-detail",
    ),
    path("papers/", PaperViewSet.as_view(_list), name="paper-list"),
    path("papers/<slug:slug>/", PaperViewSet.as_view(_detail), name="paper-detail"),
    path("topics/", TopicViewSet.as_view(_list), name="topic-list"),
    path("docs/", docs.api_docs, name="docs"),
]
