"""Public pages from the cache: what readers get after each change, and who never gets a
cached page."""

from __future__ import annotations

import time
from decimal import Decimal

import pytest
from django.core.cache import cache
from django.db import connection
from django.test.utils import CaptureQueriesContext

from dailies.models import Daily
from dailies.services import EntryChanges, daily_publish, daily_unpublish, daily_update
from deepdives import services as deepdive_services
from deepdives.demo import demo_load_deep_dives
from digest_site import cache_tags, page_cache
from digest_site.page_cache import LocalPages, Ready
from papers.drafting.edits import summary_edit
from papers.models import Topic
from tests.factories import make_daily, make_paper

DAILY = "/en/infra/2026-10-28/"


def _get(client, url: str, **headers):
    """The response and how many queries it ran (0: it came from the cache)."""
    with CaptureQueriesContext(connection) as queries:
        response = client.get(url, **headers)
    return response, len(queries)


def _stored_pages() -> int:
    """How many page variants the cache (local memory or Redis) holds."""
    if isinstance(cache._cache, dict):
        return sum(1 for key in cache._cache if ":page:" in key)
    return len(cache._cache.get_client().keys(cache.make_key("page:*")))


@pytest.fixture
def daily(db):
    return make_daily(papers=[make_paper("kv-paper", topics=("kv",)), make_paper()])


@pytest.mark.parametrize(
    "url",
    [
        DAILY,
        "/zh/infra/2026-10-28/",
        "/en/",
        "/en/infra/",
        "/en/papers/",
        "/en/papers/?q=paper",
        "/en/papers/kv-paper/",
        "/en/topics/",
        "/en/topics/kv/",
        "/en/feeds/infra.atom",
        "/sitemap.xml",
        "/api/v1/papers/",
    ],
)
def test_it_serves_a_public_page_again_from_the_cache(daily, anonymous, url):
    first, rendered = _get(anonymous, url)
    again, queries = _get(anonymous, url)
    assert first.status_code == again.status_code == 200
    assert rendered > 0 and queries == 0
    assert again.content == first.content
    assert again["Content-Type"] == first["Content-Type"]


def test_it_keys_pages_by_the_normalised_query_and_the_language(daily, anonymous):
    _get(anonymous, "/en/papers/?q=paper&topic=kv")
    assert _get(anonymous, "/en/papers/?topic=kv&q=paper")[1] == 0
    assert _get(anonymous, "/en/papers/?q=paper")[1] > 0
    en, _ = _get(anonymous, DAILY)
    zh, queries = _get(anonymous, "/zh/infra/2026-10-28/")
    assert queries > 0 and zh.content != en.content


def test_it_shows_a_daily_once_it_is_published(db, anonymous, editor):
    daily = make_daily(status=Daily.Status.DRAFT)
    assert anonymous.get(DAILY).status_code == 404
    assert anonymous.get("/en/infra/").status_code == 200
    daily_publish(daily=daily, user=editor)
    assert anonymous.get(DAILY).status_code == 200
    assert DAILY.encode() in anonymous.get("/en/infra/").content


def test_it_takes_an_unpublished_daily_off_at_once(daily, anonymous, editor):
    assert anonymous.get(DAILY).status_code == 200
    assert b"kv-paper" in anonymous.get("/en/papers/").content
    daily_unpublish(daily=daily, user=editor)
    assert anonymous.get(DAILY).status_code == 404
    assert b"kv-paper" not in anonymous.get("/en/papers/").content


def test_it_shows_an_editors_edit_of_a_published_summary(daily, anonymous, editor):
    assert b"A corrected summary." not in anonymous.get(DAILY).content
    summary = daily.entries.get(position=1).paper.summaries.get(language="en")
    summary_edit(summary=summary, user=editor, body="A corrected summary. Takeaway sentence here.")
    assert b"A corrected summary." in anonymous.get(DAILY).content


def test_it_shows_an_editors_edit_of_a_published_entry(daily, anonymous, editor):
    assert b"3.95" in anonymous.get(DAILY).content
    entry = daily.entries.get(position=2)
    daily_update(
        daily=daily,
        user=editor,
        changes={},
        entries=EntryChanges(changed={entry.pk: {"score": Decimal("3.15")}}),
    )
    html = anonymous.get(DAILY).content
    assert b"3.15" in html and b"3.95" not in html


