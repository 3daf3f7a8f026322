"""One filters object from the request to the backend: the index page, the API and the search
feed each parse the request once into a frozen ``Filters``, and the service hands that very
object to the backend (and to the unranked listing) without unpacking or rebuilding it."""

from __future__ import annotations

import datetime as dt

import pytest

from search import api, backends, feeds, service, views
from search.backends import Filters
from search.page import SearchParams

PARSED = Filters(topic="storage", track="infra", date_from=dt.date(2026, 10, 26))
QUERY = "q=cache&topic=storage&track=infra&from=2026-10-26"


class SpyBackend:
    """The backend in use, recording the filters of every match it counts or ranks."""

    def __init__(self, backend: backends.Backend) -> None:
        self.backend = backend
        self.filters: list[Filters] = []

    def count(self, match, *, limit):
        self.filters.append(match.filters)
        return self.backend.count(match, limit=limit)

    def ranked(self, match, *, offset, limit):
        self.filters.append(match.filters)
        return self.backend.ranked(match, offset=offset, limit=limit)

    def __getattr__(self, name):
        return getattr(self.backend, name)


@pytest.fixture
def spy(monkeypatch, settings) -> SpyBackend:
    settings.PAGE_CACHE_ENABLED = False
    spy = SpyBackend(backends.current())
    monkeypatch.setattr(backends, "current", lambda: spy)
    return spy


def _recording(monkeypatch, owner, name: str, pick) -> list:
    """Wrap ``owner.name`` so that what ``pick(result, *args)`` picks of each call is kept."""
    seen = []
    original = getattr(owner, name)

    def wrapper(*args, **kwargs):
        result = original(*args, **kwargs)
        seen.append(pick(result, *args))
        return result

    monkeypatch.setattr(owner, name, wrapper)
    return seen


def test_the_index_page_hands_its_parsed_filters_to_the_backend(
    indexed_demo, anonymous, spy, monkeypatch
):
    parsed = []
    original = SearchParams.from_query.__func__

    def from_query(cls, data):
        parsed.append(original(cls, data))
        return parsed[-1]

    monkeypatch.setattr(SearchParams, "from_query", classmethod(from_query))
    assert anonymous.get(f"/en/papers/?{QUERY}").status_code == 200
    assert [p.filters for p in parsed] == [PARSED]
    assert spy.filters and all(f is parsed[0].filters for f in spy.filters)


def test_the_index_page_lists_with_the_same_filters_without_a_query(
    indexed_demo, anonymous, monkeypatch, settings
):
    settings.PAGE_CACHE_ENABLED = False
    listed = _recording(monkeypatch, views, "browse", lambda result, filters: filters)
    assert anonymous.get("/en/papers/?topic=storage&track=infra&from=2026-10-26").status_code == 200
    assert listed == [PARSED]


def test_the_api_hands_its_validated_filters_to_the_backend(
    indexed_demo, anonymous, spy, monkeypatch
):
    validated = _recording(
        monkeypatch, api.SearchQuerySerializer, "validate", lambda attrs, *_: attrs["filters"]
    )
    assert anonymous.get(f"/api/v1/search?{QUERY}").status_code == 200
    assert validated == [PARSED]
    assert spy.filters and all(f is validated[0] for f in spy.filters)


def test_the_api_lists_with_its_validated_filters_without_a_query(
    indexed_demo, anonymous, monkeypatch
):
    validated = _recording(
        monkeypatch, api.SearchQuerySerializer, "validate", lambda attrs, *_: attrs["filters"]
    )
    listed = _recording(monkeypatch, api, "browse", lambda result, filters: filters)
    assert (
        anonymous.get("/api/v1/search?topic=storage&track=infra&from=2026-10-26").status_code == 200
    )
    assert len(listed) == 1 and listed[0] is validated[0]


def test_the_search_feed_hands_its_parsed_filters_to_the_backend(
    indexed_demo, anonymous, spy, monkeypatch
):
    cleaned = _recording(
        monkeypatch, feeds.SearchFeedQuery, "clean", lambda data, *_: data["filters"]
    )
    assert anonymous.get(f"/en/feeds/search.atom?{QUERY}").status_code == 200
    assert cleaned == [PARSED]
    assert spy.filters and all(f is cleaned[0] for f in spy.filters)


def test_the_service_takes_the_filters_as_they_are(indexed_demo, spy):
    results = service.search("cache", PARSED)
    assert results[:10]
    assert results.filters is PARSED
    assert spy.filters and all(f is PARSED for f in spy.filters)
