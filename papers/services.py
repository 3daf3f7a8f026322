"""Writes to papers: small, typed, keyword-only, atomic."""

from __future__ import annotations

from collections.abc import Mapping

from django.db import models, transaction

from audit.models import AuditRecord
from audit.services import audit_diff, audit_record
from digest_site import invalidation
from digest_site.visibility import check_may_change, is_public
from papers.languages import LANGUAGE_CODES
from papers.models import Paper, Summary, Topic


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
    """Create or update a paper's summary in one language; an empty body removes it.
    Writes readers may see: what printed the paper is retired (a summary of a paper not
    public yet retires nothing)."""
    if is_public(paper):
        invalidation.papers_changed([paper.pk])
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
    if public:
        audit_record(user=user, action=AuditRecord.Action.EDIT, obj=obj, changes=changes)
        invalidation.changed(*(o for o in (stored, obj) if o is not None))
        invalidation.retire(_related_tags(related_changes))
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
        invalidation.changed(stored)
    stored.delete()


def _related_tags(related_changes: Mapping[str, list] | None) -> set[str]:
    """A paper's topics changed in the form: the pages of the topics it left and joined."""
    ids = {pk for pair in (related_changes or {}).get("topics", []) for pk in pair}
    slugs = Topic.objects.filter(pk__in=ids).values_list("slug", flat=True)
    return {f"topic:{slug}" for slug in slugs}
