"""The index's reads (also the topic, follow and search pages', the feeds' and the API's):
published papers by their latest appearance, how many there are, and search results."""

from __future__ import annotations

from collections.abc import Sequence

from django.db.models import Exists, F, OuterRef, Q, QuerySet

from dailies.models import DailyEntry, published_q
from dailies.selectors.common import appearances, paper_lists, published_papers
from digest_site.visibility import PUBLIC
from papers.models import Paper, Topic


def index_papers() -> QuerySet[Paper]:
    """Papers of published dailies, newest daily first, then by their place in that daily
    (``last_appeared``, ``last_position``, then ``pk``), with what an index item prints.

    Each paper is read through its latest published appearance: the join keeps the entries
    that no later published entry of the same paper outranks (newer day; on the same day a
    better place, then the older entry). The order is then the dailies' own, so the
    database walks the published dailies newest first (``dailies_daily_status_date_idx``)
    and stops when a page is full, instead of ranking every published paper: a page costs
    the same on the first day and after years. The page slices this queryset; prefetches
    then run once per page (fixed query count).
    """
    later = DailyEntry.objects.visible_to(PUBLIC).filter(paper=OuterRef("pk"))
    outranked = (
        Q(daily__date__gt=OuterRef("last_appeared"))
        | Q(daily__date=OuterRef("last_appeared"), position__lt=OuterRef("last_position"))
        | Q(
            daily__date=OuterRef("last_appeared"),
            position=OuterRef("last_position"),
            pk__lt=OuterRef("appearance"),
        )
    )
    return (
        Paper.objects.filter(published_q("daily_entries__daily__"))
        .annotate(
            last_appeared=F("daily_entries__daily__date"),
            last_position=F("daily_entries__position"),
            appearance=F("daily_entries__pk"),
        )
        .filter(~Exists(later.filter(outranked)))
        .select_related("venue")
        .prefetch_related(*paper_lists(), appearances())
        .order_by("-last_appeared", "last_position", "pk")
    )


def index_paper_count(*, topic: Topic | None = None) -> int:
    """How many papers ``index_papers()`` lists (of ``topic``): the distinct papers of the
    published entries."""
    entries = DailyEntry.objects.visible_to(PUBLIC)
    if topic is not None:
        entries = entries.filter(paper__topics=topic)
    return entries.values("paper_id").distinct().count()


def search_result_papers(ids: Sequence[int]) -> dict[int, Paper]:
    """The papers of ``ids`` that readers may see (``published_papers()``: a stale search
    index row never shows an unpublished paper), by id, with what a result prints."""
    if not ids:
        return {}
    papers = (
        published_papers()
        .filter(pk__in=ids)
        .select_related("venue")
        .prefetch_related(*paper_lists(), appearances())
    )
    return {paper.pk: paper for paper in papers}
