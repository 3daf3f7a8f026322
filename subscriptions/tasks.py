"""Thin Celery tasks: take ids, call one service."""

from __future__ import annotations

import smtplib

from celery import shared_task

from subscriptions import follows, services

# A confirmation mail is one message: a passing SMTP or network failure is retried by Celery.
CONFIRMATION_RETRY = {
    "acks_late": True,
    "autoretry_for": (smtplib.SMTPException, OSError),
    "retry_backoff": 60,
    "retry_backoff_max": 3600,
    "max_retries": 4,
}
# A batch is limits.BATCH_SIZE messages of one SMTP conversation each (EMAIL_TIMEOUT at most);
# its failed deliveries go into one new task (the outcome's retry), not a Celery retry.
BATCH_LIMITS = {"acks_late": True, "soft_time_limit": 10 * 60, "time_limit": 11 * 60}


def digest_on_publish(daily_id: int) -> None:
    """Registered with dailies: runs once the publishing transaction has committed."""
    fan_out_digest.delay(daily_id)


@shared_task
def resume_digests() -> list[int]:
    """Periodic entry point: fan out again each recently published daily. Idempotent: only
    what was never sent (and is not held or waiting for its retry time) goes out."""
    daily_ids = services.digest_dailies_to_resume()
    for daily_id in daily_ids:
        fan_out_digest.delay(daily_id, resume=True)
    return daily_ids


@shared_task(acks_late=True)
def fan_out_digest(daily_id: int, resume: bool = False) -> int:
    """One send task per batch of the daily's recipients; returns how many batches."""
    batches = services.digest_batches(daily_id=daily_id, resume=resume)
    for subscriber_ids in batches:
        send_digest_batch.delay(daily_id, subscriber_ids)
    return len(batches)


@shared_task(**BATCH_LIMITS)
def send_digest_batch(daily_id: int, subscriber_ids: list[int]) -> dict:
    """Idempotent: what was sent is never sent again. Deliveries that failed for a passing
    reason go into one new task, after a backoff that grows with their attempts."""
    outcome = services.digest_send_batch(daily_id=daily_id, subscriber_ids=subscriber_ids)
    if outcome.retry:
        send_digest_batch.apply_async((daily_id, outcome.retry), countdown=outcome.retry_in)
    return outcome.as_dict()


@shared_task(**CONFIRMATION_RETRY)
def send_confirmation(subscriber_id: int) -> bool:
    return services.subscriber_send_confirmation(subscriber_id=subscriber_id)


@shared_task
def send_follow_mails() -> dict:
    """Periodic entry point: for the daily and the weekly follows, the last period that is
    over, one send task per batch of follows still due it. Idempotent: a follow's period is
    mailed once whatever the number of runs."""
    batches = {}
    for frequency in follows.Frequency.values:
        period = follows.follow_period_due(frequency)
        ids = follows.follow_batches(period=period)
        for follow_ids in ids:
            send_follow_batch.delay(frequency, period.key, follow_ids)
        batches[frequency] = len(ids)
    return batches


@shared_task(**BATCH_LIMITS)
def send_follow_batch(frequency: str, period_key: str, follow_ids: list[int]) -> dict:
    outcome = follows.follow_send_batch(
        frequency=frequency, period_key=period_key, follow_ids=follow_ids
    )
    if outcome.retry:
        send_follow_batch.apply_async(
            (frequency, period_key, outcome.retry), countdown=outcome.retry_in
        )
    return outcome.as_dict()


@shared_task(**CONFIRMATION_RETRY)
def send_follow_confirmation(follow_id: int) -> bool:
    return follows.follow_send_confirmation(follow_id=follow_id)
