"""Assembling a track's draft daily: candidates, selection, idempotence, editors' changes."""

from __future__ import annotations

import datetime as dt
import json
import re
from decimal import Decimal

import pytest
import time_machine
from django.core.management import call_command
from django.core.management.base import CommandError
from django.urls import reverse

from dailies.assembly import daily_assemble, tracks_due_for_assembly
from dailies.models import Daily, EditorialAction
from dailies.services import daily_publish
from papers.models import Paper, Track, TrackProfileItem
from papers.scoring.base import ScoreResult
from tests.factories import make_paper, make_track

DAY = dt.date(2026, 11, 5)
# Assembly for DAY runs at 07:00 Asia/Shanghai = 23:00 UTC the day before.
AFTER_CUTOFF = dt.datetime(2026, 11, 4, 23, 30, tzinfo=dt.UTC)
BEFORE_CUTOFF = dt.datetime(2026, 11, 4, 12, 0, tzinfo=dt.UTC)


class FixedScorer:
    """Scores from a table, so selection rules are tested apart from the rubric."""

    name = "fixed"
    version = "1"

    def __init__(self, totals: dict[str, str]) -> None:
        self.totals = totals

    def score(self, papers, track):
        return [
            ScoreResult(
                total=Decimal(self.totals.get(p.slug, "2.00")),
                criteria=dict.fromkeys(["relevance", "novelty", "evidence", "impact", "venue"], 3),
                rationale_en="fixed",
                rationale_zh="固定",
                scorer="fixed",
                version="1",
            )
            for p in papers
        ]


@pytest.fixture
def track(db) -> Track:
    track = make_track("infra", daily_size=3, min_score=Decimal("3.00"))
    return track


def _candidates(track: Track, slugs: list[str], at: dt.datetime) -> list[Paper]:
    papers = []
    with time_machine.travel(at, tick=False):
        for slug in slugs:
            paper = make_paper(slug)
            paper.tracks.add(track)
            papers.append(paper)
    return papers


SCORES = {"a": "4.60", "b": "3.10", "c": "4.05", "d": "2.95", "e": "3.50"}


def test_it_selects_the_top_papers_at_or_above_the_minimum(track):
    _candidates(track, list("abcde"), BEFORE_CUTOFF)
    result = daily_assemble(track=track, date=DAY, scorer=FixedScorer(SCORES))
    assert result.status == "created"
    assert result.candidates == 5
    assert [(s["title"].split(": ")[-1], s["score"], s["lead"]) for s in result.selected] == [
        ("a", 4.6, True),
        ("c", 4.05, False),
        ("e", 3.5, False),
    ]
    daily = Daily.objects.get(track=track, date=DAY)
    assert daily.status == Daily.Status.DRAFT and daily.candidates_scored == 5
    assert list(daily.entries.values_list("paper__slug", "position", "is_lead")) == [
        ("a", 1, True),
        ("c", 2, False),
        ("e", 3, False),
    ]


def test_papers_after_the_cut_off_wait_for_the_next_daily(track):
    _candidates(track, ["a", "c"], BEFORE_CUTOFF)
    _candidates(track, ["e"], AFTER_CUTOFF)
    result = daily_assemble(track=track, date=DAY, scorer=FixedScorer(SCORES))
    assert result.candidates == 2


def test_reassembling_an_untouched_draft_is_idempotent(track):
    _candidates(track, list("abcde"), BEFORE_CUTOFF)
    first = daily_assemble(track=track, date=DAY, scorer=FixedScorer(SCORES))
    second = daily_assemble(track=track, date=DAY, scorer=FixedScorer(SCORES))
    assert second.status == "refreshed"
    assert second.selected == first.selected
    assert Daily.objects.count() == 1


