"""The editor's side of the texts: edit, write or delete a summary, confirm it or some of its
flags, mark a machine draft reviewed, restore a version or apply a proposed re-draft.

An editor's text is the editor's: no drafting overwrites it. A change to a text readers see
needs an editor (``check_may_change``), is recorded in the audit and invalidates the pages
that show it; every change keeps the text it replaces as a ``SummaryVersion`` and runs the
grounding checks again.
"""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from audit.models import AuditRecord
from audit.services import audit_record
from digest_site import invalidation
from digest_site.visibility import check_may_change, is_public
from papers.drafting.service import summary_recheck, texts_of, version_of
from papers.models import Paper, Summary, SummaryFlag, SummaryVersion


def _audit_public_text(
    summary: Summary, user, *, before: dict | None, after: dict | None, note: str = ""
) -> None:
    """Record a change of a text readers see: each text field that differs, [before, after]
    (``None`` for a text made or deleted). Call it before deleting the summary."""
    action = AuditRecord.Action.DELETE if after is None else AuditRecord.Action.EDIT
    empty = dict.fromkeys(texts_of(summary))
    before, after = before or empty, after or empty
    changes = {name: [before[name], after[name]] for name in empty if before[name] != after[name]}
    audit_record(user=user, action=action, obj=summary, changes=changes, note=note)


@transaction.atomic
def summary_edit(
    *,
    summary: Summary,
    user,
    headline: str | None = None,
    body: str | None = None,
    takeaway: str | None = None,
    highlights: list[str] | None = None,
    now=None,
) -> Summary:
    """An editor's change to a summary: the old text is kept as a REPLACED_BY_EDITOR
    version, the text becomes the editor's (no drafting overwrites it from then on), and the
    grounding checks run again — flags that no longer apply are resolved fixed. Saving the
    same text changes nothing. Raises ``ValidationError`` (storing nothing) on bad input."""
    now = now or timezone.now()
    previous = Summary.objects.select_for_update().get(pk=summary.pk)
    values = {
        "headline": previous.headline if headline is None else headline.strip(),
        "body": previous.body if body is None else body.strip(),
        "takeaway": previous.takeaway if takeaway is None else takeaway.strip(),
        "highlights": (
            list(previous.highlights)
            if highlights is None
            else [h.strip() for h in highlights if h and h.strip()]
        ),
    }
    if values == texts_of(previous):
        return previous
    public = is_public(previous)
    if public:
        check_may_change(user, previous)
    if values["takeaway"] and values["takeaway"] not in values["body"]:
        raise ValidationError({"takeaway": "The takeaway must occur inside the summary."})
    for name, value in values.items():
        setattr(summary, name, value)
    summary.provenance = Summary.Provenance.EDITOR
    summary.edited_by = user
    summary.edited_at = now
    summary.full_clean()
    version_of(previous, SummaryVersion.Reason.REPLACED_BY_EDITOR, user).save()
    summary.save()
    if public:
        _audit_public_text(summary, user, before=texts_of(previous), after=values)
        invalidation.changed(summary)
    summary_recheck(summary=summary, user=user, now=now)
    return summary


@transaction.atomic
def summary_write(
    *,
    paper: Paper,
    language: str,
    user,
    headline: str,
    body: str,
    takeaway: str,
    highlights: list[str],
    now=None,
) -> Summary | None:
    """An editor writes a paper's summary in one language (the paper form): a new text is
    the editor's, a changed one goes through ``summary_edit``, an empty body removes it."""
    summary = Summary.objects.filter(paper=paper, language=language).first()
    if not body.strip():
        if summary is not None:
            summary_delete(summary=summary, user=user)
        return None
    if summary is not None:
        return summary_edit(
            summary=summary,
            user=user,
            headline=headline,
            body=body,
            takeaway=takeaway,
            highlights=highlights,
            now=now,
        )
    now = now or timezone.now()
    summary = Summary(
        paper=paper,
        language=language,
        headline=headline.strip(),
        body=body.strip(),
        takeaway=takeaway.strip(),
        highlights=[h.strip() for h in highlights if h and h.strip()],
        provenance=Summary.Provenance.EDITOR,
        edited_by=user,
        edited_at=now,
    )
    summary.full_clean()
    summary.save()
    # A paper readers see shows its new language at once.
    if is_public(summary):
        check_may_change(user, summary)  # the transaction rolls the save back
        _audit_public_text(summary, user, before=None, after=texts_of(summary))
        invalidation.changed(summary)
    summary_recheck(summary=summary, user=user, now=now)
    return summary


