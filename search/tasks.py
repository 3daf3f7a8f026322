"""Thin Celery tasks: call one service."""

from __future__ import annotations

from celery import shared_task

from search.index import search_index_refresh_stale


@shared_task(acks_late=True, soft_time_limit=5 * 60, time_limit=6 * 60)
def refresh_stale_search_index() -> dict[str, int]:
    """Periodic: index what was published, withdrawn or edited since it was last indexed
    (paper and summary edits reach the index this way; papers cannot call up to us)."""
    return search_index_refresh_stale()
