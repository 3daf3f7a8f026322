"""Finding things: a search box and the sections on every page, the deep-dive index, the
home page's entries and topics, related papers, did-you-mean, and 404 past the last page."""

from __future__ import annotations

import datetime as dt
import re

import pytest
from django.core.cache import cache
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from dailies.models import Daily
from dailies.selectors import home_sections
from papers.models import Track
from search.related import RELATED_PAPERS
from tests.factories import make_daily, make_deep_dive, make_paper, make_track

# Pages are read as a browser reads them, whitespace collapsed (the templates' line breaks
# are djhtml's).

PAGES = [
    "/en/",
    "/en/infra/2026-10-28/",
    "/en/papers/",
    "/en/papers/hilo/",
    "/en/topics/",
    "/en/topics/storage/",
    "/en/deep-dives/",
    "/en/code/",
    "/zh/",
]


@pytest.mark.parametrize("url", PAGES)
def test_every_page_has_the_search_box_and_the_sections(demo, anonymous, url):
    html = " ".join(anonymous.get(url).content.decode().split())
    header = html.split('<header class="site-header">', 1)[1].split("</header>", 1)[0]
    assert 'role="search"' in header and 'name="q"' in header
    lang = url.split("/")[1]
    for path in ("topics/", "deep-dives/", "subscribe/", "papers/"):
        assert f'href="/{lang}/{path}"' in header


def test_the_deep_dive_index_lists_published_deep_dives_with_reading_time(db, anonymous):
    shown = make_paper("shown")
    hidden = make_paper("hidden")
    make_daily(papers=[shown, hidden])
    make_deep_dive(shown, body_en="word " * 660)
    make_deep_dive(hidden, status="draft")
    html = " ".join(anonymous.get("/en/deep-dives/").content.decode().split())
    assert 'href="/en/deep-dives/shown-dive/"' in html and "3 min read" in html
    assert "hidden-dive" not in html


def test_the_home_page_shows_the_latest_lead_entries_recent_dailies_and_topics(demo, anonymous):
    html = " ".join(anonymous.get("/en/").content.decode().split())
    entries = re.findall(r'<li class="home-entry[^"]*">', html)
    assert len(entries) == 3  # the 10-29 daily
    assert '<li class="home-entry home-lead">' in html and 'class="takeaway"' in html
    assert 'href="/en/infra/2026-10-28/"' in html
    assert 'href="/en/topics/kv-cache/"' in html


def test_the_home_page_shows_chinese_headlines(demo, anonymous):
    html = " ".join(anonymous.get("/zh/").content.decode().split())
    first = html.split('<li class="home-entry home-lead">', 1)[1].split("</li>", 1)[0]
    assert re.search(r"[\u4e00-\u9fff]", first.split('class="summary"')[0])


def _home_queries(client) -> int:
    cache.clear()
    with CaptureQueriesContext(connection) as ctx:
        assert client.get("/en/").status_code == 200
    return len(ctx.captured_queries)


def test_the_home_page_query_count_is_pinned_and_does_not_grow(db, anonymous):
    make_daily(papers=[make_paper(topics=("a",)) for _ in range(2)])
    small = _home_queries(anonymous)
    make_daily(
        date=dt.date(2026, 10, 29),
        papers=[make_paper(topics=("b",), orgs=("X",)) for _ in range(8)],
    )
    assert _home_queries(anonymous) == small
    # tracks, dailies (with their counts), their leads and the leads' summaries, the newest
    # dailies' entries, their organizations and summaries (selectors.home_sections), topics
    assert small == 8


def _archive(track, paper, days: range) -> None:
    for day in days:
        make_daily(track=track, date=dt.date(2026, 10, 28) - dt.timedelta(days=day), papers=[paper])


def _rows_returned(query: dict) -> int:
    """Run a captured statement again and count the rows the database hands back."""
    with connection.cursor() as cursor:
        cursor.execute(query["sql"])
        return len(cursor.fetchall())


