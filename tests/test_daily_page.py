"""The daily page carries everything the seed pages carry, in both languages."""

from __future__ import annotations

import datetime as dt
import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from tests.factories import make_daily, make_deep_dive, make_paper, make_track

# Pages are read as a browser reads them, whitespace collapsed (the templates' line breaks
# are djhtml's).

SEED_ORDER = [
    "hilo",
    "coloc",
    "trustann",
    "bellowskv",
    "zipfusion",
    "cosmos-llm-gateway",
    "psr-moe-offloading",
    "volcano-engine-eic",
    "ling-flash-dgx-spark",
    "minerva",
]
SEED_SCORES = ["4.85", "4.50", "4.50", "4.45", "4.35", "4.30", "4.20", "3.85", "3.35", "3.35"]


def _entry_ids(html: str) -> list[str]:
    return re.findall(r'<li class="entry[^"]*" id="([^"]+)"', html)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_it_lists_the_seed_entries_in_order_with_scores(demo, anonymous, lang):
    response = anonymous.get(f"/{lang}/infra/2026-10-28/")
    assert response.status_code == 200
    html = " ".join(response.content.decode().split())
    assert _entry_ids(html) == SEED_ORDER
    shown = re.findall(r'<span class="score"[^>]*>.*?</span>([\d.]+)</span>', html)
    assert shown == SEED_SCORES


def test_it_shows_the_english_header_stats_lead_labels_and_badge(demo, anonymous):
    html = " ".join(anonymous.get("/en/infra/2026-10-28/").content.decode().split())
    assert "Infra — Paper Daily, 2026-10-28" in html
    assert "Scored 202 candidates · 10 selected · scores 3.35–4.85" in html
    assert html.count('class="lead-label"') == 1
    lead = html.split('<li class="entry entry-lead" id="hilo">', 1)[1].split("</li>", 1)[0]
    assert "Lead story" in lead and "Microsoft" in lead and "Accepted at NSDI 2027" in lead
    for label in ("Microsoft", "PayPal", "ByteDance", "NVIDIA"):
        assert f'<a class="org" href="/en/labs/{label.lower()}/">{label}</a>' in html


def test_it_shows_the_chinese_header_stats_lead_labels_and_badge(demo, anonymous):
    html = " ".join(anonymous.get("/zh/infra/2026-10-28/").content.decode().split())
    assert "基础设施 — 论文日报，2026-10-28" in html
    assert "评分 202 篇 · 入选 10 篇 · 分数 3.35–4.85" in html
    assert "头条" in html
    assert "已录用 NSDI 2027" in html
    for label in ("Microsoft", "PayPal", "ByteDance", "NVIDIA"):
        assert f'<a class="org" href="/zh/labs/{label.lower()}/">{label}</a>' in html
    assert 'lang="zh"' in html  # the summaries are the Chinese ones


def test_it_emphasises_the_takeaway_inside_the_summary(demo, anonymous):
    html = " ".join(anonymous.get("/en/infra/2026-10-28/").content.decode().split())
    hilo = html.split('id="hilo"', 1)[1].split("</li>", 1)[0]
    assert (
        '<strong class="takeaway">Plan degradation as whole-product states, '
        "not per-service reflexes.</strong>" in hilo
    )
    # The takeaway stands between the mechanism and the evidence, as written.
    summary = hilo.split('<p class="summary"', 1)[1]
    assert summary.index("central controller") < summary.index("takeaway") < summary.index("2.38")


def test_it_derives_stats_from_the_entries_not_from_typed_text(db, anonymous):
    paper_a, paper_b = make_paper(), make_paper()
    make_daily(papers=[paper_a, paper_b], scores=["4.10", "3.55"], candidates=12)
    html = " ".join(anonymous.get("/en/infra/2026-10-28/").content.decode().split())
    assert "Scored 12 candidates · 2 selected · scores 3.55–4.10" in html


