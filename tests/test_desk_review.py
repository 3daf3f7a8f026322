"""Reviewing machine drafts from the desk's checklist: each unreviewed draft has its own
"Mark reviewed", and the ones an editor ticked as read go in one submit; never the daily's
drafts wholesale (the track requires a reading of each). Who and when go on the history."""

from __future__ import annotations

import datetime as dt

import pytest
from django.urls import reverse

from audit.models import AuditRecord
from dailies.checklist import daily_publishing_blockers
from dailies.models import Daily, EditorialAction
from papers.models import Summary
from tests.factories import make_daily, make_paper


def _url(daily) -> str:
    return reverse("admin:dailies_daily_change", args=[daily.pk])


def _review_url(daily) -> str:
    return reverse("admin:dailies_daily_mark_reviewed", args=[daily.pk])


def _unreviewed(daily) -> list[tuple[str, str]]:
    return sorted(
        (daily.entries.get(pk=b.entry_id).paper.slug, b.language)
        for b in daily_publishing_blockers(daily=daily)
        if b.code == "unreviewed"
    )


@pytest.fixture
def drafted(db) -> Daily:
    """A draft daily whose three entries' texts are machine drafts nobody has reviewed."""
    papers = [make_paper(slug) for slug in ("one", "two", "three")]
    Summary.objects.filter(paper__in=papers).update(provenance=Summary.Provenance.MACHINE)
    return make_daily(status=Daily.Status.DRAFT, papers=papers)


def test_it_marks_one_draft_reviewed_from_its_checklist_line(drafted, editor, editor_client):
    one = drafted.entries.get(paper__slug="one")
    html = editor_client.get(_url(drafted)).content.decode()
    line = html.split(f'id="desk-review-{one.pk}-zh"', 1)[1].split("</li>", 1)[0]
    assert f'value="{one.pk}-zh"' in line and "Mark reviewed (zh)" in line
    response = editor_client.post(_review_url(drafted), {"review": f"{one.pk}-zh"}, follow=True)
    assert "Marked 1 text reviewed." in response.content.decode()
    summary = Summary.objects.get(paper__slug="one", language="zh")
    assert summary.reviewed_by == editor and summary.reviewed_at is not None
    assert summary.provenance == Summary.Provenance.MACHINE  # still the machine's text
    assert ("one", "zh") not in _unreviewed(drafted) and ("one", "en") in _unreviewed(drafted)
    action = EditorialAction.objects.get(daily=drafted, paper=one.paper)
    assert action.user == editor and action.detail == "zh summary marked reviewed"


def test_it_marks_the_drafts_ticked_as_read_and_no_others(drafted, editor, editor_client):
    one, two = (drafted.entries.get(paper__slug=s) for s in ("one", "two"))
    html = editor_client.get(_url(drafted)).content.decode()
    assert html.count('form="desk-review-read"') == 6  # one tick per unreviewed text
    assert 'id="desk-review-read"' in html
    ticked = [f"{one.pk}-en", f"{two.pk}-zh", f"{two.pk}-en"]
    response = editor_client.post(_review_url(drafted), {"review": ticked}, follow=True)
    assert "Marked 3 texts reviewed." in response.content.decode()
    assert _unreviewed(drafted) == [("one", "zh"), ("three", "en"), ("three", "zh")]
    assert EditorialAction.objects.filter(daily=drafted, user=editor).count() == 3


def test_nothing_ticked_marks_nothing_and_says_what_to_do(drafted, editor_client):
    response = editor_client.post(_review_url(drafted), {}, follow=True)
    assert "Tick the texts you have read" in response.content.decode()
    assert len(_unreviewed(drafted)) == 6
    assert not EditorialAction.objects.filter(daily=drafted).exists()


def test_it_refuses_an_entry_of_another_daily_and_stores_nothing(drafted, editor_client):
    other = make_daily(
        status=Daily.Status.DRAFT, date=dt.date(2026, 10, 29), papers=[make_paper("elsewhere")]
    )
    one = drafted.entries.get(paper__slug="one")
    stranger = other.entries.get()
    ticked = [f"{one.pk}-zh", f"{stranger.pk}-zh"]
    response = editor_client.post(_review_url(drafted), {"review": ticked}, follow=True)
    assert "That entry is not in" in response.content.decode()
    assert len(_unreviewed(drafted)) == 6  # the whole submit is refused


def test_an_editors_own_text_or_a_reviewed_draft_is_left_alone(drafted, editor, editor_client):
    one = drafted.entries.get(paper__slug="one")
    Summary.objects.filter(paper__slug="one", language="en").update(
        provenance=Summary.Provenance.EDITOR
    )
    ticked = [f"{one.pk}-en", f"{one.pk}-zh"]
    editor_client.post(_review_url(drafted), {"review": ticked})
    response = editor_client.post(_review_url(drafted), {"review": ticked}, follow=True)
    assert "Marked 0 texts reviewed." in response.content.decode()
    assert Summary.objects.get(paper__slug="one", language="en").reviewed_at is None
    assert EditorialAction.objects.filter(daily=drafted).count() == 1


def test_marking_a_published_drafts_reviewed_is_audited(db, editor, editor_client):
    paper = make_paper("live")
    Summary.objects.filter(paper=paper).update(provenance=Summary.Provenance.MACHINE)
    daily = make_daily(papers=[paper])
    entry = daily.entries.get()
    editor_client.post(_review_url(daily), {"review": f"{entry.pk}-zh"})
    summary = Summary.objects.get(paper=paper, language="zh")
    record = AuditRecord.objects.get(object_id=str(summary.pk), note="marked reviewed")
    assert record.user == editor and record.changes == {"reviewed_by": [None, editor.pk]}


def test_a_contributor_may_not_review_a_published_daily(db, contributor_client):
    paper = make_paper("solo")
    Summary.objects.filter(paper=paper).update(provenance=Summary.Provenance.MACHINE)
    daily = make_daily(papers=[paper])
    entry = daily.entries.get()
    response = contributor_client.post(_review_url(daily), {"review": f"{entry.pk}-zh"})
    assert response.status_code == 403
    assert Summary.objects.get(paper=paper, language="zh").reviewed_at is None


def test_it_is_a_post(drafted, editor_client):
    assert editor_client.get(_review_url(drafted)).status_code == 405