def test_a_published_daily_is_never_modified(track):
    _candidates(track, list("abcde"), BEFORE_CUTOFF)
    daily_assemble(track=track, date=DAY, scorer=FixedScorer(SCORES))
    daily = Daily.objects.get()
    daily.intro_en, daily.intro_zh = "Intro.", "导语。"
    daily.save()
    daily_publish(daily=daily)
    result = daily_assemble(track=track, date=DAY, scorer=FixedScorer({"b": "5.00"}))
    assert result.status == "unchanged-published"
    assert list(daily.entries.values_list("paper__slug", flat=True)) == ["a", "c", "e"]


def test_papers_a_published_daily_selected_are_not_candidates_again(track):
    _candidates(track, list("abcde"), BEFORE_CUTOFF)
    daily_assemble(track=track, date=DAY, scorer=FixedScorer(SCORES))
    daily = Daily.objects.get()
    daily.intro_en, daily.intro_zh = "Intro.", "导语。"
    daily.save()
    daily_publish(daily=daily)
    Daily.objects.filter(pk=daily.pk).update(date=DAY - dt.timedelta(days=1))
    _candidates(track, ["f"], BEFORE_CUTOFF)
    result = daily_assemble(track=track, date=DAY, scorer=FixedScorer({**SCORES, "f": "3.20"}))
    picked = [s["title"].rsplit(": ", 1)[-1] for s in result.selected]
    assert result.status == "created"
    assert "a" not in picked and "c" not in picked and "e" not in picked  # already published
    assert "f" in picked


def test_with_no_candidates_no_daily_is_made_and_it_says_why(track):
    result = daily_assemble(track=track, date=DAY, scorer=FixedScorer(SCORES))
    assert result.status == "no-candidates" and "no papers were ingested" in result.message
    assert not Daily.objects.exists()


def _admin_post_entries(client, daily: Daily, entries: list[tuple[Paper, str, bool]]) -> None:
    url = reverse("admin:dailies_daily_change", args=[daily.pk])
    existing = list(daily.entries.order_by("position"))
    data = {
        "track": daily.track_id,
        "date": daily.date.isoformat(),
        "publish_at_0": "",
        "publish_at_1": "",
        "intro_en": daily.intro_en,
        "intro_zh": daily.intro_zh,
        "entries-TOTAL_FORMS": len(entries),
        "entries-INITIAL_FORMS": len(existing),
        "entries-MIN_NUM_FORMS": 0,
        "entries-MAX_NUM_FORMS": 1000,
    }
    wanted = {paper.pk: (i, score, lead) for i, (paper, score, lead) in enumerate(entries)}
    # Existing entries come first in an inline formset: kept ones are updated, others deleted.
    forms = []
    for entry in existing:
        if entry.paper_id in wanted:
            i, score, lead = wanted.pop(entry.paper_id)
            forms.append(
                {
                    "id": entry.pk,
                    "position": i + 1,
                    "paper": entry.paper_id,
                    "score": score,
                    "is_lead": lead,
                }
            )
        else:
            forms.append(
                {
                    "id": entry.pk,
                    "position": 90 + entry.position,
                    "paper": entry.paper_id,
                    "DELETE": True,
                }
            )
    for paper_id, (i, score, lead) in wanted.items():
        forms.append({"position": i + 1, "paper": paper_id, "score": score, "is_lead": lead})
    data["entries-TOTAL_FORMS"] = len(forms)
    for n, form in enumerate(forms):
        data[f"entries-{n}-daily"] = daily.pk
        for key, value in form.items():
            if key in ("is_lead", "DELETE"):
                if value:
                    data[f"entries-{n}-{key}"] = "on"
            else:
                data[f"entries-{n}-{key}"] = value
    response = client.post(url, data)
    if response.status_code != 302:
        formsets = response.context["inline_admin_formsets"]
        errors = [f.formset.errors for f in formsets] + [
            f.formset.non_form_errors() for f in formsets
        ]
        raise AssertionError((response.context["adminform"].form.errors, errors))


