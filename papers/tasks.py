"""Thin Celery tasks for ingest: take ids, call one service."""

from __future__ import annotations

import datetime as dt
import logging

from celery import shared_task
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from papers.ingest import limits
from papers.ingest.service import ingest_runs_fail_stale, ingest_source
from papers.models import IngestRun, Source
from papers.scoring.service import scores_pending

log = logging.getLogger(__name__)


def claim_due_sources(now: dt.datetime | None = None) -> list[int]:
    """Claim every due source with a conditional UPDATE, so a doubled beat or two fan-outs
    at once enqueue each source once."""
    now = now or timezone.now()
    claimed = []
    candidates = Source.objects.filter(enabled=True).exclude(kind=Source.Kind.MANUAL)
    for source in candidates.only("pk", "last_run_at", "interval_minutes"):
        due_before = now - dt.timedelta(minutes=source.interval_minutes)
        won = Source.objects.filter(
            Q(last_run_at__isnull=True) | Q(last_run_at__lte=due_before), pk=source.pk
        ).update(last_run_at=now)
        if won:
            claimed.append(source.pk)
    return claimed


@shared_task
def ingest_due_sources() -> list[int]:
    """Periodic entry point: one task per due source, enqueued after the claims commit."""
    with transaction.atomic():
        claimed = claim_due_sources()
        for source_id in claimed:
            transaction.on_commit(lambda sid=source_id: ingest_source_task.delay(sid))
    return claimed


@shared_task(
    bind=True,
    acks_late=True,
    soft_time_limit=limits.TASK_SOFT_TIME_LIMIT,
    time_limit=limits.TASK_TIME_LIMIT,
    max_retries=2,
    default_retry_delay=300,
)
def ingest_source_task(self, source_id: int) -> dict:
    """Idempotent: a redelivered or rerun task upserts the same items to the same state."""
    source = Source.objects.filter(pk=source_id, enabled=True).first()
    if source is None:
        return {"status": "skipped", "reason": "source missing or disabled"}
    run = ingest_source(source=source)
    if run.status == IngestRun.Status.FAILED and self.request.retries < self.max_retries:
        # A failed run stored nothing; try again later (network blips, arXiv hiccups).
        raise self.retry()
    if run.new or run.updated:
        # New and changed papers are queued for scoring once this run has committed.
        transaction.on_commit(score_pending_papers.delay)
    return {"status": run.status, "run": run.pk, "new": run.new, "updated": run.updated}


@shared_task
def fail_stale_ingest_runs() -> list[int]:
    """Periodic: runs whose worker was killed are marked failed; their sources run again."""
    return ingest_runs_fail_stale()


@shared_task(acks_late=True, soft_time_limit=20 * 60, time_limit=21 * 60)
def score_pending_papers() -> int:
    """Score new or changed papers for every active track. Idempotent: a rerun finds nothing
    left to score (or adds an identical newer row for a paper that changed again)."""
    return scores_pending()
