"""The default scorer: offline, deterministic, and explainable.

Relevance compares the paper's text with the track's profile — its description, keywords,
glossary, the topics of the papers editors selected and those papers themselves — with
scikit-learn's TF-IDF, counting the words of the paper that the profile has never seen
against it; novelty is low when a
paper is close to one the track selected in the last 30 days; evidence, impact and venue
come from what the text and metadata say. Every criterion keeps the features it came from.
"""

from __future__ import annotations

import datetime as dt
import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from django.utils import timezone

from papers.models import GlossaryTerm, Paper, Topic, Track, TrackProfileItem
from papers.scoring.base import ScoreResult, clamp_level, total_from

NAME = "rubric-tfidf"
# 3: the track's glossary and its selections' topics are words of its profile (issue 38).
VERSION = "3"
# The similarity to the track (after the unseen-vocabulary discount) at which relevance is
# full marks; relevance 3 of 5, about the cut, is reached at 3/8 of it. Kept at scorer 2's
# value: 0.085 gained one templated and one calibration paper and lost three held-out ones.
RELEVANCE_FULL_AT = 0.08
NOVELTY_WINDOW = dt.timedelta(days=30)
TOP_VENUES = {
    "NSDI",
    "OSDI",
    "SOSP",
    "EuroSys",
    "ASPLOS",
    "ATC",
    "SIGCOMM",
    "MLSys",
    "FAST",
    "VLDB",
    "SIGMOD",
    "ISCA",
    "MICRO",
    "SC",
}

_NUMBER = re.compile(
    r"\b\d+(?:\.\d+)?\s*(?:%|×|x\b|times\b|ms\b|µs\b|us\b|s\b|GB\b|TB\b|GB/s|tokens?\b|"
    r"billion\b|million\b|k\b|K\b)",
)
_SCALE = re.compile(
    r"\b(?:production|deployed|deployment|in the wild|real[- ]world|at scale|clusters?|"
    r"thousands? of|billions? of|millions? of|fleet|datacenters?|GPUs?|H100|A100)\b",
    re.I,
)
_WORD = re.compile(r"\w+")
_PRACTICE = re.compile(
    r"\b(?:open[- ]source|released|drop-in|throughput|latency|cost|memory|speed-?up|"
    r"reduces?|faster|serving|inference|operators?|engineers?|SLOs?)\b",
    re.I,
)


def paper_text(paper: Paper) -> str:
    return f"{paper.title}. {paper.title}. {paper.abstract}"


class RubricScorer:
    name = NAME
    version = VERSION

    def score(self, papers: list[Paper], track: Track) -> list[ScoreResult]:
        """Scores ``papers`` for ``track`` (reads the track's profile: three queries)."""
        if not papers:
            return []
        profile = _Profile.load(track)
        texts = [paper_text(p) for p in papers]
        ids = [p.pk for p in papers]
        relevance = profile.relevance(texts, ids)
        closeness = profile.recent_closeness(texts, ids)
        return [
            self._one(p, t, rel, close, profile.terms_in(t))
            for p, t, rel, close in zip(papers, texts, relevance, closeness, strict=True)
        ]

    def _one(
        self, paper: Paper, text: str, rel: dict, close: float, terms: list[list[str]]
    ) -> ScoreResult:
        numbers = len(_NUMBER.findall(text))
        scale = len(_SCALE.findall(text))
        practice = len(_PRACTICE.findall(text))
        venue, venue_note = _venue_level(paper)
        criteria = {
            "relevance": clamp_level(1 + 4 * min(1.0, rel["score"] / RELEVANCE_FULL_AT)),
            "novelty": clamp_level(5 - 4 * max(0.0, (close - 0.25) / 0.5)),
            "evidence": clamp_level(1.5 + 0.6 * min(numbers, 4) + 0.5 * min(scale, 2)),
            "impact": clamp_level(1.5 + 0.5 * min(practice, 5) + 0.3 * min(scale, 2)),
            "venue": venue,
        }
        features = {
            "profile_similarity": round(rel["profile"], 4),
            "selected_similarity": round(rel["selected"], 4),
            "rejected_similarity": round(rel["rejected"], 4),
            "known_vocabulary": round(rel["coverage"], 4),
            "closest_recent_selection": round(close, 4),
            "quantified_results": numbers,
            "scale_signals": scale,
            "practical_signals": practice,
            "venue": venue_note,
            "track_terms": terms,
        }
        en, zh = _rationale(criteria, features)
        return ScoreResult(
            total=total_from(criteria),
            criteria=criteria,
            rationale_en=en,
            rationale_zh=zh,
            scorer=NAME,
            version=VERSION,
            features=features,
        )


