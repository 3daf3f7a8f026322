"""The publishing checklist: one service every publish path uses, refusing with every reason
while an entry lacks a summary in a language (unless accepted as "not yet translated"), a
grounding flag is open, an intro is missing in a language, or no lead is set."""

from __future__ import annotations

import datetime as dt

import pytest
from django.core.exceptions import ValidationError
from django.utils import timezone

from dailies import services
from dailies.checklist import daily_publishing_blockers
from dailies.models import Daily
from papers.drafting.service import summary_confirm
from papers.models import Summary, SummaryFlag
from tests.factories import make_daily, make_paper

pytestmark = pytest.mark.django_db


def _draft(**kwargs) -> Daily:
    return make_daily(status=Daily.Status.DRAFT, **kwargs)


def _flag(summary: Summary, text: str = "9.9×") -> SummaryFlag:
    return SummaryFlag.objects.create(
        summary=summary,
        kind=SummaryFlag.Kind.NUMBER,
        field=SummaryFlag.Field.BODY,
        text=text,
        detail=f"“{text}” does not occur in the source.",
        start=0,
        end=len(text),
    )


def test_it_lets_a_complete_daily_through():
    daily = _draft()
    assert daily_publishing_blockers(daily=daily) == []
    services.daily_publish(daily=daily)
    daily.refresh_from_db()
    assert daily.status == Daily.Status.PUBLISHED


def test_it_lists_every_reason_at_once():
    papers = [make_paper(zh=None), make_paper(), make_paper(en=None)]
    daily = _draft(papers=papers, intro_zh="")
    daily.entries.update(is_lead=False)
    _flag(Summary.objects.get(paper=papers[1], language="en"))
    codes = [(b.code, b.language) for b in daily_publishing_blockers(daily=daily)]
    assert codes == [
        ("lead", None),
        ("intro-missing", "zh"),
        ("summary-missing", "zh"),
        ("flag", "en"),
        ("summary-missing", "en"),
    ]
    with pytest.raises(ValidationError) as refused:
        services.daily_publish(daily=daily)
    assert len(refused.value.messages) == 5
    assert "9.9×" in " ".join(refused.value.messages)
    daily.refresh_from_db()
    assert daily.status == Daily.Status.DRAFT


def test_accepting_not_yet_translated_lifts_a_missing_language():
    daily = _draft(papers=[make_paper(zh=None)])
    assert [b.code for b in daily_publishing_blockers(daily=daily)] == ["summary-missing"]
    daily.entries.update(accepted_untranslated=["zh"])
    assert daily_publishing_blockers(daily=daily) == []


def test_a_flag_blocks_every_publish_path_until_an_editor_confirms_it(editor):
    paper = make_paper()
    daily = _draft(papers=[paper])
    flag = _flag(Summary.objects.get(paper=paper, language="zh"), "14 倍")
    for publish in (
        lambda: services.daily_publish(daily=daily),
        lambda: services.daily_schedule(
            daily=daily, publish_at=timezone.now() + dt.timedelta(hours=1)
        ),
    ):
        with pytest.raises(ValidationError, match="14 倍"):
            publish()
    # A daily scheduled before the flag appeared is not published by the scheduler either.
    Daily.objects.filter(pk=daily.pk).update(
        status=Daily.Status.SCHEDULED, publish_at=timezone.now() - dt.timedelta(minutes=1)
    )
    with pytest.raises(ValidationError):
        services.daily_publish_if_due(daily_id=daily.pk)
    daily.refresh_from_db()
    assert daily.status == Daily.Status.SCHEDULED

    summary_confirm(summary=flag.summary, user=editor)
    flag.refresh_from_db()
    assert flag.resolution == SummaryFlag.Resolution.CONFIRMED and flag.resolved_by == editor
    assert services.daily_publish_if_due(daily_id=daily.pk) is True
    daily.refresh_from_db()
    assert daily.status == Daily.Status.PUBLISHED


def test_an_open_flag_on_a_machine_intro_blocks_publishing():
    daily = _draft()
    daily.intro_flags = [{"language": "en", "kind": "number", "text": "12", "detail": "?"}]
    daily.save()
    assert [b.code for b in daily_publishing_blockers(daily=daily)] == ["intro-flag"]


def test_the_checklist_runs_a_fixed_number_of_queries(django_assert_num_queries):
    daily = _draft(papers=[make_paper() for _ in range(8)])
    with django_assert_num_queries(3):
        daily_publishing_blockers(daily=daily)
