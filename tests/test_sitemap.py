"""/sitemap.xml lists every public page in both languages with hreflang alternates, and
/robots.txt points to it."""

from __future__ import annotations

import datetime as dt
import xml.etree.ElementTree as ET

import pytest
import time_machine
from django.utils import timezone

from dailies.models import Daily
from dailies.sitemaps import I18nSitemap
from deepdives.models import DeepDive, ReferenceCode
from deepdives.registry import PROGRAMS
from digest_site.cache_tags import ALL, retire
from papers.models import Author, Organization, Paper, Topic
from tests.factories import make_daily, make_paper, make_track

NS = {"s": "http://www.sitemaps.org/schemas/sitemap/0.9", "x": "http://www.w3.org/1999/xhtml"}
BASE = "http://testserver"


def _urls(client, path: str = "/sitemap.xml") -> dict[str, dict]:
    """loc → {"lastmod": str | None, "alternates": {hreflang: href}}."""
    response = client.get(path)
    assert response.status_code == 200
    assert response["Content-Type"].startswith("application/xml")
    root = ET.fromstring(response.content)
    assert root.tag == f"{{{NS['s']}}}urlset"
    urls = {}
    for url in root.findall("s:url", NS):
        lastmod = url.find("s:lastmod", NS)
        urls[url.find("s:loc", NS).text] = {
            "lastmod": lastmod.text if lastmod is not None else None,
            "alternates": {
                link.get("hreflang"): link.get("href") for link in url.findall("x:link", NS)
            },
        }
    return urls


@pytest.fixture
def site(demo_deep_dives):
    ReferenceCode.objects.filter(slug="cosmos").update(
        last_status="passed", last_run_at=timezone.now()
    )


def test_it_lists_every_public_page_in_both_languages(site, anonymous):
    urls = _urls(anonymous)
    paths = ["/", "/papers/", "/topics/", "/follow/", "/infra/", "/code/"]
    paths += [d.get_absolute_url()[3:] for d in Daily.objects.published()]
    paths += [f"/papers/{slug}/" for slug in Paper.objects.values_list("slug", flat=True)]
    paths += [f"/topics/{t.slug}/" for t in Topic.objects.filter(papers__isnull=False).distinct()]
    paths += [f"/deep-dives/{slug}/" for slug in DeepDive.objects.values_list("slug", flat=True)]
    paths += [f"/code/{name}/" for name in PROGRAMS]
    paths += [
        f"/labs/{o.slug}/" for o in Organization.objects.filter(papers__isnull=False).distinct()
    ]
    paths += [
        f"/authors/{a.slug}/" for a in Author.objects.filter(paper_links__isnull=False).distinct()
    ]
    expected = {f"{BASE}/{lang}{path}" for path in paths for lang in ("en", "zh")}
    assert set(urls) == expected
    assert len(urls) == len(expected)  # each once


def test_it_gives_every_url_its_hreflang_alternates_and_x_default(site, anonymous):
    for loc, url in _urls(anonymous).items():
        path = loc.removeprefix(BASE).split("/", 2)[2]
        assert url["alternates"] == {
            "en": f"{BASE}/en/{path}",
            "zh": f"{BASE}/zh/{path}",
            "x-default": f"{BASE}/{path}",
        }


def test_its_x_default_sends_readers_to_their_language(site, anonymous):
    response = anonymous.get("/infra/2026-10-28/", HTTP_ACCEPT_LANGUAGE="zh-CN,zh;q=0.9")
    assert response.status_code == 302 and response["Location"] == "/zh/infra/2026-10-28/"