def test_it_shows_a_re_verification_of_reference_code(demo, anonymous):
    demo_load_deep_dives()
    before = anonymous.get("/en/code/cosmos/").content.decode()
    assert "Not run yet" in before
    deepdive_services.reference_verify(name="cosmos")
    after = anonymous.get("/en/code/cosmos/").content.decode()
    assert "Verified" in after and "Not run yet" not in after


def test_it_never_serves_or_stores_a_draft_for_anyone(db, anonymous, editor_client):
    make_daily(status=Daily.Status.DRAFT)
    preview, _ = _get(editor_client, DAILY)
    assert preview.status_code == 200 and "no-store" in preview["Cache-Control"]
    assert _stored_pages() == 0
    assert anonymous.get(DAILY).status_code == 404
    again, queries = _get(editor_client, DAILY)
    assert again.status_code == 200 and queries > 0


def test_it_never_gives_staff_a_cached_page_nor_stores_theirs(daily, anonymous, editor_client):
    _, staff_queries = _get(editor_client, DAILY)
    assert staff_queries > 0 and _stored_pages() == 0
    _, rendered = _get(anonymous, DAILY)
    assert rendered > 0 and _stored_pages() > 0
    response, queries = _get(editor_client, DAILY)
    assert queries > 0 and "private" in response["Cache-Control"]


def test_it_retires_cached_pages_when_staff_save_in_the_admin(db, anonymous, editor_client):
    make_daily(papers=[make_paper(topics=("kv",))])
    assert b"Key-value caches" not in anonymous.get("/en/topics/kv/").content
    topic = Topic.objects.get(slug="kv")
    response = editor_client.post(
        f"/admin/papers/topic/{topic.pk}/change/",
        {"slug": "kv", "name_en": "Key-value caches", "name_zh": "键值缓存"},
    )
    assert response.status_code == 302, response.content.decode()[:2000]
    assert b"Key-value caches" in anonymous.get("/en/topics/kv/").content


def test_it_keeps_pages_with_a_form_out_of_the_cache(db, anonymous):
    first, _ = _get(anonymous, "/en/subscribe/")
    assert first.status_code == 200 and "csrftoken" in first.cookies
    again, queries = _get(anonymous, "/en/subscribe/")
    assert queries > 0 and _stored_pages() == 0


def test_it_stores_nothing_for_a_post(daily, anonymous):
    anonymous.post("/en/papers/", {"q": "x"})
    assert _stored_pages() == 0


def test_a_session_cookie_alone_bypasses_the_cache(daily, anonymous):
    anonymous.get(DAILY)
    anonymous.cookies["sessionid"] = "not-a-session"
    response, queries = _get(anonymous, DAILY)
    assert response.status_code == 200 and queries > 0
    assert "no-store" in response["Cache-Control"]


def test_it_stores_a_query_string_up_to_its_bound(daily, anonymous, settings):
    base = "/en/papers/?q="
    at_bound = "x" * (settings.PAGE_CACHE_MAX_QUERY - 2)
    # Cache-Status, not a query count: the search's own hit cache and the topics' cached
    # counts let a page the page cache did not store render without a query.
    _get(anonymous, base + at_bound)
    assert _get(anonymous, base + at_bound)[0]["Cache-Status"] == "PaperDaily; hit"
    over = "y" * (settings.PAGE_CACHE_MAX_QUERY - 1)
    _get(anonymous, base + over)
    assert _get(anonymous, base + over)[0]["Cache-Status"] != "PaperDaily; hit"


def test_it_stores_a_body_up_to_its_bound(daily, anonymous, settings):
    size = len(anonymous.get("/en/topics/").content)
    cache.clear()
    settings.PAGE_CACHE_MAX_BYTES = size
    _get(anonymous, "/en/topics/")
    assert _get(anonymous, "/en/topics/")[0]["Cache-Status"] == "PaperDaily; hit"
    cache.clear()
    settings.PAGE_CACHE_MAX_BYTES = size - 1
    _get(anonymous, "/en/topics/")
    assert _get(anonymous, "/en/topics/")[0]["Cache-Status"] != "PaperDaily; hit"


