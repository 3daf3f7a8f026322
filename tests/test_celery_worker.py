"""A real Celery worker, fed through Redis, publishes a due daily into PostgreSQL."""

from __future__ import annotations

import datetime as dt
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from django.conf import settings
from django.db import connection
from django.utils import timezone

from dailies import services
from dailies.models import Daily
from dailies.tasks import publish_due_dailies
from tests.factories import make_daily

ROOT = Path(__file__).resolve().parent.parent

pytestmark = [
    pytest.mark.redis,
    pytest.mark.postgres,
    pytest.mark.skipif(
        not (settings.REDIS_URL and settings.DATABASES["default"]["ENGINE"].endswith("postgresql")),
        reason="needs REDIS_URL and a PostgreSQL DATABASE_URL (CI sets both)",
    ),
]


def _test_database_url() -> str:
    """The URL of the database this test run actually uses (pytest-django's test_ copy)."""
    s = connection.settings_dict
    auth = s["USER"] + (f":{s['PASSWORD']}" if s["PASSWORD"] else "")
    return f"postgres://{auth}@{s['HOST'] or '127.0.0.1'}:{s['PORT'] or 5432}/{s['NAME']}"


@pytest.fixture
def worker(transactional_db):
    env = {**os.environ, "DATABASE_URL": _test_database_url(), "REDIS_URL": settings.REDIS_URL}
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "digest_site",
            "worker",
            "--pool=solo",
            "--concurrency=1",
            "--loglevel=INFO",
            "--without-gossip",
            "--without-mingle",
            "--hostname",
            f"test-{os.getpid()}@%h",
        ],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        from digest_site.celery import app

        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                pytest.fail(f"worker exited early:\n{proc.communicate()[0]}")
            if app.control.ping(timeout=1.0):
                break
        else:
            pytest.fail("worker did not answer a ping within 60 s")
        yield proc
    finally:
        proc.terminate()
        try:
            proc.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
        connection.close()


def test_a_real_worker_publishes_a_due_daily_into_postgres(worker):
    daily = make_daily(status=Daily.Status.DRAFT)
    services.daily_schedule(daily=daily, publish_at=timezone.now() - dt.timedelta(minutes=1))

    result = publish_due_dailies.delay()
    assert result.get(timeout=60) == [daily.pk]  # ran in the worker, answered through Redis

    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        daily.refresh_from_db()
        if daily.status == Daily.Status.PUBLISHED:
            break
        time.sleep(0.2)
    assert daily.status == Daily.Status.PUBLISHED
    assert daily.published_at is not None
