"""Bilingual editing side by side on the desk: both languages of each entry in two columns,
with provenance, flags and a re-draft button; edits go through the drafting service and are
recorded on the daily's history with their editor."""

from __future__ import annotations

import re

import pytest
from django.conf import settings
from django.urls import reverse

from audit.models import AuditRecord
from dailies.models import Daily, EditorialAction
from papers.models import Summary, SummaryVersion
from tests.factories import make_candidate, make_daily

Kind = EditorialAction.Kind


def _url(daily) -> str:
    return reverse("admin:dailies_daily_change", args=[daily.pk])


@pytest.fixture
def draft(db) -> Daily:
    return make_daily(status=Daily.Status.DRAFT)


def _texts(entry, **zh) -> dict:
    data = {}
    for summary in entry.paper.summaries.all():
        code = summary.language
        data.update(
            {
                f"{code}-headline": summary.headline,
                f"{code}-body": summary.body,
                f"{code}-takeaway": summary.takeaway,
                f"{code}-highlights": "\n".join(summary.highlights),
            }
        )
    data.update({f"zh-{k}": v for k, v in zh.items()})
    return data


def test_it_shows_both_languages_of_each_entry_in_two_columns(draft, editor_client):
    entry = draft.entries.order_by("position").first()
    html = editor_client.get(_url(draft)).content.decode()
    block = html.split(f'id="desk-entry-{entry.pk}"', 1)[1].split("</article>", 1)[0]
    columns = re.findall(r'<div class="desk-column" id="desk-entry-\d+-(\w+)" lang="\w+">', block)
    assert columns == ["en", "zh"]
    assert 'name="en-body"' in block and 'name="zh-body"' in block
    assert "一段中文摘要。" in block and "An English summary." in block
    assert 'name="_redraft"' in block and "Editor" in block  # provenance
    assert 'style="' not in html.split('id="desk-writing"', 1)[1]
    css = (settings.BASE_DIR / "dailies/static/dailies/admin/desk.css").read_text()
    assert "@media (min-width: 1280px)" in css and "grid-template-columns: 1fr 1fr" in css


def test_it_saves_the_chinese_summary_as_the_editor_s_and_records_it(draft, editor, editor_client):
    entry = draft.entries.order_by("position").first()
    url = reverse("admin:dailies_daily_texts", args=[draft.pk, entry.pk])
    body = "编辑改写的摘要。这是要点句。"
    response = editor_client.post(url, _texts(entry, body=body))
    assert response.status_code == 302
    assert response["Location"].endswith(f"#desk-entry-{entry.pk}")
    summary = Summary.objects.get(paper=entry.paper, language="zh")
    assert (summary.body, summary.provenance, summary.edited_by) == (
        body,
        Summary.Provenance.EDITOR,
        editor,
    )
    assert SummaryVersion.objects.filter(summary=summary).count() == 1  # the old text kept
    assert Summary.objects.get(paper=entry.paper, language="en").edited_by is None
    action = EditorialAction.objects.get(kind=Kind.TEXT_EDITED)
    assert (action.user, action.paper, action.detail) == (editor, entry.paper, "zh summary")
    assert not AuditRecord.objects.exists()  # a draft: nothing public changed


def test_a_takeaway_outside_the_summary_is_refused_and_stores_nothing(draft, editor_client):
    entry = draft.entries.order_by("position").first()
    before = Summary.objects.get(paper=entry.paper, language="zh").body
    url = reverse("admin:dailies_daily_texts", args=[draft.pk, entry.pk])
    response = editor_client.post(
        url, _texts(entry, body="新的摘要。", takeaway="不在摘要里。"), follow=True
    )
    assert "The takeaway must occur inside the summary." in response.content.decode()
    assert Summary.objects.get(paper=entry.paper, language="zh").body == before
    assert not EditorialAction.objects.exists()


def test_editing_a_published_daily_s_text_is_audited(db, editor, editor_client):
    daily = make_daily()
    entry = daily.entries.order_by("position").first()
    url = reverse("admin:dailies_daily_texts", args=[daily.pk, entry.pk])
    assert editor_client.post(url, _texts(entry, body="新的摘要。这是要点句。")).status_code == 302
    text, record = AuditRecord.objects.order_by("pk")  # the summary's, then the daily's
    assert record.user == editor and record.changes == {
        "summaries": {entry.paper.canonical_id: ["zh"]}
    }
    # The summary's own record keeps what the text said before and after.
    assert (text.user, text.object_repr) == (editor, str(entry.paper.summary("zh")))
    assert text.changes["body"][1] == "新的摘要。这是要点句。"


def test_a_contributor_cannot_edit_a_published_daily_s_texts(db, contributor_client):
    daily = make_daily()
    entry = daily.entries.order_by("position").first()
    before = Summary.objects.get(paper=entry.paper, language="zh").body
    url = reverse("admin:dailies_daily_texts", args=[daily.pk, entry.pk])
    response = contributor_client.post(url, _texts(entry, body="新的摘要。这是要点句。"))
    assert response.status_code == 403
    assert Summary.objects.get(paper=entry.paper, language="zh").body == before


def test_re_draft_writes_the_machine_texts_of_an_entry(db, editor_client, settings):
    settings.DRAFTER = "offline"
    paper = make_candidate("hilo")
    daily = make_daily(papers=[paper], status=Daily.Status.DRAFT)
    entry = daily.entries.get()
    url = reverse("admin:dailies_daily_redraft", args=[daily.pk, entry.pk])
    response = editor_client.post(url, follow=True)
    assert "Re-drafted" in response.content.decode()
    assert set(paper.summaries.values_list("provenance", flat=True)) == {Summary.Provenance.MACHINE}


def test_an_intro_edit_is_recorded_on_the_history(draft, editor, editor_client):
    from tests.admin_forms import change_form_data

    data = change_form_data(editor_client.get(_url(draft)))
    data["intro_zh"] = "新的导语。"
    assert editor_client.post(_url(draft), data).status_code == 302
    action = EditorialAction.objects.get(kind=Kind.TEXT_EDITED)
    assert (action.user, action.paper, action.detail) == (editor, None, "zh intro")
    html = editor_client.get(_url(draft)).content.decode()
    history = html.split('class="desk-history"', 1)[1].split("</table>", 1)[0]
    assert "editor" in history and "Edited a text" in history and "zh intro" in history
