"""Atom and RSS feeds: per track, its papers, a topic, a search and reference-code runs —
valid, ordered, in both languages, with stable ids, conditional GETs and nothing that is
not published."""

from __future__ import annotations

import datetime as dt

import feedparser
import pytest
import time_machine
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from dailies.feeds import FEED_ITEMS
from dailies.models import Daily
from dailies.services import daily_unpublish
from deepdives.models import ReferenceCode
from deepdives.registry import PROGRAMS
from deepdives.services import reference_sync
from digest_site.cache_tags import ALL, retire
from papers.models import Summary
from search.index import search_index_refresh
from tests.factories import make_daily, make_paper, make_track

DEMO_FEEDS = [
    "feeds/infra.atom",
    "feeds/infra.rss",
    "feeds/infra/papers.atom",
    "feeds/topics/kv-cache.atom",
    "feeds/search.atom?q=kv+cache",
    "feeds/search.atom?q=%E5%90%91%E9%87%8F%E6%A3%80%E7%B4%A2",  # 向量检索
    "feeds/search.atom?topic=kv-cache",
    "feeds/code.atom",
]
DEMO_DATES = ["2026-10-29", "2026-10-28", "2026-10-27", "2026-10-26"]


def _feed(client, url: str, **headers):
    response = client.get(url, **headers)
    assert response.status_code == 200, response.content[:500]
    parsed = feedparser.parse(response.content)
    assert parsed.bozo == 0, parsed.get("bozo_exception")
    return response, parsed


def _verified_runs() -> None:
    """Stored runs for three demo programs (no program is run): passed, failed, stale."""
    reference_sync()
    now = timezone.now()
    for i, (name, status, current) in enumerate(
        [("cosmos", "passed", True), ("hilo", "failed", True), ("zipfusion", "passed", False)]
    ):
        ReferenceCode.objects.filter(slug=name).update(
            last_status=status,
            last_run_at=now - dt.timedelta(hours=i + 1),
            last_duration_ms=1200,
            code_hash=PROGRAMS[name].code_hash() if current else "0" * 64,
        )


@pytest.fixture
def site(indexed_demo):
    _verified_runs()
    return indexed_demo


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_it_serves_every_feed_valid_and_non_empty(site, anonymous, lang):
    for path in DEMO_FEEDS:
        response, parsed = _feed(anonymous, f"/{lang}/{path}")
        kind = "rss" if path.endswith(".rss") else "atom"
        assert response["Content-Type"].startswith(f"application/{kind}+xml")
        assert parsed.entries, path
        assert parsed.feed.language == ("zh-CN" if lang == "zh" else "en")
        for entry in parsed.entries:
            assert entry.link.startswith(f"http://testserver/{lang}/")
            assert entry.id.startswith("tag:testserver,2026:")
            assert entry.published_parsed is not None
            if kind == "atom":
                assert entry.updated_parsed >= entry.published_parsed
        if kind == "atom":
            assert f'xml:lang="{parsed.feed.language}"'.encode() in response.content


@pytest.mark.parametrize("path", ["feeds/infra.atom", "feeds/infra/papers.atom"])
def test_each_item_is_updated_when_its_own_content_changed(site, anonymous, path):
    # The demo's dailies went out on four days: each item's time is its own, not the load's.
    _, parsed = _feed(anonymous, f"/en/{path}")
    updated = {entry.id: entry.updated_parsed for entry in parsed.entries}
    assert len(set(updated.values())) == len(DEMO_DATES)
    for entry in parsed.entries:
        assert entry.updated_parsed == entry.published_parsed


def test_it_lists_the_published_dailies_newest_first_with_the_pages_heading(site, anonymous):
    _, en = _feed(anonymous, "/en/feeds/infra.atom")
    assert [e.title for e in en.entries] == [f"Infra — Paper Daily, {d}" for d in DEMO_DATES]
    assert [e.link for e in en.entries] == [f"http://testserver/en/infra/{d}/" for d in DEMO_DATES]
    _, zh = _feed(anonymous, "/zh/feeds/infra.rss")
    assert [e.title for e in zh.entries] == [f"基础设施 — 论文日报，{d}" for d in DEMO_DATES]


