"""Fetching is bounded: body size, request and run deadlines, public hosts only (every
redirect hop too), unparseable Retry-After, and arXiv spacing without Redis.

The misbehaving servers are real, on 127.0.0.1: a small streaming server here (huge bodies
from a generator, drips, redirects) and tests/recorded_server.py.
"""

from __future__ import annotations

import resource
import threading
import time
import tracemalloc
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from django.core.management import call_command

from papers.ingest import limits
from papers.ingest.fetch import (
    FetchError,
    FetchPolicy,
    FetchRefused,
    address_problem,
    fetch,
    retry_after_seconds,
)
from papers.ingest.service import ingest_source
from papers.models import IngestRun, Paper, Source
from tests.arxiv_docs import api_page, numbered
from tests.factories import make_track
from tests.recorded_server import Reply

MB = 1024 * 1024


class StreamingServer:
    """Each path answers with ``(status, headers, body chunks)``; chunks may be a generator
    that is only advanced as the client reads, so "300 MB" never exists in memory."""

    def __init__(self) -> None:
        self.routes: dict[str, Callable[[], tuple[int, dict[str, str], Iterator[bytes]]]] = {}
        self.hits: list[str] = []
        self.stopped = threading.Event()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:
                path = self.path.split("?", 1)[0]
                server.hits.append(path)
                route = server.routes.get(path)
                status, headers, chunks = route() if route else (404, {}, iter([b"missing"]))
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                if "Content-Length" not in headers:
                    self.send_header("Connection", "close")  # the body ends when we close
                    self.close_connection = True
                self.end_headers()
                try:
                    for chunk in chunks:
                        if server.stopped.is_set():
                            break
                        self.wfile.write(chunk)
                        self.wfile.flush()
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client stopped reading: expected

            def log_message(self, *args) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.httpd.block_on_close = False  # a dripping handler must not hold up teardown
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def url(self, path: str, host: str = "127.0.0.1") -> str:
        return f"http://{host}:{self.httpd.server_address[1]}{path}"

    def __enter__(self) -> StreamingServer:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stopped.set()
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def streaming(settings):
    settings.INGEST_ALLOWED_PRIVATE_HOSTS = ["127.0.0.1"]
    with StreamingServer() as server:
        yield server


def _policy(**overrides) -> FetchPolicy:
    base = {
        "connect_timeout": 2.0,
        "read_timeout": 30.0,  # long: only the deadlines may end the dripping tests
        "attempts": 1,
        "backoff_base": 0.05,
        "backoff_cap": 0.1,
        "allowed_private_hosts": frozenset({"127.0.0.1"}),
    }
    return FetchPolicy(**{**base, **overrides})


def _zeros(total: int, chunk: int = MB) -> Iterator[bytes]:
    block = b"\0" * chunk
    sent = 0
    while sent < total:
        piece = block[: min(chunk, total - sent)]
        sent += len(piece)
        yield piece


def _drip(every: float, stopped: threading.Event) -> Iterator[bytes]:
    yield b"<"
    while not stopped.wait(every):
        yield b"x"


# --- Body size --------------------------------------------------------------------------------


def test_a_300_mb_body_is_refused_while_streaming_with_bounded_memory(streaming):
    streaming.routes["/huge"] = lambda: (200, {"Content-Type": "application/xml"}, _zeros(300 * MB))
    policy = _policy()  # the default body bound
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    tracemalloc.start()
    try:
        started = time.monotonic()
        with pytest.raises(FetchRefused, match="larger than the limit of 33,554,432 bytes"):
            fetch(streaming.url("/huge"), policy=policy)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    growth = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 - rss_before
    assert policy.max_body_bytes == limits.MAX_BODY_BYTES == 32 * MB
    assert peak < 3 * limits.MAX_BODY_BYTES  # what was read, at most twice, never 300 MB
    assert growth < 150 * MB
    assert time.monotonic() - started < 30


def test_a_declared_300_mb_body_is_refused_before_reading(streaming):
    headers = {"Content-Type": "application/xml", "Content-Length": str(300 * MB)}
    streaming.routes["/declared"] = lambda: (200, headers, _zeros(300 * MB))
    started = time.monotonic()
    with pytest.raises(FetchRefused, match=r"314,572,800 bytes \(Content-Length\)"):
        fetch(streaming.url("/declared"), policy=_policy())
    assert time.monotonic() - started < 5


