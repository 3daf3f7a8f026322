"""Each public page reads through its selector a fixed number of queries, whatever the
number of dailies, entries and papers it lists, and prints in its own language."""

from __future__ import annotations

import datetime as dt

import pytest
from django.core.cache import cache
from django.utils import timezone

from dailies.models import Daily
from dailies.selectors import daily_page, paper_page
from digest_site.visibility import PUBLIC
from papers.models import Summary
from tests.factories import make_daily, make_deep_dive, make_paper, make_track

DAY = dt.date(2026, 10, 28)


@pytest.fixture(autouse=True)
def _uncached(settings):
    settings.PAGE_CACHE_ENABLED = False


def _archive(track, days: range, per_daily: int) -> None:
    for day in days:
        papers = [make_paper(orgs=("Acme",), topics=("kv",)) for _ in range(per_daily)]
        make_daily(track=track, date=DAY - dt.timedelta(days=day), papers=papers)


def test_the_track_archive_costs_the_same_for_more_dailies(
    db, anonymous, django_assert_num_queries
):
    track = make_track()
    _archive(track, range(2), 2)
    # the track; the dailies' count; the dailies with their counts, their leads, the leads'
    # summaries (selectors.daily_cards)
    with django_assert_num_queries(5):
        assert anonymous.get("/en/infra/").status_code == 200
    _archive(track, range(2, 12), 5)
    with django_assert_num_queries(5):
        assert anonymous.get("/en/infra/").status_code == 200


def test_the_paper_page_costs_the_same_for_more_appearances_and_scores(
    db, anonymous, django_assert_num_queries
):

    # Pages are read as a browser reads them, whitespace collapsed (the templates' line breaks
    # are djhtml's).
    paper = make_paper("kv-paper", orgs=("Acme", "Beta"), topics=("kv", "moe"))
    make_daily(papers=[paper])
    # the paper and its venue; organizations, summaries, topics, deep dives, reference
    # code, appearances with their dailies and tracks, scores with their tracks; the related
    # papers' term counts (no index here: no search follows)
    with django_assert_num_queries(9):
        assert anonymous.get("/en/papers/kv-paper/").status_code == 200
    for day in range(1, 6):
        make_daily(date=DAY - dt.timedelta(days=day), papers=[paper])
    make_deep_dive(paper)
    with django_assert_num_queries(9):
        assert anonymous.get("/en/papers/kv-paper/").status_code == 200


def test_the_daily_page_object_holds_what_the_reader_may_see(db, editor):
    track = make_track()
    before = make_daily(track=track, date=DAY - dt.timedelta(days=1))
    draft_after = make_daily(track=track, date=DAY + dt.timedelta(days=1), status="draft")
    daily = make_daily(track=track, date=DAY)
    page = daily_page("infra", DAY, user=PUBLIC)
    assert page.daily == daily and page.previous == before.date and page.following is None
    assert [e.position for e in page.entries] == [1, 2, 3]
    assert page.selection.selected_ids == {e.paper_id for e in page.entries}
    assert daily_page("infra", draft_after.date, user=PUBLIC) is None
    assert daily_page("infra", DAY, user=editor).following == draft_after.date


def test_the_paper_page_lists_only_the_appearances_the_reader_may_see(db, editor):
    paper = make_paper("kv-paper")
    make_daily(papers=[paper])
    make_daily(date=DAY + dt.timedelta(days=1), papers=[paper], status=Daily.Status.DRAFT)
    public = paper_page("kv-paper", user=PUBLIC)
    assert [e.daily.date for e in public.published_entries] == [DAY]
    staff = paper_page("kv-paper", user=editor)
    assert [e.daily.date for e in staff.published_entries] == [DAY + dt.timedelta(days=1), DAY]
    assert paper_page("no-such-paper", user=PUBLIC) is None
    unpublished = make_paper("unseen")
    assert paper_page(unpublished.slug, user=PUBLIC) is None
    assert paper_page(unpublished.slug, user=editor) == unpublished


@pytest.fixture
def daily_with_a_dive(db):
    papers = [make_paper(f"p{i}", topics=("kv-cache",)) for i in range(3)]
    make_deep_dive(papers[0])
    return make_daily(papers=papers, scores=["4.20", "3.90", "3.50"])


def test_each_page_prints_its_words_in_its_own_language(daily_with_a_dive, anonymous):
    english = " ".join(anonymous.get("/en/infra/2026-10-28/").content.decode().split())
    chinese = " ".join(anonymous.get("/zh/infra/2026-10-28/").content.decode().split())
    assert " ".join(anonymous.get("/en/infra/2026-10-28/").content.decode().split()) == english
    words = [
        ("show how it was scored", "查看评分依据"),
        ("No scorer's record is stored for this score.", "这个分数没有存档的评分记录。"),
        (">Cite<", ">引用<"),
        ("Deep dive · 1 min", "深度解读 · 1 分钟"),
    ]
    for en, zh in words:
        assert en in english and en not in chinese
        assert zh in chinese and zh not in english
    assert english.count('<li class="entry') == chinese.count('<li class="entry') == 3


def test_the_lists_and_the_paper_page_share_the_links_and_citation(daily_with_a_dive, anonymous):
    index = " ".join(anonymous.get("/en/papers/").content.decode().split())
    paper = " ".join(anonymous.get("/en/papers/p0/").content.decode().split())
    daily = " ".join(anonymous.get("/en/infra/2026-10-28/").content.decode().split())
    for html in (index, paper, daily):
        assert '<details class="cite">' in html
        assert 'href="/en/topics/kv-cache/"' in html
    # The entry actions (deep dive, code) are the lists' and not the paper page's.
    assert 'class="deep-dive-link" href="/en/deep-dives/p0-dive/"' in daily
    assert 'class="deep-dive-marker" href="/en/deep-dives/p0-dive/"' in index


def test_a_draft_and_its_published_self_print_the_same_entries(db, anonymous, editor_client):
    daily = make_daily(papers=[make_paper("kv-paper")], status=Daily.Status.DRAFT)
    preview = " ".join(editor_client.get("/en/infra/2026-10-28/").content.decode().split())
    assert 'class="status-flag"' in preview and 'id="kv-paper"' in preview
    assert anonymous.get("/en/infra/2026-10-28/").status_code == 404
    Daily.objects.filter(pk=daily.pk).update(
        status=Daily.Status.PUBLISHED, published_at=timezone.now()
    )
    cache.clear()
    page = " ".join(anonymous.get("/en/infra/2026-10-28/").content.decode().split())
    assert 'class="status-flag"' not in page
    entry = page.split('id="kv-paper"', 1)[1].split("</li> ", 1)[0]
    assert entry == preview.split('id="kv-paper"', 1)[1].split("</li> ", 1)[0]


def test_a_machines_excerpt_says_so_on_the_index(db, anonymous):
    make_daily(papers=[make_paper("hilo"), make_paper("wakman")])
    Summary.objects.filter(paper__slug="hilo").update(
        provenance=Summary.Provenance.MACHINE, reviewed_at=None
    )
    html = " ".join(anonymous.get("/en/papers/").content.decode().split())
    item = html.split('<li id="hilo">', 1)[1].split("</li>", 1)[0]
    assert '<p class="provenance">Machine draft, not yet reviewed by an editor</p>' in item
    other = html.split('<li id="wakman">', 1)[1].split("</li>", 1)[0]
    assert "provenance" not in other
