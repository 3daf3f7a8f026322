"""Precision and recall at the Infra track's minimum, on a labelled set of 102 arXiv-style
abstracts (tests/data/infra_cut_labelled.toml, 52 on-topic, 50 off-topic, many of them
sharing the track's words) used to calibrate relevance, and on 32 held-out abstracts
(tests/data/infra_cut_heldout.toml) written before the calibration and not used for it."""

from __future__ import annotations

import tomllib
from decimal import Decimal
from pathlib import Path

from papers.models import Paper, Track
from papers.scoring.base import WEAK_RELEVANCE, total_at_the_cut
from papers.scoring.rubric import RubricScorer
from papers.scoring.service import papers_score
from tests.factories import make_paper, make_track

DATA = Path(__file__).resolve().parent / "data"
LABELLED = DATA / "infra_cut_labelled.toml"
HELD_OUT = DATA / "infra_cut_heldout.toml"


def _labelled(path: Path = LABELLED) -> list[dict]:
    with path.open("rb") as f:
        return tomllib.load(f)["paper"]


def _precision_recall(labels: list[bool], kept: list[bool]) -> tuple[float, float]:
    true = sum(1 for label, k in zip(labels, kept, strict=True) if label and k)
    return true / max(1, sum(kept)), true / max(1, sum(labels))


def _at_the_cut(path: Path, track: Track) -> tuple[int, float, float]:
    data = _labelled(path)
    papers = [Paper(title=d["title"], abstract=d["abstract"], comment=d["comment"]) for d in data]
    results = RubricScorer().score(papers, track)
    labels = [d["label"] == "on" for d in data]
    kept = [total_at_the_cut(r.total, r.criteria, track) >= track.min_score for r in results]
    return len(data), *_precision_recall(labels, kept)


def test_relevance_keeps_off_topic_papers_below_the_track_minimum(demo, capsys):
    track = Track.objects.get(slug="infra")
    n, precision, recall = _at_the_cut(LABELLED, track)
    held_n, held_precision, held_recall = _at_the_cut(HELD_OUT, track)
    with capsys.disabled():
        print(
            f"\nat the track minimum {track.min_score}: labelled ({n}) precision {precision:.3f}"
            f" recall {recall:.3f}; held out ({held_n}) precision {held_precision:.3f}"
            f" recall {held_recall:.3f}"
        )
    assert n >= 100 and held_n >= 30
    # Before unseen vocabulary counted against relevance: labelled 0.830 / 0.846, held out
    # 0.900 / 0.562. After: labelled 0.979 / 0.904, held out 0.846 / 0.688 (the held-out
    # off-topic papers over the cut share the profile's RL words: drone swarms, traffic
    # signals). The target on the set it was calibrated on; the held-out figures
    # pinned so a change of scorer shows here.
    assert precision >= 0.9 and recall >= 0.85
    assert held_precision >= 0.84 and held_recall >= 0.68


def test_relevance_at_the_bound_is_weak_and_one_over_is_not(db):
    track = make_track(min_score=Decimal("3.00"))
    strong = {"relevance": WEAK_RELEVANCE + 1}
    weak = {"relevance": WEAK_RELEVANCE}
    assert total_at_the_cut(Decimal("3.60"), weak, track) == Decimal("2.95")
    assert total_at_the_cut(Decimal("3.60"), strong, track) == Decimal("3.60")
    assert total_at_the_cut(Decimal("2.50"), weak, track) == Decimal("2.50")  # already under


class _Judge:
    """A scorer that finds a paper weakly relevant but strong on everything else."""

    name, version = "judge", "1"

    def score(self, papers, track):
        from papers.scoring.base import ScoreResult

        criteria = {"relevance": WEAK_RELEVANCE, "novelty": 5, "evidence": 5, "impact": 5}
        return [
            ScoreResult(Decimal("3.80"), {**criteria, "venue": 5}, "en", "中文", "judge", "1")
            for _ in papers
        ]


def test_a_stored_score_keeps_a_weakly_relevant_paper_under_the_cut_and_says_why(db):
    track = make_track(min_score=Decimal("3.00"))
    paper = Paper.objects.create(
        slug="songbirds",
        title="Food caching in songbirds: retrieval latency and hippocampal replay",
        abstract="Chickadees cache seeds and retrieve them with low latency.",
        canonical_id="title:songbirds",
    )
    (score,) = papers_score(track=track, papers=[paper], scorer=_Judge())
    assert score.total == Decimal("2.95") < track.min_score
    assert "kept below the track minimum (was 3.80)" in score.notes


def _decided(track, total: str, weight: float) -> None:
    from papers.models import Score, TrackProfileItem

    paper = make_paper()
    Score.objects.create(
        paper=paper, track=track, total=Decimal(total), criteria={}, scorer="s", scorer_version="1"
    )
    TrackProfileItem.objects.create(track=track, paper=paper, weight=weight, reason="x")


def _decisions(track, selected: int, turned_down: int) -> None:
    """Selected papers at 3.30-3.75; turned-down ones at 2.60-3.05, the last one at 3.15."""
    for i in range(selected):
        _decided(track, f"{3.30 + 0.05 * (i % 10):.2f}", 1.0)
    for i in range(turned_down - 1):
        _decided(track, f"{2.60 + 0.05 * (i % 10):.2f}", -1.0)
    _decided(track, "3.15", -1.0)


def test_it_suggests_the_minimum_that_best_separates_editors_decisions(db):
    from papers.scoring.service import SUGGESTION_MIN_DECISIONS, track_minimum_suggestion

    track = make_track(min_score=Decimal("3.00"))
    _decisions(track, SUGGESTION_MIN_DECISIONS, SUGGESTION_MIN_DECISIONS - 1)
    suggestion = track_minimum_suggestion(track)
    assert suggestion.value is None  # one turned-down paper short
    assert (suggestion.selected, suggestion.turned_down) == (10, 9)
    _decided(track, "2.50", -1.0)
    suggestion = track_minimum_suggestion(track)
    assert suggestion.value == Decimal("3.20")  # just above the highest turned-down paper
    assert (suggestion.precision, suggestion.recall) == (1.0, 1.0)


def test_the_track_admin_shows_the_suggestion_read_only(db, admin_client):
    track = make_track(min_score=Decimal("3.00"))
    html = admin_client.get(f"/admin/papers/track/{track.pk}/change/").content.decode()
    assert "suggested minimum" in html.lower() and "Not enough decisions yet" in html
    _decisions(track, 10, 10)
    html = admin_client.get(f"/admin/papers/track/{track.pk}/change/").content.decode()
    assert "3.20, from editors&#x27; decisions on 10 selected and 10 turned-down" in html
    assert 'name="suggested_minimum"' not in html  # read-only: the minimum stays the editor's
