"""The paper page's reads: a paper with its lists, appearances and scores, and the headings
of the papers it links."""

from __future__ import annotations

from collections.abc import Sequence

from django.db.models import Prefetch

from dailies.selectors.common import appearances, paper_lists, published_papers, visible_papers
from digest_site.visibility import Reader
from papers.models import Paper, Score, Summary


def paper_page(slug: str, *, user: Reader) -> Paper | None:
    """The paper of ``slug`` if ``user`` may read it (``visible_papers``), with its venue, its
    lists, the entries ``user`` may see (``published_entries``) and its scores with their
    tracks, newest first (``score_list``): a fixed 8 queries."""
    scores = Score.objects.select_related("track")
    return (
        visible_papers(user)
        .filter(slug=slug)
        .select_related("venue")
        .prefetch_related(
            *paper_lists(),
            appearances(user),
            Prefetch("scores", queryset=scores, to_attr="score_list"),
        )
        .first()
    )


def paper_headings(ids: Sequence[int]) -> dict[int, Paper]:
    """The papers of ``ids`` that readers may see (``published_papers()``), by id, with what
    a list of their headings prints (``digest.entry_heading`` and ``digest.headline_mark``:
    the names and title, and the summaries' headlines and who wrote them): two queries."""
    if not ids:
        return {}
    summaries = Summary.objects.only("paper", "language", "headline", "provenance")
    papers = (
        published_papers()
        .filter(pk__in=ids)
        .only("slug", "title", "short_name")
        .prefetch_related(Prefetch("summaries", queryset=summaries))
    )
    return {paper.pk: paper for paper in papers}
