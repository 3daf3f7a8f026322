"""Writes to dailies: small, typed, keyword-only, atomic. Views, admin actions and tasks call
these; none of them holds business logic of its own."""

from __future__ import annotations

import copy
import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from audit.models import AuditRecord
from audit.services import audit_diff, audit_record
from dailies.assembly import (
    daily_record_editor_changes,
    daily_record_text_edit,
    entry_states,
    track_profile_from_daily,
)
from dailies.checklist import daily_publishing_blockers, entry_name
from dailies.extensions import papers_changed
from dailies.models import Daily, DailyEntry, DailyStatus, IntroFields, WeeklyRoundup
from dailies.record import daily_pin
from digest_site import invalidation
from digest_site.visibility import EDITOR_PERMISSION, may_change_public
from papers.drafting.edits import summary_confirm, summary_mark_reviewed, summary_write
from papers.languages import LANGUAGE_CODES, Language
from papers.models import Summary
from papers.scoring.service import latest_scores

PUBLISH_PERMISSION = EDITOR_PERMISSION
Action = AuditRecord.Action


def user_may_publish(user) -> bool:
    """Editors hold the publish permission; ``None`` is the system (scheduler, import)."""
    return may_change_public(user)


def daily_is_public(daily: Daily) -> bool:
    """Readers see it now (published) or will at a set time (scheduled)."""
    return daily.status in (DailyStatus.PUBLISHED, DailyStatus.SCHEDULED)


def daily_may_change(*, daily: Daily, user) -> bool:
    """Contributors prepare drafts; only editors change what readers see or will see."""
    return not daily_is_public(daily) or user_may_publish(user)


def _check_can_publish(user) -> None:
    if not user_may_publish(user):
        raise PermissionDenied(_("You may edit dailies but not publish them."))


def _check_may_change(daily: Daily, user) -> None:
    if not daily_may_change(daily=daily, user=user):
        raise PermissionDenied(
            _("%(daily)s is %(status)s: only editors may change or delete it.")
            % {"daily": daily, "status": daily.get_status_display().lower()}
        )


def _check_may_set_publish_time(user) -> None:
    if not user_may_publish(user):
        raise PermissionDenied(_("Only editors may set or move a daily's publish time."))


def daily_validate_for_publishing(*, daily: Daily) -> None:
    """Raise with every reason of the publishing checklist (``dailies.checklist``) that keeps
    ``daily`` from going out. Every publish path calls this."""
    blockers = daily_publishing_blockers(daily=daily)
    if blockers:
        raise ValidationError([blocker.message for blocker in blockers])


@transaction.atomic
def daily_publish(*, daily: Daily, user=None, now: dt.datetime | None = None) -> Daily:
    """Publish now. ``user`` None means the system (the scheduler or an import)."""
    _check_can_publish(user)
    daily = Daily.objects.select_for_update().get(pk=daily.pk)
    if daily.status == DailyStatus.PUBLISHED:
        return daily
    daily_validate_for_publishing(daily=daily)
    before = copy.copy(daily)
    daily.status = DailyStatus.PUBLISHED
    daily.published_at = now or timezone.now()
    daily.full_clean()
    daily.save(update_fields=["status", "published_at", "updated_at"])
    daily_pin(daily=daily, now=daily.published_at)
    _audit_status(daily, before, user, Action.PUBLISH)
    invalidation.daily_listing_changed(daily)
    _after_publish(daily)
    papers_changed(daily_paper_ids(daily.pk))
    return daily


@transaction.atomic
def daily_schedule(*, daily: Daily, publish_at: dt.datetime, user=None) -> Daily:
    _check_can_publish(user)
    daily = Daily.objects.select_for_update().get(pk=daily.pk)
    if daily.status == DailyStatus.PUBLISHED:
        raise ValidationError(_("%(daily)s is already published.") % {"daily": daily})
    daily_validate_for_publishing(daily=daily)
    before = copy.copy(daily)
    daily.status = DailyStatus.SCHEDULED
    daily.publish_at = publish_at
    daily.full_clean()
    daily.save(update_fields=["status", "publish_at", "updated_at"])
    _audit_status(daily, before, user, Action.SCHEDULE)
    return daily


