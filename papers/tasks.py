"""Thin Celery tasks for ingest: take ids, call one service, enqueue after commit."""

from __future__ import annotations

from celery import shared_task
from django.db import transaction

from papers.ingest import limits
from papers.ingest.service import ingest_enabled_source, ingest_runs_fail_stale, sources_claim_due
from papers.scoring.service import scores_pending


@shared_task
def ingest_due_sources() -> list[int]:
    """Periodic entry point: one task per due source, enqueued after the claims commit."""
    with transaction.atomic():
        claimed = sources_claim_due()
        for source_id in claimed:
            ingest_source_task.delay_on_commit(source_id)
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
    """Idempotent: a redelivered or rerun task upserts the same items to the same state.

    A run that failed because the source could not be reached (it stored nothing) is run
    again five minutes later, twice at most; any other failure would only repeat itself.
    """
    outcome = ingest_enabled_source(source_id=source_id)
    if outcome is None:
        return {"status": "skipped", "reason": "source missing or disabled"}
    run = outcome.run
    if outcome.retryable and self.request.retries < self.max_retries:
        raise self.retry()
    if run.new or run.updated:
        # New and changed papers are queued for scoring once this run has committed.
        score_pending_papers.delay_on_commit()
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
