"""What the editor's desk (the daily's change page in the admin) shows: read-only selectors.

A fixed number of queries per page, whatever the number of entries or candidates.
"""

from __future__ import annotations

import datetime as dt
import zoneinfo
from dataclasses import dataclass, field
from decimal import Decimal

from django.conf import settings
from django.db.models import Prefetch
from django.utils.translation import gettext as _

from dailies.assembly import daily_candidates, window
from dailies.checklist import Blocker, daily_publishing_blockers
from dailies.extensions import CoveredPaper, nearest_covered
from dailies.models import Daily, DailyEntry, EditorialAction
from papers.languages import LANGUAGE_CODES
from papers.models import Paper, Score, Summary, SummaryFlag
from papers.scoring.service import latest_scores

DESK_HISTORY_SIZE = 50  # latest editorial actions listed on a daily's change page


def score_text(entry: DailyEntry) -> str:
    """ "4.10 (editor; computed 3.85)" for an override, else the score."""
    if entry.pk is None or entry.score is None:
        return "—"
    if entry.score_is_override:
        return _("%(score)s (editor; computed %(computed)s)") % {
            "score": f"{entry.score:.2f}",
            "computed": f"{entry.score_computed:.2f}",
        }
    return f"{entry.score:.2f}"


def editorial_time_zone() -> zoneinfo.ZoneInfo:
    return zoneinfo.ZoneInfo(settings.EDITORIAL_TIME_ZONE)


def _open_flags() -> Prefetch:
    open_flags = SummaryFlag.objects.filter(resolution=SummaryFlag.Resolution.OPEN)
    return Prefetch(
        "summaries", queryset=Summary.objects.prefetch_related(Prefetch("flags", open_flags))
    )


@dataclass
class Candidate:
    paper: Paper
    score: Score | None
    entry: DailyEntry | None  # the entry when the daily already has it
    flags: list[SummaryFlag] = field(default_factory=list)
    # The published papers nearest in meaning (a repeat of one of them is caught here).
    nearest: list[CoveredPaper] = field(default_factory=list)

    @property
    def total(self) -> Decimal | None:
        return self.score.total if self.score is not None else None

    @property
    def entry_score(self) -> str:
        return score_text(self.entry) if self.entry is not None else ""


def desk_candidates(*, daily: Daily) -> list[Candidate]:
    """Every candidate of the daily's window, the daily's own entries included, ranked by
    the newest score for the track (unscored last). Runs a handful of queries."""
    papers = {p.pk: p for p in daily_candidates(daily.track, daily.date)}
    entries = {e.paper_id: e for e in daily.entries.all()}
    missing = entries.keys() - papers.keys()
    ids = [*papers, *missing]
    detailed = (
        Paper.objects.filter(pk__in=ids)
        .select_related("venue")
        .prefetch_related("organizations", _open_flags())
    )
    scores = latest_scores(daily.track, ids)
    candidates = [
        Candidate(
            paper=paper,
            score=scores.get(paper.pk),
            entry=entries.get(paper.pk),
            flags=[f for s in paper.summaries.all() for f in s.flags.all()],
        )
        for paper in detailed
    ]
    nearest = nearest_covered([c.paper.pk for c in candidates])
    for candidate in candidates:
        candidate.nearest = nearest.get(candidate.paper.pk, [])
    low = Decimal("-1")
    candidates.sort(key=lambda c: (-(c.total if c.total is not None else low), c.paper.pk))
    return candidates


@dataclass
class DeskLanguage:
    code: str
    summary: Summary | None

    @property
    def flags(self) -> list[SummaryFlag]:
        return list(self.summary.flags.all()) if self.summary is not None else []


@dataclass
class DeskEntry:
    entry: DailyEntry
    languages: list[DeskLanguage]
    blockers: list[Blocker]

    @property
    def score(self) -> str:
        return score_text(self.entry)


def desk_entries(*, daily: Daily, blockers: list[Blocker]) -> list[DeskEntry]:
    """The daily's entries with both languages' texts, provenance and open flags, in order
    (three queries)."""
    entries = (
        daily.entries.select_related("paper", "paper__venue")
        .prefetch_related(_prefetch_summaries())
        .order_by("position")
    )
    rows = []
    for entry in entries:
        by_language = {s.language: s for s in entry.paper.summaries.all()}
        rows.append(
            DeskEntry(
                entry=entry,
                languages=[DeskLanguage(code, by_language.get(code)) for code in LANGUAGE_CODES],
                blockers=[b for b in blockers if b.entry_id == entry.pk],
            )
        )
    return rows


def _prefetch_summaries() -> Prefetch:
    open_flags = SummaryFlag.objects.filter(resolution=SummaryFlag.Resolution.OPEN)
    return Prefetch(
        "paper__summaries",
        queryset=Summary.objects.select_related("edited_by", "reviewed_by").prefetch_related(
            Prefetch("flags", open_flags)
        ),
    )


def desk_history(*, daily: Daily) -> list[EditorialAction]:
    """The latest editorial actions on the daily, with who did them (one query)."""
    return list(
        daily.actions.select_related("paper", "user").order_by("-created_at", "-pk")[
            :DESK_HISTORY_SIZE
        ]
    )


def window_text(daily: Daily) -> str:
    """The cut-off window of the daily, in the editorial time zone."""
    start, end = window(daily.track, daily.date)
    fmt = "%Y-%m-%d %H:%M"
    span = f"{start:{fmt}} – {end:{fmt}}" if start else f"up to {end:{fmt}}"
    return f"{span} ({settings.EDITORIAL_TIME_ZONE})"


def desk_counts(*, candidates: list[Candidate], rows: list[DeskEntry]) -> dict:
    """The summary line at the top of the desk, from what the page already read."""
    return {
        "entries": len(rows),
        "candidates": len(candidates),
        "scored": sum(1 for c in candidates if c.score is not None),
        "texts": [
            (code, sum(1 for row in rows if row.languages[i].summary is not None))
            for i, code in enumerate(LANGUAGE_CODES)
        ],
    }


def desk_context(*, daily: Daily) -> dict:
    blockers = daily_publishing_blockers(daily=daily)
    zone = editorial_time_zone()
    # The one publish-at control shows the daily's own time when it has one.
    if daily.publish_at is not None:
        schedule_default = daily.publish_at.astimezone(zone)
    else:
        schedule_default = dt.datetime.now(zone) + dt.timedelta(hours=1)
    candidates = desk_candidates(daily=daily)
    rows = desk_entries(daily=daily, blockers=blockers)
    return {
        "blockers": blockers,
        "general_blockers": [b for b in blockers if b.entry_id is None],
        # Machine drafts no editor has read yet: the checklist offers to tick them as read.
        "unreviewed": sum(1 for b in blockers if b.code == "unreviewed"),
        "candidates": candidates,
        "desk_entries": rows,
        "counts": desk_counts(candidates=candidates, rows=rows),
        "window": window_text(daily),
        "time_zone": settings.EDITORIAL_TIME_ZONE,
        "schedule_default": schedule_default,
    }