def daily_schedule_at_its_time(*, daily: Daily, user=None) -> Daily:
    """Schedule ``daily`` at the publish time it already has (the admin's bulk action)."""
    if daily.publish_at is None:
        raise ValidationError(_("Set a publish time first."))
    return daily_schedule(daily=daily, publish_at=daily.publish_at, user=user)


@transaction.atomic
def daily_unpublish(*, daily: Daily, user=None) -> Daily:
    """Back to draft: off every public page at once."""
    _check_can_publish(user)
    daily = Daily.objects.select_for_update().get(pk=daily.pk)
    if daily.status == DailyStatus.DRAFT and daily.publish_at is None:
        return daily
    before = copy.copy(daily)
    daily.status = DailyStatus.DRAFT
    daily.published_at = None
    daily.publish_at = None
    daily.save(update_fields=["status", "published_at", "publish_at", "updated_at"])
    _audit_status(daily, before, user, Action.UNPUBLISH)
    if before.status == DailyStatus.PUBLISHED:
        invalidation.daily_listing_changed(daily)
    papers_changed(daily_paper_ids(daily.pk))
    return daily


def dailies_due(*, now: dt.datetime | None = None) -> list[int]:
    """Ids of scheduled dailies whose time has come."""
    return list(
        Daily.objects.filter(status=DailyStatus.SCHEDULED, publish_at__lte=now or timezone.now())
        .order_by("publish_at")
        .values_list("pk", flat=True)
    )


def daily_publish_if_due(*, daily_id: int, now: dt.datetime | None = None) -> bool:
    """Publish one scheduled daily if it is due. Safe when two workers race: the conditional
    UPDATE lets exactly one of them flip the status."""
    now = now or timezone.now()
    with transaction.atomic():
        daily = Daily.objects.filter(pk=daily_id).first()
        if daily is None:
            return False
        daily_validate_for_publishing(daily=daily)
        claimed = Daily.objects.filter(
            pk=daily_id, status=DailyStatus.SCHEDULED, publish_at__lte=now
        ).update(status=DailyStatus.PUBLISHED, published_at=now, updated_at=now)
        if claimed:
            daily_pin(daily=daily, now=now)
            published = copy.copy(daily)
            published.status, published.published_at = DailyStatus.PUBLISHED, now
            _audit_status(
                published, daily, None, Action.PUBLISH, note=_("Its scheduled time came.")
            )
            _after_publish(daily)
            papers_changed(daily_paper_ids(daily_id))
    return claimed == 1


def daily_paper_ids(daily_id: int) -> list[int]:
    """The papers of one daily (one query): those a change to its publication affects."""
    return list(DailyEntry.objects.filter(daily_id=daily_id).values_list("paper_id", flat=True))


def _after_publish(daily: Daily) -> None:
    """What publishing teaches the system: the selection joins the track's profile. Apps
    above us (the email digest) act once the publication has committed; one that fails
    (a broker down) is logged and does not undo the publication."""
    from dailies.extensions import published_callbacks

    track_profile_from_daily(daily=daily)
    for callback in published_callbacks():
        transaction.on_commit(lambda cb=callback, pk=daily.pk: cb(pk), robust=True)


_STATUS_FIELDS = ["status", "publish_at", "published_at"]


def _audit_status(after: Daily, before: Daily, user, action: str, note: str = "") -> None:
    changes = audit_diff(before=before, after=after, fields=_STATUS_FIELDS)
    audit_record(user=user, action=action, obj=after, changes=changes, note=note)


# Publishing, scheduling and unpublishing set these; an edit never does.
_DAILY_NOT_EDITABLE = {"status", "published_at"}
_ENTRY_NOT_EDITABLE = {"id", "daily"}
ENTRY_EDITABLE_FIELDS = [
    f.name
    for f in DailyEntry._meta.concrete_fields
    if f.editable and f.name not in _ENTRY_NOT_EDITABLE
]
_ENTRY_FIELDS = ["position", "is_lead", "score"]  # with the paper, what an audit keeps


