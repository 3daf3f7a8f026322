"""A draft daily made from a real arXiv listing, for an editor's first try of the desk.

``demo_draft_load()`` imports the bundled listing into the demo track and assembles the
draft daily that a paper ingested now belongs to; assembly has the drafter (offline without
an LLM) write its summaries and intro. An editor's own draft is left alone, so it is safe to
run on every ``make run``.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path

from django.utils import timezone

from dailies.assembly import daily_assemble, date_of_ingest
from dailies.models import Daily
from papers.ingest.service import ingest_document
from papers.models import Source, Track

LISTING = Path(__file__).resolve().parent / "arxiv" / "arxiv_rss_multicat_2026-09-24.xml"
DEMO_TRACK = "infra"
# The listing is machine learning, off the Infra track's topic (its papers score 2.45, under
# the 3.00 threshold): the demo draft takes all of them so the desk has entries to edit.
DEMO_DRAFT_MIN_SCORE = Decimal("0.00")


@dataclass
class DemoDraft:
    daily: Daily | None
    status: str
    ingest: str

    def line(self) -> str:
        if self.daily is None:
            return f"Demo draft: none ({self.status}); listing: {self.ingest}."
        return (
            f"Demo draft: {self.daily} ({self.status}, {self.daily.entries.count()} entries "
            f"from a real arXiv listing); listing: {self.ingest}."
        )


def demo_draft_load(*, now: dt.datetime | None = None) -> DemoDraft:
    """Import the listing and assemble (or leave) today's draft of the demo track."""
    now = now or timezone.now()
    track = Track.objects.get(slug=DEMO_TRACK)
    run = ingest_document(
        data=LISTING.read_bytes(),
        fmt=Source.Kind.ARXIV_RSS,
        tracks=[track],
        label=f"demo listing {LISTING.name}",
    )
    ingest = f"{run.status}, {run.new} new, {run.unchanged} unchanged"
    # In memory only: the stored track keeps its threshold for every real assembly.
    track.min_score = DEMO_DRAFT_MIN_SCORE
    # Assembly hands the new draft to the drafter, as the pipeline does every day.
    result = daily_assemble(track=track, date=date_of_ingest(track, now), now=now)
    return DemoDraft(daily=result.daily, status=str(result.status), ingest=ingest)
