"""Scoring services: choose the scorer, score a track's candidates, store the scores."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from django.conf import settings
from django.db import transaction
from django.db.models import Exists, OuterRef, Q, QuerySet

from papers.models import SCORE_MAX, SCORE_MIN, Paper, Score, Track, TrackProfileItem
from papers.scoring.base import WEAK_RELEVANCE, Scorer, total_at_the_cut
from papers.scoring.llm import LLMJudge
from papers.scoring.rubric import RubricScorer

BATCH = 500


def get_scorer() -> Scorer:
    """The LLM judge when it is configured, else the offline rubric scorer."""
    if settings.LLM_BASE_URL and settings.LLM_API_KEY and settings.LLM_MODEL:
        return LLMJudge(
            base_url=settings.LLM_BASE_URL, api_key=settings.LLM_API_KEY, model=settings.LLM_MODEL
        )
    return RubricScorer()


def unscored_candidates(track: Track) -> QuerySet[Paper]:
    """Papers of the track that are new or changed, or have never been scored for it."""
    scored = Score.objects.filter(paper=OuterRef("pk"), track=track)
    return (
        Paper.objects.filter(tracks=track)
        .filter(Q(needs_scoring=True) | ~Exists(scored))
        .select_related("venue")
        .order_by("pk")
    )


def papers_score(*, track: Track, papers: list[Paper], scorer: Scorer | None = None) -> list[Score]:
    """Score ``papers`` for ``track`` and store one new Score each (rescoring adds a row)."""
    scorer = scorer or get_scorer()
    results = scorer.score(papers, track)
    rows = [
        Score(
            paper=paper,
            track=track,
            total=total_at_the_cut(r.total, r.criteria, track),
            criteria=r.criteria,
            features=r.features,
            rationale_en=r.rationale_en,
            rationale_zh=r.rationale_zh,
            scorer=r.scorer,
            scorer_version=r.version,
            notes=_weak_note(r.notes, r.total, total_at_the_cut(r.total, r.criteria, track)),
            prompt_tokens=r.prompt_tokens,
            completion_tokens=r.completion_tokens,
        )
        for paper, r in zip(papers, results, strict=True)
    ]
    return Score.objects.bulk_create(rows)


def _weak_note(notes: str, total, kept) -> str:
    if kept == total:
        return notes
    note = f"relevance at most {WEAK_RELEVANCE}/5: kept below the track minimum (was {total})"
    return f"{notes}; {note}" if notes else note


def track_score_pending(
    *, track: Track, scorer: Scorer | None = None, progress=None
) -> list[Score]:
    """Score every unscored candidate of a track, in batches."""
    scorer = scorer or get_scorer()
    stored: list[Score] = []
    papers = list(unscored_candidates(track))
    for start in range(0, len(papers), BATCH):
        batch = papers[start : start + BATCH]
        with transaction.atomic():
            stored += papers_score(track=track, papers=batch, scorer=scorer)
        if progress:
            progress(len(batch))
    return stored


def scores_pending(*, scorer: Scorer | None = None) -> int:
    """Score new or changed papers for every active track, then mark them scored."""
    scorer = scorer or get_scorer()
    pending = set(Paper.objects.filter(needs_scoring=True).values_list("pk", flat=True))
    count = 0
    for track in Track.objects.filter(is_active=True):
        count += len(track_score_pending(track=track, scorer=scorer))
    Paper.objects.filter(pk__in=pending).update(needs_scoring=False)
    return count


def latest_scores(track: Track, paper_ids: list[int]) -> dict[int, Score]:
    """The newest score per paper for a track (one query)."""
    latest: dict[int, Score] = {}
    for score in Score.objects.filter(track=track, paper_id__in=paper_ids).order_by(
        "paper_id", "created_at", "pk"
    ):
        latest[score.paper_id] = score
    return latest


# Editors' decisions needed on each side (selected, turned down) before a minimum is suggested.
SUGGESTION_MIN_DECISIONS = 10
_STEP = Decimal("0.05")


@dataclass(frozen=True)
class MinimumSuggestion:
    """A track minimum suggested from editors' past decisions (read-only: an editor sets it)."""

    value: Decimal | None  # None: not enough decisions yet
    selected: int
    turned_down: int
    precision: float = 0.0
    recall: float = 0.0


def track_minimum_suggestion(track: Track) -> MinimumSuggestion:
    """The minimum on the score grid that best separates the papers editors selected for
    the track from those they turned down (each by its newest score for the track): the
    highest F1 of "at or above it" against "selected", ties to the lower minimum (the cut
    just above the papers turned down: nothing editors chose is lost). Two queries."""
    decisions = dict(
        TrackProfileItem.objects.filter(track=track)
        .exclude(weight=0)
        .values_list("paper_id", "weight")
    )
    scores = latest_scores(track, list(decisions))
    pairs = [(scores[p].total, decisions[p] > 0) for p in decisions if p in scores]
    selected = sum(1 for _, chosen in pairs if chosen)
    turned_down = len(pairs) - selected
    if min(selected, turned_down) < SUGGESTION_MIN_DECISIONS:
        return MinimumSuggestion(None, selected, turned_down)
    best = (-1.0, SCORE_MIN, 0.0, 0.0)
    value = SCORE_MIN
    while value <= SCORE_MAX:
        kept = [chosen for total, chosen in pairs if total >= value]
        hits = sum(kept)
        precision = hits / len(kept) if kept else 0.0
        recall = hits / selected
        f1 = 2 * precision * recall / (precision + recall) if hits else 0.0
        if f1 > best[0]:
            best = (f1, value, precision, recall)
        value += _STEP
    _, value, precision, recall = best
    return MinimumSuggestion(value, selected, turned_down, round(precision, 2), round(recall, 2))
