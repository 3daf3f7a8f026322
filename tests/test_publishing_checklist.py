"""The publishing checklist: one service every publish path uses, refusing with every reason
while an entry lacks a summary in a language (unless accepted as "not yet translated"), a
grounding flag is open, an intro is missing in a language, or no lead is set."""

from __future__ import annotations

import datetime as dt

import pytest
from django.core.exceptions import PermissionDenied, ValidationError
from django.utils import timezone

from dailies import services
from dailies.checklist import daily_publishing_blockers
from dailies.models import Daily
from papers.drafting.edits import summary_confirm
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


def test_an_unreviewed_machine_draft_blocks_publishing_when_the_track_requires_review(editor):
    daily = _draft()
    summary = Summary.objects.filter(paper__daily_entries__daily=daily, language="zh").first()
    Summary.objects.filter(pk=summary.pk).update(provenance=Summary.Provenance.MACHINE)
    assert daily.track.require_review  # on by default
    blockers = daily_publishing_blockers(daily=daily)
    assert [(b.code, b.language) for b in blockers] == [("unreviewed", "zh")]
    with pytest.raises(ValidationError):
        services.daily_publish(daily=daily)
    summary.refresh_from_db()
    summary_confirm(summary=summary, user=editor)
    assert daily_publishing_blockers(daily=daily) == []


def test_a_track_may_publish_machine_drafts_without_review():
    daily = _draft()
    Summary.objects.filter(paper__daily_entries__daily=daily).update(
        provenance=Summary.Provenance.MACHINE
    )
    assert {b.code for b in daily_publishing_blockers(daily=daily)} == {"unreviewed"}
    daily.track.require_review = False
    daily.track.save()
    assert daily_publishing_blockers(daily=daily) == []


def test_an_editors_recorded_english_only_choice_lifts_the_chinese_requirements(editor):
    papers = [make_paper(zh=None), make_paper()]
    daily = _draft(papers=papers, intro_zh="")
    _flag(Summary.objects.get(paper=papers[1], language="zh"))
    Summary.objects.filter(paper=papers[1], language="zh").update(
        provenance=Summary.Provenance.MACHINE
    )
    before = {(b.code, b.language) for b in daily_publishing_blockers(daily=daily)}
    assert before == {
        ("intro-missing", "zh"),
        ("summary-missing", "zh"),
        ("unreviewed", "zh"),
        ("flag", "zh"),
    }
    at = timezone.now().replace(microsecond=0)
    services.daily_english_only_set(daily=daily, user=editor, now=at)
    daily.refresh_from_db()
    assert (daily.english_only_by, daily.english_only_at) == (editor, at)  # who and when
    assert daily_publishing_blockers(daily=daily) == []
    services.daily_publish(daily=daily, user=editor)

    # English is still checked, and withdrawing the choice brings the Chinese checks back.
    other = _draft(date=daily.date - dt.timedelta(days=1), papers=[make_paper(en=None)])
    services.daily_english_only_set(daily=other, user=editor)
    other.refresh_from_db()
    assert [b.code for b in daily_publishing_blockers(daily=other)] == ["summary-missing"]
    services.daily_english_only_set(daily=other, user=editor, english_only=False)
    other.refresh_from_db()
    assert other.english_only_by is None and other.english_only_at is None


def test_only_an_editor_may_choose_english_only(contributor):
    daily = _draft()
    with pytest.raises(PermissionDenied):
        services.daily_english_only_set(daily=daily, user=contributor)
    daily.refresh_from_db()
    assert daily.english_only_at is None
