"""Thin Celery tasks: take ids, call one service."""

from __future__ import annotations

import logging

from celery import shared_task
from django.core.exceptions import ValidationError

from dailies import services

log = logging.getLogger(__name__)


@shared_task
def publish_due_dailies() -> list[int]:
    """Periodic entry point: fan out one task per due daily."""
    due = services.dailies_due()
    for daily_id in due:
        publish_daily_if_due.delay(daily_id)
    return due


@shared_task(bind=True, max_retries=3, default_retry_delay=30)
def publish_daily_if_due(self, daily_id: int) -> bool:
    try:
        return services.daily_publish_if_due(daily_id=daily_id)
    except ValidationError as exc:
        # Not retryable: an editor has to fix the daily. Leave it scheduled and say why.
        log.error("daily %s is due but cannot be published: %s", daily_id, exc)
        return False
