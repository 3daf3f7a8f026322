"""The page cache retires by tag: a change retires the pages that printed what changed, and
nothing else retires anything. ``Cache-Status`` says which: ``hit`` for a page kept,
``fwd=stale`` for one a change retired, ``fwd=miss`` for one never stored."""

from __future__ import annotations

import datetime as dt
import threading
from decimal import Decimal
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
import time_machine
from django.core.cache import cache
from django.test import Client, RequestFactory

from dailies.models import Daily
from dailies.services import EntryChanges, daily_publish, daily_unpublish, daily_update
from digest_site.page_cache import HIT, PageCacheMiddleware
from papers.drafting.edits import summary_edit
from papers.models import Topic, Track
from papers.services import public_content_save
from tests.factories import make_daily, make_paper

DAILY = "/en/infra/2026-10-28/"
OTHER_DAILY = "/en/infra/2026-10-20/"
EDITED = "A corrected summary. Takeaway sentence here."
SHOWN = b"A corrected summary."
# What prints the edited paper, and what does not.
PRINTS_IT = [DAILY, "/en/papers/kv-paper/", "/en/topics/kv/", "/en/papers/", "/en/infra/"]
FEEDS = ["/en/feeds/infra.atom", "/en/feeds/infra/papers.atom", "/api/v1/papers/"]
PRINTS_IT_NOT = [OTHER_DAILY, "/en/topics/far/", "/en/topics/"]


@pytest.fixture
def dailies(db):
    kv = make_daily(papers=[make_paper("kv-paper", topics=("kv",)), make_paper("beside")])
    far = make_daily(date=dt.date(2026, 10, 20), papers=[make_paper("far-paper", topics=("far",))])
    return kv, far


def _warm(client: Client, urls: list[str]) -> None:
    for url in urls:
        client.get(url)
        assert client.get(url)["Cache-Status"] == HIT, url


def _status(client: Client, url: str) -> str:
    return client.get(url)["Cache-Status"]


def _kept(client: Client, urls: list[str]) -> list[str]:
    """Those of ``urls`` the cache still answers."""
    return [url for url in urls if _status(client, url) == HIT]


def test_it_lists_what_a_page_printed_in_its_surrogate_keys(dailies, anonymous):
    kv, _far = dailies
    keys = set(anonymous.get(DAILY)["Surrogate-Key"].split())
    papers = {f"paper:{entry.paper_id}" for entry in kv.entries.all()}
    assert {f"daily:{kv.pk}", "track:infra", "nav", "all", *papers} <= keys
    assert anonymous.get(DAILY)["Cache-Status"] == HIT


def test_an_edit_of_one_summary_retires_exactly_the_pages_that_print_its_paper(
    dailies, anonymous, editor
):
    _warm(anonymous, PRINTS_IT + FEEDS + PRINTS_IT_NOT)
    summary = dailies[0].entries.get(position=1).paper.summaries.get(language="en")
    summary_edit(summary=summary, user=editor, body=EDITED)
    assert _kept(anonymous, PRINTS_IT + FEEDS) == []
    assert _kept(anonymous, PRINTS_IT_NOT) == PRINTS_IT_NOT
    assert SHOWN in anonymous.get(DAILY).content


def test_a_draft_only_desk_change_retires_nothing(dailies, anonymous, editor):
    draft = make_daily(date=dt.date(2026, 10, 29), status=Daily.Status.DRAFT)
    _warm(anonymous, PRINTS_IT + PRINTS_IT_NOT)
    entry = draft.entries.get(position=2)
    daily_update(
        daily=draft,
        user=editor,
        changes={"intro_en": "Draft words."},
        entries=EntryChanges(changed={entry.pk: {"score": Decimal("3.15")}}),
    )
    assert _kept(anonymous, PRINTS_IT + PRINTS_IT_NOT) == PRINTS_IT + PRINTS_IT_NOT


def test_a_login_and_an_invalid_form_retire_nothing(dailies, anonymous, editor):
    _warm(anonymous, PRINTS_IT + PRINTS_IT_NOT)
    staff = Client()
    login = staff.post("/admin/login/?next=/admin/", {"username": "ed", "password": "x"})
    staff.force_login(editor)
    topic = Topic.objects.get(slug="kv")
    invalid = staff.post(f"/admin/papers/topic/{topic.pk}/change/", {"slug": "", "name_en": ""})
    assert login.status_code == 200 and invalid.status_code == 200  # the forms again
    assert _kept(anonymous, PRINTS_IT + PRINTS_IT_NOT) == PRINTS_IT + PRINTS_IT_NOT


