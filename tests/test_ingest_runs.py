"""Ingest runs against a real HTTP server that misbehaves on purpose."""

from __future__ import annotations

import time

import pytest

from papers.ingest.service import ingest_source
from papers.models import IngestRun, Paper, Source
from tests.arxiv_docs import Entry, api_page, numbered
from tests.factories import make_track
from tests.recorded_server import Reply

HTML = b"<!DOCTYPE html><html><head><title>Oops</title></head><body>Maintenance</body></html>"
ERROR_FEED = (
    b'<?xml version="1.0" encoding="UTF-8"?><feed xmlns="http://www.w3.org/2005/Atom" '
    b'xmlns:opensearch="http://a9.com/-/spec/opensearch/1.1/">'
    b"<opensearch:totalResults>1</opensearch:totalResults>"
    b"<entry><id>https://arxiv.org/api/errors#incorrect_id_format_for_abc</id>"
    b"<title>Error</title><summary>incorrect id format for abc</summary></entry></feed>"
)


def _source(url: str, kind=Source.Kind.ARXIV_API, **config) -> Source:
    source = Source.objects.create(
        name=f"test {kind} {time.monotonic_ns()}",
        kind=kind,
        url=url,
        config={"search_query": "cat:cs.DC", "page_size": 5, **config},
    )
    source.tracks.add(make_track())
    return source


def _page_chooser(entries: list[Entry], page_size: int, empty_once_at: int | None = None):
    served_empty = set()

    def choose(query) -> Reply:
        start = int(query["start"][0])
        if start == empty_once_at and start not in served_empty:
            served_empty.add(start)
            return Reply(body=api_page([], total=len(entries), start=start))
        return Reply(
            body=api_page(entries[start : start + page_size], total=len(entries), start=start)
        )

    return choose


def test_it_pages_the_api_until_total_results(db, fast_ingest, recorded_server):
    entries = numbered(12)
    url = recorded_server.route("/api/query", _page_chooser(entries, 5))
    run = ingest_source(source=_source(url))
    assert run.status == IngestRun.Status.SUCCEEDED, run.message
    assert (run.fetched, run.new, run.updated, run.unchanged) == (12, 12, 0, 0)
    starts = [int(r.query["start"][0]) for r in recorded_server.requests_to("/api/query")]
    assert starts == [0, 5, 10]
    assert Paper.objects.count() == 12
    assert "the source listed 12" in run.message


def test_it_retries_a_500_then_succeeds(db, fast_ingest, recorded_server):
    url = recorded_server.serve(
        "/api/query", Reply(status=500, body=b"boom"), Reply(body=api_page(numbered(3)))
    )
    run = ingest_source(source=_source(url))
    assert run.status == IngestRun.Status.SUCCEEDED, run.message
    assert run.new == 3 and run.requests == 1
    assert len(recorded_server.requests_to("/api/query")) == 2


def test_it_honours_retry_after_on_429(db, fast_ingest, recorded_server):
    url = recorded_server.serve(
        "/api/query",
        Reply(status=429, headers={"Retry-After": "1"}, body=b"slow down"),
        Reply(body=api_page(numbered(2))),
    )
    run = ingest_source(source=_source(url))
    assert run.status == IngestRun.Status.SUCCEEDED
    first, second = recorded_server.requests_to("/api/query")
    assert second.at - first.at >= 0.95


def test_it_retries_a_read_timeout(db, fast_ingest, recorded_server):
    url = recorded_server.serve(
        "/api/query",
        Reply(delay=1.5, body=api_page(numbered(2))),
        Reply(body=api_page(numbered(2))),
    )
    run = ingest_source(source=_source(url))
    assert run.status == IngestRun.Status.SUCCEEDED, run.message
    assert run.new == 2


def test_a_source_that_keeps_timing_out_fails_and_stores_nothing(db, fast_ingest, recorded_server):
    url = recorded_server.serve("/api/query", Reply(delay=1.5, body=api_page(numbered(2))))
    run = ingest_source(source=_source(url))
    assert run.status == IngestRun.Status.FAILED
    assert "timed out" in run.message and "3 attempts" in run.message
    assert Paper.objects.count() == 0


