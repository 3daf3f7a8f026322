"""A machine-drafted headline says so wherever a list prints it.

A list prints a paper by its summary's headline ("Name: headline", ``entry_heading``). Where
the item prints no note of who wrote that summary (a daily card's lead, a home entry without
its takeaway, a search result whose excerpt came from elsewhere, the deep dives' list), the
headline carries a "Machine draft" mark when a machine drafted it, reviewed or not.
"""

from __future__ import annotations

import pytest
from django.utils import timezone

from papers.models import Summary
from tests.factories import make_daily, make_deep_dive, make_paper

# Pages are read as a browser reads them, whitespace collapsed (the templates' line breaks
# are djhtml's).

MARK = '<span class="provenance-mark">Machine draft</span>'


@pytest.fixture(autouse=True)
def _uncached(settings):
    settings.PAGE_CACHE_ENABLED = False


def _machine(paper, language: str = "en", **fields) -> None:
    Summary.objects.filter(paper=paper, language=language).update(
        provenance=Summary.Provenance.MACHINE, **fields
    )


def _between(html: str, start: str, end: str) -> str:
    return html.split(start, 1)[1].split(end, 1)[0]


def test_a_daily_cards_lead_headline_says_a_machine_drafted_it(db, anonymous):
    lead = make_paper("lead")
    daily = make_daily(papers=[lead, make_paper("other")])
    newer = make_daily(track=daily.track, date=daily.date.replace(day=29), papers=[make_paper()])
    archive = f"/en/{daily.track.slug}/"
    assert MARK not in _between(anonymous.get(archive).content.decode(), "lead-line", "</p>")
    _machine(lead, reviewed_at=timezone.now())
    cards = " ".join(anonymous.get(archive).content.decode().split()).split(
        '<li class="daily-card">'
    )[1:]
    assert len(cards) == 2 and newer.date.isoformat() in cards[0]
    assert MARK not in cards[0]
    assert f"lead headline</a> {MARK}</p>" in cards[1]
    home = " ".join(anonymous.get("/en/").content.decode().split())
    assert f"lead headline</a> {MARK}</p>" in _between(home, 'class="daily-cards', "</ul>")


def test_a_home_entry_without_its_takeaway_marks_its_headline(db, anonymous):
    lead, bare, kept = make_paper("lead"), make_paper("bare"), make_paper("kept")
    make_daily(papers=[lead, bare, kept])
    Summary.objects.filter(paper=bare).update(takeaway="")
    for paper in (lead, bare, kept):
        _machine(paper)
    home = " ".join(anonymous.get("/en/").content.decode().split())
    entries = _between(home, '<ol class="home-entries">', "</ol>").split("<li")[1:]
    # The lead's summary and the third entry's takeaway are printed with their note.
    assert MARK not in entries[0] and "Machine draft, not yet reviewed" in entries[0]
    assert MARK in entries[1] and 'class="provenance"' not in entries[1]
    assert MARK not in entries[2] and "Machine draft, not yet reviewed" in entries[2]


def test_a_search_results_headline_is_marked_when_its_excerpt_came_from_elsewhere(db, anonymous):
    from search.index import search_index_rebuild

    abstract = make_paper("abstract", en="Nothing of the query here.", abstract="About zebras.")
    summary = make_paper("summary", en="The zebras summary.")
    make_daily(papers=[abstract, summary])
    for paper in (abstract, summary):
        _machine(paper)
    search_index_rebuild()
    page = " ".join(anonymous.get("/en/papers/?q=zebras").content.decode().split())
    items = {slug: _between(page, f'<li id="{slug}">', "</li>") for slug in ("abstract", "summary")}
    # The excerpt from the abstract: the headline's summary has no note on the item.
    assert f"abstract headline</a> {MARK}" in items["abstract"]
    assert "Machine draft, not yet reviewed" not in items["abstract"]
    # The excerpt from the headline's own summary: its note says it, no mark.
    assert MARK not in items["summary"]
    assert "Machine draft, not yet reviewed" in items["summary"]
    # The index item prints the summary and its note: no mark either.
    index = " ".join(anonymous.get("/en/papers/").content.decode().split())
    assert MARK not in index and "Machine draft, not yet reviewed" in index


def test_the_deep_dives_list_marks_a_machine_drafted_headline(db, anonymous):
    paper = make_paper("dived")
    make_daily(papers=[paper])
    make_deep_dive(paper)
    assert MARK not in " ".join(anonymous.get("/en/deep-dives/").content.decode().split())
    _machine(paper)
    assert f"dived headline</a> {MARK}</p>" in " ".join(
        anonymous.get("/en/deep-dives/").content.decode().split()
    )


def test_a_papers_related_papers_mark_a_machine_drafted_headline(db, anonymous):
    from search.index import search_index_rebuild

    one = make_paper("one", en="Zebra caching keeps zebras warm.")
    other = make_paper("other", en="Zebra caching for zebras, again.")
    make_daily(papers=[one, other])
    search_index_rebuild()
    related = _between(
        " ".join(anonymous.get("/en/papers/one/").content.decode().split()),
        'class="related"',
        "</ul>",
    )
    assert "other headline</a></li>" in related
    _machine(other, reviewed_at=timezone.now())
    related = _between(
        " ".join(anonymous.get("/en/papers/one/").content.decode().split()),
        'class="related"',
        "</ul>",
    )
    assert f"other headline</a> {MARK}</li>" in related