def test_publishing_retires_the_lists_and_the_neighbour_only(dailies, anonymous, editor):
    kv, _far = dailies
    new = make_daily(date=dt.date(2026, 10, 30), status=Daily.Status.DRAFT)
    _warm(anonymous, [DAILY, OTHER_DAILY, "/en/", "/en/infra/", "/en/papers/"])
    daily_publish(daily=new, user=editor)
    assert _kept(anonymous, [DAILY, "/en/", "/en/infra/", "/en/papers/"]) == []
    assert _kept(anonymous, [OTHER_DAILY]) == [OTHER_DAILY]  # not beside it
    assert b"2026-10-30" in anonymous.get(DAILY).content  # the pager's link to it


def test_unpublishing_takes_it_off_every_page_that_showed_it(dailies, anonymous, editor):
    kv, _far = dailies
    _warm(anonymous, [DAILY, OTHER_DAILY, "/en/papers/kv-paper/", "/en/topics/kv/"])
    daily_unpublish(daily=kv, user=editor)
    assert anonymous.get(DAILY).status_code == 404
    assert anonymous.get("/en/papers/kv-paper/").status_code == 404
    assert b"kv-paper" not in anonymous.get("/en/topics/kv/").content
    assert b"2026-10-28" not in anonymous.get(OTHER_DAILY).content  # its neighbour's pager


def test_a_topic_rename_retires_its_pages_and_those_printing_its_papers(dailies, anonymous, editor):
    _warm(anonymous, [DAILY, "/en/topics/kv/", "/en/topics/", OTHER_DAILY, "/en/topics/far/"])
    topic = Topic.objects.get(slug="kv")
    topic.name_en = "Key-value caches"
    public_content_save(obj=topic, user=editor)
    assert _kept(anonymous, [DAILY, "/en/topics/kv/", "/en/topics/"]) == []
    assert _kept(anonymous, [OTHER_DAILY, "/en/topics/far/"]) == [OTHER_DAILY, "/en/topics/far/"]
    assert b"Key-value caches" in anonymous.get("/en/topics/kv/").content


def test_a_track_rename_retires_every_page_showing_the_navigation(dailies, anonymous, editor):
    _warm(anonymous, [DAILY, OTHER_DAILY, "/en/topics/far/"])
    track = Track.objects.get(slug="infra")
    track.name_en = "Systems infrastructure"
    public_content_save(obj=track, user=editor)
    assert _kept(anonymous, [DAILY, OTHER_DAILY, "/en/topics/far/"]) == []
    assert b"Systems infrastructure" in anonymous.get(OTHER_DAILY).content


def test_a_re_verification_retires_its_code_pages_only(demo, anonymous):
    from deepdives import services
    from deepdives.demo import demo_load_deep_dives

    demo_load_deep_dives()
    daily = Daily.objects.published().select_related("track").first()
    pages = ["/en/code/cosmos/", "/en/code/", "/en/feeds/code.atom"]
    _warm(anonymous, [*pages, daily.get_absolute_url()])
    services.reference_verify(name="cosmos")
    assert _kept(anonymous, pages) == []
    assert _kept(anonymous, [daily.get_absolute_url()]) == [daily.get_absolute_url()]


# -- stale while revalidate ----------------------------------------------------------------


def _rendering_elsewhere(url: str) -> None:
    """Another request (another worker) is re-rendering ``url``: it holds the render."""
    middleware = PageCacheMiddleware(lambda request: None)
    key = middleware.page_key(RequestFactory().get(url), "")
    assert cache.add(middleware._lock_key(key), 1, 60)


def test_while_another_request_re_renders_a_retired_page_readers_get_the_copy_before(
    dailies, anonymous, editor, settings
):
    settings.PAGE_CACHE_STALE_S = 5
    _warm(anonymous, [DAILY])
    summary = dailies[0].entries.get(position=1).paper.summaries.get(language="en")
    summary_edit(summary=summary, user=editor, body=EDITED)
    _rendering_elsewhere(DAILY)
    stale = anonymous.get(DAILY)
    assert stale["Cache-Status"].startswith(HIT) and "stale" in stale["Cache-Status"]
    assert SHOWN not in stale.content