class _Profile:
    """The track's profile as TF-IDF vectors: one document for its description, keywords and
    terms (glossary, topics), one per selected and per turned-down paper."""

    def __init__(
        self,
        track: Track,
        selected: list[tuple[str, dt.datetime]],
        rejected: list[str],
        selected_ids: list[int | None] | None = None,
        rejected_ids: list[int | None] | None = None,
        terms: Sequence[TrackTerm] = (),
    ) -> None:
        self.track_doc = " ".join(
            [
                track.name_en,
                track.description_en,
                *([" ".join(track.keywords)] * 3),
                *(" ".join(t.words) for t in terms),
            ]
        )
        self.terms = terms
        # Each term's words, lower-cased, by their first: (the words, the term's index).
        self._term_words: dict[str, list[tuple[list[str], int]]] = {}
        for i, term in enumerate(terms):
            for word in term.words:
                if words := _WORD.findall(word.lower()):
                    self._term_words.setdefault(words[0], []).append((words, i))
        self.selected = selected
        self.rejected = rejected
        # Which paper each profile document is: a paper is never compared with itself.
        self.selected_ids = selected_ids or [None] * len(selected)
        self.rejected_ids = rejected_ids or [None] * len(rejected)
        # scikit-learn is imported where it is used: it takes two seconds, and every process
        # that imports the app (a manage.py command, a worker) would pay them otherwise.
        from sklearn.feature_extraction.text import TfidfVectorizer

        corpus = [self.track_doc, *[t for t, _ in selected], *rejected]
        self.vectorizer = TfidfVectorizer(
            stop_words="english",
            ngram_range=(1, 2),
            sublinear_tf=True,
            min_df=1,
            token_pattern=r"(?u)\b[A-Za-z][A-Za-z0-9\-]+\b",
        ).fit(corpus)
        self.track_vec = self.vectorizer.transform([self.track_doc])
        self.analyzer = self.vectorizer.build_analyzer()
        self.vocabulary = self.vectorizer.vocabulary_
        self.idf = self.vectorizer.idf_
        # scikit-learn's smoothed idf of a term no document holds: ln((1 + n) / 1) + 1.
        self.unseen_idf = math.log(1 + len(corpus)) + 1
        self.selected_vecs = (
            self.vectorizer.transform([t for t, _ in selected]) if selected else None
        )
        self.rejected_vecs = self.vectorizer.transform(rejected) if rejected else None
        cutoff = timezone.now() - NOVELTY_WINDOW
        self.recent_idx = [i for i, (_, at) in enumerate(selected) if at >= cutoff]

    @classmethod
    def load(cls, track: Track) -> _Profile:
        items = (
            TrackProfileItem.objects.filter(track=track)
            .select_related("paper")
            .order_by("paper_id")
        )
        chosen = [i for i in items if i.weight > 0]
        turned_down = [i for i in items if i.weight < 0]
        return cls(
            track,
            [(paper_text(i.paper), i.updated_at) for i in chosen],
            [paper_text(i.paper) for i in turned_down],
            [i.paper_id for i in chosen],
            [i.paper_id for i in turned_down],
            _track_terms(track, [i.paper_id for i in chosen]),
        )

    def terms_in(self, text: str) -> list[list[str]]:
        """The track's terms ``text`` uses, as [English, Chinese] (a score's features are
        JSON), glossary first."""
        words = _WORD.findall(text.lower())
        # Whole words only: "cache" is not found in "cached"; "KV-cache" is "KV cache".
        found = {
            i
            for at, word in enumerate(words)
            for term_words, i in self._term_words.get(word, ())
            if words[at : at + len(term_words)] == term_words
        }
        return [[self.terms[i].en, self.terms[i].zh] for i in sorted(found)]

    def relevance(self, texts: list[str], ids: list[int | None]) -> list[dict]:
        import numpy as np
        from sklearn.metrics.pairwise import cosine_similarity

        vecs = self.vectorizer.transform(texts)
        profile = cosine_similarity(vecs, self.track_vec)[:, 0]
        zeros = np.zeros(len(texts))
        selected = (
            _closest(cosine_similarity(vecs, self.selected_vecs), ids, self.selected_ids)
            if self.selected_vecs is not None
            else zeros
        )
        rejected = (
            _closest(cosine_similarity(vecs, self.rejected_vecs), ids, self.rejected_ids)
            if self.rejected_vecs is not None
            else zeros
        )
        # Editors' selections count as much as the description; a close turned-down paper
        # pulls the score down.
        score = 0.6 * profile + 0.4 * selected - 0.3 * np.maximum(0, rejected - 0.3)
        coverage = np.array([self.known_vocabulary(t) for t in texts])
        score = score * coverage
        return [
            {
                "score": float(s),
                "profile": float(p),
                "selected": float(a),
                "rejected": float(r),
                "coverage": float(c),
            }
            for s, p, a, r, c in zip(score, profile, selected, rejected, coverage, strict=True)
        ]

    def known_vocabulary(self, text: str) -> float:
        """The norm of ``text``'s TF-IDF vector over the profile's vocabulary, as a share of
        its norm had the profile seen every term of it (an unseen term weighs as a term of
        no profile document). Cosine similarity drops unseen terms, so a songbird study
        reduced to "cache", "latency" and "retrieve" looked like a cache paper; scaled by
        this, the similarity is the one over the paper's whole text."""
        known = unseen = 0.0
        for term, count in Counter(self.analyzer(text)).items():
            weight = 1 + math.log(count)  # sublinear tf, as the vectorizer's
            index = self.vocabulary.get(term)
            if index is None:
                unseen += (weight * self.unseen_idf) ** 2
            else:
                known += (weight * self.idf[index]) ** 2
        return math.sqrt(known / (known + unseen)) if known else 0.0

    def recent_closeness(self, texts: list[str], ids: list[int | None]) -> list[float]:
        if not self.recent_idx or self.selected_vecs is None:
            return [0.0] * len(texts)
        from sklearn.metrics.pairwise import cosine_similarity

        vecs = self.vectorizer.transform(texts)
        recent = self.selected_vecs[self.recent_idx]
        recent_ids = [self.selected_ids[i] for i in self.recent_idx]
        return [float(v) for v in _closest(cosine_similarity(vecs, recent), ids, recent_ids)]