@dataclass(frozen=True)
class EntryChanges:
    """What one edit does to a daily's entries: new entries (field → value), changes to
    existing ones (entry id → field → value) and the ids of entries to remove."""

    added: list[dict[str, Any]] = field(default_factory=list)
    changed: dict[int, dict[str, Any]] = field(default_factory=dict)
    removed: list[int] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.added or self.changed or self.removed)


def _check_fields(model, names, not_editable: set[str]) -> None:
    editable = {f.name for f in model._meta.concrete_fields if f.editable} - not_editable
    unknown = sorted(set(names) - editable)
    if unknown:
        raise ValidationError(
            _("These fields cannot be edited here: %(fields)s.") % {"fields": ", ".join(unknown)}
        )


def _entry_summary(entry: DailyEntry) -> dict[str, Any]:
    return {
        "paper": str(entry.paper),
        "paper_id": entry.paper_id,
        **{n: getattr(entry, n) for n in _ENTRY_FIELDS},
    }


@dataclass
class _EntryPlan:
    removed: list[DailyEntry]
    changed: list[tuple[DailyEntry, dict[str, list]]]  # entry as it will be, its diff
    added: list[dict[str, Any]]
    max_position: int

    def __bool__(self) -> bool:
        return bool(self.removed or self.changed or self.added)


def _entries_plan(*, daily: Daily, entries: EntryChanges) -> _EntryPlan:
    """What ``entries`` really changes (no-op changes dropped); writes nothing."""
    stored = {e.pk: e for e in daily.entries.select_related("paper")}
    missing = sorted((set(entries.changed) | set(entries.removed)) - stored.keys())
    if missing:
        raise ValidationError(
            _("Entries %(ids)s are not in %(daily)s.")
            % {"ids": ", ".join(map(str, missing)), "daily": daily}
        )
    for values in [*entries.changed.values(), *entries.added]:
        _check_fields(DailyEntry, values, _ENTRY_NOT_EDITABLE)
    changed = []
    for pk, values in entries.changed.items():
        if pk in entries.removed:
            continue
        entry = copy.copy(stored[pk])
        for name, value in values.items():
            setattr(entry, name, value)
        diff = audit_diff(before=stored[pk], after=entry, fields=list(values))
        if diff:
            changed.append((entry, diff))
    return _EntryPlan(
        removed=[stored[pk] for pk in dict.fromkeys(entries.removed)],
        changed=changed,
        added=list(entries.added),
        max_position=max((e.position for e in stored.values()), default=0),
    )


def _entries_apply(*, daily: Daily, plan: _EntryPlan) -> dict[str, list]:
    """Write ``plan`` and say what it did (for the audit record). Changed entries first move
    out of the way (positions shifted, lead cleared), so a reorder or a new lead never trips
    the unique constraints half-way."""
    for entry, _diff in plan.changed:
        entry.full_clean(validate_unique=False, validate_constraints=False)
    DailyEntry.objects.filter(pk__in=[e.pk for e in plan.removed]).delete()
    # Parking places above every position, old or new.
    park = 1 + max([plan.max_position, *(e.position for e, _diff in plan.changed)])
    for i, (entry, _diff) in enumerate(plan.changed):
        DailyEntry.objects.filter(pk=entry.pk).update(position=park + i, is_lead=False)
    for entry, _diff in plan.changed:
        entry.full_clean()
        entry.save()
    added = []
    if plan.added:
        computed = latest_scores(
            daily.track, [v.get("paper").pk for v in plan.added if v.get("paper")]
        )
        next_position = 1 + max(
            [0, *daily.entries.values_list("position", flat=True)]
            + [v["position"] for v in plan.added if v.get("position")]
        )
    for values in plan.added:
        entry = DailyEntry(daily=daily, **values)
        # A row added without a position goes last; without a score it takes the paper's
        # newest one (an editor's different score is an override, kept apart).
        if entry.position is None:
            entry.position, next_position = next_position, next_position + 1
        newest = computed.get(entry.paper_id) if entry.paper_id else None
        entry.score_computed = newest.total if newest is not None else None
        if entry.score is None:
            entry.score = entry.score_computed
        entry.full_clean()
        entry.save()
        added.append(entry)
    summary: dict[str, list] = {}
    if added:
        summary["added"] = [_entry_summary(e) for e in added]
    if plan.removed:
        summary["removed"] = [_entry_summary(e) for e in plan.removed]
    if plan.changed:
        summary["changed"] = [{"paper": str(e.paper), "changes": d} for e, d in plan.changed]
    return summary


