"""The default rubric scorer: deterministic, on the grid, and able to tell on-track papers
from off-track ones that share their words."""

from __future__ import annotations

import json
import tomllib
from decimal import Decimal
from pathlib import Path

import pytest
from django.core.management import call_command

from papers.models import Paper, Score, Track, TrackProfileItem
from papers.scoring.base import CRITERIA, total_from
from papers.scoring.rubric import VERSION, RubricScorer
from papers.scoring.service import scores_pending, track_score_pending
from tests.factories import make_paper

LABELLED = Path(__file__).resolve().parent / "data" / "scoring_labelled.toml"


def _labelled() -> list[dict]:
    with LABELLED.open("rb") as f:
        return tomllib.load(f)["paper"]


def _unsaved(data: list[dict]) -> list[Paper]:
    return [Paper(title=d["title"], abstract=d["abstract"], comment=d["comment"]) for d in data]


def test_it_ranks_on_track_above_off_track_with_auc_of_at_least_09(demo):
    # Imported here: importing scikit-learn costs every collection of the suite about 1.5 s.
    from sklearn.metrics import roc_auc_score

    data = _labelled()
    results = RubricScorer().score(_unsaved(data), Track.objects.get(slug="infra"))
    labels = [d["label"] == "on" for d in data]
    auc = roc_auc_score(labels, [float(r.total) for r in results])
    print(f"rubric scorer ROC AUC on {len(data)} labelled abstracts: {auc:.3f}")
    assert sum(labels) >= 20 and len(labels) - sum(labels) >= 20
    assert auc >= 0.9


def test_the_same_input_gives_the_same_scores(demo):
    track = Track.objects.get(slug="infra")
    papers = _unsaved(_labelled()[:10])
    first = RubricScorer().score(papers, track)
    second = RubricScorer().score(list(reversed(papers)), track)
    assert [r.total for r in first] == [r.total for r in reversed(second)]
    assert [r.criteria for r in first] == [r.criteria for r in reversed(second)]


def test_totals_stay_in_range_and_on_the_grid(demo):
    results = RubricScorer().score(_unsaved(_labelled()), Track.objects.get(slug="infra"))
    for r in results:
        assert Decimal("1.00") <= r.total <= Decimal("5.00")
        assert (r.total * 20) % 1 == 0
        assert set(r.criteria) == set(CRITERIA)
        assert all(1 <= v <= 5 for v in r.criteria.values())
        assert r.rationale_en and r.rationale_zh
    assert total_from(dict.fromkeys(CRITERIA, 1)) == Decimal("1.00")
    assert total_from(dict.fromkeys(CRITERIA, 5)) == Decimal("5.00")


def test_a_top_venue_raises_the_venue_criterion(demo):
    hilo = Paper.objects.select_related("venue").get(slug="hilo")
    plain = Paper.objects.select_related("venue").get(slug="coloc")
    track = Track.objects.get(slug="infra")
    with_venue, without = RubricScorer().score([hilo, plain], track)
    assert with_venue.criteria["venue"] == 5 and without.criteria["venue"] == 2


def test_novelty_is_low_for_a_near_copy_of_a_recent_selection(demo):
    track = Track.objects.get(slug="infra")
    hilo = Paper.objects.get(slug="hilo")
    copy = Paper(title=hilo.title, abstract=hilo.abstract)
    fresh = Paper(
        title="Sparse attention for streaming speech recognition on phones",
        abstract="We cut decoding memory of on-device speech models by 40%.",
    )
    near, far = RubricScorer().score([copy, fresh], track)
    assert near.criteria["novelty"] < far.criteria["novelty"]
    assert near.features["closest_recent_selection"] > 0.9


def test_rescoring_adds_a_row_and_the_newest_counts(demo):
    track = Track.objects.get(slug="infra")
    paper = make_paper("to-score")
    paper.tracks.add(track)
    track_score_pending(track=track, scorer=RubricScorer())
    Paper.objects.filter(pk=paper.pk).update(needs_scoring=True, title="A new title")
    track_score_pending(track=track, scorer=RubricScorer())
    assert Score.objects.filter(paper=paper, track=track).count() == 2
    newest = Paper.objects.get(pk=paper.pk).latest_score(track.pk)
    assert newest == Score.objects.filter(paper=paper).order_by("-created_at", "-pk").first()


def test_pending_scoring_clears_the_queue(demo):
    track = Track.objects.get(slug="infra")
    paper = make_paper("queued")
    paper.tracks.add(track)
    assert scores_pending(scorer=RubricScorer()) >= 1
    assert not Paper.objects.filter(needs_scoring=True, tracks=track).exists()
    assert scores_pending(scorer=RubricScorer()) == 0


def test_the_score_command_prints_one_json_line_per_paper(demo, capsys):
    track = Track.objects.get(slug="infra")
    for n in range(3):
        make_paper(f"cmd-{n}").tracks.add(track)
    call_command("score", track="infra", json=True)
    lines = [json.loads(line) for line in capsys.readouterr().out.strip().splitlines()]
    assert len(lines) >= 3
    assert {"id", "title", "total", "criteria"} <= set(lines[0])
    assert set(lines[0]["criteria"]) == set(CRITERIA)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_paper_page_shows_the_rubric_breakdown(demo, anonymous, lang):
    track = Track.objects.get(slug="infra")
    paper = Paper.objects.get(slug="coloc")
    Paper.objects.filter(pk=paper.pk).update(needs_scoring=True)
    track_score_pending(track=track, scorer=RubricScorer())
    html = anonymous.get(f"/{lang}/papers/coloc/").content.decode()
    assert 'class="rubric"' in html
    assert ("Relevance to the track" if lang == "en" else "与赛道的相关度") in html
    assert f"rubric-tfidf {VERSION}" in html  # the version that scored it


def test_it_never_rates_a_selected_paper_against_itself(demo):
    # HiLO is in the track's profile (the demo's dailies selected it): rescored, its
    # similarity to the papers editors selected is to the others, not 1.00 to itself.
    track = Track.objects.get(slug="infra")
    hilo = Paper.objects.select_related("venue").get(slug="hilo")
    assert TrackProfileItem.objects.filter(track=track, paper=hilo, weight__gt=0).exists()
    (result,) = RubricScorer().score([hilo], track)
    assert result.features["selected_similarity"] < 0.9
    assert result.features["closest_recent_selection"] < 0.9
    assert "to papers editors selected 1.00" not in result.rationale_en