def test_it_puts_the_intro_and_every_entry_in_a_daily_item(site, anonymous):
    _, en = _feed(anonymous, "/en/feeds/infra.atom")
    body = next(e for e in en.entries if e.link.endswith("/2026-10-28/")).summary
    daily = Daily.objects.get(date=dt.date(2026, 10, 28))
    assert daily.intro_en[:60].replace("'", "&#x27;") in body
    assert body.count("<li><h3>") == daily.entries.count() == 10
    lead = body.split("</li>", 1)[0]
    assert 'href="http://testserver/en/papers/hilo/"' in lead
    assert "<strong>4.85</strong>" in lead and "Lead story" in lead
    assert "Microsoft" in lead and "Accepted at NSDI 2027" in lead
    assert '<strong class="takeaway">' in lead
    assert 'href="http://testserver/en/infra/2026-10-28/"' in body


def test_it_lists_each_selected_paper_in_daily_order(site, anonymous):
    _, parsed = _feed(anonymous, "/en/feeds/infra/papers.atom")
    expected = [
        f"http://testserver/en/papers/{slug}/"
        for daily in Daily.objects.published().order_by("-date")
        for slug in daily.entries.order_by("position").values_list("paper__slug", flat=True)
    ]
    assert [e.link for e in parsed.entries] == expected[:FEED_ITEMS]
    lead = Daily.objects.get(date=dt.date(2026, 10, 29)).entries.get(position=1)
    assert (
        parsed.entries[0].id
        == f"tag:testserver,2026:daily/infra/2026-10-29/paper/{lead.paper_id}/en"
    )


@pytest.fixture
def bilingual(db):
    """A published daily with a paper written in both languages and one only in English."""
    both = make_paper("both", title="Both languages", short_name="Both")
    Summary.objects.filter(paper=both, language="zh").update(headline="双语标题")
    english = make_paper("english-only", title="English only", short_name="Eng", zh=None)
    return make_daily(papers=[both, english], intro_zh="")


def test_it_gives_the_chinese_text_and_falls_back_to_english(bilingual, anonymous):
    _, parsed = _feed(anonymous, "/zh/feeds/infra/papers.atom")
    both, english = parsed.entries
    assert both.title == "Both：双语标题"
    assert (
        "一段中文摘要。" in both.summary and '<strong class="takeaway">这是要点句。' in both.summary
    )
    assert "尚未翻译" not in both.summary
    assert english.title == "Eng: english-only headline"
    assert "An English summary." in english.summary and "尚未翻译" in english.summary
    _, daily = _feed(anonymous, "/zh/feeds/infra.atom")
    # The Chinese intro is empty: the English one stands in, marked as such.
    assert "Today&#x27;s intro." in daily.entries[0].summary
    assert daily.entries[0].summary.count("尚未翻译") == 2


def test_it_keeps_ids_stable_across_rerenders_and_an_edit_of_the_intro(bilingual, anonymous):
    with time_machine.travel(timezone.now() + dt.timedelta(minutes=5)):
        first, before = _feed(anonymous, "/en/feeds/infra.atom")
        _, again = _feed(anonymous, "/en/feeds/infra.atom")
        assert [e.id for e in again.entries] == [e.id for e in before.entries]
        assert before.entries[0].id == "tag:testserver,2026:daily/infra/2026-10-28/en"
    with time_machine.travel(timezone.now() + dt.timedelta(hours=1)):
        bilingual.intro_en = "A rewritten intro."
        bilingual.save()
        retire(ALL)  # a raw save skips the services' retirement of cached pages
        second, after = _feed(anonymous, "/en/feeds/infra.atom")
    assert [e.id for e in after.entries] == [e.id for e in before.entries]
    assert "A rewritten intro." in after.entries[0].summary
    assert after.entries[0].updated_parsed > before.entries[0].updated_parsed
    assert second["ETag"] != first["ETag"]


CORRECTED = {"en": "A corrected summary.", "zh": "更正后的摘要。"}


