"""``GET /api/v1/search``: the search of the read-only JSON API.

It calls the same search service as the index page and returns the same ranking; only
published papers are ever returned. Included by ``digest_site/urls.py`` under ``api/v1/``,
beside the dailies, papers and topics of ``dailies.api``, whose serializers it shares.
"""

from __future__ import annotations

from django.core.validators import ProhibitNullCharactersValidator
from django.db.models import Prefetch, QuerySet
from django.urls import path, reverse
from django.utils import translation
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from dailies.models import DailyEntry
from dailies.public_api.common import ERROR_RESPONSES, MAX_PAGE_SIZE, PAGE_SIZE
from dailies.public_api.serializers import SCORE, SummaryOut, summary_out
from dailies.selectors import visible_papers
from digest_site.page_cache import tag
from digest_site.visibility import PUBLIC
from papers.languages import Language
from papers.models import Paper
from search.backends import MAX_RESULTS, Filters, Hit
from search.service import browse, ordered_papers, search
from search.text import normalise_query

DEFAULT_LIMIT = PAGE_SIZE
MAX_LIMIT = MAX_PAGE_SIZE


class QueryTextField(serializers.CharField):
    """Free text that is never rejected: what the search cannot use (control characters
    included) is dropped rather than answered with a 400, and the text is normalised here,
    once, as the index page normalises it."""

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.validators = [
            v for v in self.validators if not isinstance(v, ProhibitNullCharactersValidator)
        ]

    def to_internal_value(self, data) -> str:
        return normalise_query(super().to_internal_value(data))


class SearchQuerySerializer(serializers.Serializer):
    """The query string. ``q`` is free text in either language (cut at 200 characters,
    never rejected); without ``q`` the filters list papers newest first."""

    q = QueryTextField(required=False, allow_blank=True, default="", trim_whitespace=True)
    topic = serializers.SlugField(required=False, help_text="A topic slug, e.g. kv-cache.")
    track = serializers.SlugField(required=False, help_text="A track slug, e.g. infra.")
    lang = serializers.ChoiceField(
        choices=Language.values, default=Language.EN, help_text="The language of the urls."
    )
    limit = serializers.IntegerField(min_value=1, max_value=MAX_LIMIT, default=DEFAULT_LIMIT)
    offset = serializers.IntegerField(min_value=0, max_value=MAX_RESULTS, default=0)

    def get_fields(self):
        # "from" is a Python keyword, so these two are added by name.
        fields = super().get_fields()
        fields["from"] = serializers.DateField(
            required=False, help_text="Appeared in a daily on or after this day (YYYY-MM-DD)."
        )
        fields["to"] = serializers.DateField(
            required=False, help_text="Appeared in a daily on or before this day (YYYY-MM-DD)."
        )
        return fields

    def validate(self, attrs: dict) -> dict:
        # The filters, made once: the service and the backend take them as they are.
        attrs["filters"] = Filters(
            topic=attrs.get("topic"),
            track=attrs.get("track"),
            date_from=attrs.get("from"),
            date_to=attrs.get("to"),
        )
        return attrs


class SearchResultSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    slug = serializers.SlugField()
    title = serializers.CharField()
    score = serializers.FloatField(
        allow_null=True,
        help_text="Deprecated: the same number as relevance, kept for existing clients. "
        "The editorial score is editorial_score.",
    )
    relevance = serializers.FloatField(
        allow_null=True, help_text="How well the paper matches q; null when listing without q."
    )
    editorial_score = serializers.DecimalField(
        **SCORE,
        allow_null=True,
        help_text="The score shown in the latest published daily it appeared in (1.00–5.00).",
    )
    summary = SummaryOut(
        allow_null=True, help_text="Headline, summary and takeaway in lang (else the other)."
    )
    topics = serializers.ListField(child=serializers.SlugField())
    dailies = serializers.ListField(
        child=serializers.DateField(), help_text="Days of the published dailies, newest first."
    )
    url = serializers.URLField()


class SearchResponseSerializer(serializers.Serializer):
    count = serializers.IntegerField(
        help_text=f"Results that can be paged through (at most {MAX_RESULTS})."
    )
    results = SearchResultSerializer(many=True)


def _papers() -> QuerySet[Paper]:
    """Published papers with their topics, summaries and published appearances (4 queries)."""
    entries = DailyEntry.objects.visible_to(PUBLIC).select_related("daily").order_by("-daily__date")
    return visible_papers(PUBLIC).prefetch_related(
        "topics",
        "summaries",
        Prefetch("daily_entries", queryset=entries, to_attr="published_entries"),
    )


class SearchView(APIView):
    """Search the published papers, ranked as on the index page."""

    @extend_schema(
        parameters=[SearchQuerySerializer],
        responses={
            200: SearchResponseSerializer,
            **{code: ERROR_RESPONSES[code] for code in (400, 429)},
        },
        operation_id="search",
        summary="Search published papers",
    )
    def get(self, request: Request) -> Response:
        tag(request, "index")
        params = SearchQuerySerializer(data=request.query_params)
        params.is_valid(raise_exception=True)
        data = params.validated_data
        start, stop = data["offset"], data["offset"] + data["limit"]
        if data["q"]:
            results = search(data["q"], data["filters"], language=data["lang"])
            count, pairs = results.count(), ordered_papers(results[start:stop], _papers())
        else:
            # The index's order (newest appearance first), without its page prefetches.
            listed = browse(data["filters"]).prefetch_related(None)
            count = min(listed.count(), MAX_RESULTS)
            pks = list(listed.values_list("pk", flat=True)[start : min(stop, MAX_RESULTS)])
            pairs = ordered_papers([Hit(pk, 0.0) for pk in pks], _papers())
        with translation.override(data["lang"]):
            rows = [
                self._row(request, paper, hit, scored=bool(data["q"]), lang=data["lang"])
                for paper, hit in pairs
            ]
        return Response(SearchResponseSerializer({"count": count, "results": rows}).data)

    @staticmethod
    def _row(request: Request, paper: Paper, hit: Hit, *, scored: bool, lang: str) -> dict:
        relevance = round(hit.score, 6) if scored else None
        latest = paper.published_entries[0] if paper.published_entries else None
        return {
            "id": paper.pk,
            "slug": paper.slug,
            "title": paper.title,
            "score": relevance,
            "relevance": relevance,
            "editorial_score": latest.score if latest else None,
            "summary": summary_out(paper, lang),
            "topics": [t.slug for t in paper.topics.all()],
            "dailies": list(dict.fromkeys(e.daily.date for e in paper.published_entries)),
            "url": request.build_absolute_uri(reverse("dailies:paper", args=[paper.slug])),
        }


app_name = "search_api"
urlpatterns = [
    path("search", SearchView.as_view(), name="search"),
]