@transaction.atomic
def daily_create(*, daily: Daily, user, entries: list[dict[str, Any]] = ()) -> Daily:
    """Save a new draft daily (an unsaved instance) with its entries. Only editors may give
    it a publish time; it becomes public only through publish or schedule."""
    if daily.pk is not None:
        raise ValidationError(_("%(daily)s already exists.") % {"daily": daily})
    if daily.status != DailyStatus.DRAFT or daily.published_at is not None:
        raise ValidationError(_("A new daily starts as a draft; publish or schedule it after."))
    if daily.publish_at is not None:
        _check_may_set_publish_time(user)
    daily.full_clean()
    daily.save()
    if entries:
        plan = _entries_plan(daily=daily, entries=EntryChanges(added=list(entries)))
        _entries_apply(daily=daily, plan=plan)
    return daily


@transaction.atomic
def daily_update(
    *, daily: Daily, user, changes: Mapping[str, Any], entries: EntryChanges | None = None
) -> Daily:
    """Edit a daily's fields (name → new value) and entries; every path edits through here.

    Contributors may edit drafts; editing a published or scheduled daily, and setting or
    moving any publish time, takes the publish permission. A public daily must stay
    publishable. Edits of public dailies are audited."""
    entries = entries or EntryChanges()
    _check_fields(Daily, changes, _DAILY_NOT_EDITABLE)
    stored = Daily.objects.select_for_update().get(pk=daily.pk)
    edited = copy.copy(stored)
    for name, value in changes.items():
        setattr(edited, name, value)
    field_changes = audit_diff(before=stored, after=edited, fields=list(changes))
    plan = _entries_plan(daily=stored, entries=entries)
    if not field_changes and not plan:
        return stored
    _check_may_change(stored, user)
    if "publish_at" in field_changes:
        _check_may_set_publish_time(user)
    entries_before = entry_states(stored)
    if user is not None:
        edited.edited_by_editor = True
        _intros_become_the_editors(edited, changed=field_changes)
    edited.full_clean()
    edited.save()
    entry_changes = _entries_apply(daily=edited, plan=plan) if plan else {}
    if daily_is_public(edited):
        daily_validate_for_publishing(daily=edited)
    if entry_changes and user is not None:
        daily_record_editor_changes(daily=edited, before=entries_before, user=user)
    if user is not None:
        for language in LANGUAGE_CODES:
            if f"intro_{language}" in field_changes:
                daily_record_text_edit(daily=edited, user=user, what=f"{language} intro")
    if daily_is_public(edited) or "publish_at" in field_changes:
        rescheduled = edited.status == DailyStatus.SCHEDULED and "publish_at" in field_changes
        audit_record(
            user=user,
            action=Action.SCHEDULE if rescheduled else Action.EDIT,
            obj=edited,
            changes={**field_changes, **({"entries": entry_changes} if entry_changes else {})},
        )
    if edited.status == DailyStatus.PUBLISHED:
        invalidation.changed(edited)
        invalidation.papers_changed(entries_before)  # those it no longer lists
        if entry_changes:
            daily_pin(daily=edited, now=timezone.now())  # an entry added has its score pinned
        papers_changed({*entries_before, *daily_paper_ids(edited.pk)})
    return edited


def _intros_become_the_editors(owner: IntroFields, *, changed: Mapping[str, Any]) -> None:
    """An editor's change of an intro (a daily's or a roundup's) makes it the editor's:
    re-drafting leaves it alone and its machine flags no longer apply."""
    for language in LANGUAGE_CODES:
        if f"intro_{language}" in changed:
            setattr(owner, f"intro_{language}_provenance", Summary.Provenance.EDITOR)
            owner.intro_flags = [f for f in owner.intro_flags if f.get("language") != language]


