"""The topics' reads (the home page's chips, the topic index, the API): topics with
published papers and their counts."""

from __future__ import annotations

from django.db.models import Count, QuerySet

from dailies.models import DailyEntry
from digest_site import part_cache
from papers.models import Topic


def topics_with_papers() -> QuerySet[Topic]:
    """Topics that have published papers, the most papers first, each with ``n`` (lazy).

    Only the topic links of papers in published entries are joined and counted (a link is
    unique per paper and topic, so each counts one paper): counting every link and testing
    each against the published papers reads the links of every ingested candidate, ten
    times the published papers over a year.
    """
    published = DailyEntry.objects.published().values("paper_id")
    return (
        Topic.objects.filter(papers__in=published)
        .annotate(n=Count("papers"))
        .order_by("-n", "name_en")
    )


def published_topics() -> list[Topic]:
    """``topics_with_papers()`` as a list, stored in the cache under the versions of the
    ``topics`` and ``index`` tags, which every change to a topic or to which papers are
    published retires (one query when it is not stored, none when it is)."""
    return part_cache.cached_value(
        "topic-counts", ("topics", "index"), lambda: list(topics_with_papers())
    )
