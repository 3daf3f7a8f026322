"""Read-only viewsets of the public API. Each list has its own prefetching queryset, built
on the one definition of "published", so its cost is a fixed number of queries. The API
reads as the public does (``PUBLIC``), whoever asks: it never previews."""

from __future__ import annotations

from django.db.models import Count, Max, Min, Prefetch, QuerySet
from django.http import Http404
from django_filters.rest_framework import DjangoFilterBackend
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_view
from rest_framework import mixins, viewsets

from dailies import selectors
from dailies.models import Daily, DailyEntry
from dailies.public_api import serializers
from dailies.public_api.common import (
    ERROR_RESPONSES,
    LANG_PARAMETER,
    Cursor,
    LanguageMixin,
)
from dailies.public_api.filters import DailyFilter, PaperFilter
from digest_site.visibility import PUBLIC
from papers.models import Paper


def _schema(summary: str, serializer, *, errors=(400, 404, 429), parameters=()) -> dict:
    return extend_schema(
        summary=summary,
        parameters=[LANG_PARAMETER, *parameters],
        responses={200: serializer, **{code: ERROR_RESPONSES[code] for code in errors}},
    )


class DailyCursor(Cursor):
    ordering = ("-date", "track_id")


class PaperCursor(Cursor):
    # The cross-day index's order: the latest appearance first, then its place in that daily.
    ordering = ("-last_appeared", "last_position", "pk")


class TopicCursor(Cursor):
    # The topic page's order: the most papers first.
    ordering = ("-n", "name_en", "pk")


def published_dailies() -> QuerySet[Daily]:
    """Published dailies with their stats and lead entry (3 queries a page)."""
    leads = (
        DailyEntry.objects.filter(is_lead=True)
        .select_related("paper")
        .prefetch_related("paper__summaries")
    )
    return (
        Daily.objects.visible_to(PUBLIC)
        .select_related("track")
        .annotate(selected=Count("entries"), low=Min("entries__score"), high=Max("entries__score"))
        .prefetch_related(Prefetch("entries", queryset=leads, to_attr="lead_entries"))
    )


_TRACK = OpenApiParameter("track", str, OpenApiParameter.PATH, description="A track slug.")
_DATE = OpenApiParameter(
    "date", OpenApiTypes.DATE, OpenApiParameter.PATH, description="The day, YYYY-MM-DD."
)


@extend_schema_view(
    list=_schema("List published dailies, newest first", serializers.DailySerializer),
    retrieve=_schema(
        "A published daily with its entries",
        serializers.DailyDetailSerializer,
        parameters=[_TRACK, _DATE],
    ),
)
class DailyViewSet(LanguageMixin, viewsets.ReadOnlyModelViewSet):
    cache_tags = ("dailies", "index")
    filter_backends = [DjangoFilterBackend]
    filterset_class = DailyFilter
    pagination_class = DailyCursor
    queryset = Daily.objects.none()  # for the schema; get_queryset is what is read

    def get_queryset(self) -> QuerySet[Daily]:
        return published_dailies()

    def get_serializer_class(self):
        if self.action == "retrieve":
            return serializers.DailyDetailSerializer
        return serializers.DailySerializer

    def get_object(self) -> Daily:
        daily = published_daily(self.kwargs["track"], self.kwargs["date"])
        if daily is None:
            known_day = selectors.parse_date(self.kwargs["date"]) is not None
            raise Http404("No Daily matches the given query." if known_day else "No such day.")
        return daily


def published_daily(track: str, date: str) -> Daily | None:
    """The published daily of ``track`` (a slug) on ``date`` (YYYY-MM-DD) with its entries
    and neighbours, as ``DailyDetailSerializer`` writes it; None when there is none (9
    queries). The agents' ``get_daily`` reads it too."""
    day = selectors.parse_date(date)
    if day is None:
        return None
    daily = (
        Daily.objects.visible_to(PUBLIC)
        .select_related("track")
        .filter(track__slug=track, date=day)
        .first()
    )
    if daily is None:
        return None
    daily.entry_list = selectors.daily_entries(daily)
    daily.lead_entries = [e for e in daily.entry_list if e.is_lead]
    daily.neighbours = selectors.daily_neighbours(daily, user=PUBLIC)
    return daily


def paper_rows() -> QuerySet[Paper]:
    """Published papers in the index's order, with what the index shows (a fixed 7 queries
    a page: the papers, organisations, summaries, topics, deep dives, code, appearances)."""
    return selectors.index_papers()


_SLUG = OpenApiParameter("slug", str, OpenApiParameter.PATH, description="The paper's slug.")


@extend_schema_view(
    list=_schema("List published papers, latest appearance first", serializers.PaperListSerializer),
    retrieve=_schema("A published paper", serializers.PaperDetailSerializer, parameters=[_SLUG]),
)
class PaperViewSet(LanguageMixin, viewsets.ReadOnlyModelViewSet):
    filter_backends = [DjangoFilterBackend]
    filterset_class = PaperFilter
    pagination_class = PaperCursor
    lookup_field = "slug"
    queryset = Paper.objects.none()

    def get_queryset(self) -> QuerySet[Paper]:
        papers = paper_rows()
        if self.action == "retrieve":
            papers = papers.prefetch_related("scores__track")
        return papers

    def filter_queryset(self, queryset: QuerySet[Paper]) -> QuerySet[Paper]:
        # The filters narrow the list; a paper's own URL answers whatever they say.
        return queryset if self.action == "retrieve" else super().filter_queryset(queryset)

    def get_serializer_class(self):
        if self.action == "retrieve":
            return serializers.PaperDetailSerializer
        return serializers.PaperListSerializer


@extend_schema_view(
    list=_schema(
        "List the topics of published papers, most papers first", serializers.TopicSerializer
    ),
)
class TopicViewSet(LanguageMixin, mixins.ListModelMixin, viewsets.GenericViewSet):
    pagination_class = TopicCursor
    serializer_class = serializers.TopicSerializer
    cache_tags = ("topics",)

    def get_queryset(self):
        return selectors.topics_with_papers()