def test_a_retired_page_is_never_served_past_the_stale_window(dailies, anonymous, editor, settings):
    settings.PAGE_CACHE_STALE_S = 5
    _warm(anonymous, [DAILY])
    summary = dailies[0].entries.get(position=1).paper.summaries.get(language="en")
    summary_edit(summary=summary, user=editor, body=EDITED)
    _rendering_elsewhere(DAILY)  # and never finishes
    with time_machine.travel(dt.datetime.now(dt.UTC) + dt.timedelta(seconds=6), tick=False):
        response = anonymous.get(DAILY)
    assert response["Cache-Status"] == "PaperDaily; fwd=stale; stored"
    assert SHOWN in response.content


def test_the_first_reader_after_a_change_renders_it_when_no_one_else_is(dailies, anonymous, editor):
    _warm(anonymous, [DAILY])
    summary = dailies[0].entries.get(position=1).paper.summaries.get(language="en")
    summary_edit(summary=summary, user=editor, body=EDITED)
    response = anonymous.get(DAILY)
    assert response["Cache-Status"] == "PaperDaily; fwd=stale; stored"
    assert SHOWN in response.content
    assert _status(anonymous, DAILY) == HIT


def test_staff_and_previews_are_never_cached_nor_tagged(dailies, anonymous, editor_client):
    make_daily(date=dt.date(2026, 10, 29), status=Daily.Status.DRAFT)
    for url in (DAILY, "/en/infra/2026-10-29/"):
        response = editor_client.get(url)
        assert response.status_code == 200
        assert response["Cache-Status"] == "PaperDaily; fwd=bypass"
        assert "Surrogate-Key" not in response and "no-store" in response["Cache-Control"]
    assert anonymous.get("/en/infra/2026-10-29/").status_code == 404
    assert _status(anonymous, DAILY) == "PaperDaily; fwd=miss; stored"


# -- the CDN purge -------------------------------------------------------------------------


class _Purges(BaseHTTPRequestHandler):
    """A CDN's purge endpoint: records each request; refuses the first ``refuse`` (503)."""

    received: list[tuple[str, str]] = []
    refuse = 0

    def do_PURGE(self) -> None:
        type(self).received.append((self.command, self.headers.get("xkey", "")))
        refused = len(type(self).received) <= type(self).refuse
        self.send_response(503 if refused else 200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args) -> None:
        pass


@pytest.fixture
def cdn(settings):
    _Purges.received, _Purges.refuse = [], 0
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Purges)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    settings.CDN_PURGE_URLS = [f"http://127.0.0.1:{server.server_address[1]}/"]
    yield _Purges
    server.shutdown()
    server.server_close()


def test_a_committed_change_purges_its_tags_from_the_cdn(
    dailies, editor, cdn, eager_tasks, django_capture_on_commit_callbacks
):
    summary = dailies[0].entries.get(position=1).paper.summaries.get(language="en")
    with django_capture_on_commit_callbacks(execute=True):
        summary_edit(summary=summary, user=editor, body=EDITED)
    assert [method for method, _keys in cdn.received] == ["PURGE"]
    keys = set(cdn.received[0][1].split())
    assert {f"paper:{summary.paper_id}", "index"} <= keys
    assert not keys & {f"daily:{dailies[1].pk}", "nav", "all"}


def test_nothing_is_purged_before_the_change_commits(dailies, editor, cdn, eager_tasks):
    summary = dailies[0].entries.get(position=1).paper.summaries.get(language="en")
    summary_edit(summary=summary, user=editor, body=EDITED)  # the test's transaction is open
    assert cdn.received == []


def test_a_purge_the_cdn_refuses_is_retried(cdn):
    from digest_site.tasks import cdn_purge

    cdn.refuse = 2  # the CDN refuses twice, then takes it
    propagates = cdn_purge.app.conf.task_eager_propagates
    cdn_purge.app.conf.task_eager_propagates = False  # a retry runs again, as a worker's would
    try:
        assert cdn_purge.apply(args=[["paper:1"]]).state == "SUCCESS"
    finally:
        cdn_purge.app.conf.task_eager_propagates = propagates
    assert cdn.received == [("PURGE", "paper:1")] * 3
