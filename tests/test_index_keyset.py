"""The cross-day index and the topic pages, paged by key: the same papers as the numbered
pages, at the same cost at any depth, each paper once at its latest appearance."""

from __future__ import annotations

import datetime as dt
import re
from html import unescape

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from dailies.models import Daily
from dailies.paging import Key
from dailies.selectors import index_paper_count, index_papers
from tests.factories import make_daily, make_paper, make_track

ITEM = re.compile(r'<li id="([^"]+)">')


def _items(html: str) -> list[str]:
    return ITEM.findall(html)


def _link(html: str, label: str) -> str | None:
    """The href of the pager's link whose text holds ``label``."""
    pager = html.split('<nav class="pager"', 1)[-1].split("</nav>", 1)[0]
    for href, text in re.findall(r'<a[^>]* href="([^"]*)"[^>]*>([^<]*)</a>', pager):
        if label in text:
            return unescape(href)
    return None


@pytest.fixture
def small_pages(settings):
    settings.PAGE_SIZE = 3
    settings.PAGE_CACHE_ENABLED = False


def _numbered_pages(client, base: str) -> list[list[str]]:
    pages, number = [], 1
    while True:
        response = client.get(f"{base}?page={number}")
        if response.status_code == 404:
            return pages
        pages.append(_items(response.content.decode()))
        number += 1


def test_older_links_walk_the_numbered_pages(demo, anonymous, small_pages):
    numbered = _numbered_pages(anonymous, "/en/papers/")
    assert len(numbered) == 6 and sum(map(len, numbered)) == 16
    walked, url, number = [], "/en/papers/", 1
    while url:
        html = anonymous.get(url).content.decode()
        walked.append(_items(html))
        assert f"Page {number} of 6" in html
        assert f'<ol class="paper-index" start="{(number - 1) * 3 + 1}">' in html
        older = _link(html, "Older")
        url = f"/en/papers/{older}" if older else None
        if older:
            assert "after=" in older and f"page={number + 1}" in older
        number += 1
    assert walked == numbered


def test_oldest_and_newer_links_walk_back_the_same_pages(demo, anonymous, small_pages):
    numbered = _numbered_pages(anonymous, "/en/papers/")
    oldest = _link(anonymous.get("/en/papers/").content.decode(), "Oldest")
    assert oldest == "?page=6&before=end"
    walked, url = [], f"/en/papers/{oldest}"
    while url:
        html = anonymous.get(url).content.decode()
        walked.append(_items(html))
        newer = _link(html, "Newer")
        url = f"/en/papers/{newer}" if newer else None
    assert walked[::-1] == numbered
    # The second page's "Newer" is the index itself, not a keyed copy of its first page.
    second = anonymous.get("/en/papers/?page=2").content.decode()
    assert _link(second, "Newer") == "?" and _link(second, "Newest") == "?"


def test_a_full_last_page_is_read_whole_from_the_end(db, anonymous, small_pages):
    make_daily(papers=[make_paper(f"p{i}") for i in range(6)])
    html = anonymous.get("/en/papers/?page=2&before=end").content.decode()
    assert _items(html) == ["p3", "p4", "p5"] and "Page 2 of 2" in html
    assert _link(html, "Older") is None


def test_a_paper_is_listed_once_at_its_latest_appearance(db, anonymous, small_pages):
    again, other, first = make_paper("again"), make_paper("other"), make_paper("first")
    make_daily(date=dt.date(2026, 10, 1), papers=[again, first])
    make_daily(date=dt.date(2026, 10, 2), papers=[other, again])
    # The same day in a second track, higher up: that is its latest place.
    make_daily(track=make_track("systems"), date=dt.date(2026, 10, 2), papers=[again])
    papers = list(index_papers())
    assert [p.slug for p in papers] == ["again", "other", "first"]
    assert [(p.last_appeared, p.last_position) for p in papers] == [
        (dt.date(2026, 10, 2), 1),
        (dt.date(2026, 10, 2), 1),
        (dt.date(2026, 10, 1), 2),
    ]
    assert index_paper_count() == 3
    assert _items(anonymous.get("/en/papers/").content.decode()) == ["again", "other", "first"]


def test_unpublished_appearances_are_neither_listed_nor_counted(db, anonymous, small_pages):
    shown, hidden = make_paper("shown"), make_paper("hidden")
    make_daily(date=dt.date(2026, 10, 1), papers=[shown])
    # A newer draft does not move a published paper up, nor list a paper of its own.
    make_daily(
        track=make_track("systems"),
        date=dt.date(2026, 10, 5),
        papers=[hidden, shown],
        status=Daily.Status.DRAFT,
    )
    assert [(p.slug, p.last_appeared) for p in index_papers()] == [("shown", dt.date(2026, 10, 1))]
    assert index_paper_count() == 1
    html = anonymous.get("/en/papers/").content.decode()
    assert _items(html) == ["shown"] and "1 paper has appeared" in html


def test_a_topic_page_is_paged_by_key_too(db, anonymous, small_pages):
    papers = [make_paper(f"t{i}", topics=("kv-cache",)) for i in range(5)]
    make_daily(papers=[*papers, make_paper("off-topic")])
    first = anonymous.get("/en/topics/kv-cache/").content.decode()
    assert _items(first) == ["t0", "t1", "t2"] and "5 papers on this topic" in first
    older = _link(first, "Older")
    assert older.startswith("?page=2&after=")
    assert _items(anonymous.get(f"/en/topics/kv-cache/{older}").content.decode()) == ["t3", "t4"]
    assert index_paper_count(topic=papers[0].topics.get()) == 5


