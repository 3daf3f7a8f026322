"""Search on the cross-day index page: form, ranking, highlighting, filters, pagination, no
results, hostile input, and a fixed number of queries."""

from __future__ import annotations

import datetime as dt
import re
from urllib.parse import quote

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from dailies.services import daily_publish
from tests.factories import make_daily, make_paper
from tests.test_search_text import HOSTILE


def _items(html: str) -> list[str]:
    return re.findall(r'<li id="([^"]+)">', html)


def _get(client, url: str) -> str:
    response = client.get(url)
    assert response.status_code == 200, url
    return " ".join(response.content.decode().split())


def test_it_has_a_search_form_that_works_without_javascript(indexed_demo, anonymous):
    html = _get(anonymous, "/en/papers/")
    form = html.split('<form class="search-form"', 1)[1].split("</form>", 1)[0]
    assert 'method="get"' in form and 'action="/en/papers/"' in form
    assert 'name="q"' in form and 'type="submit"' in form
    assert 'name="from"' in form and 'name="to"' in form and 'name="track"' in form
    assert "<script" not in html


def test_it_ranks_and_highlights_the_results(indexed_demo, anonymous):
    html = _get(anonymous, "/en/papers/?q=graceful+degradation")
    assert _items(html) == ["hilo"]
    assert "1 result for “graceful degradation”, best first." in html
    hilo = html.split('<li id="hilo">', 1)[1].split("</li>", 1)[0]
    assert "<mark>Graceful</mark> <mark>Degradation</mark>" in hilo
    assert '<p class="excerpt" lang="en">' in hilo and "<mark>degradation</mark>" in hilo


def test_it_shows_the_excerpt_that_holds_the_query_words(indexed_demo, anonymous):
    html = _get(anonymous, "/en/papers/?q=" + quote("灰色故障"))
    minerva = html.split('<li id="minerva">', 1)[1].split("</li>", 1)[0]
    assert '<p class="excerpt" lang="zh">' in minerva
    assert "<mark>灰色</mark><mark>故障</mark>" in minerva or "<mark>灰色故障</mark>" in minerva


def test_it_says_how_it_corrected_a_misspelling(indexed_demo, anonymous):
    html = _get(anonymous, "/zh/papers/?q=graceful+degredation")
    assert "下面是“graceful degradation”的结果" in html
    assert _items(html) == ["hilo"]


def test_it_offers_topics_when_nothing_matches(indexed_demo, anonymous):
    html = _get(anonymous, "/en/papers/?q=blorptastic&topic=kv-cache")
    assert "No paper matches “blorptastic”." in html
    assert 'href="?q=blorptastic">Search without the filters</a>' in html
    assert 'href="/en/topics/kv-cache/">KV cache</a>' in html
    assert _items(html) == []


def test_it_narrows_by_topic_chip_and_keeps_the_query(indexed_demo, anonymous):
    html = _get(anonymous, "/en/papers/?q=cache")
    chip = re.search(r'<a class="chip" href="\?([^"]+)">Storage systems</a>', html)
    assert chip and chip.group(1) == "q=cache&amp;topic=storage"
    narrowed = _get(anonymous, "/en/papers/?q=cache&topic=storage")
    assert set(_items(narrowed)) == {"kvstream", "volcano-engine-eic"}
    assert 'class="chip chip-active" href="?q=cache"' in narrowed


def test_it_filters_without_a_query_newest_first(indexed_demo, anonymous):
    html = _get(anonymous, "/en/papers/?topic=vector-search")
    assert _items(html) == ["coloc", "trustann"]
    assert "2 papers match these filters, newest first." in html
    html = _get(anonymous, "/en/papers/?from=2026-10-27&to=2026-10-27")
    assert _items(html) == ["rounding-location-alignment", "c2kv"]
    html = _get(anonymous, "/en/papers/?track=infra&from=2026-10-29")
    assert _items(html) == ["folding-attention-biases", "gaterq", "wakman"]


def test_it_keeps_the_query_string_across_pages(indexed_demo, anonymous, settings):
    settings.PAGE_SIZE = 2
    html = _get(anonymous, "/en/papers/?q=cache&topic=kv-cache")
    assert 'href="?q=cache&amp;topic=kv-cache&amp;page=2"' in html
    second = _get(anonymous, "/en/papers/?q=cache&topic=kv-cache&page=2")
    assert '<ol class="paper-index search-results" start="3">' in second
    assert not set(_items(html)) & set(_items(second))
    assert 'href="?q=cache&amp;topic=kv-cache&amp;page=1"' in second


@pytest.mark.parametrize("query", HOSTILE, ids=range(len(HOSTILE)))
def test_it_answers_hostile_queries_with_a_normal_page(indexed_demo, anonymous, query):
    html = _get(anonymous, "/en/papers/?" + f"q={quote(query)}&from=2026-99-99&to=x&track=%3Cb%3E")
    assert "<script>alert" not in html
    assert "All papers" in html


def test_it_escapes_the_query_everywhere(indexed_demo, anonymous):
    html = _get(anonymous, "/en/papers/?q=" + quote("<img src=x onerror=alert(1)> cache"))
    assert "<img src=x" not in html
    assert "&lt;img src=x onerror=alert(1)&gt; cache" in html


def test_it_keeps_the_plain_index_as_it_was(indexed_demo, anonymous):
    html = _get(anonymous, "/en/papers/?q=")
    assert len(_items(html)) == 16
    assert "16 papers have appeared in the dailies, newest first." in html


def test_it_lists_a_topic_newest_first(indexed_demo, anonymous):
    html = _get(anonymous, "/zh/topics/kv-cache/")
    assert "<h1>KV 缓存</h1>" in html
    assert _items(html) == [
        "folding-attention-biases",
        "wakman",
        "bellowskv",
        "zipfusion",
        "volcano-engine-eic",
        "c2kv",
        "kvstream",
    ]
    assert anonymous.get("/en/topics/no-such-topic/").status_code == 404
    topics = _get(anonymous, "/en/topics/")
    assert 'href="/en/topics/kv-cache/">KV cache</a> <span class="muted">(7)</span>' in topics


def _search_queries(client, url: str) -> int:
    with CaptureQueriesContext(connection) as ctx:
        assert client.get(url).status_code == 200
    return len(ctx.captured_queries)


def test_it_runs_a_pinned_number_of_queries(
    indexed_demo, anonymous, django_assert_num_queries, is_postgres
):
    # vocabulary, count, ranking (PostgreSQL counts while it ranks: one query), then the
    # index's page: papers, organisations, summaries, topics, deep dives, reference code,
    # appearances, every topic with papers (the chips)
    with django_assert_num_queries(10 if is_postgres else 11):
        anonymous.get("/en/papers/?q=KV+cache")


def test_its_query_count_does_not_grow_with_the_results(
    db, anonymous, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        daily = make_daily(
            date=dt.date(2026, 1, 1),
            papers=[make_paper(title=f"Quasar survey {i}", orgs=("A",)) for i in range(2)],
            status="draft",
        )
        daily_publish(daily=daily)
    small = _search_queries(anonymous, "/en/papers/?q=quasar+survey")
    with django_capture_on_commit_callbacks(execute=True):
        for day in range(2, 6):
            papers = [make_paper(title=f"Quasar survey {day}.{i}", topics=("x",)) for i in range(5)]
            daily_publish(
                daily=make_daily(date=dt.date(2026, 1, day), papers=papers, status="draft")
            )
    assert _search_queries(anonymous, "/en/papers/?q=quasar+survey") == small
