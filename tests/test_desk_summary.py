"""The top of the desk: counts, jump links, the blockers with their own fixes (accepting "not
yet translated" for one entry), one Preview; and the checklist's names cut at a word."""

from __future__ import annotations

import pytest
from django.urls import reverse

from dailies.checklist import daily_publishing_blockers
from dailies.models import Daily, EditorialAction
from tests.factories import make_daily, make_paper

LONG_TITLE = (
    "Disaggregated Prefill and Decode Scheduling for Heterogeneous Accelerator Clusters at Scale"
)


def _url(daily) -> str:
    return reverse("admin:dailies_daily_change", args=[daily.pk])


@pytest.fixture
def untranslated(db) -> Daily:
    papers = [make_paper("one", zh=None), make_paper("two"), make_paper("three", zh=None)]
    return make_daily(status=Daily.Status.DRAFT, papers=papers)


def test_it_accepts_not_yet_translated_for_one_entry_from_the_checklist(
    untranslated, editor, editor_client
):
    html = editor_client.get(_url(untranslated)).content.decode()
    one = untranslated.entries.get(paper__slug="one")
    url = reverse("admin:dailies_daily_accept_untranslated", args=[untranslated.pk, one.pk, "zh"])
    assert f'action="{url}"' in html  # the button sits beside its blocker
    response = editor_client.post(url, follow=True)
    assert "Accepted “not yet translated” (zh)" in response.content.decode()
    accepted = dict(untranslated.entries.values_list("paper__slug", "accepted_untranslated"))
    assert accepted == {"one": ["zh"], "two": [], "three": []}
    action = EditorialAction.objects.get(daily=untranslated, paper=one.paper)
    assert action.user == editor and "not yet translated" in action.detail
    codes = [(b.code, b.entry_id) for b in daily_publishing_blockers(daily=untranslated)]
    assert ("summary-missing", one.pk) not in codes
    assert ("summary-missing", untranslated.entries.get(paper__slug="three").pk) in codes


def test_it_refuses_accepting_a_language_the_entry_has(untranslated, editor_client):
    two = untranslated.entries.get(paper__slug="two")
    url = reverse("admin:dailies_daily_accept_untranslated", args=[untranslated.pk, two.pk, "zh"])
    response = editor_client.post(url, follow=True)
    assert "already has a zh summary" in response.content.decode()
    assert untranslated.entries.get(pk=two.pk).accepted_untranslated == []


def test_a_contributor_may_not_accept_on_a_published_daily(db, contributor_client):
    daily = make_daily(papers=[make_paper("solo", zh=None)])
    entry = daily.entries.get()
    url = reverse("admin:dailies_daily_accept_untranslated", args=[daily.pk, entry.pk, "zh"])
    assert contributor_client.post(url).status_code == 403
    assert daily.entries.get().accepted_untranslated == []


def test_the_summary_counts_and_links_to_every_part_with_one_preview(untranslated, editor_client):
    html = editor_client.get(_url(untranslated)).content.decode()
    summary = html.split('id="desk-summary"', 1)[1].split("</section>", 1)[0]
    assert "3 entries" in summary and "zh texts 1/3" in summary and "2 blockers" in summary
    for anchor in ("#desk-writing", "#desk-candidates", "#desk-history"):
        assert f'href="{anchor}"' in summary
    assert 'id="desk-history"' in html
    assert html.count(f'href="{untranslated.get_absolute_url()}"') == 1
    assert "viewsitelink" not in html  # the admin's "View on site" is a second preview
    # The summary comes before the daily's form and its entries.
    assert html.index('id="desk-summary"') < html.index('id="daily_form"')


def test_nothing_blocks_is_said_plainly(db, editor_client):
    html = editor_client.get(_url(make_daily(status=Daily.Status.DRAFT))).content.decode()
    assert '<p class="desk-ready">Nothing blocks publishing.</p>' in html


def test_the_checklist_names_an_entry_without_cutting_a_word(db):
    paper = make_paper("long", title=LONG_TITLE, short_name="", zh=None)
    daily = make_daily(status=Daily.Status.DRAFT, papers=[paper])
    (blocker,) = daily_publishing_blockers(daily=daily)
    name = blocker.message.split(" ", 1)[1].split(" has no ", 1)[0]
    assert name.endswith("…")
    assert LONG_TITLE.startswith(name[:-1]) and LONG_TITLE[len(name) - 1] == " "