@dataclass(frozen=True)
class TrackTerm:
    """A word the track knows beyond its description and papers: a glossary term, or a topic
    of the papers editors selected (named by the topic, found by its name or keywords)."""

    en: str
    zh: str
    words: tuple[str, ...]


def _track_terms(track: Track, selected_ids: list[int]) -> list[TrackTerm]:
    """The track's glossary and its selections' topics (two queries)."""
    glossary = GlossaryTerm.objects.filter(track=track).order_by("en").values_list("en", "zh")
    topics = (
        Topic.objects.filter(papers__in=selected_ids)
        .distinct()
        .order_by("slug")
        .values_list("name_en", "name_zh", "keywords")
    )
    return [TrackTerm(en, zh, (en,)) for en, zh in glossary] + [
        TrackTerm(en, zh, (en, *keywords)) for en, zh, keywords in topics
    ]


def _closest(similarity, ids: list[int | None], profile_ids: list[int | None]):
    """Each row's highest similarity to a profile paper other than itself: a paper editors
    selected would otherwise rate 1.00 against its own profile entry when rescored."""
    columns: dict[int, list[int]] = {}
    for column, profile_id in enumerate(profile_ids):
        if profile_id is not None:
            columns.setdefault(profile_id, []).append(column)
    for row, paper_id in enumerate(ids):
        for column in columns.get(paper_id, ()):
            similarity[row, column] = 0.0
    return similarity.max(axis=1)


