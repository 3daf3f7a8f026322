"""/healthz and /readyz: 200 ``ok`` when every dependency answers, 503 naming the one that
does not; and a PostgreSQL that drops its connections costs a reconnect, not a 500."""

from __future__ import annotations

import io
import os
import subprocess
import sys
import time
from pathlib import Path

import psycopg
import pytest
import redis  # noqa: F401  (the health check imports it at its first use: not in a timed call)
from django.core.handlers.wsgi import WSGIHandler
from django.core.management import call_command
from django.db import connection

from digest_site import health
from tests import cache_servers

ROOT = Path(__file__).resolve().parent.parent
CLOSED_PORT = 1  # nothing listens on 127.0.0.1:1


@pytest.fixture
def unmemoised(monkeypatch):
    """Forget that this process already saw every migration applied."""
    monkeypatch.setattr(health, "_migrations_applied", False)


@pytest.fixture
def silent_server():
    """A TCP server on 127.0.0.1 that accepts connections and never answers."""
    with cache_servers.silent_server() as server:
        yield server.port


@pytest.mark.parametrize("path", ["/healthz", "/readyz"])
def test_it_answers_ok_when_everything_is_up(db, anonymous, unmemoised, path):
    response = anonymous.get(path, headers={"accept-language": "zh-CN"})
    assert response.status_code == 200
    assert response.content == b"ok"
    assert response["Content-Type"] == "text/plain"
    assert "no-store" in response["Cache-Control"]


@pytest.mark.parametrize("path", ["/healthz", "/readyz"])
def test_it_is_not_redirected_to_https_or_a_language(db, anonymous, settings, path):
    settings.SECURE_SSL_REDIRECT = True
    assert anonymous.get(path, headers={"accept-language": "zh"}).status_code == 200
    assert anonymous.get("/en/").status_code == 301  # the pages still go to https


def test_it_names_redis_when_redis_is_unreachable(db, anonymous, settings):
    settings.REDIS_URL = f"redis://127.0.0.1:{CLOSED_PORT}/0"
    response = anonymous.get("/healthz")
    assert response.status_code == 503
    assert response.content.decode().splitlines() == [
        "database: ok",
        "redis: down (ConnectionError)",
    ]
    ready = anonymous.get("/readyz")
    assert ready.status_code == 503
    assert "redis: down (ConnectionError)" in ready.content.decode()


def test_it_gives_up_on_a_silent_redis_at_its_timeout(db, anonymous, settings, silent_server):
    settings.REDIS_URL = f"redis://127.0.0.1:{silent_server}/0"
    settings.HEALTH_CHECK_TIMEOUT = 0.4
    started = time.monotonic()
    response = anonymous.get("/healthz")
    elapsed = time.monotonic() - started
    assert response.status_code == 503
    assert "redis: down (TimeoutError)" in response.content.decode()
    assert 0.4 <= elapsed < 1.5


