"""The day at a glance at the top of a daily: rank, score, name and one line for each entry,
each a jump to it; one note for the entries no public link is known for."""

from __future__ import annotations

import re

from tests.factories import make_daily, make_paper

# Pages are read as a browser reads them, whitespace collapsed (the templates' line breaks
# are djhtml's).


def _overview(html: str) -> str:
    return html.split('<nav class="daily-overview"', 1)[1].split("</nav>", 1)[0]


def test_it_lists_every_entry_with_rank_score_name_and_a_jump(db, anonymous):
    papers = [
        make_paper("alpha", short_name="Alpha", arxiv_id="2610.00001"),
        make_paper("bravo", short_name="Bravo"),
    ]
    make_daily(papers=papers, scores=["4.20", "3.90"])
    html = " ".join(anonymous.get("/en/infra/2026-10-28/").content.decode().split())
    overview = _overview(html)
    rows = re.findall(r'<li><a href="#(\w+)">.*?</a></li>', overview, re.S)
    assert rows == ["alpha", "bravo"]
    assert "4.20" in overview and "Alpha" in overview and "Takeaway sentence here." in overview
    # It comes before the entries it jumps to.
    assert html.index('class="daily-overview"') < html.index('id="alpha"')
    assert "No public link is known yet for this paper: Bravo." in overview


def test_it_says_once_when_no_entry_has_a_link(db, anonymous):
    make_daily(papers=[make_paper("one"), make_paper("two"), make_paper("three")])
    html = " ".join(anonymous.get("/en/infra/2026-10-28/").content.decode().split())
    assert html.count("No public link is known yet") == 1
    assert "No public link is known yet for any paper of this daily." in _overview(html)


def test_the_chinese_page_gives_the_chinese_line(db, anonymous):
    make_daily(papers=[make_paper("alpha", arxiv_id="2610.00001")])
    overview = _overview(" ".join(anonymous.get("/zh/infra/2026-10-28/").content.decode().split()))
    assert "当日一览" in overview and 'lang="zh"' in overview