def test_the_home_page_reads_only_each_tracks_newest_dailies(db, anonymous, settings):
    settings.PAGE_CACHE_ENABLED = False
    tracks = [make_track("infra"), make_track("data")]
    paper = make_paper(topics=("a",))
    for track in tracks:
        _archive(track, paper, range(3))
    few = _home_queries(anonymous)
    for track in tracks:
        _archive(track, paper, range(3, 30))
    assert _home_queries(anonymous) == few == 8
    with CaptureQueriesContext(connection) as ctx:
        shown = _dailies_shown(home_sections(recent=6))
    # the tracks, their dailies, the leads and their summaries, the newest's entries, their
    # organizations and summaries
    assert len(ctx.captured_queries) == 7
    assert _rows_returned(ctx.captured_queries[1]) == 2 * 6  # not 2 * 30
    assert _rows_returned(ctx.captured_queries[2]) == 2 * 6  # the leads: not 2 * 30
    newest = [dt.date(2026, 10, 28) - dt.timedelta(days=day) for day in range(6)]
    assert {t.slug: [d.date for d in ds] for t, ds in shown} == {"infra": newest, "data": newest}


def _dailies_shown(sections) -> list[tuple[Track, list[Daily]]]:
    return [(section.track, section.dailies) for section in sections]


def test_the_home_pages_dailies_are_the_newest_published_with_what_it_prints(db):
    infra, data = make_track("infra", position=1), make_track("data", position=2)
    make_track("gone", position=0)
    Track.objects.filter(slug="gone").update(is_active=False)
    paper = make_paper()
    _archive(infra, paper, range(8))
    _archive(data, paper, range(2))  # fewer than six: all of them
    make_daily(track=data, date=dt.date(2026, 10, 29), papers=[paper], status="draft")
    for gone_day in range(2):
        make_daily(
            track=Track.objects.get(slug="gone"),
            date=dt.date(2026, 10, 28) - dt.timedelta(days=gone_day),
            papers=[paper],
        )
    shown = _dailies_shown(home_sections(recent=6))
    assert [(t.slug, [d.date for d in ds]) for t, ds in shown] == [
        ("infra", [dt.date(2026, 10, 28) - dt.timedelta(days=day) for day in range(6)]),
        ("data", [dt.date(2026, 10, 28), dt.date(2026, 10, 27)]),
    ]
    for track, dailies in shown:
        assert track == Track.objects.get(slug=track.slug)
        for daily in dailies:
            assert daily.status == Daily.Status.PUBLISHED
            assert daily.track == track


@pytest.mark.parametrize(
    "url",
    [
        "/en/papers/?page=99",
        "/en/papers/?page=abc",
        "/en/topics/storage/?page=9",
        "/en/infra/?page=5",
    ],
)
def test_pages_past_the_end_answer_404(demo, anonymous, url):
    assert anonymous.get(url).status_code == 404


def test_the_first_page_needs_no_number(demo, anonymous):
    assert anonymous.get("/en/papers/").status_code == 200
    assert anonymous.get("/en/papers/?page=1").status_code == 200


def test_it_lists_related_papers_in_the_page_language(indexed_demo, anonymous):
    html = " ".join(anonymous.get("/zh/papers/bellowskv/").content.decode().split())
    related = html.split('<ul class="related">', 1)[1].split("</ul>", 1)[0]
    links = re.findall(r'href="/zh/papers/([^/]+)/"', related)
    assert 0 < len(links) <= RELATED_PAPERS and "bellowskv" not in links
    # KV-cache papers relate to a KV-cache paper
    assert {"kvstream", "c2kv", "wakman", "volcano-engine-eic"} & set(links)
    assert 'lang="zh"' in related


def test_the_paper_page_query_count_does_not_grow_with_related_papers(
    indexed_demo, anonymous, django_assert_num_queries
):
    # the paper (visible to the reader), organisations, summaries, topics, deep dives,
    # reference code, appearances, scores with their tracks; related: term counts, ranking,
    # the papers, their summaries
    cache.clear()
    with django_assert_num_queries(12):
        anonymous.get("/en/papers/bellowskv/")