def test_editor_changes_are_recorded_teach_the_profile_and_survive_reassembly(track, editor_client):
    papers = {p.slug: p for p in _candidates(track, list("abcde"), BEFORE_CUTOFF)}
    daily_assemble(track=track, date=DAY, scorer=FixedScorer(SCORES))
    daily = Daily.objects.get()
    # the editor drops "e", adds "d", and overrides the score of "c"
    _admin_post_entries(
        editor_client,
        daily,
        [(papers["a"], "4.60", True), (papers["c"], "4.40", False), (papers["d"], "2.95", False)],
    )
    kinds = set(EditorialAction.objects.values_list("kind", "paper__slug"))
    assert {("added", "d"), ("removed", "e"), ("score", "c")} <= kinds
    daily.refresh_from_db()
    assert daily.edited_by_editor
    profile = dict(TrackProfileItem.objects.values_list("paper__slug", "weight"))
    assert profile["d"] > 0 and profile["e"] < 0
    result = daily_assemble(track=track, date=DAY, scorer=FixedScorer(SCORES))
    assert result.status == "unchanged-edited"
    assert list(daily.entries.values_list("paper__slug", flat=True)) == ["a", "c", "d"]


def test_the_command_prints_the_assembly_as_json(track, capsys):
    _candidates(track, list("abcde"), BEFORE_CUTOFF)
    Track.objects.filter(pk=track.pk).update(min_score=Decimal("1.00"))  # the rubric decides
    call_command("assemble_daily", "infra", DAY.isoformat(), json=True)
    out = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert out["track"] == "infra" and out["date"] == DAY.isoformat()
    assert out["status"] == "created" and out["candidates"] == 5
    assert all({"id", "title", "score", "lead"} <= set(s) for s in out["selected"])
    assert sum(s["lead"] for s in out["selected"]) == 1


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("infra", "2026-13-01"), "not a date (YYYY-MM-DD): '2026-13-01'"),
        (("nope", DAY.isoformat()), "no track 'nope'"),
    ],
)
def test_the_command_names_a_bad_date_or_track_and_assembles_nothing(track, args, message):
    with pytest.raises(CommandError, match=re.escape(message)):
        call_command("assemble_daily", *args)
    assert not Daily.objects.exists()


def test_tracks_are_due_for_assembly_after_their_time_until_they_have_a_daily(
    db, django_assert_num_queries
):
    infra = make_track("infra")  # 07:00 Asia/Shanghai
    late = make_track("late", assemble_at=dt.time(9, 0))
    make_track("retired", is_active=False)
    six = dt.datetime(2026, 11, 4, 22, 0, tzinfo=dt.UTC)  # 06:00 on DAY in Shanghai
    assert tracks_due_for_assembly(now=six) == []
    assert tracks_due_for_assembly(now=AFTER_CUTOFF) == [(infra, DAY)]
    nine = dt.datetime(2026, 11, 5, 1, 0, tzinfo=dt.UTC)  # 09:00 in Shanghai
    with django_assert_num_queries(2):  # the tracks, their dailies of the day
        assert tracks_due_for_assembly(now=nine) == [(infra, DAY), (late, DAY)]
    Daily.objects.create(track=infra, date=DAY)
    with django_assert_num_queries(2):
        assert tracks_due_for_assembly(now=nine) == [(late, DAY)]


def test_the_periodic_task_queues_one_assembly_a_due_track(db, eager_tasks, monkeypatch):
    from dailies import tasks

    infra = make_track("infra")
    make_track("late", assemble_at=dt.time(9, 0))
    queued = []
    monkeypatch.setattr(tasks.assemble_daily, "delay", lambda *args: queued.append(args))
    with time_machine.travel(AFTER_CUTOFF, tick=False):
        assert tasks.assemble_due_dailies.delay().get() == [f"{infra.pk}:{DAY}"]
    assert queued == [(infra.pk, DAY.isoformat())]
