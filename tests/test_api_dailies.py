"""GET /api/v1/dailies/ and /api/v1/dailies/<track>/<date>/: published dailies only, every
field the daily page shows, JSON errors, a cursor, a throttle and a fixed query count."""

from __future__ import annotations

import datetime as dt

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from dailies.models import Daily
from dailies.public_api.common import MAX_PAGE_SIZE
from tests.factories import make_daily, make_paper, make_track

pytestmark = pytest.mark.django_db

DAY = dt.date(2026, 10, 28)


def _get(client, url: str, status: int = 200) -> dict:
    response = client.get(url)
    assert response.status_code == status, response.content
    assert response["Content-Type"].startswith("application/json")
    return response.json()


def _dates(data: dict) -> list[str]:
    return [d["date"] for d in data["results"]]


def test_it_lists_published_dailies_newest_first_with_what_the_pages_show(anonymous):
    hilo = make_paper("hilo", orgs=("Microsoft",))
    make_daily(date=DAY, papers=[hilo, make_paper()], scores=["4.50", "3.80"], candidates=40)
    make_daily(date=DAY + dt.timedelta(days=1))
    data = _get(anonymous, "/api/v1/dailies/")
    assert _dates(data) == ["2026-10-29", "2026-10-28"]
    daily = data["results"][1]
    assert daily["title"] == "Infra — Paper Daily, 2026-10-28"
    assert daily["track"] == {"slug": "infra", "name": "Infra"}
    assert daily["intro"] == {
        "language": "en",
        "not_yet_translated": False,
        "note": None,
        "text": "Today's intro.",
        "provenance": "editor",
    }
    assert daily["stats"] == {"candidates": 40, "selected": 2, "score_low": 3.8, "score_high": 4.5}
    assert daily["lead"]["slug"] == "hilo"
    assert daily["lead"]["heading"] == "Hilo: hilo headline"
    assert daily["url"] == "http://testserver/en/infra/2026-10-28/"
    assert daily["api_url"] == "http://testserver/api/v1/dailies/infra/2026-10-28/?lang=en"


def test_it_shows_a_daily_with_its_entries_in_order_and_its_neighbours(anonymous):
    first, second = make_paper("first", orgs=("NVIDIA",)), make_paper("second")
    make_daily(date=DAY - dt.timedelta(days=1))
    make_daily(date=DAY, papers=[first, second], scores=["4.20", "3.90"])
    make_daily(date=DAY + dt.timedelta(days=1), status=Daily.Status.DRAFT)
    data = _get(anonymous, "/api/v1/dailies/infra/2026-10-28/")
    assert [(e["position"], e["is_lead"], e["score"]) for e in data["entries"]] == [
        (1, True, 4.2),
        (2, False, 3.9),
    ]
    paper = data["entries"][0]["paper"]
    assert paper["slug"] == "first"
    assert [(o["slug"], o["label"]) for o in paper["organizations"]] == [("nvidia", "NVIDIA")]
    assert paper["summary"]["takeaway"] == "Takeaway sentence here."
    assert paper["api_url"] == "http://testserver/api/v1/papers/first/?lang=en"
    assert data["lead"]["slug"] == "first"
    assert data["stats"]["selected"] == 2
    assert data["previous"]["date"] == "2026-10-27"
    assert data["next"] is None  # the draft of the 29th is nobody's next daily


def test_it_writes_the_daily_in_chinese_and_marks_a_missing_intro(anonymous):
    make_daily(date=DAY, intro_zh="")
    data = _get(anonymous, "/api/v1/dailies/infra/2026-10-28/?lang=zh")
    assert data["title"] == "infra赛道 — 论文日报，2026-10-28"
    assert data["intro"]["language"] == "en"
    assert data["intro"]["not_yet_translated"] is True
    assert data["intro"]["note"]  # the pages' "not yet translated" note
    assert data["url"] == "http://testserver/zh/infra/2026-10-28/"
    assert data["entries"][0]["paper"]["summary"]["language"] == "zh"


@pytest.mark.parametrize("status", [Daily.Status.DRAFT, Daily.Status.SCHEDULED])
def test_it_hides_unpublished_dailies_from_the_list_and_the_detail(
    anonymous, editor_client, status
):
    make_daily(date=DAY, status=status)
    make_daily(date=DAY - dt.timedelta(days=1))
    for client in (anonymous, editor_client):  # staff preview drafts on pages, not here
        assert _dates(_get(client, "/api/v1/dailies/")) == ["2026-10-27"]
        assert _get(client, "/api/v1/dailies/infra/2026-10-28/", 404) == {
            "detail": "No Daily matches the given query."
        }


def test_it_filters_by_track_and_date_range(anonymous):
    infra, ml = make_track("infra"), make_track("ml")
    for offset in range(3):
        make_daily(track=infra, date=DAY + dt.timedelta(days=offset))
    make_daily(track=ml, date=DAY)
    assert _dates(_get(anonymous, "/api/v1/dailies/?track=ml")) == ["2026-10-28"]
    ranged = _get(anonymous, "/api/v1/dailies/?track=infra&from=2026-10-29&to=2026-10-30")
    assert _dates(ranged) == ["2026-10-30", "2026-10-29"]
    assert _dates(_get(anonymous, "/api/v1/dailies/?to=2026-10-28")) == ["2026-10-28"] * 2