def test_it_offers_the_query_as_typed_when_it_corrected_the_spelling(indexed_demo, anonymous):
    html = " ".join(anonymous.get("/en/papers/?q=degradatoin").content.decode().split())
    assert "Showing results for" in html
    link = re.search(r'<a href="\?([^"]*exact=1)">Search instead for', html)
    assert link
    exact = anonymous.get("/en/papers/?" + link.group(1).replace("&amp;", "&")).content.decode()
    assert "No paper matches “degradatoin”" in exact
    assert re.search(r"Did you mean <a href=\"\?q=degradation\">degradation</a>", exact)


def test_topic_counts_count_each_published_paper_once_and_no_draft(db):
    from dailies.models import Daily
    from dailies.selectors import topics_with_papers

    twice = make_paper(topics=("caching",))
    make_daily(date=dt.date(2026, 10, 1), papers=[twice, make_paper(topics=("caching", "kv"))])
    make_daily(date=dt.date(2026, 10, 2), papers=[twice])
    make_daily(
        date=dt.date(2026, 10, 3),
        papers=[make_paper(topics=("caching",)), make_paper(topics=("drafts-only",))],
        status=Daily.Status.DRAFT,
    )
    make_paper(topics=("kv", "never-selected"))  # a candidate no daily took
    assert [(t.slug, t.n) for t in topics_with_papers()] == [("caching", 2), ("kv", 1)]


def test_the_topic_chips_print_names_as_text_with_their_counts(db, anonymous, settings):
    """The home page's topics (with their paper counts) and the index's chips: a topic's
    name is escaped."""
    from papers.models import Topic

    settings.PAGE_CACHE_ENABLED = False
    make_daily(papers=[make_paper("one", topics=("kv",)), make_paper("two", topics=("kv",))])
    Topic.objects.filter(slug="kv").update(name_en='<b>KV</b> & "cache"')
    home = " ".join(anonymous.get("/en/").content.decode().split())
    assert (
        '<a class="chip" href="/en/topics/kv/">&lt;b&gt;KV&lt;/b&gt; &amp; &quot;cache&quot;'
        ' <span class="chip-count">2</span></a>'
    ) in home
    index = " ".join(anonymous.get("/en/papers/?topic=kv").content.decode().split())
    assert (
        '<a class="chip chip-active" href="?" aria-current="true" title="Remove this filter">'
        "&lt;b&gt;KV&lt;/b&gt; &amp; &quot;cache&quot; ×</a>"
    ) in index


def test_the_home_page_says_which_of_its_texts_a_machine_drafted(db, anonymous, settings):
    """The newest daily's intro, the lead's summary and the other entries' takeaways are
    printed on the home page: a machine's draft says so there as on the daily's page."""
    from papers.models import Summary

    settings.PAGE_CACHE_ENABLED = False
    lead, other, edited = make_paper("lead"), make_paper("other"), make_paper("edited")
    daily = make_daily(papers=[lead, other, edited])
    home = " ".join(anonymous.get("/en/").content.decode().split())
    assert "machine draft" not in home.lower()  # all written by editors
    Daily.objects.filter(pk=daily.pk).update(intro_en_provenance=Summary.Provenance.MACHINE)
    Summary.objects.filter(paper=lead, language="en").update(provenance=Summary.Provenance.MACHINE)
    Summary.objects.filter(paper=other, language="en").update(
        provenance=Summary.Provenance.MACHINE, reviewed_at=timezone.now()
    )
    home = " ".join(anonymous.get("/en/").content.decode().split())
    intro = home.split('<p class="intro"', 1)[1].split("<ol", 1)[0]
    assert '<p class="provenance">Intro: machine draft</p>' in intro
    entries = home.split('<ol class="home-entries">', 1)[1].split("</ol>", 1)[0].split("<li")[1:]
    assert "Machine draft, not yet reviewed by an editor" in entries[0]  # the lead's summary
    assert "Machine draft, reviewed by an editor" in entries[1]
    assert "provenance" not in entries[2]  # an editor's takeaway
    Daily.objects.filter(pk=daily.pk).update(intro_zh_provenance=Summary.Provenance.MACHINE)
    assert "导语：机器初稿" in " ".join(anonymous.get("/zh/").content.decode().split())