@pytest.mark.parametrize(
    "url",
    [
        "/en/feeds/infra.atom",
        "/en/feeds/infra.rss",
        "/zh/feeds/infra/papers.atom",
        "/en/feeds/topics/kv.atom",
        "/en/feeds/search.atom?topic=kv",
    ],
)
def test_it_answers_304_to_a_matching_etag_and_200_to_a_stale_one(db, anonymous, url):
    paper = make_paper("cached", topics=("kv",))
    make_daily(papers=[paper])
    first = anonymous.get(url)
    assert first.status_code == 200 and first["ETag"] and first["Last-Modified"]
    assert anonymous.get(url, HTTP_IF_NONE_MATCH=first["ETag"]).status_code == 304
    assert anonymous.get(url, HTTP_IF_MODIFIED_SINCE=first["Last-Modified"]).status_code == 304
    with time_machine.travel(timezone.now() + dt.timedelta(minutes=10)):
        summary = paper.summaries.get(language=url.split("/")[1])
        summary.body = f"{CORRECTED[summary.language]} {summary.takeaway}"
        summary.save()
        retire(ALL)  # a raw save skips the services' retirement of cached pages
        fresh = anonymous.get(url, HTTP_IF_NONE_MATCH=first["ETag"])
    assert fresh.status_code == 200 and fresh["ETag"] != first["ETag"]
    assert CORRECTED[summary.language] in fresh.content.decode()
    assert anonymous.get(url, HTTP_IF_MODIFIED_SINCE=first["Last-Modified"]).status_code == 200


def test_it_changes_the_etag_when_a_shown_daily_is_unpublished(db, anonymous):
    track = make_track()
    for day in range(1, 4):
        make_daily(track=track, date=dt.date(2026, 9, day))
    first = anonymous.get("/en/feeds/infra.atom")
    daily_unpublish(daily=Daily.objects.get(date=dt.date(2026, 9, 2)))
    response = anonymous.get("/en/feeds/infra.atom", HTTP_IF_NONE_MATCH=first["ETag"])
    assert response.status_code == 200
    assert b"2026-09-02" not in response.content


@pytest.fixture
def quasars(db, django_capture_on_commit_callbacks):
    """One published daily of quasar papers, and a draft and a scheduled one."""
    track = make_track()
    public = make_paper("public-quasar", title="Public quasar caching", topics=("astro",))
    draft = make_paper("draft-quasar", title="Draft quasar caching", topics=("astro",))
    scheduled = make_paper("scheduled-quasar", title="Scheduled quasar caching", topics=("astro",))
    make_daily(track=track, date=dt.date(2026, 9, 1), papers=[public])
    make_daily(track=track, date=dt.date(2026, 9, 2), papers=[draft], status="draft")
    make_daily(track=track, date=dt.date(2026, 9, 3), papers=[scheduled], status="scheduled")
    search_index_refresh(paper_ids=[public.pk, draft.pk, scheduled.pk])
    for paper, name in ((draft, "hilo"), (scheduled, "cosmos"), (public, "zipfusion")):
        ReferenceCode.objects.create(
            slug=name,
            name=name.title(),
            module=PROGRAMS[name].module,
            paper=paper,
            last_status="passed",
            last_run_at=timezone.now(),
            code_hash=PROGRAMS[name].code_hash(),
        )
    return track


QUASAR_FEEDS = [
    "feeds/infra.atom",
    "feeds/infra.rss",
    "feeds/infra/papers.atom",
    "feeds/topics/astro.atom",
    "feeds/search.atom?q=quasar",
    "feeds/search.atom?topic=astro",
    "feeds/search.atom?q=quasar&topic=astro&track=infra&from=2026-09-01&to=2026-09-30",
]


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("path", QUASAR_FEEDS)
def test_it_shows_no_draft_or_scheduled_daily_or_their_papers(quasars, anonymous, lang, path):
    response, parsed = _feed(anonymous, f"/{lang}/{path}")
    body = response.content.decode()
    assert len(parsed.entries) == 1
    assert "public-quasar" in body or "2026-09-01" in body
    for hidden in ("draft-quasar", "scheduled-quasar", "2026-09-02", "2026-09-03"):
        assert hidden not in body


def test_it_shows_no_reference_code_of_an_unpublished_paper(quasars, anonymous):
    _, parsed = _feed(anonymous, "/en/feeds/code.atom")
    assert [e.link for e in parsed.entries] == ["http://testserver/en/code/zipfusion/"]


