"""The page cache on a real Redis that stops, or stops answering, and comes back: pages
answer 200 throughout, and nothing changed during the outage comes back stale with it."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time

import pytest
import redis
from django.test import Client

from dailies.services import daily_unpublish
from tests.cache_servers import free_port, redis_caches, silent_server
from tests.factories import make_daily

needs_redis_server = pytest.mark.skipif(
    not shutil.which("redis-server"), reason="needs redis-server"
)

DAILY = "/en/infra/2026-10-28/"


class RedisServer:
    """A private redis-server on a free port, without persistence."""

    def __init__(self, tmp_path, *options: str) -> None:
        self.port = free_port()
        self.dir = tmp_path
        self.options = options
        self.proc: subprocess.Popen | None = None

    def start(self) -> None:
        self.proc = subprocess.Popen(
            [
                "redis-server",
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                str(self.dir),
                *self.options,
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.2) as conn:
                    conn.sendall(b"PING\r\n")
                    if conn.recv(16).startswith(b"+PONG"):
                        return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("redis-server did not start")

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.terminate()
            self.proc.wait(timeout=10)
            self.proc = None

    def pause(self) -> None:
        """Still listening, never answering: a network that drops the cache's packets."""
        os.kill(self.proc.pid, signal.SIGSTOP)

    def resume(self) -> None:
        os.kill(self.proc.pid, signal.SIGCONT)


@pytest.fixture
def redis_server(tmp_path, settings):
    server = RedisServer(tmp_path)
    server.start()
    settings.CACHES = redis_caches(server.port)
    settings.PAGE_CACHE_ENABLED = True
    settings.CACHE_BREAKER_S = 0  # try the cache again at once: the test says when it is back
    yield server
    if server.proc is not None:
        server.resume()
        server.stop()


@pytest.fixture(autouse=True)
def _forget_the_content_version():
    """Each test starts, and leaves the next, as a new process would."""
    _a_new_process()
    yield
    _a_new_process()


def _served_from_cache(client: Client, url: str) -> tuple[int, bool]:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    with CaptureQueriesContext(connection) as queries:
        response = client.get(url)
    return response.status_code, len(queries) == 0


@needs_redis_server
def test_it_answers_while_redis_is_stopped_and_caches_again_after(db, redis_server):
    make_daily()
    client = Client()
    assert client.get(DAILY).status_code == 200
    assert _served_from_cache(client, DAILY) == (200, True)
    redis_server.stop()
    for url in (DAILY, "/en/", "/en/papers/", "/en/topics/"):
        assert client.get(url).status_code == 200, url
    redis_server.start()  # empty: a restarted Redis without persistence
    assert client.get(DAILY).status_code == 200
    assert _served_from_cache(client, DAILY) == (200, True)


@needs_redis_server
def test_a_daily_unpublished_while_redis_was_away_does_not_come_back_with_it(db, redis_server):
    daily = make_daily()
    client = Client()
    client.get(DAILY)
    assert _served_from_cache(client, DAILY) == (200, True)
    redis_server.pause()
    daily_unpublish(daily=daily, user=None)  # its retirement cannot reach the cache
    assert client.get(DAILY).status_code == 404
    redis_server.resume()  # with every page it held, under the version before
    assert client.get(DAILY).status_code == 404
    assert _served_from_cache(client, "/en/")[0] == 200
    assert _served_from_cache(client, "/en/") == (200, True)  # caching again


@needs_redis_server
def test_the_periodic_publisher_makes_a_retirement_a_worker_could_not(db, redis_server):
    from dailies.tasks import publish_due_dailies
    from digest_site import cache_tags

    daily = make_daily()
    client = Client()
    client.get(DAILY)
    redis_server.pause()
    daily_unpublish(daily=daily, user=None)  # as a worker would, with the cache away
    redis_server.resume()
    publish_due_dailies()  # the next tick, in the same process, before any page is read
    assert cache_tags.retire_pending() is False  # nothing left to make
    assert _served_from_cache(Client(), DAILY)[0] == 404


@needs_redis_server
def test_a_daily_renders_its_entries_when_the_cache_fails_after_answering(db, tmp_path, settings):
    # A Redis that answers single reads (the clock) and refuses reads of many keys (the
    # kept entries): the entries are rendered.
    server = RedisServer(tmp_path, "--rename-command", "MGET", "")
    server.start()
    try:
        settings.CACHES = redis_caches(server.port)
        settings.CACHE_BREAKER_S = 0
        make_daily()
        response = Client().get(DAILY)
        assert response.status_code == 200
        assert response.content.decode().count('class="entry-title"') == 3
    finally:
        server.stop()


