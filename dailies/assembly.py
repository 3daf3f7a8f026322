"""Assembling a track's draft daily from its scored candidates, and learning from editors."""

from __future__ import annotations

import datetime as dt
import zoneinfo
from dataclasses import dataclass, field
from decimal import Decimal
from enum import StrEnum
from functools import partial

from celery import current_app
from django.conf import settings
from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone

from dailies.models import Daily, DailyEntry, EditorialAction
from papers.models import Paper, Score, Track, TrackProfileItem
from papers.scoring.base import Scorer
from papers.scoring.service import get_scorer, latest_scores, papers_score


class AssemblyStatus(StrEnum):
    """What an assembly did; the result's status, as the command and the task report it."""

    CREATED = "created"
    REFRESHED = "refreshed"
    UNCHANGED_PUBLISHED = "unchanged-published"  # published or scheduled: never touched
    UNCHANGED_EDITED = "unchanged-edited"  # an editor's draft: left alone
    NO_CANDIDATES = "no-candidates"


class ProfileReason(StrEnum):
    """Why a paper is in a track's relevance profile (``TrackProfileItem.reason``)."""

    EDITOR_ADDED = "editor-added"
    EDITOR_REMOVED = "editor-removed"
    PUBLISHED = "published"


@dataclass
class AssemblyResult:
    track: str
    date: dt.date
    status: AssemblyStatus | None
    candidates: int = 0
    selected: list[dict] = field(default_factory=list)
    message: str = ""
    daily: Daily | None = None

    def as_dict(self) -> dict:
        return {
            "track": self.track,
            "date": self.date.isoformat(),
            "status": self.status,
            "candidates": self.candidates,
            "selected": self.selected,
            "message": self.message,
        }


def cutoff(track: Track, date: dt.date) -> dt.datetime:
    """A daily covers what was ingested up to its date's assembly time, editorial zone."""
    tz = zoneinfo.ZoneInfo(settings.EDITORIAL_TIME_ZONE)
    return dt.datetime.combine(date, track.assemble_at, tzinfo=tz)


def candidate_papers(track: Track, date: dt.date) -> QuerySet[Paper]:
    """Papers ingested for the track since the previous daily's cut-off, up to this one's,
    that no published daily of the track has selected: the candidates assembly scores and
    the daily's selection chart counts."""
    start, end = window(track, date)
    papers = Paper.objects.filter(tracks=track, created_at__lte=end)
    if start is not None:
        papers = papers.filter(created_at__gt=start)
    selected = DailyEntry.objects.published().filter(daily__track=track).values("paper_id")
    return papers.exclude(pk__in=selected)


def daily_candidates(track: Track, date: dt.date) -> list[Paper]:
    """``candidate_papers`` with their venues, in id order."""
    return list(candidate_papers(track, date).select_related("venue").order_by("pk"))


def window(track: Track, date: dt.date) -> tuple[dt.datetime | None, dt.datetime]:
    """The cut-off window of ``date``'s daily: after the previous daily's cut-off (None: no
    previous daily), up to its own."""
    previous = Daily.objects.filter(track=track, date__lt=date).order_by("-date").first()
    start = cutoff(track, previous.date) if previous is not None else None
    return start, cutoff(track, date)


def date_of_ingest(track: Track, moment: dt.datetime) -> dt.date:
    """The date of the daily whose cut-off first follows ``moment``."""
    local = moment.astimezone(zoneinfo.ZoneInfo(settings.EDITORIAL_TIME_ZONE))
    date = local.date()
    return date if local <= cutoff(track, date) else date + dt.timedelta(days=1)


def tracks_due_for_assembly(*, now: dt.datetime | None = None) -> list[tuple[Track, dt.date]]:
    """Each active track whose assembly time has passed today (editorial time zone) and
    that has no daily of today yet, with today's date (2 queries, however many tracks)."""
    local = (now or timezone.now()).astimezone(zoneinfo.ZoneInfo(settings.EDITORIAL_TIME_ZONE))
    tracks = list(Track.objects.filter(is_active=True, assemble_at__lte=local.time()))
    assembled = set(
        Daily.objects.filter(track__in=tracks, date=local.date()).values_list("track_id", flat=True)
    )
    return [(track, local.date()) for track in tracks if track.pk not in assembled]


