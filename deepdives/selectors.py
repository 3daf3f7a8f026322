"""Reads of deep dives and reference code for the public pages."""

from __future__ import annotations

from django.db.models import Prefetch

from deepdives.models import DeepDive, ReferenceCode
from digest_site.rows import Columns, Read, one_of, table
from papers.models import Paper

# What the pages read of a paper's deep dives (the published ones, without their bodies)
# and of its reference programs (with the module, which the paper page's run command
# names): one definition for the prefetch and for the reader of papers in hand.
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


_DEEP_DIVE = Columns(DeepDive, "dd", _DEEP_DIVE_FIELDS)
_REFERENCE_CODE = Columns(ReferenceCode, "rc", _REFERENCE_CODE_FIELDS)


def _read_into(
    papers: dict[int, Paper], attribute: str, columns: Columns, sql: str, params
) -> Read | None:
    for paper in papers.values():
        setattr(paper, attribute, [])
    if not papers:
        return None

    def apply(rows: list[tuple]) -> None:
        for row in rows:
            obj = columns.build(row)
            getattr(papers[obj.paper_id], attribute).append(obj)

    return Read(sql, params, apply)


def read_deep_dives(papers: dict[int, Paper]) -> Read | None:
    """``deep_dive_prefetch`` for papers in hand (``dailies.extensions``): one query."""
    ids, ids_params = one_of(list(papers))
    return _read_into(
        papers,
        "deep_dive_list",
        _DEEP_DIVE,
        f"SELECT {_DEEP_DIVE.sql} FROM {table(DeepDive)} dd WHERE dd.status = %s "
        f"AND dd.paper_id {ids} ORDER BY dd.slug, dd.id",
        [DeepDive.Status.PUBLISHED, *ids_params],
    )


def read_reference_codes(papers: dict[int, Paper]) -> Read | None:
    """``reference_code_prefetch`` for papers in hand (``dailies.extensions``): one query."""
    ids, ids_params = one_of(list(papers))
    return _read_into(
        papers,
        "reference_code_list",
        _REFERENCE_CODE,
        f"SELECT {_REFERENCE_CODE.sql} FROM {table(ReferenceCode)} rc "
        f"WHERE rc.paper_id {ids} ORDER BY rc.name, rc.id",
        ids_params,
    )


def papers_with_published_deep_dive(paper_ids: list[int]) -> set[int]:
    """Which of these papers have a deep dive set to published (readers see it once the
    paper's daily is out). One query."""
    return set(
        DeepDive.objects.filter(
            paper_id__in=paper_ids, status=DeepDive.Status.PUBLISHED
        ).values_list("paper_id", flat=True)
    )
