"""Reads of deep dives and reference code for the public pages."""

from __future__ import annotations

from django.db.models import Prefetch

from deepdives.models import DeepDive, ReferenceCode


def deep_dive_prefetch(prefix: str = "") -> Prefetch:
    """Prefetch a paper's published deep dive into ``paper.deep_dive_list``.

    Only papers readers can already see are on the pages that use this, so the deep dive's
    own status is the remaining condition.
    """
    queryset = DeepDive.objects.filter(status=DeepDive.Status.PUBLISHED).defer("body_en", "body_zh")
    return Prefetch(f"{prefix}deep_dives", queryset=queryset, to_attr="deep_dive_list")


def reference_code_prefetch(prefix: str = "") -> Prefetch:
    """Prefetch a paper's registered reference programs into ``paper.reference_code_list``
    (with the module, which the paper page's run command names)."""
    queryset = ReferenceCode.objects.only("id", "slug", "name", "module", "paper_id", "last_status")
    return Prefetch(f"{prefix}reference_codes", queryset=queryset, to_attr="reference_code_list")


def papers_with_published_deep_dive(paper_ids: list[int]) -> set[int]:
    """Which of these papers have a deep dive set to published (readers see it once the
    paper's daily is out). One query."""
    return set(
        DeepDive.objects.filter(
            paper_id__in=paper_ids, status=DeepDive.Status.PUBLISHED
        ).values_list("paper_id", flat=True)
    )
