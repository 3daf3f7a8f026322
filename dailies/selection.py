"""The selection of a daily, made visible: every candidate's score, the cut-off, the near misses.

A daily's candidates are the papers of its track ingested in its window (after the previous
daily's cut-off, up to its own) plus the papers it selected; each counts with its newest
score for the track recorded up to the daily's assembly. The candidates are assembly's own
(``assembly.candidate_papers``), so the chart, the staff preview and assembly count the same.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal

from django.db.models import Q

from dailies.assembly import candidate_papers
from dailies.models import Daily, DailyEntry
from papers.models import SCORE_MAX, SCORE_MIN, Score

# Histogram bins: SCORE_MIN..SCORE_MAX in steps of BIN_WIDTH (16 bins of 0.25).
BIN_WIDTH = Decimal("0.25")
# How many unselected candidates the "just below the cut" list shows.
NEAR_MISSES = 5
# The SVG's drawing box; it scales to the width of its container.
CHART_WIDTH, CHART_HEIGHT, CHART_PAD = 640, 160, 24


@dataclass(frozen=True)
class Bin:
    low: Decimal
    high: Decimal
    selected: int
    other: int

    @property
    def total(self) -> int:
        return self.selected + self.other


@dataclass(frozen=True)
class Bar:
    x: float
    width: float
    y: float
    height: float
    css: str
    label: str


@dataclass
class Selection:
    scores: list[Score]  # one per candidate, best first
    selected_ids: set[int]
    min_score: Decimal | None
    recorded: int | None  # the candidate count the daily recorded
    shown_low: Decimal | None = None  # the lowest score the daily shows on an entry
    by_paper: dict[int, Score] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.by_paper = {s.paper_id: s for s in self.scores}

    @property
    def count(self) -> int:
        return len(self.scores)

    @property
    def selected_count(self) -> int:
        return sum(1 for s in self.scores if s.paper_id in self.selected_ids)

    @property
    def lowest_selected(self) -> Decimal | None:
        if self.shown_low is not None:
            return self.shown_low
        picked = [s.total for s in self.scores if s.paper_id in self.selected_ids]
        return min(picked, default=None)

    @property
    def partial(self) -> bool:
        """Fewer scores are stored than the daily recorded candidates (an imported daily)."""
        return self.recorded is not None and self.count < self.recorded

    @property
    def near_misses(self) -> list[Score]:
        """The best unselected candidates, best first (ties: the lower paper id first)."""
        return [s for s in self.scores if s.paper_id not in self.selected_ids][:NEAR_MISSES]

    def bins(self) -> list[Bin]:
        n = int((SCORE_MAX - SCORE_MIN) / BIN_WIDTH)
        counts = [[0, 0] for _ in range(n)]
        for s in self.scores:
            i = min(int((s.total - SCORE_MIN) / BIN_WIDTH), n - 1)
            counts[i][0 if s.paper_id in self.selected_ids else 1] += 1
        return [
            Bin(SCORE_MIN + BIN_WIDTH * i, SCORE_MIN + BIN_WIDTH * (i + 1), sel, other)
            for i, (sel, other) in enumerate(counts)
        ]

    def _x(self, value: Decimal) -> float:
        span = float(SCORE_MAX - SCORE_MIN)
        inner = CHART_WIDTH - 2 * CHART_PAD
        return round(CHART_PAD + inner * float(value - SCORE_MIN) / span, 1)

    def chart(self) -> dict:
        """What the SVG draws: stacked bars per bin, the cut-off lines and the axis ticks."""
        bins = self.bins()
        tallest = max((b.total for b in bins), default=0) or 1
        base = CHART_HEIGHT - CHART_PAD
        scale = (CHART_HEIGHT - 2 * CHART_PAD) / tallest
        bars = []
        for b in bins:
            x, width = self._x(b.low) + 1, self._x(b.high) - self._x(b.low) - 2
            top = base
            for count, css in ((b.selected, "bar-selected"), (b.other, "bar-other")):
                if count:
                    height = round(count * scale, 1)
                    top = round(top - height, 1)
                    label = f"{b.low:.2f}–{b.high:.2f}: {count}"
                    bars.append(Bar(x, round(width, 1), top, height, css, label))
        lines = []
        if self.min_score is not None:
            lines.append({"x": self._x(self.min_score), "css": "cut-min", "value": self.min_score})
        low = self.lowest_selected
        if low is not None:
            lines.append({"x": self._x(low), "css": "cut-lowest", "value": low})
        ticks = [{"x": self._x(Decimal(v)), "label": f"{v}"} for v in range(int(SCORE_MIN), 6)]
        return {
            "width": CHART_WIDTH,
            "height": CHART_HEIGHT,
            "base": base,
            "top": CHART_PAD,
            "left": CHART_PAD,
            "right": CHART_WIDTH - CHART_PAD,
            "bars": bars,
            "lines": lines,
            "ticks": ticks,
            "label_y": CHART_HEIGHT - 6,
        }


# What the chart and the score breakdowns print of a candidate's score and its paper.
_PRINTED = [
    "paper",
    "total",
    "created_at",
    "rationale_en",
    "rationale_zh",
    "scorer",
    "scorer_version",
    "criteria",
    "paper__title",
    "paper__short_name",
]


def daily_selection(daily: Daily, entries: list[DailyEntry]) -> Selection:
    """The selection chart of ``daily`` with ``entries`` selected: a published daily's is
    the score rows pinned when it was published (``dailies.record``: one query), a draft's
    its candidates' newest scores (``newest_candidate_scores``: two queries)."""
    selected_ids = {e.paper_id for e in entries}
    if daily.is_pinned:
        scores = list(daily.pinned_scores.select_related("paper").only(*_PRINTED))
        min_score = daily.pinned_min_score
    else:
        scores = newest_candidate_scores(daily, selected_ids)
        min_score = daily.track.min_score
    return Selection(
        scores=sorted(scores, key=lambda s: (-s.total, s.paper_id)),
        selected_ids=selected_ids,
        min_score=min_score,
        recorded=daily.candidates_scored,
        shown_low=min((e.score for e in entries if e.score is not None), default=None),
    )


def newest_candidate_scores(daily: Daily, selected_ids: set[int]) -> list[Score]:
    """The candidates of ``daily`` (``assembly.candidate_papers``, and ``selected_ids``, the
    papers of its entries, which always count) with their newest scores for the track,
    recorded up to the daily's assembly for the ones it did not select: two queries."""
    track = daily.track
    scores = Score.objects.filter(track=track).filter(
        Q(paper__in=candidate_papers(track, daily.date).values("pk")) | Q(paper__in=selected_ids)
    )
    if daily.assembled_at is not None:
        # What assembly saw: a rescoring after the daily's assembly does not rewrite it.
        scores = scores.filter(Q(created_at__lte=daily.assembled_at) | Q(paper__in=selected_ids))
    latest: dict[int, Score] = {}
    for score in (
        scores.select_related("paper").only(*_PRINTED).order_by("paper", "-created_at", "-pk")
    ):
        latest.setdefault(score.paper_id, score)
    return list(latest.values())