def _intro_flags_confirm(owner: IntroFields, *, user, audited: bool) -> bool:
    """Resolve the open flags of ``owner``'s machine-drafted intros as they stand (the
    publishing checklist stops listing them), audited when ``audited``; False when there
    were none."""
    if not owner.intro_flags:
        return False
    flags, owner.intro_flags = owner.intro_flags, []
    owner.save(update_fields=["intro_flags", "updated_at"])
    if audited:
        audit_record(user=user, action=Action.EDIT, obj=owner, changes={"intro_flags": [flags, []]})
    return True


@transaction.atomic
def daily_intro_confirm(*, daily: Daily, user) -> Daily:
    """An editor confirms the machine-drafted intros as they stand: their open flags are
    resolved (the publishing checklist stops listing them)."""
    stored = Daily.objects.select_for_update().get(pk=daily.pk)
    _check_may_change(stored, user)
    public = daily_is_public(stored)
    if _intro_flags_confirm(stored, user=user, audited=public) and public:
        invalidation.changed(stored)
    return stored


def _accept_untranslated(entry: DailyEntry, languages: list[str], daily: Daily, user) -> list[str]:
    """Mark ``languages`` accepted as "not yet translated" on ``entry`` and record who did it
    on the daily's history; returns the languages newly accepted."""
    new = sorted(set(languages) - set(entry.accepted_untranslated))
    if not new:
        return []
    entry.accepted_untranslated = sorted({*entry.accepted_untranslated, *new})
    entry.save(update_fields=["accepted_untranslated"])
    daily_record_text_edit(
        daily=daily,
        user=user,
        paper_id=entry.paper_id,
        what=f"accepted “not yet translated” ({', '.join(new)})",
    )
    return new


@transaction.atomic
def daily_accept_untranslated(*, daily: Daily, user) -> Daily:
    """An editor accepts publishing each entry that lacks a summary in a language with the
    other language's text and the "not yet translated" note."""
    stored = Daily.objects.select_for_update().get(pk=daily.pk)
    _check_may_change(stored, user)
    accepted: dict[str, list[str]] = {}
    for entry in stored.entries.select_related("paper").prefetch_related("paper__summaries"):
        have = {s.language for s in entry.paper.summaries.all()}
        missing = [code for code in LANGUAGE_CODES if code not in have]
        if _accept_untranslated(entry, missing, stored, user):
            accepted[entry.paper.canonical_id] = entry.accepted_untranslated
    if accepted and daily_is_public(stored):
        audit_record(
            user=user, action=Action.EDIT, obj=stored, changes={"accepted_untranslated": accepted}
        )
        invalidation.changed(stored)
    return stored


@transaction.atomic
def daily_entry_accept_untranslated(
    *, daily: Daily, entry: DailyEntry, language: str, user
) -> bool:
    """An editor accepts publishing one entry without its ``language`` summary (the other
    language's text and the "not yet translated" note), from the checklist; recorded on the
    daily's history with who and when. Returns whether anything changed."""
    stored = Daily.objects.select_for_update().get(pk=daily.pk)
    if entry.daily_id != stored.pk:
        raise ValidationError(_("That entry is not in %(daily)s.") % {"daily": stored})
    _check_may_change(stored, user)
    if language not in LANGUAGE_CODES:
        raise ValidationError(_("Unknown language “%(language)s”.") % {"language": language})
    if Summary.objects.filter(paper_id=entry.paper_id, language=language).exists():
        raise ValidationError(
            _("%(paper)s already has a %(language)s summary.")
            % {"paper": entry.paper, "language": language}
        )
    entry = DailyEntry.objects.select_for_update().get(pk=entry.pk)
    accepted = _accept_untranslated(entry, [language], stored, user)
    if accepted and daily_is_public(stored):
        audit_record(
            user=user,
            action=Action.EDIT,
            obj=stored,
            changes={"accepted_untranslated": {entry.paper.canonical_id: accepted}},
        )
    return bool(accepted)


