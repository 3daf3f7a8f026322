"""The cross-day index: every paper of a published daily, newest first, numbered."""

from __future__ import annotations

import datetime as dt
import re

from django.db import connection
from django.test.utils import CaptureQueriesContext

from tests.factories import make_daily, make_deep_dive, make_paper

# Pages are read as a browser reads them, whitespace collapsed (the templates' line breaks
# are djhtml's).


def test_it_lists_all_sixteen_demo_items_with_their_days(demo, anonymous):
    html = " ".join(anonymous.get("/en/papers/").content.decode().split())
    items = re.findall(r'<li id="([^"]+)">', html)
    assert len(items) == 16
    assert "16 papers have appeared in the dailies" in html
    # newest daily first: the 10-29 items, then 10-28 in the daily's order, ...
    assert items[:4] == ["folding-attention-biases", "gaterq", "wakman", "hilo"]
    assert items[-1] == "kvstream"
    kvstream = html.split('<li id="kvstream">', 1)[1].split("</li>", 1)[0]
    assert 'href="/en/infra/2026-10-26/#kvstream"' in kvstream and ">2026-10-26</time>" in kvstream
    assert "Appeared in the daily of" in kvstream


def test_it_numbers_items_across_pages(demo, anonymous, settings):
    settings.PAGE_SIZE = 5
    html = " ".join(anonymous.get("/en/papers/?page=2").content.decode().split())
    assert '<ol class="paper-index" start="6">' in html
    assert len(re.findall(r'<li id="([^"]+)">', html)) == 5


def test_it_shows_an_excerpt_in_the_page_language(demo, anonymous):
    zh = " ".join(anonymous.get("/zh/papers/").content.decode().split())
    hilo = zh.split('<li id="hilo">', 1)[1].split("</li>", 1)[0]
    assert '<p class="excerpt" lang="zh">' in hilo
    assert "出现于日报" in hilo
    # Chinese text elides with one "……", after no stop of its own.
    assert hilo.count("……") == 1 and "。…" not in hilo


def test_it_lists_every_day_a_paper_appeared(db, anonymous):
    paper = make_paper("twice")
    make_daily(date=dt.date(2026, 10, 1), papers=[paper])
    make_daily(date=dt.date(2026, 10, 2), papers=[paper, make_paper()])
    html = " ".join(anonymous.get("/en/papers/").content.decode().split())
    item = html.split('<li id="twice">', 1)[1].split("</li>", 1)[0]
    # Dates carry their year.
    assert re.findall(r">(\d{4}-\d\d-\d\d)</time>", item) == ["2026-10-02", "2026-10-01"]


def test_it_marks_papers_with_a_deep_dive(db, anonymous):
    paper = make_paper("dived")
    make_daily(papers=[paper, make_paper("plain")])
    make_deep_dive(paper)
    html = " ".join(anonymous.get("/en/papers/").content.decode().split())
    assert html.count('class="deep-dive-marker"') == 1


def _index_queries(client) -> int:
    with CaptureQueriesContext(connection) as ctx:
        assert client.get("/en/papers/").status_code == 200
    return len(ctx.captured_queries)


def test_its_query_count_does_not_grow_with_the_papers(db, anonymous):
    make_daily(date=dt.date(2026, 1, 1), papers=[make_paper(orgs=("A",)) for _ in range(2)])
    small = _index_queries(anonymous)
    for day in range(2, 6):
        make_daily(date=dt.date(2026, 1, day), papers=[make_paper(topics=("x",)) for _ in range(5)])
    assert _index_queries(anonymous) == small


def test_it_runs_a_pinned_number_of_queries(demo, anonymous, django_assert_num_queries):
    # count, papers, organisations, summaries, topics, deep dives, reference code, appearances,
    # and every topic with published papers (the chips, complete and stable across pages)
    with django_assert_num_queries(9):
        anonymous.get("/en/papers/")