def test_the_body_bound_is_exact(streaming):
    streaming.routes["/at"] = lambda: (200, {}, _zeros(1000, chunk=300))
    streaming.routes["/over"] = lambda: (200, {}, _zeros(1001, chunk=300))
    policy = _policy(max_body_bytes=1000)
    assert len(fetch(streaming.url("/at"), policy=policy).body) == 1000
    with pytest.raises(FetchRefused, match="larger than the limit of 1,000 bytes"):
        fetch(streaming.url("/over"), policy=policy)


# --- Deadlines --------------------------------------------------------------------------------


def test_a_server_dripping_a_byte_every_10_s_fails_at_the_request_deadline(streaming):
    streaming.routes["/drip"] = lambda: (200, {}, _drip(10.0, streaming.stopped))
    started = time.monotonic()
    with pytest.raises(FetchError, match="the request deadline of 2 s passed after 1 attempts"):
        fetch(streaming.url("/drip"), policy=_policy(request_deadline=2.0))
    assert 1.9 <= time.monotonic() - started < 3.5


def test_a_dripping_server_cannot_stretch_a_run_past_its_deadline(db, streaming, settings):
    streaming.routes["/api/query"] = lambda: (200, {}, _drip(0.2, streaming.stopped))
    settings.INGEST_FETCH_POLICY = {
        "read_timeout": 30.0,
        "attempts": 10,
        "backoff_base": 0.01,
        "backoff_cap": 0.02,
        "request_deadline": 1.0,
        "run_deadline": 2.5,
    }
    settings.ARXIV_MIN_INTERVAL = 0.01
    source = Source.objects.create(
        name="drip", kind=Source.Kind.ARXIV_API, url=streaming.url("/api/query"),
        config={"search_query": "cat:cs.DC"},
    )  # fmt: skip
    started = time.monotonic()
    run = ingest_source(source=source)
    assert 2.4 <= time.monotonic() - started < 4.0
    assert run.status == IngestRun.Status.FAILED
    assert "the run deadline of 2.5 s passed" in run.message
    assert "nothing of this run was stored" in run.message
    assert 2 <= streaming.hits.count("/api/query") <= 3  # 1 s each, the last one cut short


def test_the_ingest_command_respects_the_run_deadline(db, streaming, settings, capsys):
    streaming.routes["/api/query"] = lambda: (200, {}, _drip(0.2, streaming.stopped))
    settings.INGEST_FETCH_POLICY = {"read_timeout": 30.0, "attempts": 3, "run_deadline": 1.5}
    settings.ARXIV_MIN_INTERVAL = 0.01
    Source.objects.create(
        name="drip", kind=Source.Kind.ARXIV_API, url=streaming.url("/api/query"),
        config={"search_query": "cat:cs.DC"},
    )  # fmt: skip
    started = time.monotonic()
    with pytest.raises(SystemExit) as exited:
        call_command("ingest", "drip")
    assert exited.value.code == 1
    assert time.monotonic() - started < 3.0
    assert "the run deadline of 1.5 s passed" in capsys.readouterr().err


# --- Public hosts only ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "address",
    [
        "127.0.0.1", "10.1.2.3", "172.16.0.1", "192.168.1.1", "169.254.169.254", "100.64.0.1",
        "224.0.0.1", "0.0.0.0", "240.0.0.1", "255.255.255.255",
        "::1", "::", "fe80::1", "fc00::1", "ff02::1", "::ffff:127.0.0.1", "2001:db8::1",
    ],
)  # fmt: skip
def test_non_public_addresses_are_refused(address):
    assert address_problem(address)


@pytest.mark.parametrize("address", ["8.8.8.8", "151.101.1.1", "2606:4700:4700::1111"])
def test_public_addresses_are_allowed(address):
    assert address_problem(address) == ""


def test_a_private_host_is_refused_before_any_request(streaming):
    streaming.routes["/feed"] = lambda: (200, {}, iter([b"<rss/>"]))
    with pytest.raises(FetchRefused, match="127.0.0.1 is a loopback address"):
        fetch(streaming.url("/feed"), policy=_policy(allowed_private_hosts=frozenset()))
    assert streaming.hits == []


def test_a_name_with_any_private_address_is_refused(streaming, monkeypatch):
    # A name that resolves to a public and a loopback address (DNS rebinding, or a split
    # horizon): one non-public address is enough to refuse it.
    import socket

    real = socket.getaddrinfo

    def two_addresses(host, port, *args, **kwargs):
        if host != "mirror.example":
            return real(host, port, *args, **kwargs)
        return [
            (socket.AF_INET, socket.SOCK_STREAM, 6, "", ("93.184.215.14", port)),
            (socket.AF_INET, socket.SOCK_STREAM, 6, "", ("127.0.0.1", port)),
        ]

    monkeypatch.setattr(socket, "getaddrinfo", two_addresses)
    with pytest.raises(FetchRefused, match="mirror.example: 127.0.0.1 is a loopback"):
        fetch(streaming.url("/feed", host="mirror.example"), policy=_policy())
    assert streaming.hits == []