def test_it_omits_what_an_imported_partial_daily_did_not_record(demo, anonymous):
    html = " ".join(anonymous.get("/en/infra/2026-10-27/").content.decode().split())
    assert "Scored" not in html
    assert "2 selected" in html and "scores" not in html.split('class="stats"')[1][:200]


def test_it_links_the_previous_and_next_daily(demo, anonymous):
    html = " ".join(anonymous.get("/en/infra/2026-10-28/").content.decode().split())
    assert 'rel="prev" href="/en/infra/2026-10-27/"' in html
    assert 'rel="next" href="/en/infra/2026-10-29/"' in html


def test_the_pager_links_only_dailies_the_reader_may_see(db, anonymous, editor_client):
    make_daily(date=dt.date(2026, 10, 26))
    make_daily(date=dt.date(2026, 10, 27), status="draft")
    make_daily(date=dt.date(2026, 10, 28))
    make_daily(date=dt.date(2026, 10, 29), status="scheduled")
    make_daily(date=dt.date(2026, 10, 28), track=make_track("other"))
    html = " ".join(anonymous.get("/en/infra/2026-10-28/").content.decode().split())
    assert 'rel="prev" href="/en/infra/2026-10-26/"' in html and 'rel="next"' not in html
    staff = " ".join(editor_client.get("/zh/infra/2026-10-28/").content.decode().split())
    assert 'rel="prev" href="/zh/infra/2026-10-27/"' in staff
    assert 'rel="next" href="/zh/infra/2026-10-29/"' in staff


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_each_heading_links_its_paper_page_in_the_pages_language(db, anonymous, lang):
    papers = [make_paper("kv-cache"), make_paper("moe_offload-2")]
    make_daily(papers=papers)
    html = " ".join(anonymous.get(f"/{lang}/infra/2026-10-28/").content.decode().split())
    for paper in papers:
        assert f'<h2 class="entry-title"><a href="/{lang}/papers/{paper.slug}/">' in html


def test_it_shows_deep_dive_reading_time_only_for_published_ones(db, anonymous):
    with_dive, draft_dive, without = make_paper("with"), make_paper("draft"), make_paper("none")
    make_daily(papers=[with_dive, draft_dive, without])
    make_deep_dive(with_dive, body_en=" ".join(["word"] * 660))
    make_deep_dive(draft_dive, status="draft")
    html = " ".join(anonymous.get("/en/infra/2026-10-28/").content.decode().split())
    assert html.count("Deep dive · ") == 1
    assert 'href="/en/deep-dives/with-dive/">Deep dive · 3 min' in html


def test_it_answers_404_for_an_impossible_or_missing_date(demo, anonymous):
    assert anonymous.get("/en/infra/2026-02-30/").status_code == 404
    assert anonymous.get("/en/infra/2026-10-30/").status_code == 404
    assert anonymous.get("/en/nosuchtrack/2026-10-28/").status_code == 404


def _queries_for_daily(client, n_entries: int, date: dt.date) -> int:
    make_daily(
        date=date, papers=[make_paper(orgs=("Org",), topics=("t",)) for _ in range(n_entries)]
    )
    with CaptureQueriesContext(connection) as ctx:
        response = client.get(f"/en/infra/{date.isoformat()}/")
    assert response.status_code == 200
    return len(ctx.captured_queries)


def test_its_query_count_does_not_grow_with_the_entries(db, anonymous):
    small = _queries_for_daily(anonymous, 2, dt.date(2026, 1, 1))
    large = _queries_for_daily(anonymous, 12, dt.date(2026, 2, 1))
    assert small == large


def test_it_runs_a_pinned_number_of_queries(demo, anonymous, django_assert_num_queries):
    # daily+track with the dates of the previous and the next daily, entries+paper+venue,
    # organisations, summaries, topics, deep dives, reference code, and the scores the
    # daily was published with (its selection chart: dailies.record)
    with django_assert_num_queries(8):
        anonymous.get("/en/infra/2026-10-28/")
