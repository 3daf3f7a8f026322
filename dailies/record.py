"""A published daily is a record: what it showed readers is pinned when it is first published.

Scores are never rewritten (rescoring adds a row), but "the newest score counts" would let
every later row change a published page: its selection chart, its near misses and the rubric
under each entry. So publishing pins the score rows the page shows at that moment — each
entry's and each candidate's (``selection.newest_candidate_scores``) — and the track minimum
the chart marks (``Daily.pinned_scores``, ``pinned_min_score``); a pinned daily's selection
is read from them alone (``selection.daily_selection``), whatever is scored, ingested or
re-tuned later. A draft has no pins: its preview reads the newest scores, which are what
publishing will pin.
"""

from __future__ import annotations

import datetime as dt

from django.db import transaction

from dailies.models import Daily, DailyEntry
from dailies.selection import newest_candidate_scores
from papers.models import Score


@transaction.atomic
def daily_pin(*, daily: Daily, now: dt.datetime) -> None:
    """Pin what ``daily`` (being published) shows, as its page reads it unpinned. A daily
    pinned before (published, unpublished, published again) keeps its pins; only an entry
    added since without a pinned score gets its newest."""
    selected = set(DailyEntry.objects.filter(daily=daily).values_list("paper_id", flat=True))
    if daily.pinned_at is not None:
        pinned = set(daily.pinned_scores.values_list("paper_id", flat=True))
        newest: dict[int, int] = {}
        for pk, paper_id in (
            Score.objects.filter(track_id=daily.track_id, paper_id__in=selected - pinned)
            .order_by("paper_id", "created_at", "pk")
            .values_list("pk", "paper_id")
        ):
            newest[paper_id] = pk
        daily.pinned_scores.add(*newest.values())
        return
    daily.pinned_scores.set(newest_candidate_scores(daily, selected))
    daily.pinned_min_score = daily.track.min_score
    daily.pinned_at = now
    Daily.objects.filter(pk=daily.pk).update(pinned_min_score=daily.pinned_min_score, pinned_at=now)