def no_candidates_message(track: Track, date: dt.date) -> str:
    """Why ``date`` has nothing to assemble: its window, and where later papers belong."""
    start, end = window(track, date)
    fmt = "%Y-%m-%d %H:%M"
    span = f"{start:{fmt}} – {end:{fmt}}" if start else f"up to {end:{fmt}}"
    message = (
        f"no papers were ingested for {track.slug} in the window of {date:%Y-%m-%d} "
        f"({span}, {settings.EDITORIAL_TIME_ZONE}) that a published daily has not already "
        f"selected"
    )
    selected = DailyEntry.objects.published().filter(daily__track=track).values("paper_id")
    later = (
        Paper.objects.filter(tracks=track, created_at__gt=end)
        .exclude(pk__in=selected)
        .order_by("created_at")
        .first()
    )
    if later is not None:
        belongs = date_of_ingest(track, later.created_at)
        message += (
            f"; papers ingested since (the first at "
            f"{later.created_at.astimezone(end.tzinfo):{fmt}}) belong to the daily of "
            f"{belongs:%Y-%m-%d}"
        )
    return message


def _ensure_scores(track: Track, papers: list[Paper], scorer: Scorer) -> dict[int, Score]:
    scores = latest_scores(track, [p.pk for p in papers])
    missing = [p for p in papers if p.pk not in scores or p.needs_scoring]
    for score in papers_score(track=track, papers=missing, scorer=scorer):
        scores[score.paper_id] = score
    return scores


@transaction.atomic
def daily_assemble(
    *, track: Track, date: dt.date, scorer: Scorer | None = None, now: dt.datetime | None = None
) -> AssemblyResult:
    """Make (or refresh) the draft daily of ``track`` for ``date``.

    A published daily and one an editor changed are never touched. With no candidates no
    daily is made, and the result says why.
    """
    result = AssemblyResult(track=track.slug, date=date, status=None)
    existing = Daily.objects.select_for_update().filter(track=track, date=date).first()
    if existing is not None and existing.status != Daily.Status.DRAFT:
        result.status, result.daily = AssemblyStatus.UNCHANGED_PUBLISHED, existing
        result.message = f"the daily is {existing.status}; assembly never modifies it"
        return result
    if existing is not None and existing.edited_by_editor:
        result.status, result.daily = AssemblyStatus.UNCHANGED_EDITED, existing
        result.message = "an editor changed this draft; assembly leaves it alone"
        return result
    candidates = daily_candidates(track, date)
    result.candidates = len(candidates)
    if not candidates:
        result.status = AssemblyStatus.NO_CANDIDATES
        result.message = no_candidates_message(track, date)
        return result
    scores = _ensure_scores(track, candidates, scorer or get_scorer())
    ranked = sorted(
        (p for p in candidates if scores[p.pk].total >= track.min_score),
        key=lambda p: (-scores[p.pk].total, -p.created_at.timestamp(), p.pk),
    )[: track.daily_size]
    daily = existing or Daily(track=track, date=date)
    daily.candidates_scored = len(candidates)
    daily.assembled_at = now or timezone.now()
    daily.save()
    daily.entries.all().delete()
    DailyEntry.objects.bulk_create(
        [
            DailyEntry(
                daily=daily,
                paper=paper,
                position=i,
                is_lead=(i == 1),
                score=scores[paper.pk].total,
                score_computed=scores[paper.pk].total,
            )
            for i, paper in enumerate(ranked, start=1)
        ]
    )
    result.status = AssemblyStatus.REFRESHED if existing else AssemblyStatus.CREATED
    result.daily = daily
    result.selected = [
        {"id": p.canonical_id, "title": p.title, "score": float(scores[p.pk].total), "lead": i == 0}
        for i, p in enumerate(ranked)
    ]
    result.message = f"{len(ranked)} of {len(candidates)} candidates at or above {track.min_score}"
    if ranked:
        _draft_on_commit(daily.pk)
    return result


