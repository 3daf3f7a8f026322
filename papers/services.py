"""Writes to papers: small, typed, keyword-only, atomic."""

from __future__ import annotations

from django.db import transaction

from papers.models import Paper, Summary


@transaction.atomic
def summary_set(
    *,
    paper: Paper,
    language: str,
    body: str,
    takeaway: str,
    headline: str = "",
    highlights: list[str] | None = None,
    provenance: str = Summary.Provenance.EDITOR,
) -> Summary | None:
    """Create or update a paper's summary in one language; an empty body removes it."""
    if not body.strip():
        Summary.objects.filter(paper=paper, language=language).delete()
        return None
    summary = Summary.objects.filter(paper=paper, language=language).first() or Summary(
        paper=paper, language=language
    )
    summary.body = body.strip()
    summary.takeaway = takeaway.strip()
    summary.headline = headline.strip()
    summary.highlights = [h.strip() for h in (highlights or []) if h.strip()]
    summary.provenance = provenance
    summary.full_clean()
    summary.save()
    return summary


def missing_languages(paper: Paper) -> list[str]:
    """Languages the paper has no summary in. Reads ``paper.summaries.all()``."""
    have = {s.language for s in paper.summaries.all()}
    return [code for code in ("en", "zh") if code not in have]