@transaction.atomic
def daily_english_only_set(
    *, daily: Daily, user, english_only: bool = True, now: dt.datetime | None = None
) -> Daily:
    """An editor chooses (or withdraws the choice) to publish ``daily`` in English only; who
    and when are recorded, and the publishing checklist then skips its Chinese texts."""
    _check_can_publish(user)  # a publishing decision: an editor's, never a contributor's
    stored = Daily.objects.select_for_update().get(pk=daily.pk)
    _check_may_change(stored, user)
    before = stored.english_only_at
    stored.english_only_by = user if english_only else None
    stored.english_only_at = (now or timezone.now()) if english_only else None
    stored.save(update_fields=["english_only_by", "english_only_at", "updated_at"])
    if daily_is_public(stored):
        audit_record(
            user=user,
            action=Action.EDIT,
            obj=stored,
            changes={"english_only_at": [str(before), str(stored.english_only_at)]},
        )
        invalidation.changed(stored)
    return stored


@transaction.atomic
def daily_delete(*, daily: Daily, user) -> None:
    """Delete a daily and its entries; a published or scheduled one only by an editor, with
    an audit record of what it held."""
    stored = Daily.objects.select_for_update().get(pk=daily.pk)
    _check_may_change(stored, user)
    if daily_is_public(stored):
        entries = stored.entries.select_related("paper")
        audit_record(
            user=user,
            action=Action.DELETE,
            obj=stored,
            changes={
                "status": [stored.status, None],
                "entries": {"removed": [_entry_summary(e) for e in entries]},
            },
        )
    paper_ids = daily_paper_ids(stored.pk) if stored.status == DailyStatus.PUBLISHED else []
    if paper_ids:
        invalidation.daily_listing_changed(stored)
    stored.delete()
    papers_changed(paper_ids)


SUMMARY_TEXT_FIELDS = ("headline", "body", "takeaway", "highlights")


@transaction.atomic
def daily_entry_texts_edit(
    *, daily: Daily, entry: DailyEntry, user, texts: Mapping[str, Mapping[str, Any]]
) -> list[str]:
    """An editor's side-by-side edit of one entry's texts: language → field
    (``SUMMARY_TEXT_FIELDS``) → value. Each language that changed is written through
    ``summary_write`` (it becomes the editor's; grounding re-checked), recorded on the
    daily's history, and audited when readers see the daily. Returns the languages changed.
    Bad input raises ``ValidationError`` and stores nothing."""
    stored = Daily.objects.select_for_update().get(pk=daily.pk)
    if entry.daily_id != stored.pk:
        raise ValidationError(_("That entry is not in %(daily)s.") % {"daily": stored})
    _check_may_change(stored, user)
    unknown = sorted(set(texts) - set(LANGUAGE_CODES))
    if unknown:
        raise ValidationError(_("Unknown languages: %(l)s.") % {"l": ", ".join(unknown)})
    current = {s.language: s for s in entry.paper.summaries.all()}
    changed = []
    for language, values in texts.items():
        summary = current.get(language)
        before = {
            "headline": summary.headline if summary else "",
            "body": summary.body if summary else "",
            "takeaway": summary.takeaway if summary else "",
            "highlights": list(summary.highlights) if summary else [],
        }
        after = {**before, **{k: v for k, v in values.items() if k in SUMMARY_TEXT_FIELDS}}
        after["highlights"] = [h.strip() for h in after["highlights"] if h and h.strip()]
        after = {k: v.strip() if isinstance(v, str) else v for k, v in after.items()}
        if after == before:
            continue
        if after["body"] and not after["takeaway"]:
            raise ValidationError({"takeaway": _("A summary needs its takeaway sentence.")})
        try:
            summary_write(paper=entry.paper, language=language, user=user, **after)
        except ValidationError as exc:
            raise ValidationError([f"{language}: {message}" for message in exc.messages]) from exc
        changed.append(language)
        daily_record_text_edit(
            daily=stored, user=user, paper_id=entry.paper_id, what=f"{language} summary"
        )
    if changed and daily_is_public(stored):
        audit_record(
            user=user,
            action=Action.EDIT,
            obj=stored,
            changes={"summaries": {entry.paper.canonical_id: changed}},
        )
    return changed


