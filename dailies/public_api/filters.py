"""The filtersets of the read API. Parameter names follow the search endpoint:
``track``, ``topic``, ``from`` and ``to`` (YYYY-MM-DD). Anything malformed is a 400 with
the reason, never silently ignored."""

from __future__ import annotations

from django import forms
from django.db.models import Exists, OuterRef, QuerySet
from django_filters import rest_framework as filters
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field

from dailies.extensions import paper_filter
from dailies.models import Daily, DailyEntry
from digest_site.visibility import PUBLIC
from papers.models import Paper, Topic, Track


class StrictBooleanField(forms.NullBooleanField):
    """``true``/``false`` (or 1/0); any other value is an error rather than "no filter"."""

    def to_python(self, value):
        if value in (None, ""):
            return None
        if value in (True, "true", "True", "1"):
            return True
        if value in (False, "false", "False", "0"):
            return False
        raise forms.ValidationError("Enter true or false.", code="invalid")

    def validate(self, value) -> None:
        pass


class StrictBooleanFilter(filters.BooleanFilter):
    field_class = StrictBooleanField

    def __init__(self, *args, **kwargs) -> None:
        # A plain input hands the field the raw text (django-filter's BooleanWidget would
        # turn "maybe" into "no filter" before the field sees it).
        kwargs.setdefault("widget", forms.TextInput)
        super().__init__(*args, **kwargs)


class DateRangeForm(forms.Form):
    def clean(self):
        data = super().clean()
        start, end = data.get("from"), data.get("to")
        if start and end and start > end:
            self.add_error("to", "The end of the range is before its start (from).")
        return data


def _track_filter(field_name: str, method: str | None = None) -> filters.ModelChoiceFilter:
    return filters.ModelChoiceFilter(
        field_name=field_name,
        queryset=Track.objects.all(),
        to_field_name="slug",
        method=method,
        help_text="A track slug, e.g. infra.",
    )


def _date_filter(field_name: str, lookup: str, help_text: str, method: str | None = None):
    return filters.DateFilter(
        field_name=field_name, lookup_expr=lookup, method=method, help_text=help_text
    )


class DailyFilter(filters.FilterSet):
    track = _track_filter("track")

    class Meta:
        model = Daily
        fields = ["track"]
        form = DateRangeForm


# "from" is a Python keyword, so the two ends of the range are added by name.
DailyFilter.base_filters["from"] = _date_filter("date", "gte", "On or after this day.")
DailyFilter.base_filters["to"] = _date_filter("date", "lte", "On or before this day.")


class PaperFilter(filters.FilterSet):
    """``track``, ``from`` and ``to`` narrow by one appearance: a paper that was in an Infra
    daily in March and another track's daily in May is not "in Infra in May"."""

    topic = filters.ModelChoiceFilter(
        field_name="topics",
        queryset=Topic.objects.all(),
        to_field_name="slug",
        help_text="A topic slug, e.g. kv-cache.",
    )
    track = _track_filter("track", method="_by_track")
    has_deep_dive = StrictBooleanFilter(
        method="_by_feature", help_text="Only papers with (true) or without (false) a deep dive."
    )
    has_verified_code = StrictBooleanFilter(
        method="_by_feature",
        help_text="Only papers with (true) or without (false) reference code whose last run "
        "passed and whose code has not changed since.",
    )

    class Meta:
        model = Paper
        fields = ["topic", "track", "has_deep_dive", "has_verified_code"]
        form = DateRangeForm

    def _by_appearance(self, queryset: QuerySet, name: str, value) -> QuerySet:
        return queryset  # applied together in filter_queryset

    @extend_schema_field(OpenApiTypes.STR)
    def _by_track(self, queryset: QuerySet, name: str, value) -> QuerySet:
        return queryset  # applied together with the dates in filter_queryset

    def _by_feature(self, queryset: QuerySet, name: str, value: bool) -> QuerySet:
        # django-filter calls this only with a value (true or false).
        condition = paper_filter(name)
        return queryset.filter(condition) if value else queryset.exclude(condition)

    def filter_queryset(self, queryset: QuerySet) -> QuerySet:
        queryset = super().filter_queryset(queryset)
        data = self.form.cleaned_data
        track, start, end = data.get("track"), data.get("from"), data.get("to")
        if not (track or start or end):
            return queryset
        entries = DailyEntry.objects.visible_to(PUBLIC).filter(paper=OuterRef("pk"))
        if track:
            entries = entries.filter(daily__track=track)
        if start:
            entries = entries.filter(daily__date__gte=start)
        if end:
            entries = entries.filter(daily__date__lte=end)
        return queryset.filter(Exists(entries))


_appeared = "Appeared in a published daily {} this day."
PaperFilter.base_filters["from"] = _date_filter(
    "from", "gte", _appeared.format("on or after"), method="_by_appearance"
)
PaperFilter.base_filters["to"] = _date_filter(
    "to", "lte", _appeared.format("on or before"), method="_by_appearance"
)
