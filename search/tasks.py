"""Thin Celery tasks: call one service."""

from __future__ import annotations

from celery import shared_task

from search import vectors
from search.index import search_index_refresh_stale


@shared_task(acks_late=True, soft_time_limit=5 * 60, time_limit=6 * 60)
def refresh_stale_search_index() -> dict[str, int]:
    """Periodic: index what was published, withdrawn or edited since it was last indexed
    (paper and summary edits reach the index this way; papers cannot call up to us), then
    embed the papers whose embedding is missing or stale (a model change re-embeds)."""
    counts = search_index_refresh_stale()
    if vectors.enabled():
        counts.update(vectors.embeddings_refresh_stale())
    return counts


@shared_task(acks_late=True, soft_time_limit=5 * 60, time_limit=6 * 60)
def embed_papers(paper_ids: list[int]) -> dict[str, int]:
    """Embed the papers just indexed (in batches; at most EMBED_PER_RUN, the sweep does the
    rest)."""
    return vectors.embeddings_refresh(paper_ids=paper_ids)