def test_it_dates_each_url_from_its_content(db, anonymous):
    track = make_track()
    with time_machine.travel(dt.datetime(2026, 9, 1, 8, tzinfo=dt.UTC), tick=False):
        old = make_paper("old-paper", topics=("astro",))
        make_daily(track=track, date=dt.date(2026, 9, 1), papers=[old])
    with time_machine.travel(dt.datetime(2026, 9, 5, 8, tzinfo=dt.UTC), tick=False):
        new = make_paper("new-paper")
        make_daily(track=track, date=dt.date(2026, 9, 5), papers=[new])
    with time_machine.travel(dt.datetime(2026, 9, 9, 8, tzinfo=dt.UTC), tick=False):
        summary = old.summaries.get(language="en")
        summary.body = "Corrected. Takeaway sentence here."
        summary.save()
    urls = _urls(anonymous)
    lastmod = {loc.removeprefix(f"{BASE}/en"): u["lastmod"] for loc, u in urls.items()}
    assert lastmod["/infra/2026-09-01/"] == "2026-09-09"  # its paper's summary was corrected
    assert lastmod["/infra/2026-09-05/"] == "2026-09-05"
    assert lastmod["/papers/old-paper/"] == "2026-09-09"
    assert lastmod["/papers/new-paper/"] == "2026-09-05"
    assert lastmod["/infra/"] == "2026-09-05"
    assert lastmod["/topics/astro/"] == "2026-09-01"
    assert lastmod["/"] == "2026-09-05"


def test_it_leaves_out_draft_and_scheduled_dailies_and_their_papers(db, anonymous):
    track = make_track()
    make_daily(track=track, date=dt.date(2026, 9, 1), papers=[make_paper("public")])
    make_daily(
        track=track,
        date=dt.date(2026, 9, 2),
        papers=[make_paper("draft", topics=("hidden-topic",))],
        status="draft",
    )
    make_daily(
        track=track, date=dt.date(2026, 9, 3), papers=[make_paper("sched")], status="scheduled"
    )
    make_track("empty")  # no published daily: no archive page in the sitemap
    body = anonymous.get("/sitemap.xml").content.decode()
    assert "/papers/public/" in body and "/infra/2026-09-01/" in body
    for hidden in ("/papers/draft/", "/papers/sched/", "2026-09-02", "2026-09-03"):
        assert hidden not in body
    assert "hidden-topic" not in body and "/empty/" not in body


def test_it_becomes_an_index_of_sections_past_the_limit(site, anonymous, monkeypatch):
    flat = _urls(anonymous)
    monkeypatch.setattr(I18nSitemap, "limit", len(flat))
    assert set(_urls(anonymous)) == set(flat)  # exactly at the limit: still one file

    monkeypatch.setattr(I18nSitemap, "limit", len(flat) - 1)
    retire(ALL)  # a changed setting, not content: retire the cached sitemap
    response = anonymous.get("/sitemap.xml")
    root = ET.fromstring(response.content)
    assert root.tag == f"{{{NS['s']}}}sitemapindex"
    sections = [s.find("s:loc", NS).text for s in root.findall("s:sitemap", NS)]
    assert f"{BASE}/sitemap-papers.xml" in sections
    assert all(loc.startswith(f"{BASE}/sitemap-") for loc in sections)
    listed = {}
    for loc in sections:
        listed.update(_urls(anonymous, loc.removeprefix(BASE)))
    assert listed == flat


def test_it_paginates_a_section_at_the_limit(site, anonymous, monkeypatch):
    monkeypatch.setattr(I18nSitemap, "limit", 10)
    papers = Paper.objects.count() * 2
    root = ET.fromstring(anonymous.get("/sitemap.xml").content)
    sections = [s.find("s:loc", NS).text for s in root.findall("s:sitemap", NS)]
    pages = [loc for loc in sections if "sitemap-papers.xml" in loc]
    assert len(pages) == -(-papers // 10)
    assert sum(len(_urls(anonymous, p.removeprefix(BASE))) for p in pages) == papers
    assert anonymous.get("/sitemap-nosuch.xml").status_code == 404


def test_robots_txt_allows_the_site_and_points_to_the_sitemap(db, anonymous):
    response = anonymous.get("/robots.txt")
    assert response.status_code == 200
    assert response["Content-Type"] == "text/plain; charset=utf-8"
    lines = response.content.decode().splitlines()
    assert "User-agent: *" in lines and "Allow: /" in lines
    assert "Disallow: /admin/" in lines and "Disallow: /api/" in lines
    assert f"Sitemap: {BASE}/sitemap.xml" in lines
    assert anonymous.get("/sitemap.xml").status_code == 200
