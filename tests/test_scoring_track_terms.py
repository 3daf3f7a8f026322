"""Scorer 3 (issue 38): the track's glossary and the topics of the papers editors selected
are words its profile knows, a candidate that uses them is more relevant, and its rationale
names them in both languages."""

from __future__ import annotations

from decimal import Decimal

from papers.models import GlossaryTerm, Paper, Score, Topic, TrackProfileItem
from papers.scoring.rubric import RubricScorer
from papers.scoring.service import papers_score
from tests.factories import make_paper, make_track


def _track():
    track = make_track(min_score=Decimal("3.00"), description_en="Serving large models.")
    chosen = make_paper("chosen", title="Serving large models with paged memory", topics=("rel",))
    TrackProfileItem.objects.create(track=track, paper=chosen, weight=1.0, reason="x")
    return track


def _candidate() -> Paper:
    return Paper(
        title="Straggler mitigation for collective communication",
        abstract="Collective communication stalls when one straggler rank lags behind.",
    )


def test_the_track_glossary_is_words_the_track_knows(db):
    track = _track()
    (before,) = RubricScorer().score([_candidate()], track)
    GlossaryTerm.objects.create(track=track, en="collective communication", zh="集合通信")
    (after,) = RubricScorer().score([_candidate()], track)
    assert after.features["known_vocabulary"] > before.features["known_vocabulary"]
    assert after.features["profile_similarity"] > before.features["profile_similarity"]
    assert after.criteria["relevance"] >= before.criteria["relevance"]


def test_the_topics_of_papers_editors_selected_are_words_the_track_knows(db):
    track = _track()
    refused = make_paper("refused", title="Songbird food caching", topics=("birds",))
    TrackProfileItem.objects.create(track=track, paper=refused, weight=-1.0, reason="x")
    (before,) = RubricScorer().score([_candidate()], track)
    # A turned-down paper's topic is not the track's.
    Topic.objects.filter(slug="birds").update(keywords=["straggler"])
    (unchanged,) = RubricScorer().score([_candidate()], track)
    assert unchanged.features == before.features
    Topic.objects.filter(slug="rel").update(name_en="Reliability", keywords=["straggler"])
    (after,) = RubricScorer().score([_candidate()], track)
    assert after.features["known_vocabulary"] > before.features["known_vocabulary"]


def test_the_score_is_version_3_and_its_rationale_names_the_track_terms_it_uses(db):
    track = _track()
    GlossaryTerm.objects.create(track=track, en="collective communication", zh="集合通信")
    GlossaryTerm.objects.create(track=track, en="KV cache", zh="KV 缓存")
    Topic.objects.filter(slug="rel").update(
        name_en="Reliability", name_zh="可靠性", keywords=["straggler"]
    )
    paper = make_paper("new", title=_candidate().title, abstract=_candidate().abstract)
    papers_score(track=track, papers=[paper], scorer=RubricScorer())
    score = Score.objects.get(paper=paper)
    assert score.scorer_version == "3"
    assert score.features["track_terms"] == [
        ["collective communication", "集合通信"],
        ["Reliability", "可靠性"],
    ]
    assert "the track's terms collective communication, Reliability)" in score.rationale_en
    assert "用到赛道术语集合通信、可靠性）" in score.rationale_zh
    assert "KV" not in score.rationale_en + score.rationale_zh
