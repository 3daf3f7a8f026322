"""Assembling a track's draft daily from its scored candidates, and learning from editors."""

from __future__ import annotations

import datetime as dt
import zoneinfo
from dataclasses import dataclass, field
from decimal import Decimal

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from dailies.models import Daily, DailyEntry, EditorialAction
from papers.models import Paper, Score, Track, TrackProfileItem
from papers.scoring.base import Scorer
from papers.scoring.service import get_scorer, latest_scores, papers_score


@dataclass
class AssemblyResult:
    track: str
    date: dt.date
    status: str  # created, refreshed, unchanged-published, unchanged-edited, no-candidates
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


def daily_candidates(track: Track, date: dt.date) -> list[Paper]:
    """Papers ingested for the track since the previous daily's cut-off, up to this one's,
    that no published daily of the track has selected."""
    previous = Daily.objects.filter(track=track, date__lt=date).order_by("-date").first()
    papers = Paper.objects.filter(tracks=track, created_at__lte=cutoff(track, date))
    if previous is not None:
        papers = papers.filter(created_at__gt=cutoff(track, previous.date))
    selected = DailyEntry.objects.published().filter(daily__track=track).values("paper_id")
    return list(papers.exclude(pk__in=selected).select_related("venue").order_by("pk"))


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
    result = AssemblyResult(track=track.slug, date=date, status="")
    existing = Daily.objects.select_for_update().filter(track=track, date=date).first()
    if existing is not None and existing.status != Daily.Status.DRAFT:
        result.status, result.daily = "unchanged-published", existing
        result.message = f"the daily is {existing.status}; assembly never modifies it"
        return result
    if existing is not None and existing.edited_by_editor:
        result.status, result.daily = "unchanged-edited", existing
        result.message = "an editor changed this draft; assembly leaves it alone"
        return result
    candidates = daily_candidates(track, date)
    result.candidates = len(candidates)
    if not candidates:
        result.status = "no-candidates"
        result.message = (
            f"no papers were ingested for {track.slug} since the previous "
            f"daily's cut-off that a published daily has not already selected"
        )
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
                daily=daily, paper=paper, position=i, is_lead=(i == 1), score=scores[paper.pk].total
            )
            for i, paper in enumerate(ranked, start=1)
        ]
    )
    result.status = "refreshed" if existing else "created"
    result.daily = daily
    result.selected = [
        {"id": p.canonical_id, "title": p.title, "score": float(scores[p.pk].total), "lead": i == 0}
        for i, p in enumerate(ranked)
    ]
    result.message = f"{len(ranked)} of {len(candidates)} candidates at or above {track.min_score}"
    if ranked:
        _draft_on_commit(daily.pk)
    return result


def _draft_on_commit(daily_id: int) -> None:
    """The writing follows the shortlist: draft the entries and intro once this commits."""
    from dailies.tasks import draft_daily_task  # the tasks module imports this one

    draft_daily_task.delay_on_commit(daily_id)


def _profile(track: Track, paper_id: int, weight: float, reason: str) -> None:
    TrackProfileItem.objects.update_or_create(
        track=track, paper_id=paper_id, defaults={"weight": weight, "reason": reason}
    )


@transaction.atomic
def daily_record_editor_changes(
    *, daily: Daily, before: dict[int, tuple[Decimal | None, bool]], user=None
) -> list[EditorialAction]:
    """Compare a daily's entries with ``before`` (paper id → (score, lead)) after an editor
    saved it: record what changed, mark the daily as edited, and teach the track profile."""
    after = {e.paper_id: (e.score, e.is_lead) for e in daily.entries.all()}
    actions = []
    for paper_id in after.keys() - before.keys():
        actions.append(
            EditorialAction(
                daily=daily,
                paper_id=paper_id,
                kind="added",
                user=user,
                score_after=after[paper_id][0],
            )
        )
        _profile(daily.track, paper_id, 1.0, "editor-added")
    for paper_id in before.keys() - after.keys():
        actions.append(
            EditorialAction(
                daily=daily,
                paper_id=paper_id,
                kind="removed",
                user=user,
                score_before=before[paper_id][0],
            )
        )
        _profile(daily.track, paper_id, -1.0, "editor-removed")
    for paper_id in before.keys() & after.keys():
        (old_score, old_lead), (new_score, new_lead) = before[paper_id], after[paper_id]
        if old_score != new_score:
            actions.append(
                EditorialAction(
                    daily=daily,
                    paper_id=paper_id,
                    kind="score",
                    user=user,
                    score_before=old_score,
                    score_after=new_score,
                )
            )
        if new_lead and not old_lead:
            actions.append(EditorialAction(daily=daily, paper_id=paper_id, kind="lead", user=user))
    if actions and not daily.edited_by_editor:
        daily.edited_by_editor = True
        daily.save(update_fields=["edited_by_editor", "updated_at"])
    return EditorialAction.objects.bulk_create(actions)


def track_profile_from_daily(*, daily: Daily) -> None:
    """A published daily's papers join the track's relevance profile."""
    for paper_id in daily.entries.values_list("paper_id", flat=True):
        _profile(daily.track, paper_id, 1.0, "published")