# The API too: its anonymous throttle counts in the cache and lets requests through without it.
@pytest.mark.parametrize(
    "url", [DAILY, "/en/", "/en/papers/", "/en/feeds/infra.atom", "/api/v1/dailies/"]
)
def test_it_answers_pages_when_the_cache_is_unreachable(daily, unreachable_cache, url):
    from django.test import Client

    client = Client()
    for _ in range(2):
        response = client.get(url, HTTP_ACCEPT_ENCODING="gzip")
        assert response.status_code == 200
        assert response["Cache-Status"] == "PaperDaily; fwd=miss"  # rendered, not stored
        assert "public" in response["Cache-Control"]
    # Writing public content still works: the retirement gives up quietly.
    daily_unpublish(daily=daily, user=None)
    assert client.get(DAILY).status_code == 404


class _CountingCache:
    """Stands for the cache and records every call made to it."""

    def __init__(self, real) -> None:
        self.real = real
        self.calls: list[str] = []

    def __getattr__(self, name: str):
        attr = getattr(self.real, name)
        if not callable(attr):
            return attr

        def counted(*args, **kwargs):
            self.calls.append(name)
            return attr(*args, **kwargs)

        return counted


def test_a_hit_within_the_recheck_window_asks_the_cache_nothing(
    daily, anonymous, settings, monkeypatch
):
    settings.PAGE_CACHE_VERSION_RECHECK_MS = 60_000
    first, rendered = _get(anonymous, DAILY, HTTP_ACCEPT_ENCODING="gzip")
    counting = _CountingCache(cache)
    monkeypatch.setattr(page_cache, "cache", counting)
    monkeypatch.setattr(cache_tags, "cache", counting)
    again, queries = _get(anonymous, DAILY, HTTP_ACCEPT_ENCODING="gzip")
    assert rendered > 0 and queries == 0 and counting.calls == []
    assert again.content == first.content and again["ETag"] == first["ETag"]
    assert again["Content-Encoding"] == "gzip" and again["Cache-Status"] == "PaperDaily; hit"


def test_a_hit_outside_the_window_reads_only_the_version(daily, anonymous, settings, monkeypatch):
    settings.PAGE_CACHE_VERSION_RECHECK_MS = 0
    _get(anonymous, DAILY)
    counting = _CountingCache(cache)
    monkeypatch.setattr(page_cache, "cache", counting)
    monkeypatch.setattr(cache_tags, "cache", counting)
    _, queries = _get(anonymous, DAILY)
    assert queries == 0 and counting.calls == ["get"]


def _retired_elsewhere(*tags: str) -> None:
    """What another process's retirement leaves in the cache (this one's memory untouched)."""
    cache.set_many({cache_tags.tag_key(tag): (-1, time.time()) for tag in tags}, None)
    cache.incr(cache_tags.PUBLISHED_KEY)


def test_a_retirement_in_this_process_takes_effect_at_once_within_the_window(
    daily, anonymous, editor, settings
):
    settings.PAGE_CACHE_VERSION_RECHECK_MS = 60_000
    assert anonymous.get(DAILY).status_code == 200
    assert _get(anonymous, DAILY)[1] == 0
    daily_unpublish(daily=daily, user=editor)
    assert anonymous.get(DAILY).status_code == 404


class _Clock:
    """The ``time`` module as cache_tags sees it, with a monotonic clock the test moves."""

    def __init__(self) -> None:
        self.now = time.monotonic()

    def monotonic(self) -> float:
        return self.now

    def __getattr__(self, name: str):
        return getattr(time, name)


def test_a_retirement_in_another_process_reaches_readers_once_the_window_has_passed(
    daily, anonymous, settings, monkeypatch
):
    settings.PAGE_CACHE_VERSION_RECHECK_MS = 1000
    clock = _Clock()
    monkeypatch.setattr(cache_tags, "time", clock)
    _get(anonymous, DAILY)
    _retired_elsewhere(f"daily:{daily.pk}")  # as another worker's edit does
    assert _get(anonymous, DAILY)[1] == 0  # the versions this process read, until due
    clock.now += 0.999
    assert _get(anonymous, DAILY)[1] == 0
    clock.now += 0.002
    response, queries = _get(anonymous, DAILY)
    assert response.status_code == 200 and queries > 0


