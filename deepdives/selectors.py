"""Reads of deep dives and reference code for the public pages."""

from __future__ import annotations

from django.db.models import Prefetch

from deepdives.models import DeepDive, ReferenceCode

# What the pages read of a paper's deep dives (the published ones, without their bodies)
# and of its reference programs (with the module, which the paper page's run command
# names).
_DEEP_DIVE_FIELDS = [
    f.name for f in DeepDive._meta.concrete_fields if f.name not in ("body_en", "body_zh")
]
_REFERENCE_CODE_FIELDS = ["id", "slug", "name", "module", "paper", "last_status"]


def deep_dive_prefetch(prefix: str = "") -> Prefetch:
    """Prefetch a paper's published deep dive into ``paper.deep_dive_list``.

    Only papers readers can already see are on the pages that use this, so the deep dive's
    own status is the remaining condition.
    """
    queryset = DeepDive.objects.filter(status=DeepDive.Status.PUBLISHED).only(*_DEEP_DIVE_FIELDS)
    return Prefetch(f"{prefix}deep_dives", queryset=queryset, to_attr="deep_dive_list")


def reference_code_prefetch(prefix: str = "") -> Prefetch:
    """Prefetch a paper's registered reference programs into ``paper.reference_code_list``."""
    queryset = ReferenceCode.objects.only(*_REFERENCE_CODE_FIELDS)
    return Prefetch(f"{prefix}reference_codes", queryset=queryset, to_attr="reference_code_list")


def papers_with_published_deep_dive(paper_ids: list[int]) -> set[int]:
    """Which of these papers have a deep dive set to published (readers see it once the
    paper's daily is out). One query."""
    return set(
        DeepDive.objects.filter(
            paper_id__in=paper_ids, status=DeepDive.Status.PUBLISHED
        ).values_list("paper_id", flat=True)
    )