@pytest.mark.parametrize(
    "query",
    [
        "page=2&after=nonsense",
        "page=2&after=2026-13-01.1.1",
        "page=2&after=2026-10-28.-1.5",
        "page=2&after=2026-10-28.32768.5",
        f"page=2&after=2026-10-28.1.{2**63}",
        "page=2&after=2026-10-28.1.0",
        "page=2&before=2026-10-28.1",
        "page=2&after=2026-10-28.1.1&before=2026-10-28.2.2",
        "page=7&after=2026-10-28.1.1",
        "page=0&before=end",
        "page=x&after=2026-10-28.1.1",
    ],
)
def test_a_bad_place_or_page_is_a_404(demo, anonymous, small_pages, query):
    assert anonymous.get(f"/en/papers/?{query}").status_code == 404


def test_a_deep_page_costs_the_queries_of_the_first(demo, anonymous, small_pages):
    def queries(url: str) -> int:
        with CaptureQueriesContext(connection) as captured:
            assert anonymous.get(url).status_code == 200
        return len(captured)

    queries("/en/papers/")  # the counts, kept for the version from here on
    first = queries("/en/papers/")
    older = _link(anonymous.get("/en/papers/?page=4").content.decode(), "Older")
    assert queries(f"/en/papers/{older}") == first
    assert queries("/en/papers/?page=6&before=end") == first


def test_keys_read_and_print_the_same_place():
    key = Key(dt.date(2026, 10, 28), 3, 1234)
    assert str(key) == "2026-10-28.3.1234" and Key.parse(str(key)) == key
    # The columns' own bounds are places still.
    assert Key.parse(f"2026-10-28.32767.{2**63 - 1}") == Key(
        dt.date(2026, 10, 28), 32767, 2**63 - 1
    )


def test_the_largest_key_reaches_the_database_as_a_place(demo, anonymous, small_pages):
    response = anonymous.get(f"/en/papers/?page=2&before=2026-10-28.32767.{2**63 - 1}")
    assert response.status_code == 200


def test_a_filtered_index_is_paged_by_key_and_keeps_its_filters(db, anonymous, small_pages):
    systems = make_track("systems")
    tagged = [make_paper(f"k{i}", topics=("kv-cache",)) for i in range(7)]
    make_daily(date=dt.date(2026, 10, 1), papers=tagged[:4] + [make_paper("plain")])
    make_daily(date=dt.date(2026, 10, 2), papers=tagged[4:])
    make_daily(track=systems, date=dt.date(2026, 10, 3), papers=[tagged[0], make_paper("other")])
    base = "/en/papers/?topic=kv-cache&track=infra"
    numbered = []
    for number in (1, 2, 3):
        numbered.append(_items(anonymous.get(f"{base}&page={number}").content.decode()))
    assert anonymous.get(f"{base}&page=4").status_code == 404
    walked, url = [], base
    while url:
        html = anonymous.get(url).content.decode()
        walked.append(_items(html))
        assert "7 papers match these filters" in html
        older = _link(html, "Older")
        if older:
            assert older.startswith("?topic=kv-cache&track=infra&page=")
        url = f"/en/papers/{older}" if older else None
    assert walked == numbered and sum(map(len, walked)) == 7
    # k0 is listed at its latest appearance (the systems daily), as the plain index lists it.
    assert walked[0][0] == "k0"
    second = anonymous.get(f"{base}&page=2").content.decode()
    assert _link(second, "Newest") == "?topic=kv-cache&track=infra"
    assert _link(second, "Oldest") == "?topic=kv-cache&track=infra&page=3&before=end"


def _is_index_page(sql: str) -> bool:
    """The index page's query: the papers through their latest published entries."""
    return "NOT EXISTS" in sql and "dailies_dailyentry" in sql


def _slugs(papers) -> list[str]:
    return [paper.slug for paper in papers]


@pytest.mark.parametrize("base", ["/en/papers/", "/en/topics/kv-cache/"])
def test_a_numbered_page_holds_the_offset_slice_from_either_end(demo, anonymous, small_pages, base):
    """``?page=N`` (the canonical URL) in the older half is counted from the end of the
    index: each page holds what an offset from the front holds, the last its leftovers."""
    papers = index_papers()
    if "topics" in base:
        papers = papers.filter(topics__slug="kv-cache")
    expected = _slugs(papers)
    assert len(expected) > 6  # several pages, an odd leftover or not, in both halves
    numbered = _numbered_pages(anonymous, base)
    assert numbered == [expected[start : start + 3] for start in range(0, len(expected), 3)]


def test_a_numbered_page_in_the_older_half_is_read_from_the_end(demo, anonymous, small_pages):
    """Page 5 of 6 is one page from the end: the database reads a few papers from the end,
    not the twelve before it from the front."""
    anonymous.get("/en/papers/")  # the counts, kept from then on
    with CaptureQueriesContext(connection) as front:
        anonymous.get("/en/papers/?page=2")
    with CaptureQueriesContext(connection) as back:
        anonymous.get("/en/papers/?page=5")
    assert len(front) == len(back)
    (page_front,) = [q["sql"] for q in front if _is_index_page(q["sql"])]
    (page_back,) = [q["sql"] for q in back if _is_index_page(q["sql"])]
    assert re.search(r"LIMIT 3 OFFSET 3\b", page_front)
    assert re.search(r"LIMIT 3 OFFSET 1\b", page_back) and "ASC" in page_back.split("ORDER BY")[-1]