def _a_new_process() -> None:
    """What a process that starts now knows of the tag versions: nothing (the process that
    failed to retire is gone, with its memory of the retirement it owes)."""
    from digest_site import cache_tags

    cache_tags.forget()


@needs_redis_server
def test_a_retirement_owed_by_a_dead_process_is_made_by_the_periodic_publisher(db, redis_server):
    from audit.models import PendingBump
    from dailies.tasks import publish_due_dailies

    daily = make_daily()
    Client().get(DAILY)
    redis_server.pause()
    daily_unpublish(daily=daily, user=None)  # the retirement cannot reach the cache: recorded
    assert PendingBump.objects.count() >= 1
    _a_new_process()
    redis_server.resume()  # with the daily's page, under the version before the unpublish
    publish_due_dailies()  # the next tick, in any process
    assert _served_from_cache(Client(), DAILY)[0] == 404
    assert not PendingBump.objects.exists()


def test_a_recorded_retirement_waits_while_the_cache_is_still_down(db, unreachable_cache):
    from audit.models import PendingBump
    from digest_site import cache_tags

    cache_tags.retire("daily:1")
    _a_new_process()
    assert PendingBump.objects.count() == 1
    assert cache_tags.retire_pending() is False  # the cache still refuses it
    assert PendingBump.objects.count() == 1  # kept for the next tick


def test_a_write_rolled_back_leaves_no_pending_bump(db, unreachable_cache):
    from django.db import transaction

    from audit.models import PendingBump
    from digest_site import cache_tags

    with pytest.raises(RuntimeError), transaction.atomic():
        cache_tags.retire("daily:1")
        raise RuntimeError("the write fails after its retirement")
    assert not PendingBump.objects.exists()


# -- a Redis that accepts connections and never answers ------------------------------------

TIMEOUT = 0.3


@pytest.fixture
def hung_cache(settings):
    """The cache is a server that accepts connections and never answers."""
    with silent_server() as server:
        settings.CACHES = redis_caches(server.port, timeout=TIMEOUT)
        yield server


def test_a_hung_redis_costs_one_timeout_then_nothing(db, hung_cache, settings):
    from django.core.cache import cache

    settings.CACHE_BREAKER_S = 30
    started = time.monotonic()
    with pytest.raises(redis.TimeoutError):
        cache.get("x")
    # The socket timeout is the behaviour: the first call waits it out, and no more.
    assert time.monotonic() - started < 10 * TIMEOUT
    assert hung_cache.connections() == 1
    make_daily()  # its retirement of the cached pages fails at once too
    client = Client()
    for url in (DAILY, "/en/", "/en/papers/", "/en/topics/", "/api/v1/dailies/", DAILY):
        assert client.get(url).status_code == 200, url
    # Every other user of the cache (limiters, locks, the throttle) fails at once too.
    for call, args in ((cache.get, ("x",)), (cache.add, ("lock", 1)), (cache.incr, ("count",))):
        with pytest.raises(redis.ConnectionError, match="circuit breaker open"):
            call(*args)
    assert hung_cache.connections() == 1  # none of them went near the hung server


class _Clock:
    """The ``time`` module as the cache backend sees it, with a monotonic clock the test
    moves (the breaker's window), while each call's timeout runs on the real one."""

    def __init__(self) -> None:
        self.now = time.monotonic()

    def monotonic(self) -> float:
        return self.now

    def __getattr__(self, name: str):
        return getattr(time, name)


def test_the_breaker_tries_redis_again_once_its_window_has_passed(
    hung_cache, settings, monkeypatch
):
    from django.core.cache import cache

    from digest_site import cache_backend

    clock = _Clock()
    monkeypatch.setattr(cache_backend, "time", clock)
    settings.CACHE_BREAKER_S = 1.0

    def tries() -> int:
        """How many times ``cache.get`` went to the server: each fails with Redis's error."""
        before = hung_cache.connections()
        with pytest.raises(redis.RedisError):
            cache.get("x")
        return hung_cache.connections() - before

    assert tries() == 1
    assert tries() == 0
    clock.now += 0.999
    assert tries() == 0  # just inside the window
    clock.now += 0.002
    assert tries() == 1  # just past it: Redis is tried again