@transaction.atomic
def summary_delete(*, summary: Summary, user) -> None:
    """Remove a paper's text in one language; one readers see only an editor removes, and
    the audit keeps what it said."""
    stored = Summary.objects.select_for_update().get(pk=summary.pk)
    if is_public(stored):
        check_may_change(user, stored)
        _audit_public_text(stored, user, before=texts_of(stored), after=None)
        invalidation.changed(stored)
    stored.delete()


@transaction.atomic
def summary_confirm(*, summary: Summary, user, now=None) -> int:
    """An editor confirms the summary as it stands: every open flag is resolved CONFIRMED
    and the summary is marked reviewed. Returns how many flags were confirmed."""
    now = now or timezone.now()
    public = is_public(summary)
    if public:
        check_may_change(user, summary)
    confirmed = summary.flags.filter(resolution=SummaryFlag.Resolution.OPEN).update(
        resolution=SummaryFlag.Resolution.CONFIRMED, resolved_by=user, resolved_at=now
    )
    reviewed_before = summary.reviewed_by_id
    summary.reviewed_by = user
    summary.reviewed_at = now
    Summary.objects.filter(pk=summary.pk).update(reviewed_by=user, reviewed_at=now)
    if public:
        audit_record(
            user=user,
            action=AuditRecord.Action.EDIT,
            obj=summary,
            changes={"reviewed_by": [reviewed_before, user]},
            note=f"confirmed as it stands ({confirmed} open flags)",
        )
        invalidation.changed(summary)
    return confirmed


@transaction.atomic
def summary_mark_reviewed(*, summary: Summary, user, now=None) -> bool:
    """An editor says they have read the machine draft and it may go out as it is: it is
    marked reviewed by them, its open flags left open (each is confirmed on its own).
    Returns whether it changed: an editor's text or a reviewed draft is left alone."""
    now = now or timezone.now()
    stored = Summary.objects.select_for_update().get(pk=summary.pk)
    if stored.provenance != Summary.Provenance.MACHINE or stored.reviewed_at is not None:
        return False
    public = is_public(stored)
    if public:
        check_may_change(user, stored)
    Summary.objects.filter(pk=stored.pk).update(reviewed_by=user, reviewed_at=now)
    summary.reviewed_by, summary.reviewed_at = user, now
    if public:
        audit_record(
            user=user,
            action=AuditRecord.Action.EDIT,
            obj=stored,
            changes={"reviewed_by": [None, user.pk if user else None]},
            note="marked reviewed",
        )
        invalidation.changed(stored)
    return True


@transaction.atomic
def summary_flags_confirm(*, summary: Summary, flag_ids, user, now=None) -> int:
    """An editor confirms some open flags one by one (the number is right though the source
    words it otherwise); the others stay open and the text is not marked reviewed. Flags of
    another summary or already resolved are left alone. Returns how many were confirmed."""
    now = now or timezone.now()
    return summary.flags.filter(pk__in=flag_ids, resolution=SummaryFlag.Resolution.OPEN).update(
        resolution=SummaryFlag.Resolution.CONFIRMED, resolved_by=user, resolved_at=now
    )


@transaction.atomic
def summary_restore_version(*, version: SummaryVersion, user, now=None) -> Summary:
    """Bring back a previous text (or apply a proposed re-draft) as the live text.

    The live text is kept as a version first. The restored text keeps its provenance: an
    editor's text is the editor's again; a machine text stays a machine draft, now reviewed
    by this editor (and, as any editor's change, dated in ``edited_at``). The grounding
    checks run on the result."""
    now = now or timezone.now()
    summary = Summary.objects.select_for_update().get(pk=version.summary_id)
    public = is_public(summary)
    if public:
        check_may_change(user, summary)
    before = texts_of(summary)
    version_of(summary, SummaryVersion.Reason.REPLACED_BY_EDITOR, user).save()
    for name in SummaryVersion.KEPT_FIELDS:
        setattr(summary, name, getattr(version, name))
    # Either way an editor changed the live text: the pages date it as a correction when
    # it was already published.
    summary.edited_by, summary.edited_at = user, now
    if summary.provenance == Summary.Provenance.MACHINE:
        summary.reviewed_by, summary.reviewed_at = user, now
    summary.full_clean()
    summary.save()
    if public:
        what = "applied" if version.reason == SummaryVersion.Reason.PROPOSED else "restored"
        note = f"{what} the version of {version.created_at:%Y-%m-%d %H:%M} ({version.pk})"
        _audit_public_text(summary, user, before=before, after=texts_of(summary), note=note)
        invalidation.changed(summary)
    if version.reason == SummaryVersion.Reason.PROPOSED:
        # Applied: it is the live text now, no longer a proposal.
        version.delete()
    summary_recheck(summary=summary, user=user, now=now)
    return summary
