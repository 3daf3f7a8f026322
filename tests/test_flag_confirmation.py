"""An editor confirms grounding flags one by one: the ticked flags are resolved, the others
stay open, and the text is not marked reviewed until the editor confirms it as a whole."""

from __future__ import annotations

from django.urls import reverse

from papers.drafting.edits import summary_flags_confirm
from papers.drafting.service import paper_draft
from papers.models import SummaryFlag
from tests.factories import make_candidate
from tests.test_drafting_service import WrittenDrafter, _en, _form

TWO_FLAGS = "HiLO is 9.9× faster and 7.7× cheaper. It is fast."


def _flagged_summary():
    paper = make_candidate("hilo")
    paper_draft(paper=paper, drafter=WrittenDrafter(_en(TWO_FLAGS, "It is fast.")))
    summary = paper.summaries.get(language="en")
    assert sorted(summary.flags.values_list("text", flat=True)) == ["7.7×", "9.9×"]
    return summary


def _resolutions(summary) -> dict[str, str]:
    return dict(summary.flags.values_list("text", "resolution"))


def test_it_confirms_one_flag_and_leaves_the_other_open(editor):
    summary = _flagged_summary()
    flag = summary.flags.get(text="9.9×")

    assert summary_flags_confirm(summary=summary, flag_ids=[flag.pk], user=editor) == 1

    assert _resolutions(summary) == {"9.9×": "confirmed", "7.7×": ""}
    flag.refresh_from_db()
    assert flag.resolved_by == editor and flag.resolved_at is not None
    summary.refresh_from_db()
    assert summary.reviewed_by is None  # the text as a whole is not reviewed yet


def test_it_leaves_another_summarys_flag_alone(editor):
    summary = _flagged_summary()
    other = make_candidate("c2kv", title="C2KV: Compressed KV Caches")
    paper_draft(paper=other, drafter=WrittenDrafter(_en("C2KV is 8.8× faster. Fast.", "Fast.")))
    foreign = SummaryFlag.objects.get(summary__paper=other)

    assert summary_flags_confirm(summary=summary, flag_ids=[foreign.pk], user=editor) == 0
    assert SummaryFlag.objects.get(pk=foreign.pk).resolution == ""


def test_a_confirmed_flag_stays_confirmed_when_the_text_is_checked_again(editor):
    summary = _flagged_summary()
    flag = summary.flags.get(text="9.9×")
    summary_flags_confirm(summary=summary, flag_ids=[flag.pk], user=editor)

    from papers.drafting.edits import summary_edit

    summary_edit(summary=summary, user=editor, headline="HiLO: another headline")
    assert _resolutions(summary) == {"9.9×": "confirmed", "7.7×": ""}


def test_the_admin_lists_open_flags_to_tick_and_confirms_only_those(editor, editor_client):
    summary = _flagged_summary()
    flag = summary.flags.get(text="7.7×")
    url = reverse("admin:papers_summary_change", args=[summary.pk])

    page = editor_client.get(url).content.decode()
    assert 'name="confirm_flags"' in page and "7.7×" in page

    response = editor_client.post(url, _form(summary, confirm_flags=[str(flag.pk)]))

    assert response.status_code == 302, response.content.decode()[:3000]
    assert _resolutions(summary) == {"7.7×": "confirmed", "9.9×": ""}
    summary.refresh_from_db()
    assert summary.reviewed_by is None
