"""Health and readiness probes for load balancers and monitors.

``/healthz``: is this process able to serve? The database answers ``SELECT 1`` and, when
``REDIS_URL`` is set, Redis answers ``PING``. ``/readyz``: may a load balancer send it traffic?
The same, plus every migration applied and the cache round-tripping a value. Each answers
200 ``ok`` or 503 with one line per check, naming what is down. Neither is cached; both live
outside the language prefixes, so nothing redirects them.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from django.conf import settings
from django.core.cache import cache
from django.db import DEFAULT_DB_ALIAS, connections
from django.db.migrations.executor import MigrationExecutor
from django.http import HttpRequest, HttpResponse
from django.views.decorators.cache import never_cache

log = logging.getLogger(__name__)

Check = Callable[[], None]


class NotReady(Exception):
    """A check that failed for a reason safe to show on the public probe."""


# Set once every migration is applied: a running process never loses a migration, and
# loading the migration graph on every probe would cost more than the probe itself.
_migrations_applied = False


def _check_database() -> None:
    with connections[DEFAULT_DB_ALIAS].cursor() as cursor:
        cursor.execute("SELECT 1")
        cursor.fetchone()


def _check_redis() -> None:
    # Imported here: it costs every process's start (manage.py, workers) about 0.15 s of CPU.
    import redis

    client = redis.Redis.from_url(
        settings.REDIS_URL,
        socket_connect_timeout=settings.HEALTH_CHECK_TIMEOUT,
        socket_timeout=settings.HEALTH_CHECK_TIMEOUT,
    )
    try:
        client.ping()
    finally:
        client.close()


def _check_migrations() -> None:
    global _migrations_applied
    if _migrations_applied:
        return
    executor = MigrationExecutor(connections[DEFAULT_DB_ALIAS])
    pending = executor.migration_plan(executor.loader.graph.leaf_nodes())
    if pending:
        raise NotReady(f"{len(pending)} unapplied")
    _migrations_applied = True


def _check_cache() -> None:
    cache.set("health:probe", "1", timeout=30)
    if cache.get("health:probe") != "1":
        raise NotReady("a value written was not read back")


def _run(checks: dict[str, Check]) -> HttpResponse:
    lines, down = [], False
    for name, check in checks.items():
        if down and name in {"migrations", "cache"}:
            # They need what already failed; do not wait for a second timeout.
            lines.append(f"{name}: skipped")
            continue
        try:
            check()
        except Exception as exc:  # any failure means down; the probe itself must answer
            log.warning("health check %s failed: %r", name, exc)
            # Otherwise the exception's class, not its message: the probe is public and
            # driver messages name hosts and ports.
            detail = str(exc) if isinstance(exc, NotReady) else type(exc).__name__
            lines.append(f"{name}: down ({detail})")
            down = True
        else:
            lines.append(f"{name}: ok")
    if down:
        return HttpResponse("\n".join(lines) + "\n", status=503, content_type="text/plain")
    return HttpResponse("ok", content_type="text/plain")


def _dependencies() -> dict[str, Check]:
    checks: dict[str, Check] = {"database": _check_database}
    if settings.REDIS_URL:
        checks["redis"] = _check_redis
    return checks


@never_cache
def healthz(request: HttpRequest) -> HttpResponse:
    return _run(_dependencies())


@never_cache
def readyz(request: HttpRequest) -> HttpResponse:
    return _run({**_dependencies(), "migrations": _check_migrations, "cache": _check_cache})