def _in_a_fresh_process(code: str, **environ: str) -> list[str]:
    """Run ``code`` in ``manage.py shell`` with ``environ`` (no DATABASE_URL or REDIS_URL
    unless given); returns what it printed, line by line."""
    env = {k: v for k, v in os.environ.items() if k not in {"DATABASE_URL", "REDIS_URL"}}
    env.update(environ, VAR_DIR=str(ROOT / "var" / "health-test"))
    result = subprocess.run(
        [sys.executable, "manage.py", "shell", "--no-imports", "-c", code],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=90,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout.splitlines()


# Asks both probes; prints each answer and how long it took.
PROBE = """
import time
from django.test import Client
from django.urls import get_resolver
get_resolver().url_patterns  # the URLconf and views, loaded by a fresh process's first request
c = Client()
for path in ("/healthz", "/readyz"):
    started = time.monotonic()
    r = c.get(path)
    elapsed = time.monotonic() - started
    print(path, r.status_code, r.content.decode().strip().replace("\\n", " | "))
    print(f"{elapsed:.2f}")
"""


# Asks three pages; prints each one's status, Retry-After and content type.
PAGES = """
from django.test import Client
c = Client(raise_request_exception=False)
for path in ("/en/", "/en/papers/", "/api/v1/papers/"):
    r = c.get(path)
    print(path, r.status_code, r.get("Retry-After"), r["Content-Type"].split(";")[0])
"""


@pytest.fixture(scope="module")
def with_the_database_stopped() -> list[str]:
    """What the probes, then the pages, answered in one fresh process whose database refuses
    every connection (one process for both: each boot costs about 2 s of CPU)."""
    return _in_a_fresh_process(
        PROBE + PAGES,
        DATABASE_URL=f"postgres://postgres@127.0.0.1:{CLOSED_PORT}/postgres",
        DEBUG="0",
    )


def test_it_names_the_database_when_it_is_stopped(with_the_database_stopped):
    lines = with_the_database_stopped[:4]
    assert lines[0] == "/healthz 503 database: down (OperationalError)"
    assert lines[2] == (
        "/readyz 503 database: down (OperationalError) | migrations: skipped | cache: skipped"
    )
    # A refused connection fails at once, well inside the 5 s connect timeout.
    assert float(lines[1]) < 3 and float(lines[3]) < 3


def test_pages_answer_503_with_retry_after_while_the_database_is_stopped(
    with_the_database_stopped,
):
    assert with_the_database_stopped[4:] == [
        "/en/ 503 30 text/html",
        "/en/papers/ 503 30 text/html",
        "/api/v1/papers/ 503 30 application/json",
    ]


def test_it_gives_up_on_a_database_that_never_answers_at_the_connect_timeout(silent_server):
    lines = _in_a_fresh_process(
        PROBE,
        DATABASE_URL=f"postgres://postgres@127.0.0.1:{silent_server}/postgres",
        DB_CONNECT_TIMEOUT="2",  # libpq's minimum
    )
    assert lines[0] == "/healthz 503 database: down (OperationalError)"
    assert 2.0 <= float(lines[1]) < 3.5


def test_it_gives_up_on_a_silent_redis_cache_at_its_socket_timeout(silent_server):
    code = """
import time
import redis  # the cache's first call imports it: not in the timed call
from django.core.cache import cache
started = time.monotonic()
try:
    cache.get("anything")
except Exception as exc:
    print(type(exc).__name__)
print(f"{time.monotonic() - started:.2f}")
"""
    lines = _in_a_fresh_process(
        code, REDIS_URL=f"redis://127.0.0.1:{silent_server}/0", REDIS_SOCKET_TIMEOUT_MS="500"
    )
    assert lines[0] == "TimeoutError"
    assert 0.5 <= float(lines[1]) < 1.5


@pytest.mark.django_db(transaction=True)
def test_it_is_not_ready_until_every_migration_is_applied(anonymous, unmemoised):
    call_command("migrate", "axes", "0009", verbosity=0)
    try:
        response = anonymous.get("/readyz")
        assert response.status_code == 503
        assert "migrations: down (1 unapplied)" in response.content.decode()
        assert anonymous.get("/healthz").status_code == 200  # alive, just not ready
    finally:
        call_command("migrate", "axes", verbosity=0)
    assert anonymous.get("/readyz").status_code == 200


def _wsgi_get(path: str) -> int:
    """One request through Django's WSGI handler, as gunicorn makes it: request_started and
    request_finished fire, so persistent connections are aged and health-checked."""
    environ = {
        "REQUEST_METHOD": "GET",
        "PATH_INFO": path,
        "SERVER_NAME": "testserver",
        "SERVER_PORT": "80",
        "HTTP_HOST": "testserver",
        "wsgi.url_scheme": "http",
        "wsgi.input": io.BytesIO(),
        "wsgi.errors": sys.stderr,
    }
    statuses = []
    response = WSGIHandler()(environ, lambda status, headers: statuses.append(status))
    b"".join(response)
    response.close()
    return int(statuses[0].split()[0])


def _terminate_our_backend() -> int:
    """A restart or failover, seen from the server side: our connection is terminated (its
    backend's pid returned)."""
    pid = connection.connection.info.backend_pid
    params = connection.get_connection_params()
    with psycopg.connect(**{k: v for k, v in params.items() if k != "cursor_factory"}) as admin:
        killed = admin.execute("SELECT pg_terminate_backend(%s)", [pid]).fetchone()[0]
    assert killed
    return pid


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("path", ["/en/infra/2026-10-28/", "/en/papers/"])
def test_it_reconnects_after_postgres_drops_its_connections(demo, is_postgres, settings, path):
    if not is_postgres:
        pytest.skip("PostgreSQL only: SQLite has no server to drop connections")
    settings.PAGE_CACHE_ENABLED = False  # every request must reach the database
    assert connection.settings_dict["CONN_HEALTH_CHECKS"] is True
    assert connection.settings_dict["CONN_MAX_AGE"] > 0  # connections persist across requests
    assert _wsgi_get(path) == 200

    pid = _terminate_our_backend()

    assert _wsgi_get(path) == 200  # not a 500
    assert connection.connection.info.backend_pid != pid
    assert _wsgi_get("/healthz") == 200