@pytest.mark.parametrize(
    "query, field",
    [
        ("track=nope", "track"),
        ("from=yesterday", "from"),
        ("from=2026-10-30&to=2026-10-28", "to"),
        ("lang=fr", "lang"),
    ],
)
def test_it_rejects_bad_filters_with_the_reason(anonymous, query, field):
    make_daily(date=DAY)
    errors = _get(anonymous, f"/api/v1/dailies/?{query}", 400)
    assert list(errors) == [field] and errors[field][0]


@pytest.mark.parametrize(
    "url",
    [
        "/api/v1/dailies/infra/2026-02-30/",  # no such day
        "/api/v1/dailies/nope/2026-10-28/",
        "/api/v1/dailies/infra/28-10-2026/",  # no route at all: Django's 404 handler
        "/api/v1/nothing-here",
        "/api/v2/dailies/",
    ],
)
def test_it_answers_json_404_under_the_api(anonymous, url):
    make_daily(date=DAY)
    assert _get(anonymous, url, 404)["detail"]


def test_it_keeps_the_html_404_outside_the_api(anonymous):
    response = anonymous.get("/en/nowhere/2026-10-28/")
    assert response.status_code == 404
    assert response["Content-Type"].startswith("text/html")


def test_it_is_read_only(anonymous):
    make_daily(date=DAY)
    assert _get(anonymous, "/api/v1/dailies/", 200)
    response = anonymous.post("/api/v1/dailies/", {})
    assert response.status_code == 405 and response.json()["detail"]
    assert anonymous.delete("/api/v1/dailies/infra/2026-10-28/").status_code == 405


def test_it_pages_with_a_cursor(anonymous):
    for offset in range(5):
        make_daily(date=DAY + dt.timedelta(days=offset), papers=[])
    seen, url = [], "/api/v1/dailies/?limit=2"
    while url:
        data = _get(anonymous, url)
        assert len(data["results"]) <= 2
        seen += _dates(data)
        url = data["next"]
    assert seen == [(DAY + dt.timedelta(days=n)).isoformat() for n in range(4, -1, -1)]


def test_it_bounds_the_page_size(anonymous):
    track = make_track()
    Daily.objects.bulk_create(
        Daily(
            track=track,
            date=DAY - dt.timedelta(days=n),
            status=Daily.Status.PUBLISHED,
            published_at=dt.datetime(2026, 10, 1, tzinfo=dt.UTC),
        )
        for n in range(MAX_PAGE_SIZE + 1)
    )
    assert len(_get(anonymous, f"/api/v1/dailies/?limit={MAX_PAGE_SIZE}")["results"]) == 100
    capped = _get(anonymous, f"/api/v1/dailies/?limit={MAX_PAGE_SIZE + 1}")
    assert len(capped["results"]) == MAX_PAGE_SIZE and capped["next"]
    assert len(_get(anonymous, "/api/v1/dailies/")["results"]) == 20


def test_it_throttles_anonymous_clients_with_json_429(anonymous, settings):
    settings.API_ANON_RATE = "3/minute"
    make_daily(date=DAY)
    # Distinct URLs, so that each request reaches the API (the page cache stores answers).
    for n in range(1, 4):
        _get(anonymous, f"/api/v1/dailies/?limit={n}")
    response = anonymous.get("/api/v1/dailies/?limit=4")
    assert response.status_code == 429
    assert "throttled" in response.json()["detail"]
    assert int(response["Retry-After"]) > 0
    # A client cannot reset its count by naming another address.
    assert anonymous.get("/api/v1/papers/", HTTP_X_FORWARDED_FOR="10.1.2.3").status_code == 429


def test_its_throttle_counts_answers_from_the_page_cache(anonymous, settings):
    settings.PAGE_CACHE_ENABLED = True
    settings.API_ANON_RATE = "3/minute"
    make_daily(date=DAY)
    for _ in range(3):  # rendered once, then twice from the cache
        _get(anonymous, "/api/v1/dailies/")
    response = anonymous.get("/api/v1/dailies/")  # stored, yet over the rate
    assert response.status_code == 429
    assert response["Content-Type"].startswith("application/json")
    assert "throttled" in response.json()["detail"]
    assert int(response["Retry-After"]) > 0
    # One count for both: a rendered answer is refused too, and pages are not throttled.
    assert anonymous.get("/api/v1/papers/").status_code == 429
    assert anonymous.get("/en/").status_code == 200
    assert anonymous.get("/en/").status_code == 200


def _queries(client, url: str) -> int:
    with CaptureQueriesContext(connection) as queries:
        _get(client, url)
    return len(queries)


def _dailies(count: int, start: dt.date) -> None:
    for n in range(count):
        make_daily(date=start + dt.timedelta(days=n), papers=[make_paper(), make_paper()])


def test_it_lists_dailies_in_a_fixed_number_of_queries(anonymous, django_assert_num_queries):
    _dailies(3, DAY)
    with django_assert_num_queries(3):  # dailies with stats, lead entries, their summaries
        _get(anonymous, "/api/v1/dailies/?limit=100")
    _dailies(27, DAY + dt.timedelta(days=10))
    with django_assert_num_queries(3):
        data = _get(anonymous, "/api/v1/dailies/?limit=99")
    assert len(data["results"]) == 30


def test_it_shows_a_daily_in_a_fixed_number_of_queries(anonymous):
    make_daily(date=DAY, papers=[make_paper(topics=("kv-cache",)) for _ in range(3)])
    few = _queries(anonymous, "/api/v1/dailies/infra/2026-10-28/")
    make_daily(date=DAY + dt.timedelta(days=1), papers=[make_paper() for _ in range(30)])
    assert _queries(anonymous, "/api/v1/dailies/infra/2026-10-29/") == few
