"""Thin Celery tasks for verifying reference code."""

from __future__ import annotations

from celery import shared_task

from deepdives import services


@shared_task
def verify_all_reference_code() -> list[str]:
    """Periodic entry point: sync the registry's rows, then one task per registered program."""
    names = [row.slug for row in services.reference_sync()]
    for name in names:
        verify_reference_code.delay(name)
    return names


@shared_task(acks_late=True)
def verify_reference_code(name: str) -> str:
    return services.reference_verify(name=name).last_status
