"""`make run` leaves a draft daily made from the bundled real arXiv listing, so an editor can
try the desk at once; the Infra track's own threshold is untouched and an editor's draft is
never overwritten."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import time_machine

from dailies.assembly import date_of_ingest
from dailies.demo.draft import LISTING, demo_draft_load
from dailies.models import Daily
from dailies.services import EntryChanges, daily_update
from dailies.templatetags.digest import paper_links
from papers.models import Summary, Track

NOW = dt.datetime(2026, 11, 2, 9, 0, tzinfo=dt.UTC)


def test_the_listing_ships_with_its_licence_note():
    note = (LISTING.parent / "README.md").read_text()
    assert "CC0" in note and LISTING.name in note
    assert LISTING.read_bytes().count(b"<item>") == 4


def test_it_leaves_a_draft_of_the_listing_with_links_and_machine_texts(
    demo, eager_tasks, django_capture_on_commit_callbacks
):
    with time_machine.travel(NOW, tick=False), django_capture_on_commit_callbacks(execute=True):
        result = demo_draft_load()
    daily = Daily.objects.get(pk=result.daily.pk)
    assert daily.status == Daily.Status.DRAFT and daily.date == date_of_ingest(daily.track, NOW)
    entries = list(daily.entries.select_related("paper").order_by("position"))
    assert len(entries) == 4
    for entry in entries:
        assert entry.paper.arxiv_id and paper_links(entry.paper)[0]["url"].startswith(
            "https://arxiv.org/abs/"
        )
        assert entry.score is not None
    summaries = Summary.objects.filter(paper__in=[e.paper for e in entries], language="en")
    assert {s.provenance for s in summaries} == {Summary.Provenance.MACHINE}
    assert daily.intro_en and daily.intro_en_provenance == Summary.Provenance.MACHINE
    assert Track.objects.get(slug="infra").min_score == Decimal("3.00")
    assert "4 entries from a real arXiv listing" in result.line()


def test_run_again_it_leaves_an_editors_draft_alone(
    demo, eager_tasks, django_capture_on_commit_callbacks, editor
):
    with time_machine.travel(NOW, tick=False), django_capture_on_commit_callbacks(execute=True):
        first = demo_draft_load()
    last = first.daily.entries.order_by("position").last()
    daily_update(
        daily=first.daily,
        user=editor,
        changes={"intro_en": "The editor's intro."},
        entries=EntryChanges(removed=[last.pk]),
    )
    with time_machine.travel(NOW, tick=False):
        again = demo_draft_load()
    daily = Daily.objects.get(pk=first.daily.pk)
    assert again.daily.pk == daily.pk and daily.entries.count() == 3
    assert daily.intro_en == "The editor's intro."
