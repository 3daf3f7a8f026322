"""The domain's invariants are enforced by the database itself, under their own names."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest
from django.apps import apps
from django.db import IntegrityError, transaction
from django.db.models import CheckConstraint

from dailies.models import Daily, DailyEntry
from papers.drafting.grounding import FLAG_KINDS
from papers.models import Paper, Score, SummaryFlag
from tests.factories import make_daily, make_paper, make_track


def _violates(name: str, action) -> None:
    with pytest.raises(IntegrityError) as info, transaction.atomic():
        action()
    # PostgreSQL names the constraint; SQLite names it for CHECKs and lists columns for UNIQUE.
    message = str(info.value)
    assert name in message or "UNIQUE constraint failed" in message, message


def test_it_keeps_one_paper_per_canonical_id(db):
    paper = make_paper()
    _violates(
        "papers_paper_unique_canonical_id",
        lambda: Paper.objects.create(slug="other", title="x", canonical_id=paper.canonical_id),
    )


def test_it_keeps_one_daily_per_track_and_date(db):
    daily = make_daily()
    _violates(
        "dailies_daily_unique_track_date",
        lambda: Daily.objects.create(track=daily.track, date=daily.date),
    )


def test_it_keeps_positions_and_papers_unique_within_a_daily(db):
    daily = make_daily()
    first = daily.entries.get(position=1)
    _violates(
        "dailies_entry_unique_position",
        lambda: DailyEntry.objects.create(daily=daily, paper=make_paper(), position=1),
    )
    _violates(
        "dailies_entry_unique_paper",
        lambda: DailyEntry.objects.create(daily=daily, paper=first.paper, position=9),
    )


def test_it_allows_at_most_one_lead_per_daily(db):
    daily = make_daily()
    _violates(
        "dailies_entry_one_lead",
        lambda: DailyEntry.objects.create(
            daily=daily, paper=make_paper(), position=9, is_lead=True
        ),
    )


@pytest.mark.parametrize("bad", ["0.95", "5.05", "0.00"])
def test_it_keeps_scores_within_one_to_five(db, bad):
    paper, track = make_paper(), make_track()
    _violates(
        "papers_score_total_in_range",
        lambda: Score.objects.create(
            paper=paper, track=track, total=Decimal(bad), scorer="t", scorer_version="1"
        ),
    )
    daily = make_daily(date=dt.date(2026, 3, 1), papers=[])
    _violates(
        "dailies_entry_score_in_range",
        lambda: DailyEntry.objects.create(daily=daily, paper=paper, position=1, score=Decimal(bad)),
    )


@pytest.mark.parametrize("good", ["1.00", "5.00", "3.35"])
def test_it_accepts_scores_at_the_edges(db, good):
    score = Score.objects.create(
        paper=make_paper(), track=make_track(), total=Decimal(good), scorer="t", scorer_version="1"
    )
    score.full_clean()


def test_it_rejects_a_score_off_the_005_grid_in_validation(db):
    from django.core.exceptions import ValidationError

    score = Score(
        paper=make_paper(),
        track=make_track(),
        total=Decimal("3.33"),
        scorer="t",
        scorer_version="1",
    )
    with pytest.raises(ValidationError):
        score.full_clean()


def test_it_requires_a_time_for_scheduled_and_published_dailies(db):
    track = make_track()
    _violates(
        "dailies_daily_scheduled_has_time",
        lambda: Daily.objects.create(track=track, date=dt.date(2026, 5, 1), status="scheduled"),
    )
    _violates(
        "dailies_daily_published_has_time",
        lambda: Daily.objects.create(track=track, date=dt.date(2026, 5, 2), status="published"),
    )


def test_it_reserves_section_names_as_track_slugs(db):
    from django.core.exceptions import ValidationError

    track = make_track("fine")
    track.slug = "papers"
    with pytest.raises(ValidationError):
        track.full_clean()


def test_each_check_of_known_values_in_papers_lists_exactly_the_fields_choices():
    """Such a CHECK spells the values out (a model's Meta cannot see its nested choices), so
    this keeps it and the enum in step."""
    checked = []
    for model in apps.get_app_config("papers").get_models():
        for constraint in model._meta.constraints:
            if not isinstance(constraint, CheckConstraint):
                continue
            children = constraint.condition.children
            if len(children) != 1 or not isinstance(children[0], tuple):
                continue
            child = children[0]
            if not child[0].endswith("__in"):
                continue
            field = model._meta.get_field(child[0].removesuffix("__in"))
            assert list(child[1]) == [value for value, _ in field.choices], constraint.name
            checked.append(constraint.name)
    assert len(checked) == 4, checked


def test_grounding_raises_the_flag_kinds_the_model_stores():
    # grounding is plain Python (no Django), so it names the kinds itself.
    assert tuple(SummaryFlag.Kind.values) == FLAG_KINDS
