"""Writes to papers: small, typed, keyword-only, atomic."""

from __future__ import annotations

from django.db import transaction

from digest_site.content import content_version_bump
from papers.languages import LANGUAGE_CODES
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
    content_version_bump()
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


def paper_record_edits(*, paper: Paper, fields: list[str]) -> None:
    """Remember which machine-written fields an editor changed (ingest's, drafting's), so
    neither writes them again."""
    written = Paper.INGEST_OWNED_FIELDS | Paper.DRAFT_OWNED_FIELDS
    edited = sorted(set(paper.edited_fields or []) | (set(fields) & written))
    if edited != list(paper.edited_fields or []):
        paper.edited_fields = edited
        paper.save(update_fields=["edited_fields"])


def missing_languages(paper: Paper) -> list[str]:
    """Languages the paper has no summary in. Reads ``paper.summaries.all()``."""
    have = {s.language for s in paper.summaries.all()}
    return [code for code in LANGUAGE_CODES if code not in have]
