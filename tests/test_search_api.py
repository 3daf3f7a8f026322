"""GET /api/v1/search: the page's ranking as JSON, read-only, published papers only."""

from __future__ import annotations

import re
from urllib.parse import quote

import pytest
import yaml

from tests.test_search_text import HOSTILE


def _json(client, query: str, status: int = 200) -> dict:
    response = client.get(f"/api/v1/search?{query}")
    assert response.status_code == status, response.content
    return response.json()


def test_it_returns_ranked_results_in_the_documented_shape(indexed_demo, anonymous):
    data = _json(anonymous, "q=" + quote("KV 缓存") + "&lang=zh&limit=3")
    assert data["count"] == 7
    first = data["results"][0]
    assert set(first) == {
        *("id", "slug", "title", "score", "topics", "dailies", "url"),
        *("relevance", "editorial_score", "summary"),
    }
    assert first["slug"] == "wakman"
    assert first["topics"] == ["cache-eviction", "kv-cache", "llm-serving"]
    assert first["dailies"] == ["2026-10-29"]
    assert first["url"] == "http://testserver/zh/papers/wakman/"
    scores = [r["score"] for r in data["results"]]
    assert scores == sorted(scores, reverse=True) and all(s > 0 for s in scores)


def test_it_ranks_as_the_page_does(indexed_demo, anonymous):
    html = anonymous.get("/en/papers/?q=compression").content.decode()
    page = re.findall(r'<li id="([^"]+)">', html)
    api = [r["slug"] for r in _json(anonymous, "q=compression&limit=100")["results"]]
    assert api == page and len(api) == 5


def test_it_pages_with_limit_and_offset(indexed_demo, anonymous):
    everything = [r["slug"] for r in _json(anonymous, "q=cache&limit=100")["results"]]
    second = _json(anonymous, "q=cache&limit=2&offset=2")
    assert [r["slug"] for r in second["results"]] == everything[2:4]
    assert second["count"] == len(everything)


def test_it_filters_with_and_without_a_query(indexed_demo, anonymous):
    data = _json(anonymous, "q=cache&topic=storage")
    assert {r["slug"] for r in data["results"]} == {"kvstream", "volcano-engine-eic"}
    listed = _json(anonymous, "topic=vector-search")
    assert [r["slug"] for r in listed["results"]] == ["coloc", "trustann"]
    assert all(r["score"] is None for r in listed["results"])
    dated = _json(anonymous, "track=infra&from=2026-10-27&to=2026-10-27")
    assert [r["slug"] for r in dated["results"]] == ["rounding-location-alignment", "c2kv"]


def test_it_rejects_malformed_parameters_with_400(indexed_demo, anonymous):
    errors = _json(anonymous, "q=cache&lang=fr&from=yesterday&limit=0", status=400)
    assert set(errors) == {"lang", "from", "limit"}


@pytest.mark.parametrize("query", HOSTILE, ids=range(len(HOSTILE)))
def test_it_answers_hostile_queries(indexed_demo, anonymous, query):
    data = _json(anonymous, f"q={quote(query)}")
    assert data["count"] == len(data["results"]) or data["count"] > len(data["results"])


def test_a_query_with_nothing_searchable_lists_papers_as_the_index_page_does(
    indexed_demo, anonymous
):
    # q is normalised once, as the page normalises it: control characters are separators.
    junk = _json(anonymous, "q=" + quote("\x01 \x02") + "&topic=storage")
    assert junk == _json(anonymous, "topic=storage") and junk["count"] > 0
    assert all(r["relevance"] is None for r in junk["results"])


def test_it_is_read_only(indexed_demo, anonymous):
    assert anonymous.post("/api/v1/search?q=cache").status_code == 405
    assert anonymous.delete("/api/v1/search").status_code == 405


def test_it_publishes_an_openapi_schema(anonymous):
    response = anonymous.get("/api/v1/schema/")
    assert response.status_code == 200
    schema = yaml.safe_load(response.content)
    operation = schema["paths"]["/api/v1/search"]["get"]
    assert {p["name"] for p in operation["parameters"]} >= {
        "q",
        "topic",
        "track",
        "lang",
        "from",
        "to",
    }
    result = schema["components"]["schemas"]["SearchResult"]["properties"]
    assert set(result) == {
        *("id", "slug", "title", "score", "topics", "dailies", "url"),
        *("relevance", "editorial_score", "summary"),
    }