# The venue's note in the Chinese rationale (the English one prints the stored status).
_VENUE_STATUS_ZH = {
    Paper.VenueStatus.SUBMITTED: "已投稿",
    Paper.VenueStatus.ACCEPTED: "已录用",
    Paper.VenueStatus.TO_APPEAR: "即将发表于",
    Paper.VenueStatus.PUBLISHED: "已发表于",
}
_VENUE_NONE = "none"


def _venue_note_zh(note: str) -> str:
    """The English venue note ("accepted NSDI 2027", "none") in Chinese."""
    if note == _VENUE_NONE:
        return "无"
    status, _, rest = note.partition(" ")
    return f"{_VENUE_STATUS_ZH.get(status, '提及')} {rest}"


def _venue_level(paper: Paper) -> tuple[int, str]:
    if paper.venue_id is None:
        return 2, _VENUE_NONE
    name = paper.venue.short_name
    status = paper.venue_status or "mentioned"
    top = name in TOP_VENUES
    if status in (
        Paper.VenueStatus.ACCEPTED,
        Paper.VenueStatus.PUBLISHED,
        Paper.VenueStatus.TO_APPEAR,
    ):
        return (5 if top else 4), f"{status} {name} {paper.venue.year}"
    return (3 if top else 2), f"{status} {name} {paper.venue.year}"


def _rationale(criteria: dict[str, int], f: dict) -> tuple[str, str]:
    en = (
        f"Relevance {criteria['relevance']}/5 (similarity to the track profile "
        f"{f['profile_similarity']:.2f}, to papers editors selected "
        f"{f['selected_similarity']:.2f}, vocabulary known to the track "
        f"{f['known_vocabulary']:.2f}{_terms_en(f)}); "
        f"novelty {criteria['novelty']}/5 (closest selection in 30 days "
        f"{f['closest_recent_selection']:.2f}); evidence {criteria['evidence']}/5 "
        f"({f['quantified_results']} quantified results, {f['scale_signals']} scale signals); "
        f"impact {criteria['impact']}/5; venue {criteria['venue']}/5 ({f['venue']})."
    )
    zh = (
        f"相关度 {criteria['relevance']}/5（与赛道画像相似度 {f['profile_similarity']:.2f}，"
        f"与编辑选过的论文 {f['selected_similarity']:.2f}，"
        f"用词为赛道画像所熟悉的程度 {f['known_vocabulary']:.2f}{_terms_zh(f)}）；"
        f"新颖性 {criteria['novelty']}/5"
        f"（与 30 天内入选论文的最高相似度 {f['closest_recent_selection']:.2f}）；"
        f"证据 {criteria['evidence']}/5（{f['quantified_results']} 处量化结果，"
        f"{f['scale_signals']} 处规模信号）；实用价值 {criteria['impact']}/5；"
        f"发表场合 {criteria['venue']}/5（{_venue_note_zh(f['venue'])}）。"
    )
    return en, zh


# The track's terms a rationale names: enough to say why, short enough to read.
_TERMS_SHOWN = 3


def _terms_en(f: dict) -> str:
    terms = f.get("track_terms") or []
    return f", the track's terms {', '.join(en for en, _ in terms[:_TERMS_SHOWN])}" if terms else ""


def _terms_zh(f: dict) -> str:
    terms = f.get("track_terms") or []
    return f"，用到赛道术语{'、'.join(zh for _, zh in terms[:_TERMS_SHOWN])}" if terms else ""