def test_without_a_window_a_retirement_elsewhere_shows_at_once(daily, anonymous, settings):
    settings.PAGE_CACHE_VERSION_RECHECK_MS = 0
    _get(anonymous, DAILY)
    assert _get(anonymous, DAILY)[1] == 0
    _retired_elsewhere(f"daily:{daily.pk}")
    assert _get(anonymous, DAILY)[1] > 0


def _ready(size: int) -> Ready:
    return Ready.of((200, [("Content-Type", "text/html")], b"x" * size, None, None, ()))


def test_the_local_tier_keeps_the_pages_served_last_within_its_bytes():
    local = LocalPages(max_bytes=250)
    for key in ("a", "b"):
        local.put(key, _ready(100))
    assert local.get("a") is not None  # now the most recently served
    local.put("c", _ready(100))
    assert local.get("b") is None and local.size == 200
    assert local.get("a") is not None and local.get("c") is not None
    local.put("huge", _ready(251))
    assert local.get("huge") is None


# -- what a request may make the cache hold ------------------------------------------------


def test_it_refuses_a_host_outside_allowed_hosts_before_looking_up(daily, anonymous):
    assert _get(anonymous, DAILY)[0].status_code == 200  # stored
    assert anonymous.get(DAILY, HTTP_HOST="elsewhere.example").status_code == 400
    assert anonymous.get("/robots.txt", HTTP_HOST="elsewhere.example").status_code == 400


@pytest.mark.parametrize(
    "url", ["/en/feeds/infra.atom", "/en/feeds/infra.rss", "/robots.txt", "/api/v1/papers/?limit=1"]
)
def test_a_page_rendered_for_another_port_never_reaches_other_readers(daily, anonymous, url):
    # An allowed host on any port: its absolute links name that port.
    poisoned = anonymous.get(url, HTTP_HOST="127.0.0.1:1")
    assert poisoned.status_code == 200 and b"127.0.0.1:1" in poisoned.content
    response = anonymous.get(url)
    assert response.status_code == 200 and b"127.0.0.1:1" not in response.content
    assert b"http://testserver/" in response.content


def test_parameters_a_page_does_not_read_make_no_entry(daily, anonymous):
    anonymous.get(DAILY)
    anonymous.get("/en/papers/")
    stored = _stored_pages()
    for n in range(3):  # three varied values show it as thirty did (each renders uncached)
        for url in (f"{DAILY}?utm_source={n}", f"/en/papers/?q=paper&x{n}=1", f"/sitemap.xml?{n}"):
            response = anonymous.get(url)
            assert response.status_code == 200
            assert "public" not in response.get("Cache-Control", "")
    assert _stored_pages() == stored


def test_parameters_a_page_reads_are_keyed_and_repeated_ones_keep_their_order(daily, anonymous):
    # The index reads the last ``q``: these two are different searches.
    first = anonymous.get("/en/papers/?q=nothingatall&q=kv")
    second, queries = _get(anonymous, "/en/papers/?q=kv&q=nothingatall")
    assert queries > 0 and second.content != first.content
    assert _get(anonymous, "/en/papers/?q=kv&q=nothingatall")[1] == 0


def test_a_theme_cookie_counts_only_with_a_themes_value(daily, anonymous):
    plain = anonymous.get(DAILY).content
    stored = _stored_pages()
    for n in range(20):
        anonymous.cookies["theme"] = f"random-{n}"
        response, queries = _get(anonymous, DAILY)
        assert queries == 0 and response.content == plain
    assert _stored_pages() == stored
    anonymous.cookies["theme"] = "dark"
    dark, queries = _get(anonymous, DAILY)
    assert queries > 0 and dark.content != plain


@pytest.mark.parametrize("url", [DAILY, "/en/papers/", "/en/subscribe/", "/robots.txt"])
def test_options_and_trace_render_no_page(daily, anonymous, url):
    options, queries = _get(anonymous, url, REQUEST_METHOD="OPTIONS")
    assert options.status_code == 200 and options.content == b"" and queries == 0
    assert {"GET", "HEAD", "OPTIONS"} <= set(options["Allow"].replace(" ", "").split(","))
    trace = anonymous.generic("TRACE", url)
    assert trace.status_code == 405 and b"<html" not in trace.content
    assert _stored_pages() == 0
