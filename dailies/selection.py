"""The selection of a daily, made visible: every candidate's score, the cut-off, the near misses.

A daily's candidates are the papers of its track ingested in its window (after the previous
daily's cut-off, up to its own) plus the papers it selected; each counts with its newest
score for the track recorded up to the daily's assembly. Read in one query, whatever the
number of candidates, as plain rows: the chart needs only each candidate's total, and the
page prints the record of a few (its entries' and the near misses).
"""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass, field
from decimal import Decimal

from django.db import DEFAULT_DB_ALIAS, connections

from dailies.assembly import cutoff
from dailies.models import Daily, DailyEntry
from digest_site.rows import Columns, Read, one_of, table
from papers.languages import Language
from papers.models import SCORE_MAX, SCORE_MIN, Paper, Score

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


@dataclass(frozen=True, slots=True)
class Candidate:
    """A candidate's newest score, with what the page prints of it and of its paper (its
    ``title`` and ``short_name``, so ``full_title`` reads it as it reads a paper). The
    rubric is kept as its stored JSON and decoded when a breakdown prints it: the chart
    needs only the totals of every candidate, the page the rubric of a dozen."""

    paper_id: int
    total: Decimal
    created_at: dt.datetime
    rationale_en: str
    rationale_zh: str
    scorer: str
    scorer_version: str
    title: str
    short_name: str
    criteria_json: str

    @property
    def criteria(self) -> dict:
        """The rubric, as ``Score.criteria`` reads it."""
        return json.loads(self.criteria_json)

    def rationale(self, language: str) -> str:
        if language == Language.ZH:
            return self.rationale_zh or self.rationale_en
        return self.rationale_en or self.rationale_zh


@dataclass
class Selection:
    scores: list[Candidate]  # one per candidate, best first
    selected_ids: set[int]
    min_score: Decimal | None
    recorded: int | None  # the candidate count the daily recorded
    shown_low: Decimal | None = None  # the lowest score the daily shows on an entry
    by_paper: dict[int, Candidate] = field(default_factory=dict)

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
    def near_misses(self) -> list[Candidate]:
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


# What a Candidate is read from, in its fields' order (then the rubric's JSON as stored).
_SCORE = Columns(
    Score,
    "s",
    [
        "paper",
        "total",
        "created_at",
        "rationale_en",
        "rationale_zh",
        "scorer",
        "scorer_version",
    ],
)
_TITLES = Columns(Paper, "p", ["title", "short_name"])


def selection_read(
    daily: Daily, entries: list[DailyEntry], *, previous_date: dt.date | None
) -> Read:
    """The read of the candidates of ``daily`` with their scores (one query, by hand-written
    SQL: ``digest_site.rows``); once it has run (``rows.run``, with the page's other reads),
    ``daily.selection`` is their Selection.

    ``previous_date`` is the date of the track's daily before it (its cut-off opens the
    window); ``entries`` the daily's entries, whose papers always count as candidates.
    """
    selected_ids = sorted({e.paper_id for e in entries})
    # The candidates as one set of papers: the database finds them by the window's index
    # (papers_paper_created_idx) and the selected ids' key, then their scores by paper,
    # never scanning the track's; the titles come from the same rows (at a year's scale the
    # window holds every track's papers of the day, five times the track's).
    window, params = "p.created_at <= %s", [cutoff(daily.track, daily.date)]
    if previous_date is not None:
        window += " AND p.created_at > %s"
        params.append(cutoff(daily.track, previous_date))
    selected, selected_params = one_of(selected_ids)
    # As assembly (``daily_candidates``): the track's papers, less those another published
    # daily of the track selected (a paper readers saw there is no near miss here).
    tracks = Paper.tracks.through
    published = (
        f"SELECT e.paper_id FROM {table(DailyEntry)} e JOIN {table(Daily)} d ON d.id = e.daily_id "
        f"WHERE d.track_id = %s AND d.status = %s AND d.id <> %s"
    )
    sql = (
        f"SELECT {_SCORE.sql}, {_TITLES.sql}, s.criteria FROM {table(Paper)} p "
        f"JOIN {table(Score)} s ON s.paper_id = p.id "
        f"WHERE s.track_id = %s AND (({window} "
        f"AND p.id IN (SELECT t.paper_id FROM {table(tracks)} t WHERE t.track_id = %s) "
        f"AND p.id NOT IN ({published})) OR p.id {selected})"
    )
    params = [
        daily.track_id,
        *params,
        daily.track_id,
        daily.track_id,
        Daily.Status.PUBLISHED,
        daily.pk,
        *selected_params,
    ]
    if daily.assembled_at is not None:
        # What assembly saw: a rescoring after the daily went out does not rewrite it.
        sql += f" AND (s.created_at <= %s OR s.paper_id {selected})"
        params += [daily.assembled_at, *selected_params]
    sql += " ORDER BY s.paper_id, s.created_at DESC, s.id DESC"

    def apply(rows: list[tuple]) -> None:
        latest: dict[int, Candidate] = {}
        db = connections[DEFAULT_DB_ALIAS]
        for row in rows:
            if row[0] not in latest:
                latest[row[0]] = Candidate(
                    *_SCORE.values(row, db=db),
                    *_TITLES.values(row, len(_SCORE), db),
                    row[len(_SCORE) + len(_TITLES)],
                )
        daily.selection = Selection(
            scores=sorted(latest.values(), key=lambda s: (-s.total, s.paper_id)),
            selected_ids=set(selected_ids),
            min_score=daily.track.min_score,
            recorded=daily.candidates_scored,
            shown_low=min((e.score for e in entries if e.score is not None), default=None),
        )

    return Read(sql, params, apply)