def test_it_reports_passed_failed_and_stale_runs_each_as_its_own_item(site, anonymous):
    _, en = _feed(anonymous, "/en/feeds/code.atom")
    titles = {e.link.rsplit("/", 2)[-2]: e.title for e in en.entries}
    assert titles == {
        "cosmos": "Cosmos — Verified",
        "hilo": "HiLO — Failed",
        "zipfusion": "ZipFusion — Stale: code changed since the last run",
    }
    assert {e.link.rsplit("/", 2)[-2] for e in en.entries} == set(titles)
    _, zh = _feed(anonymous, "/zh/feeds/code.atom")
    assert "HiLO — 失败" in [e.title for e in zh.entries]
    stale = next(e for e in en.entries if "zipfusion" in e.link)
    assert stale.id.endswith("/stale/en") and "python -m deepdives.reference.zipfusion" in (
        stale.summary
    )
    # Re-verified: the same program gets a new item, and the stale one is gone.
    ReferenceCode.objects.filter(slug="zipfusion").update(
        code_hash=PROGRAMS["zipfusion"].code_hash(), last_run_at=timezone.now()
    )
    retire(ALL)  # as reference_verify does
    _, rerun = _feed(anonymous, "/en/feeds/code.atom")
    fresh = next(e for e in rerun.entries if "zipfusion" in e.link)
    assert fresh.id != stale.id and fresh.id.endswith("/passed/en")
    assert rerun.entries[0] == fresh  # newest first


def test_it_hides_a_program_when_its_daily_is_unpublished(site, anonymous):
    daily_unpublish(daily=Daily.objects.get(date=dt.date(2026, 10, 28)))
    _, parsed = _feed(anonymous, "/en/feeds/code.atom")
    assert "cosmos" not in {e.link for e in parsed.entries}


def test_it_shows_at_most_the_newest_feed_items(db, anonymous):
    track = make_track()
    start = dt.date(2026, 1, 1)
    for day in range(FEED_ITEMS + 1):
        make_daily(track=track, date=start + dt.timedelta(days=day), papers=[make_paper()])
    _, dailies = _feed(anonymous, "/en/feeds/infra.atom")
    assert len(dailies.entries) == FEED_ITEMS
    assert dailies.entries[-1].link.endswith(f"/{start + dt.timedelta(days=1)}/")
    _, papers = _feed(anonymous, "/en/feeds/infra/papers.atom")
    assert len(papers.entries) == FEED_ITEMS


@pytest.mark.parametrize(
    "query",
    [
        "",
        "?q=",
        "?topic=not/a/slug",
        "?q=cache&from=28-10-2026",
        "?q=cache&to=2026-13-01",
        "?q=a%00b",
        "?track=" + "x" * 51,
    ],
)
def test_it_refuses_a_malformed_search_feed_query_with_a_clear_400(db, anonymous, query):
    response = anonymous.get(f"/en/feeds/search.atom{query}")
    assert response.status_code == 400
    assert response["Content-Type"].startswith("text/plain")
    assert b"query string is not valid" in response.content


def test_it_answers_404_for_an_unknown_track_or_topic(db, anonymous):
    make_track()
    make_track("retired", is_active=False)
    for url in ("nosuch.atom", "retired.atom", "nosuch/papers.atom", "topics/nosuch.atom"):
        assert anonymous.get(f"/en/feeds/{url}").status_code == 404


def _world(start: dt.date, days: int, papers: int) -> None:
    track = make_track()
    for day in range(days):
        ps = [make_paper(topics=("kv",), orgs=("Acme",)) for _ in range(papers)]
        make_daily(track=track, date=start + dt.timedelta(days=day), papers=ps)
    search_index_refresh(paper_ids=list(Daily.objects.values_list("entries__paper", flat=True)))


def _queries(client, url: str) -> int:
    with CaptureQueriesContext(connection) as queries:
        _feed(client, url)
    return len(queries)