def test_a_truncated_body_is_retried_and_never_half_stored(db, fast_ingest, recorded_server):
    body = api_page(numbered(4))
    url = recorded_server.serve(
        "/api/query", Reply(body=body, truncate_to=len(body) // 2), Reply(body=body)
    )
    run = ingest_source(source=_source(url))
    assert run.status == IngestRun.Status.SUCCEEDED, run.message
    assert run.new == 4


def test_an_empty_page_in_the_middle_is_asked_for_again(db, fast_ingest, recorded_server):
    entries = numbered(12)
    url = recorded_server.route("/api/query", _page_chooser(entries, 5, empty_once_at=5))
    run = ingest_source(source=_source(url))
    assert run.status == IngestRun.Status.SUCCEEDED, run.message
    assert run.new == 12
    starts = [int(r.query["start"][0]) for r in recorded_server.requests_to("/api/query")]
    assert starts == [0, 5, 5, 10]


def test_an_empty_page_twice_fails_the_run_and_keeps_what_was_stored(
    db, fast_ingest, recorded_server
):
    url = recorded_server.serve("/api/query", Reply(body=api_page(numbered(3))))
    assert ingest_source(source=_source(url)).status == IngestRun.Status.SUCCEEDED

    def always_empty_after_first(query) -> Reply:
        start = int(query["start"][0])
        if start == 0:
            return Reply(body=api_page(numbered(5), total=9))
        return Reply(body=api_page([], total=9, start=start))

    url = recorded_server.route("/api/query2", always_empty_after_first)
    run = ingest_source(source=_source(url))
    assert run.status == IngestRun.Status.FAILED
    assert "empty page at start=5 of 9, twice" in run.message
    assert Paper.objects.count() == 3  # the earlier run's papers, untouched; none of this one


def test_html_instead_of_xml_fails_with_a_clear_message(db, fast_ingest, recorded_server):
    url = recorded_server.serve("/api/query", Reply(body=HTML, content_type="text/html"))
    run = ingest_source(source=_source(url))
    assert run.status == IngestRun.Status.FAILED
    assert "HTML" in run.message
    assert Paper.objects.count() == 0


def test_the_arxiv_error_feed_is_an_error_not_a_paper(db, fast_ingest, recorded_server):
    url = recorded_server.serve("/api/query", Reply(status=400, body=ERROR_FEED))
    run = ingest_source(source=_source(url))
    assert run.status == IngestRun.Status.FAILED
    assert "HTTP 400" in run.message and "incorrect id format" in run.message
    assert not Paper.objects.filter(title="Error").exists()


def test_feeds_are_fetched_conditionally(db, fast_ingest, recorded_server):
    rss = (
        b'<?xml version="1.0"?><rss version="2.0"><channel><title>Lab blog</title>'
        b"<link>https://lab.example/blog</link><description>posts</description>"
        b"<item><title>Serving at scale</title><link>https://lab.example/blog/serving</link>"
        b"<description>How we serve.</description>"
        b"<pubDate>Tue, 27 Oct 2026 10:00:00 GMT</pubDate></item></channel></rss>"
    )
    url = recorded_server.serve(
        "/feed.xml",
        Reply(body=rss, content_type="application/rss+xml", headers={"ETag": '"v1"'}),
        Reply(status=304, body=b""),
    )
    source = _source(url, kind=Source.Kind.FEED)
    first = ingest_source(source=source)
    assert first.status == IngestRun.Status.SUCCEEDED and first.new == 1, first.message
    source.refresh_from_db()
    assert source.etag == '"v1"'
    second = ingest_source(source=source)
    assert second.status == IngestRun.Status.SUCCEEDED
    assert second.message == "not modified since the last run"
    assert recorded_server.requests_to("/feed.xml")[1].headers.get("If-None-Match") == '"v1"'


def test_arxiv_requests_are_spaced_by_the_minimum_interval(db, fast_ingest, recorded_server):
    fast_ingest.ARXIV_MIN_INTERVAL = 0.3
    entries = numbered(12)
    url = recorded_server.route("/api/query", _page_chooser(entries, 4))
    run = ingest_source(source=_source(url, page_size=4))
    assert run.status == IngestRun.Status.SUCCEEDED
    times = [r.at for r in recorded_server.requests_to("/api/query")]
    assert len(times) == 3
    # Slots are claimed 0.3 s apart; arrival at the server also carries each request's own
    # connect time (address checks included), which varies by tens of ms on a loaded machine.
    assert min(b - a for a, b in zip(times, times[1:], strict=False)) >= 0.25


@pytest.mark.parametrize("kind", [Source.Kind.MANUAL])
def test_a_manual_source_has_nothing_to_fetch(db, kind):
    run = ingest_source(source=Source.objects.create(name="typed", kind=kind))
    assert run.status == IngestRun.Status.FAILED and "by hand" in run.message
