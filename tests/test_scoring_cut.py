"""Precision and recall at the Infra track's minimum, on four sets of arXiv-style abstracts:
the 102 labelled ones (tests/data/infra_cut_labelled.toml, templated, many off-topic papers
sharing the track's words) and 24 hard cases (infra_cut_calibration.toml) relevance is
calibrated on; 32 held-out ones (infra_cut_heldout.toml) written before the first
calibration, and 44 more (infra_cut_heldout2.toml) written before scorer 3 was built.

Scored as the site scores them: each set's papers saved, scored and stored against the demo's
Infra profile, the stored total (weak relevance kept under the cut) against the minimum."""

from __future__ import annotations

import tomllib
from decimal import Decimal
from pathlib import Path

import pytest

from papers.models import Paper, Track
from papers.scoring.base import WEAK_RELEVANCE, total_at_the_cut
from papers.scoring.rubric import RubricScorer
from papers.scoring.service import papers_score
from tests.factories import make_paper, make_track

DATA = Path(__file__).resolve().parent / "data"
SETS = {
    "labelled": DATA / "infra_cut_labelled.toml",
    "calibration": DATA / "infra_cut_calibration.toml",
    "held out": DATA / "infra_cut_heldout.toml",
    "held out 2": DATA / "infra_cut_heldout2.toml",
}


def _labelled(path: Path) -> list[dict]:
    with path.open("rb") as f:
        return tomllib.load(f)["paper"]


def _precision_recall(labels: list[bool], kept: list[bool]) -> tuple[float, float]:
    true = sum(1 for label, k in zip(labels, kept, strict=True) if label and k)
    return true / max(1, sum(kept)), true / max(1, sum(labels))


@pytest.fixture(scope="module")
def cut_sets(_module_demo, django_db_blocker) -> dict[str, list[tuple[Paper, bool]]]:
    """Each set's papers with their labels, saved in the module's demo transaction."""
    sets = {}
    with django_db_blocker.unblock():
        for name, path in SETS.items():
            papers = []
            for i, d in enumerate(_labelled(path)):
                paper = Paper.objects.create(
                    slug=f"cut-{path.stem}-{i}".replace("_", "-"),
                    canonical_id=f"cut:{path.stem}:{i}",
                    title=d["title"],
                    abstract=d["abstract"],
                    comment=d["comment"],
                )
                papers.append((paper, d["label"] == "on"))
            sets[name] = papers
    return sets


def _at_the_cut(papers: list[tuple[Paper, bool]], track: Track) -> tuple[float, float]:
    scores = papers_score(track=track, papers=[p for p, _ in papers], scorer=RubricScorer())
    kept = [score.total >= track.min_score for score in scores]
    return _precision_recall([label for _, label in papers], kept)


def test_relevance_keeps_off_topic_papers_below_the_track_minimum(demo, cut_sets, capsys):
    track = Track.objects.get(slug="infra")
    figures = {name: _at_the_cut(papers, track) for name, papers in cut_sets.items()}
    with capsys.disabled():
        print(f"\nat the track minimum {track.min_score} (precision / recall):")
        for name, (precision, recall) in figures.items():
            print(f"  {name} ({len(cut_sets[name])}): {precision:.3f} / {recall:.3f}")
    assert len(cut_sets["labelled"]) >= 100 and len(cut_sets["held out 2"]) >= 40
    # Scorer 2 (the demo's description, keywords and 16 papers): labelled 0.979 / 0.904,
    # calibration 0.727 / 0.667, held out 0.846 / 0.688, held out 2 0.739 / 0.773. Scorer 3
    # (the track's glossary and its selections' topics as its words too): 0.940 / 0.904,
    # 0.714 / 0.833, 0.824 / 0.875, 0.769 / 0.909 — recall up on three sets, the labelled
    # precision down by one templated paper (quadruped control, three times). The issue's
    # target holds on the labelled set; on the others, off-topic systems papers and
    # reinforcement learning elsewhere still pass. The held-out sets were measured while
    # scorer 3 was built (relevance by meaning, since dropped, and a RELEVANCE_FULL_AT of
    # 0.085 the calibration sets favoured: held out 0.800 / 0.750, held out 2 0.760 / 0.864),
    # so they are no longer untouched. Pinned so that a change of scorer shows here.
    least = {
        "labelled": (0.9, 0.85),
        "calibration": (0.71, 0.83),
        "held out": (0.82, 0.87),
        "held out 2": (0.76, 0.9),
    }
    for name, (least_precision, least_recall) in least.items():
        precision, recall = figures[name]
        assert precision >= least_precision and recall >= least_recall, name


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