@pytest.mark.parametrize(
    "url",
    [
        "/en/feeds/infra.atom",
        "/zh/feeds/infra.rss",
        "/en/feeds/infra/papers.atom",
        "/en/feeds/topics/kv.atom",
        "/en/feeds/search.atom?q=paper",
        "/en/feeds/search.atom?topic=kv",
    ],
)
def test_it_runs_as_many_queries_for_many_items_as_for_few(db, anonymous, url):
    _world(dt.date(2026, 9, 1), days=1, papers=2)
    few = _queries(anonymous, url)
    _world(dt.date(2026, 9, 10), days=4, papers=5)
    assert _queries(anonymous, url) == few
    assert 0 < few <= 12


def test_the_code_feed_runs_one_query_however_many_programs(demo, anonymous):
    reference_sync()
    ReferenceCode.objects.filter(slug="cosmos").update(
        last_status="passed", last_run_at=timezone.now()
    )
    few = _queries(anonymous, "/en/feeds/code.atom")
    ReferenceCode.objects.update(last_status="passed", last_run_at=timezone.now())
    retire(ALL)  # as reference_verify does
    assert _queries(anonymous, "/en/feeds/code.atom") == few == 1


@pytest.mark.parametrize(
    ("page", "feeds"),
    [
        ("/en/", ["/en/feeds/infra.atom", "/en/feeds/infra.rss", "/en/feeds/infra/papers.atom"]),
        ("/zh/infra/", ["/zh/feeds/infra.atom", "/zh/feeds/infra/papers.atom"]),
        ("/en/infra/2026-10-28/", ["/en/feeds/infra.atom", "/en/feeds/infra.rss"]),
        ("/en/topics/kv-cache/", ["/en/feeds/topics/kv-cache.atom"]),
        (
            "/en/papers/?q=kv+cache&topic=kv-cache",
            ["/en/feeds/search.atom?q=kv+cache&amp;topic=kv-cache"],
        ),
        ("/zh/code/", ["/zh/feeds/code.atom"]),
    ],
)
def test_it_links_each_page_to_its_feeds(site, anonymous, page, feeds):
    html = anonymous.get(page).content.decode()
    head = html.split("</head>", 1)[0]
    for href in feeds:
        kind = "rss" if href.endswith(".rss") else "atom"
        assert f'type="application/{kind}+xml"' in head
        assert f'href="{href}"' in head
        _feed(anonymous, href.replace("&amp;", "&"))


def test_it_says_which_texts_a_machine_drafted(bilingual, anonymous):
    """An intro or a summary a machine drafted says so in a feed, as on the pages."""
    Daily.objects.filter(pk=bilingual.pk).update(intro_en_provenance=Summary.Provenance.MACHINE)
    Summary.objects.filter(paper__slug="both", language="en").update(
        provenance=Summary.Provenance.MACHINE
    )
    Summary.objects.filter(paper__slug="english-only", language="en").update(
        provenance=Summary.Provenance.MACHINE, reviewed_at=timezone.now()
    )
    retire(ALL)
    _, dailies = _feed(anonymous, "/en/feeds/infra.atom")
    (daily,) = dailies.entries
    assert "<p><em>Intro: machine draft</em></p>" in daily.summary
    both, english = daily.summary.split("</li>")[:2]
    assert "Machine draft, not yet reviewed by an editor" in both
    assert "Machine draft, reviewed by an editor" in english
    _, papers = _feed(anonymous, "/en/feeds/infra/papers.atom")
    assert "Machine draft, not yet reviewed by an editor" in papers.entries[0].summary
    # The Chinese summaries are an editor's: no note.
    _, chinese = _feed(anonymous, "/zh/feeds/infra/papers.atom")
    assert "机器初稿" not in chinese.entries[0].summary


@pytest.mark.parametrize(
    ("page", "href"),
    [
        ("/en/topics/kv-cache/", "/en/feeds/topics/kv-cache.atom"),
        (
            "/en/papers/?q=kv+cache&topic=kv-cache",
            "/en/feeds/search.atom?q=kv+cache&amp;topic=kv-cache",
        ),
    ],
)
def test_topic_and_search_pages_show_their_feed_link(site, anonymous, page, href):
    """In the page itself, not only in its head where a reader never sees it."""
    body = anonymous.get(page).content.decode().split("<body", 1)[1]
    links = body.split('class="feed-links"', 1)[1].split("</p>", 1)[0]
    assert f'href="{href}"' in links
