"""A real Celery worker, fed through Redis, publishes a due daily into PostgreSQL."""

from __future__ import annotations

import datetime as dt
import time

import pytest
from django.conf import settings
from django.utils import timezone

from dailies import services
from dailies.models import Daily
from dailies.tasks import publish_due_dailies
from tests.factories import make_daily

pytestmark = [
    pytest.mark.redis,
    pytest.mark.postgres,
    pytest.mark.skipif(
        not (settings.REDIS_URL and settings.DATABASES["default"]["ENGINE"].endswith("postgresql")),
        reason="needs REDIS_URL and a PostgreSQL DATABASE_URL (CI sets both)",
    ),
]


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