@transaction.atomic
def daily_entry_confirm(*, daily: Daily, entry: DailyEntry, language: str, user) -> int:
    """An editor confirms one entry's text in ``language`` as it stands (its open flags
    resolved), recorded on the daily's history. Returns how many flags were confirmed."""
    stored = Daily.objects.select_for_update().get(pk=daily.pk)
    if entry.daily_id != stored.pk:
        raise ValidationError(_("That entry is not in %(daily)s.") % {"daily": stored})
    _check_may_change(stored, user)
    summary = Summary.objects.filter(paper_id=entry.paper_id, language=language).first()
    if summary is None:
        raise ValidationError(
            _("There is no %(language)s text to confirm.") % {"language": language}
        )
    confirmed = summary_confirm(summary=summary, user=user)
    if confirmed:
        daily_record_text_edit(
            daily=stored,
            user=user,
            paper_id=entry.paper_id,
            what=f"{language} summary confirmed ({confirmed} flags)",
        )
    return confirmed


@transaction.atomic
def daily_entries_mark_reviewed(
    *, daily: Daily, texts: list[tuple[int, str]], user, now: dt.datetime | None = None
) -> int:
    """An editor marks the machine drafts they have read reviewed: ``texts`` names each by
    entry id and language, one at a time from the checklist or the ones they ticked; never
    the daily's drafts wholesale, since the track's review rule asks for a reading of each.
    Each is recorded on the daily's history with who and when (and audited when readers see
    the text). Returns how many were marked; texts already reviewed or an editor's are left."""
    now = now or timezone.now()
    stored = Daily.objects.select_for_update().get(pk=daily.pk)
    _check_may_change(stored, user)
    if not texts:
        raise ValidationError(_("Tick the texts you have read, then mark them reviewed."))
    entries = {e.pk: e for e in stored.entries.select_related("paper")}
    marked = 0
    for entry_id, language in dict.fromkeys(texts):
        entry = entries.get(entry_id)
        if entry is None:
            raise ValidationError(_("That entry is not in %(daily)s.") % {"daily": stored})
        if language not in LANGUAGE_CODES:
            raise ValidationError(_("Unknown language “%(language)s”.") % {"language": language})
        summary = Summary.objects.filter(paper_id=entry.paper_id, language=language).first()
        if summary is None:
            raise ValidationError(
                _("%(paper)s has no %(language)s text to review.")
                % {"paper": entry_name(entry.paper), "language": language}
            )
        if summary_mark_reviewed(summary=summary, user=user, now=now):
            daily_record_text_edit(
                daily=stored,
                user=user,
                paper_id=entry.paper_id,
                what=f"{language} summary marked reviewed",
            )
            marked += 1
    return marked


# -- Weekly roundups ------------------------------------------------------------------------


def _check_may_change_roundup(roundup: WeeklyRoundup, user) -> None:
    if roundup.is_published and not user_may_publish(user):
        raise PermissionDenied(_("The roundup's intro is published: only editors may change it."))


@transaction.atomic
def roundup_get_or_create(*, track, week_start: dt.date) -> WeeklyRoundup:
    """The week's roundup, made (a draft with no intro) when it has none."""
    roundup = WeeklyRoundup(track=track, week_start=week_start)
    roundup.full_clean(exclude=["track"], validate_unique=False)
    roundup, _created = WeeklyRoundup.objects.get_or_create(track=track, week_start=week_start)
    return roundup


