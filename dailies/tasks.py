"""Thin Celery tasks: take ids, call one service."""

from __future__ import annotations

import datetime as dt
import logging

from celery import shared_task
from django.core.exceptions import ValidationError

from dailies import services
from dailies.assembly import daily_assemble, tracks_due_for_assembly
from dailies.drafting import daily_draft, daily_paper_draft, papers_needing_redraft
from dailies.models import Daily
from digest_site.cache_tags import retire_pending
from papers.models import Paper, Track

log = logging.getLogger(__name__)


@shared_task
def publish_due_dailies() -> list[int]:
    """Periodic entry point: fan out one task per due daily (and make a retirement of cached
    pages that a process could not make when it changed them: the cache was down)."""
    retire_pending()
    due = services.dailies_due()
    for daily_id in due:
        publish_daily_if_due.delay(daily_id)
    return due


@shared_task
def publish_daily_if_due(daily_id: int) -> bool:
    """No retries of its own: ``publish_due_dailies`` finds every due daily again each
    minute and publishing is idempotent, so the next tick is the retry of a transient
    error (a database that went away), and a second path would only race it."""
    try:
        return services.daily_publish_if_due(daily_id=daily_id)
    except ValidationError as exc:
        # Not retryable: an editor has to fix the daily. Leave it scheduled and say why.
        log.error("daily %s is due but cannot be published: %s", daily_id, exc)
        return False


@shared_task
def assemble_due_dailies() -> list[str]:
    """Periodic entry point: for each active track whose assembly time has passed today
    (editorial time zone) and that has no daily yet, one assembly task."""
    due = tracks_due_for_assembly()
    for track, date in due:
        assemble_daily.delay(track.pk, date.isoformat())
    return [f"{track.pk}:{date}" for track, date in due]


@shared_task(acks_late=True, soft_time_limit=20 * 60, time_limit=21 * 60)
def assemble_daily(track_id: int, date: str) -> dict:
    """Idempotent: re-assembling an unedited draft refreshes it to the same result."""
    track = Track.objects.get(pk=track_id)
    return daily_assemble(track=track, date=dt.date.fromisoformat(date)).as_dict()


@shared_task(acks_late=True, soft_time_limit=30 * 60, time_limit=31 * 60)
def draft_daily_task(daily_id: int, redraft: bool = False) -> dict:
    """Draft a daily's entries and intro (queued on commit after assembly). Idempotent: what
    is already drafted from the same source is skipped, editors' texts are never touched."""
    daily = Daily.objects.select_related("track").filter(pk=daily_id).first()
    if daily is None:
        return {"daily": daily_id, "status": "gone"}
    return daily_draft(daily=daily, redraft=redraft).summary_line()


@shared_task
def redraft_changed_papers() -> list[int]:
    """Periodic entry point: one re-drafting task per paper whose source changed (a new arXiv
    version) since its machine texts were drafted."""
    paper_ids = papers_needing_redraft()
    for paper_id in paper_ids:
        redraft_paper_task.delay(paper_id)
    return paper_ids


@shared_task(acks_late=True, soft_time_limit=5 * 60, time_limit=6 * 60)
def redraft_paper_task(paper_id: int) -> dict:
    paper = Paper.objects.filter(pk=paper_id).first()
    if paper is None:
        return {"paper": paper_id, "status": "gone"}
    return daily_paper_draft(paper=paper, track=paper.tracks.first()).as_dict()
