"""Each page names itself to search engines and link previews: canonical URL, absolute
hreflang alternates with x-default, Open Graph and Twitter cards, in the page's language."""

from __future__ import annotations

import html as html_lib
import re

import pytest

from dailies.templatetags.digest import clean_truncate

PAGES = {
    "/en/infra/2026-10-28/": "Infra — Paper Daily, 2026-10-28",
    "/zh/infra/2026-10-28/": "基础设施 — 论文日报，2026-10-28",
    "/en/papers/hilo/": "HiLO: ",
    "/en/papers/": "All papers · Paper Daily",
    "/en/topics/storage/": "Storage systems · Paper Daily",
    "/en/deep-dives/": "Deep dives · Paper Daily",
}


def _meta(html: str, key: str) -> str | None:
    found = re.search(rf'<meta (?:property|name)="{re.escape(key)}" content="([^"]*)">', html)
    return html_lib.unescape(found.group(1)) if found else None


@pytest.mark.parametrize("url,title", PAGES.items())
def test_every_page_has_its_open_graph_and_twitter_card(demo, anonymous, url, title, settings):
    html = anonymous.get(url).content.decode()
    assert title in _meta(html, "og:title")
    assert _meta(html, "twitter:title") == _meta(html, "og:title")
    assert _meta(html, "og:description") and _meta(html, "twitter:card") == "summary"
    assert _meta(html, "og:url") == f"{settings.SITE_URL}{url}"
    assert _meta(html, "og:locale") == ("zh_CN" if url.startswith("/zh/") else "en_US")
    assert f'<link rel="canonical" href="{settings.SITE_URL}{url}">' in html


def test_the_daily_summarises_its_intro(demo, anonymous):
    html = anonymous.get("/zh/infra/2026-10-28/").content.decode()
    description = _meta(html, "og:description")
    assert re.search(r"[\u4e00-\u9fff]", description)


def test_it_lists_absolute_alternates_and_x_default(demo, anonymous, settings):
    html = anonymous.get("/zh/papers/hilo/").content.decode()
    site = settings.SITE_URL
    assert f'<link rel="alternate" hreflang="en" href="{site}/en/papers/hilo/">' in html
    assert f'<link rel="alternate" hreflang="zh-CN" href="{site}/zh/papers/hilo/">' in html
    assert f'<link rel="alternate" hreflang="x-default" href="{site}/en/papers/hilo/">' in html
    assert '<link rel="icon" href="/static/favicon.svg"' in html


def test_a_later_page_is_canonical_with_its_number(demo, anonymous, settings):
    settings.PAGE_SIZE = 5
    html = anonymous.get("/en/papers/?page=2").content.decode()
    assert f'<link rel="canonical" href="{settings.SITE_URL}/en/papers/?page=2">' in html


def test_truncation_ends_cleanly_in_both_languages():
    zh = "多模态检索的瓶颈，常常不在检索本身。一条查询先找文本向量，再取与之配对的图片向量。"
    cut = clean_truncate(zh, 25)
    assert cut.endswith("……") and not cut.endswith("。……") and len(cut) <= 27
    en = "In multimodal retrieval, the slow step is often not a search at all. A query looks up."
    cut = clean_truncate(en, 75)
    assert cut == "In multimodal retrieval, the slow step is often not a search at all…"
    assert clean_truncate(en, len(en)) == en
