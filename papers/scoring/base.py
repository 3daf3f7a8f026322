"""What every scorer returns, and how criteria become a total."""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import ROUND_HALF_UP, Decimal
from typing import Protocol

from papers.models import SCORE_MAX, SCORE_MIN, Paper, Track

# The rubric: criterion → weight in the total. Names are stored with every score.
CRITERIA: dict[str, float] = {
    "relevance": 0.40,
    "novelty": 0.15,
    "evidence": 0.20,
    "impact": 0.15,
    "venue": 0.10,
}


@dataclass(frozen=True)
class ScoreResult:
    total: Decimal
    criteria: dict[str, int]
    rationale_en: str
    rationale_zh: str
    scorer: str
    version: str
    features: dict = field(default_factory=dict)
    notes: str = ""
    prompt_tokens: int | None = None
    completion_tokens: int | None = None


class Scorer(Protocol):
    name: str
    version: str

    def score(self, papers: list[Paper], track: Track) -> list[ScoreResult]: ...


def total_from(criteria: dict[str, int]) -> Decimal:
    """Weighted mean of the criteria, on the 0.05 grid within 1.00–5.00."""
    mean = sum(CRITERIA[name] * criteria[name] for name in CRITERIA) / sum(CRITERIA.values())
    stepped = (Decimal(str(mean)) * 20).quantize(Decimal("1"), rounding=ROUND_HALF_UP) / 20
    return min(SCORE_MAX, max(SCORE_MIN, stepped.quantize(Decimal("0.01"))))


def clamp_level(value: float) -> int:
    """A 1–5 criterion level from a real number."""
    return int(min(5, max(1, round(value))))


# Relevance at or under this level (of 5) keeps a paper below its track's minimum whatever
# the other criteria say: venue, numbers and "latency" do not make a songbird study Infra.
WEAK_RELEVANCE = 2


def total_at_the_cut(total: Decimal, criteria: dict, track: Track) -> Decimal:
    """``total``, or one step under ``track.min_score`` when relevance is weak."""
    relevance = criteria.get("relevance")
    if relevance is None or relevance > WEAK_RELEVANCE or total < track.min_score:
        return total
    return max(SCORE_MIN, track.min_score - Decimal("0.05"))
