"""Thin Celery tasks for verifying reference code."""

from __future__ import annotations

from celery import shared_task

from deepdives import services
from deepdives.registry import PROGRAMS


@shared_task
def verify_all_reference_code() -> list[str]:
    """Periodic entry point: one task per registered program."""
    services.reference_sync()
    for name in PROGRAMS:
        verify_reference_code.delay(name)
    return list(PROGRAMS)


@shared_task(acks_late=True)
def verify_reference_code(name: str) -> str:
    return services.reference_verify(name=name).last_status