@transaction.atomic
def roundup_edit(*, roundup: WeeklyRoundup, user, intro_en: str, intro_zh: str) -> WeeklyRoundup:
    """An editor's (or contributor's, while it is a draft) intro texts: a changed text
    becomes the editor's (re-drafting leaves it alone) and its machine flags no longer
    apply. Audited when readers see the intro."""
    stored = WeeklyRoundup.objects.select_for_update().get(pk=roundup.pk)
    _check_may_change_roundup(stored, user)
    changes = {}
    for language, text in ((Language.EN, intro_en), (Language.ZH, intro_zh)):
        before = getattr(stored, f"intro_{language}")
        if text == before:
            continue
        changes[f"intro_{language}"] = [before, text]
        setattr(stored, f"intro_{language}", text)
    _intros_become_the_editors(stored, changed=changes)
    if changes:
        stored.full_clean()
        stored.save()
        if stored.is_published:
            audit_record(user=user, action=Action.EDIT, obj=stored, changes=changes)
            invalidation.changed(stored)
    return stored


@transaction.atomic
def roundup_intro_confirm(*, roundup: WeeklyRoundup, user) -> WeeklyRoundup:
    """An editor confirms the machine-drafted intro as it stands: its open flags resolved."""
    stored = WeeklyRoundup.objects.select_for_update().get(pk=roundup.pk)
    _check_may_change_roundup(stored, user)
    _intro_flags_confirm(stored, user=user, audited=stored.is_published)
    return stored


def roundup_publishing_blockers(roundup: WeeklyRoundup) -> list[str]:
    """Why the roundup's intro may not go out yet (none: it may)."""
    blockers = []
    if not (roundup.intro_en.strip() or roundup.intro_zh.strip()):
        blockers.append(_("The roundup has no intro in either language."))
    for flag in roundup.intro_flags or []:
        blockers.append(
            _("The %(language)s intro has an unconfirmed %(kind)s: “%(text)s”.")
            % {
                "language": flag.get("language", ""),
                "kind": flag.get("kind", "flag"),
                "text": flag.get("text", ""),
            }
        )
    return blockers


@transaction.atomic
def roundup_publish(
    *, roundup: WeeklyRoundup, user, now: dt.datetime | None = None
) -> WeeklyRoundup:
    """An editor publishes the roundup's intro, which confirms it: who and when are
    recorded, and readers see it on the week's page and feed. The system never does this."""
    if user is None or not user_may_publish(user):
        raise PermissionDenied(_("Only an editor may publish a roundup's intro."))
    stored = WeeklyRoundup.objects.select_for_update().get(pk=roundup.pk)
    blockers = roundup_publishing_blockers(stored)
    if blockers:
        raise ValidationError(blockers)
    stored.status = WeeklyRoundup.Status.PUBLISHED
    stored.published_by = user
    stored.published_at = now or timezone.now()
    stored.save()
    audit_record(user=user, action=Action.PUBLISH, obj=stored)
    invalidation.changed(stored)
    return stored


@transaction.atomic
def roundup_unpublish(*, roundup: WeeklyRoundup, user) -> WeeklyRoundup:
    """An editor withdraws the intro: the week's page shows none until it is published
    again (the week's dailies stay listed)."""
    if user is None or not user_may_publish(user):
        raise PermissionDenied(_("Only an editor may unpublish a roundup's intro."))
    stored = WeeklyRoundup.objects.select_for_update().get(pk=roundup.pk)
    if stored.is_published:
        invalidation.changed(stored)  # as published: the week's pages that print its intro
        stored.status = WeeklyRoundup.Status.DRAFT
        stored.published_by, stored.published_at = None, None
        stored.save()
        audit_record(user=user, action=Action.UNPUBLISH, obj=stored)
    return stored


@transaction.atomic
def roundup_delete(*, roundup: WeeklyRoundup, user) -> None:
    """Delete a roundup; a published one only by an editor, with an audit record of its
    intro, and the week's pages no longer print it."""
    stored = WeeklyRoundup.objects.select_for_update().get(pk=roundup.pk)
    _check_may_change_roundup(stored, user)
    if stored.is_published:
        audit_record(
            user=user,
            action=Action.DELETE,
            obj=stored,
            changes={"intro_en": [stored.intro_en, None], "intro_zh": [stored.intro_zh, None]},
        )
        invalidation.changed(stored)
    stored.delete()
