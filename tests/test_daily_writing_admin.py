"""The daily's writing in the admin: the checklist on the form, an editor's intro becomes the
editor's, machine intro flags confirmed, missing translations accepted, drafting on demand."""

from __future__ import annotations

import pytest

from dailies.models import Daily
from papers.models import Summary
from tests.admin_forms import change_form_data
from tests.factories import make_daily, make_paper

pytestmark = pytest.mark.django_db


def _url(daily: Daily) -> str:
    return f"/admin/dailies/daily/{daily.pk}/change/"


def _machine_intro(daily: Daily) -> Daily:
    daily.intro_en = "Today: 3 papers, one of them 14× faster."
    daily.intro_en_provenance = Summary.Provenance.MACHINE
    daily.intro_flags = [
        {"language": "en", "kind": "number", "text": "14×", "detail": "not in the source"}
    ]
    daily.save()
    return daily


def test_the_change_form_lists_what_blocks_publishing(editor_client):
    daily = make_daily(status=Daily.Status.DRAFT, papers=[make_paper(zh=None)], intro_zh="")
    html = editor_client.get(_url(daily)).content.decode()
    assert "The intro is missing in Chinese." in html
    assert "has no Chinese summary" in html


def test_an_editor_s_intro_becomes_the_editor_s_and_drops_its_machine_flags(editor_client):
    daily = _machine_intro(make_daily(status=Daily.Status.DRAFT))
    data = change_form_data(editor_client.get(_url(daily)))
    data["intro_en"] = "Today: three papers on serving."
    response = editor_client.post(_url(daily), data)
    assert response.status_code == 302
    daily.refresh_from_db()
    assert daily.intro_en == "Today: three papers on serving."
    assert daily.intro_en_provenance == Summary.Provenance.EDITOR
    assert daily.intro_flags == []


def test_saving_without_touching_the_intro_keeps_it_a_machine_draft(editor_client):
    daily = _machine_intro(make_daily(status=Daily.Status.DRAFT))
    data = change_form_data(editor_client.get(_url(daily)))
    data["intro_zh"] = "今天的导语，改过。"
    assert editor_client.post(_url(daily), data).status_code == 302
    daily.refresh_from_db()
    assert daily.intro_en_provenance == Summary.Provenance.MACHINE
    assert [f["text"] for f in daily.intro_flags] == ["14×"]
    assert daily.intro_zh_provenance == Summary.Provenance.EDITOR


def test_confirming_the_intros_clears_their_flags(editor_client):
    daily = _machine_intro(make_daily(status=Daily.Status.DRAFT))
    response = editor_client.post(
        "/admin/dailies/daily/",
        {"action": "confirm_intros", "_selected_action": [daily.pk]},
    )
    assert response.status_code == 302
    daily.refresh_from_db()
    assert daily.intro_flags == []
    assert daily.intro_en_provenance == Summary.Provenance.MACHINE


def test_accepting_not_yet_translated_marks_each_missing_language(editor_client):
    papers = [make_paper(zh=None), make_paper(en=None), make_paper()]
    daily = make_daily(status=Daily.Status.DRAFT, papers=papers)
    editor_client.post(
        "/admin/dailies/daily/",
        {"action": "accept_untranslated", "_selected_action": [daily.pk]},
    )
    accepted = dict(daily.entries.values_list("paper_id", "accepted_untranslated"))
    assert accepted == {papers[0].pk: ["zh"], papers[1].pk: ["en"], papers[2].pk: []}


def test_drafting_from_the_admin_writes_the_missing_summaries(editor_client, settings):
    settings.LLM_BASE_URL = ""
    abstract = (
        "Serving long contexts runs out of GPU memory. However, offloading stalls decode. "
        "We present SpillKV, which spills cold KV cache blocks to host memory. "
        "SpillKV raises decode throughput by 1.8x at 128K context on an H100."
    )
    paper = make_paper(en=None, zh=None, abstract=abstract, title="SpillKV: Spilling KV Blocks")
    daily = make_daily(status=Daily.Status.DRAFT, papers=[paper], intro_en="", intro_zh="")
    response = editor_client.post(
        "/admin/dailies/daily/",
        {"action": "draft_writing", "_selected_action": [daily.pk]},
        follow=True,
    )
    assert "drafted 1 entries" in response.content.decode()
    summary = Summary.objects.get(paper=paper, language="en")
    assert summary.provenance == Summary.Provenance.MACHINE and "1.8x" in summary.body
    daily.refresh_from_db()
    assert daily.intro_en and daily.intro_en_provenance == Summary.Provenance.MACHINE
