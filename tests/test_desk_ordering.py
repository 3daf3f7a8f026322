"""Ordering a daily through the real admin form (sortable2's hidden positions, one save):
swaps, reversals and lead moves never trip the unique constraints, and each move is
recorded with its editor."""

from __future__ import annotations

import re
from decimal import Decimal

import pytest
from django.urls import reverse

from dailies.models import Daily, DailyEntry, EditorialAction
from papers.models import Score
from tests.admin_forms import add_entry_form, change_form_data, entry_index
from tests.factories import make_daily, make_paper

Kind = EditorialAction.Kind


def _url(daily: Daily) -> str:
    return reverse("admin:dailies_daily_change", args=[daily.pk])


def _form(client, daily: Daily) -> dict:
    response = client.get(_url(daily))
    assert response.status_code == 200
    return change_form_data(response)


def _public_order(anonymous, daily: Daily) -> list[str]:
    html = anonymous.get(f"/en/{daily.track.slug}/{daily.date:%Y-%m-%d}/").content.decode()
    return re.findall(r'<li class="entry[^"]*" id="([^"]+)"', html)


def _order(daily: Daily) -> list[tuple[str, bool]]:
    return list(daily.entries.order_by("position").values_list("paper__slug", "is_lead"))


def _post_order(client, daily: Daily, slugs: list[str], lead: str | None = None):
    """Post the change form with the rows in ``slugs`` order, as sortable2 numbers them
    after a drag; ``lead`` ticks that row's lead box (and clears the others')."""
    data = _form(client, daily)
    for entry in daily.entries.select_related("paper"):
        i = entry_index(data, entry.pk)
        data[f"entries-{i}-position"] = slugs.index(entry.paper.slug) + 1
        if lead is not None:
            data.pop(f"entries-{i}-is_lead", None)
            if entry.paper.slug == lead:
                data[f"entries-{i}-is_lead"] = "on"
    return client.post(_url(daily), data)


@pytest.fixture
def ten(db) -> Daily:
    papers = [make_paper(f"p{n:02d}") for n in range(1, 11)]
    return make_daily(papers=papers)


def test_it_renders_the_entries_as_a_sortable_inline_without_inline_script(ten, editor_client):
    html = editor_client.get(_url(ten)).content.decode()
    assert "adminsortable2/js/adminsortable2" in html
    assert re.search(r'<fieldset class="[^"]*sortable', html)
    assert 'class="_reorder_"' in html  # the hidden positions the script numbers
    # Every script is a file of ours or of the packages (strict CSP: script-src 'self').
    for attrs, body in re.findall(r"<script([^>]*)>(.*?)</script>", html, flags=re.S):
        assert "src=" in attrs or 'type="application/json"' in attrs, attrs
        assert not body.strip() or 'type="application/json"' in attrs


def test_it_has_no_reorder_endpoint_that_bypasses_the_service(db):
    from django.urls import get_resolver

    names = [n for n in get_resolver().reverse_dict if isinstance(n, str)]
    assert not [n for n in names if "sortable" in n or n.endswith("_sortable_update")]


def test_it_swaps_two_entries_in_one_save(ten, editor, editor_client, anonymous):
    slugs = [s for s, _ in _order(ten)]
    slugs[1], slugs[2] = slugs[2], slugs[1]
    response = _post_order(editor_client, ten, slugs)
    assert response.status_code == 302
    assert [s for s, _ in _order(ten)] == slugs
    assert _public_order(anonymous, ten) == slugs
    moved = EditorialAction.objects.filter(kind=Kind.REORDERED)
    assert sorted(moved.values_list("detail", flat=True)) == ["#2 → #3", "#3 → #2"]
    assert {a.user for a in moved} == {editor}


def test_it_reverses_ten_entries_in_one_save(ten, editor_client, anonymous):
    slugs = [s for s, _ in _order(ten)][::-1]
    response = _post_order(editor_client, ten, slugs, lead="p10")
    assert response.status_code == 302
    assert _order(ten) == [(s, s == "p10") for s in slugs]
    assert _public_order(anonymous, ten) == slugs
    assert EditorialAction.objects.filter(kind=Kind.REORDERED).count() == 10
    assert EditorialAction.objects.get(kind=Kind.LEAD).paper.slug == "p10"


def test_it_moves_the_lead_down_then_up(ten, editor_client, anonymous):
    slugs = [s for s, _ in _order(ten)]
    down = [*slugs[1:5], "p01", *slugs[5:]]
    assert _post_order(editor_client, ten, down).status_code == 302
    assert _order(ten)[4] == ("p01", True)
    up = ["p07", *[s for s in down if s != "p07"]]
    assert _post_order(editor_client, ten, up, lead="p07").status_code == 302
    assert _order(ten)[0] == ("p07", True)
    assert [lead for _, lead in _order(ten)].count(True) == 1
    assert _public_order(anonymous, ten) == up


def test_it_adds_a_row_without_position_or_score_last_with_its_newest_score(
    ten, editor_client, anonymous
):
    newcomer = make_paper("newcomer")
    Score.objects.create(
        paper=newcomer, track=ten.track, total=Decimal("3.10"), scorer="t", scorer_version="1"
    )
    Score.objects.create(
        paper=newcomer, track=ten.track, total=Decimal("3.85"), scorer="t", scorer_version="2"
    )
    data = _form(editor_client, ten)
    add_entry_form(data, daily_id=ten.pk, paper_id=newcomer.pk, position="", score="")
    response = editor_client.post(_url(ten), data)
    assert response.status_code == 302
    entry = ten.entries.get(paper=newcomer)
    assert (entry.position, entry.score, entry.score_computed) == (
        11,
        Decimal("3.85"),
        Decimal("3.85"),
    )
    assert not entry.score_is_override
    assert _public_order(anonymous, ten)[-1] == "newcomer"
    added = EditorialAction.objects.get(kind=Kind.ADDED)
    assert added.score_after == Decimal("3.85")


def test_it_keeps_an_override_apart_from_the_computed_score(ten, editor_client):
    newcomer = make_paper("newcomer")
    Score.objects.create(
        paper=newcomer, track=ten.track, total=Decimal("3.85"), scorer="t", scorer_version="1"
    )
    data = _form(editor_client, ten)
    add_entry_form(data, daily_id=ten.pk, paper_id=newcomer.pk, position="", score="4.10")
    assert editor_client.post(_url(ten), data).status_code == 302
    entry = ten.entries.get(paper=newcomer)
    assert (entry.score, entry.score_computed) == (Decimal("4.10"), Decimal("3.85"))
    html = editor_client.get(_url(ten)).content.decode()
    assert "4.10 (editor; computed 3.85)" in html


def test_a_bad_order_is_refused_with_a_message_and_stores_nothing(ten, editor_client):
    before = _order(ten)
    data = _form(editor_client, ten)
    first, second = ten.entries.order_by("position")[:2]
    data[f"entries-{entry_index(data, first.pk)}-position"] = 0  # no such position
    response = editor_client.post(_url(ten), data, follow=True)
    assert response.status_code == 200
    assert _order(ten) == before
    assert not EditorialAction.objects.exists()
    assert DailyEntry.objects.filter(daily=ten).count() == 10