def _redirect(location: str):
    return lambda: (302, {"Location": location, "Content-Length": "0"}, iter([]))


def test_a_redirect_to_a_private_host_is_refused(streaming):
    # "localhost" is allowed (the source); the 127.0.0.1 it redirects to is not.
    streaming.routes["/start"] = _redirect(streaming.url("/inside"))
    streaming.routes["/inside"] = lambda: (200, {}, iter([b"secret"]))
    policy = _policy(allowed_private_hosts=frozenset({"localhost"}))
    with pytest.raises(FetchRefused, match="127.0.0.1 is a loopback address"):
        fetch(streaming.url("/start", host="localhost"), policy=policy)
    assert streaming.hits == ["/start"]


def test_redirects_to_unsafe_schemes_and_endless_redirects_are_refused(streaming):
    streaming.routes["/to-file"] = _redirect("file:///etc/passwd")
    streaming.routes["/loop"] = _redirect("/loop")
    with pytest.raises(FetchRefused, match="redirected to a link that is not a public"):
        fetch(streaming.url("/to-file"), policy=_policy())
    with pytest.raises(FetchRefused, match=f"more than {limits.MAX_REDIRECTS} redirects"):
        fetch(streaming.url("/loop"), policy=_policy())
    assert streaming.hits.count("/loop") == limits.MAX_REDIRECTS + 1


def test_redirects_between_allowed_hosts_are_followed(streaming):
    streaming.routes["/old"] = _redirect("/new")
    streaming.routes["/new"] = lambda: (200, {"Content-Length": "5"}, iter([b"<ok/>"]))
    assert fetch(streaming.url("/old"), policy=_policy()).body == b"<ok/>"
    assert streaming.hits == ["/old", "/new"]


# --- Retry-After and Redis --------------------------------------------------------------------


@pytest.mark.parametrize("value", ["soon-ish", "Mon, 99 Foo 2026 25:61:00 GMT", "-5", "1.5", ""])
def test_an_unreadable_retry_after_is_ignored(value):
    assert retry_after_seconds(value, cap=120) is None


def test_a_retry_after_of_soon_ish_falls_back_to_backoff(db, fast_ingest, recorded_server):
    url = recorded_server.serve(
        "/feed.xml",
        Reply(status=503, headers={"Retry-After": "soon-ish"}, body=b"busy"),
        Reply(
            body=b'<?xml version="1.0"?><rss version="2.0"><channel><title>Lab</title>'
            b"<item><title>Post</title><link>https://lab.example/p</link></item>"
            b"</channel></rss>",
            content_type="application/rss+xml",
        ),
    )
    source = Source.objects.create(name="lab", kind=Source.Kind.FEED, url=url)
    run = ingest_source(source=source)
    assert run.status == IngestRun.Status.SUCCEEDED, run.message
    assert run.new == 1
    first, second = recorded_server.requests_to("/feed.xml")
    assert second.at - first.at < 1.0  # fast_ingest's backoff (<= 0.2 s), not a guess


def test_without_redis_arxiv_spacing_falls_back_to_the_process_lock(
    db, fast_ingest, recorded_server
):
    fast_ingest.REDIS_URL = "redis://127.0.0.1:1/0"  # nothing listens on port 1
    fast_ingest.ARXIV_MIN_INTERVAL = 0.3
    entries = numbered(6)

    def pages(query) -> Reply:
        start = int(query["start"][0])
        return Reply(body=api_page(entries[start : start + 3], total=6, start=start))

    url = recorded_server.route("/api/query", pages)
    source = Source.objects.create(
        name="arxiv", kind=Source.Kind.ARXIV_API, url=url,
        config={"search_query": "cat:cs.DC", "page_size": 3},
    )  # fmt: skip
    source.tracks.add(make_track())
    run = ingest_source(source=source)
    assert run.status == IngestRun.Status.SUCCEEDED, run.message
    assert run.new == 6 and Paper.objects.count() == 6
    assert "Redis did not answer (ConnectionError" in run.message
    assert "spaced by this process's lock only" in run.message
    first, second = (r.at for r in recorded_server.requests_to("/api/query"))
    assert second - first >= 0.28  # still spaced