@transaction.atomic
def daily_assemble_next(*, track: Track, now: dt.datetime | None = None) -> AssemblyResult:
    """Assemble the next daily of ``track``: the day after its newest daily, or today in the
    editorial time zone when it has none (the desk's "assemble next" button)."""
    latest = Daily.objects.filter(track=track).order_by("-date").first()
    local = (now or timezone.now()).astimezone(zoneinfo.ZoneInfo(settings.EDITORIAL_TIME_ZONE))
    date = latest.date + dt.timedelta(days=1) if latest else local.date()
    return daily_assemble(track=track, date=date, now=now)


def _draft_on_commit(daily_id: int) -> None:
    """The writing follows the shortlist: draft the entries and intro once this commits."""
    # By its name, not imported: the tasks module imports this one.
    current_app.tasks["dailies.tasks.draft_daily_task"].delay_on_commit(daily_id)


def _profile(track: Track, paper_id: int, weight: float, reason: ProfileReason) -> None:
    TrackProfileItem.objects.update_or_create(
        track=track, paper_id=paper_id, defaults={"weight": weight, "reason": reason}
    )


EntryState = tuple[Decimal | None, bool, int]  # score, lead, position


def entry_states(daily: Daily) -> dict[int, EntryState]:
    """Paper id → (score, lead, position) of each entry (one query): what
    ``daily_record_editor_changes`` compares."""
    return {e.paper_id: (e.score, e.is_lead, e.position) for e in daily.entries.all()}


@transaction.atomic
def daily_record_editor_changes(
    *, daily: Daily, before: dict[int, EntryState], user=None
) -> list[EditorialAction]:
    """Compare a daily's entries with ``before`` (from ``entry_states``) after an editor
    saved it: record what changed, mark the daily as edited, and teach the track profile."""
    after = entry_states(daily)
    actions = []
    Kind = EditorialAction.Kind
    action = partial(EditorialAction, daily=daily, user=user)
    for paper_id in sorted(after.keys() - before.keys(), key=lambda p: after[p][2]):
        score, lead, position = after[paper_id]
        actions.append(
            action(paper_id=paper_id, kind=Kind.ADDED, score_after=score, detail=f"#{position}")
        )
        if lead:
            actions.append(action(paper_id=paper_id, kind=Kind.LEAD))
        _profile(daily.track, paper_id, 1.0, ProfileReason.EDITOR_ADDED)
    for paper_id in sorted(before.keys() - after.keys(), key=lambda p: before[p][2]):
        score, _lead, position = before[paper_id]
        actions.append(
            action(paper_id=paper_id, kind=Kind.REMOVED, score_before=score, detail=f"#{position}")
        )
        _profile(daily.track, paper_id, -1.0, ProfileReason.EDITOR_REMOVED)
    for paper_id in sorted(before.keys() & after.keys(), key=lambda p: after[p][2]):
        (old_score, old_lead, old_pos), (new_score, new_lead, new_pos) = (
            before[paper_id],
            after[paper_id],
        )
        if old_pos != new_pos:
            actions.append(
                action(paper_id=paper_id, kind=Kind.REORDERED, detail=f"#{old_pos} → #{new_pos}")
            )
        if old_score != new_score:
            actions.append(
                action(
                    paper_id=paper_id,
                    kind=Kind.SCORE_OVERRIDE,
                    score_before=old_score,
                    score_after=new_score,
                )
            )
        if new_lead and not old_lead:
            actions.append(action(paper_id=paper_id, kind=Kind.LEAD))
    if actions and not daily.edited_by_editor:
        daily.edited_by_editor = True
        daily.save(update_fields=["edited_by_editor", "updated_at"])
    return EditorialAction.objects.bulk_create(actions)


def daily_record_text_edit(
    *, daily: Daily, user, what: str, paper_id: int | None = None
) -> EditorialAction:
    """An editor changed a text of the daily: an entry's summary (``paper_id``) or the
    intro (none). ``what`` names it ("zh summary", "en intro")."""
    limit = EditorialAction._meta.get_field("detail").max_length
    return EditorialAction.objects.create(
        daily=daily,
        paper_id=paper_id,
        kind=EditorialAction.Kind.TEXT_EDITED,
        user=user,
        detail=what[:limit],
    )


def track_profile_from_daily(*, daily: Daily) -> None:
    """A published daily's papers join the track's relevance profile."""
    for paper_id in daily.entries.values_list("paper_id", flat=True):
        _profile(daily.track, paper_id, 1.0, ProfileReason.PUBLISHED)
