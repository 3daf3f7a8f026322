"""`manage.py load_demo` loads the demo dailies and can be run again safely."""

from __future__ import annotations

from django.core.management import call_command

from dailies.models import Daily, DailyEntry
from papers.models import Paper, Score, Summary


def _snapshot():
    return (
        Paper.objects.count(),
        Summary.objects.count(),
        Daily.objects.count(),
        DailyEntry.objects.count(),
        Score.objects.count(),
        list(
            DailyEntry.objects.order_by("daily__date", "position").values_list(
                "daily__date", "paper__slug", "score", "is_lead"
            )
        ),
    )


def test_it_is_idempotent(db, capsys):
    call_command("load_demo")
    first = _snapshot()
    call_command("load_demo")
    assert _snapshot() == first
    assert first[:5] == (16, 32, 4, 16, 10)
    assert "16 papers in 4 dailies" in capsys.readouterr().out


def test_it_publishes_the_four_dailies_with_one_lead_each(demo):
    for daily in Daily.objects.all():
        assert daily.is_published
        assert daily.entries.filter(is_lead=True).count() == 1
    assert Daily.objects.get(date="2026-10-28").candidates_scored == 202


def test_every_item_carries_topics_and_an_organisation_where_known(demo):
    for paper in Paper.objects.all():
        assert paper.topics.exists(), paper
    labels = set(
        Paper.objects.filter(daily_entries__daily__date="2026-10-28").values_list(
            "organizations__label", flat=True
        )
    )
    assert {"Microsoft", "PayPal", "ByteDance", "NVIDIA"} <= labels
