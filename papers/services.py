"""Writes to papers: small, typed, keyword-only, atomic."""

from __future__ import annotations

from collections.abc import Mapping

from django.db import models, transaction

from audit.models import AuditRecord
from audit.services import audit_diff, audit_record
from digest_site.content import content_version_bump
from digest_site.visibility import check_may_change, is_public
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


@transaction.atomic
def public_content_save(
    *, obj: models.Model, user, related_changes: Mapping[str, list] | None = None
) -> models.Model:
    """Save ``obj`` (a paper, topic, organisation, venue, track or glossary term holding its
    new values) for ``user``. What readers see, before or after the change, only editors
    change (``digest_site.visibility.may_change``); each such change is audited, with
    ``related_changes`` (name → [before, after]) for what is saved beside the row (a
    paper's topics). Saving nothing new changes nothing. The admin's form has validated
    the values."""
    stored = None
    if obj.pk is not None:
        stored = type(obj)._default_manager.select_for_update().filter(pk=obj.pk).first()
    changes = {
        **audit_diff(before=stored or type(obj)(), after=obj),
        **(related_changes or {}),
    }
    if stored is not None and not changes:
        return obj
    public = stored is not None and is_public(stored)
    if public:
        check_may_change(user, stored)
    obj.save()
    # Ticking a track's "active" or making a term of a public track's glossary publishes it.
    if not public and is_public(obj):
        check_may_change(user, obj)  # the transaction rolls the save back
        public = True
    if public:  # the record also retires the cached pages (audit_record)
        audit_record(user=user, action=AuditRecord.Action.EDIT, obj=obj, changes=changes)
    return obj


@transaction.atomic
def public_content_delete(*, obj: models.Model, user) -> None:
    """Delete ``obj``; what readers see only an editor deletes, with an audit record of the
    fields it held."""
    stored = type(obj)._default_manager.select_for_update().get(pk=obj.pk)
    if is_public(stored):
        check_may_change(user, stored)
        audit_record(
            user=user,
            action=AuditRecord.Action.DELETE,
            obj=stored,
            changes={
                name: [held, None]
                for name, (_default, held) in audit_diff(before=type(obj)(), after=stored).items()
            },
        )
    stored.delete()
