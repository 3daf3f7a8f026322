"""Pages in a real browser (Debian's chromium through Playwright): readable without
JavaScript and on a phone-width screen."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

CHROMIUM = Path("/usr/bin/chromium")
ARGS = ["--headless", "--no-sandbox", "--disable-background-networking", "--disable-gpu"]

pytestmark = [pytest.mark.browser]
if not CHROMIUM.exists() and not os.environ.get("REQUIRE_BROWSER"):
    pytestmark.append(pytest.mark.skip(reason="Debian chromium is not installed (CI installs it)"))


PAGES = [
    "/en/infra/2026-10-28/",
    "/zh/infra/2026-10-28/",
    "/en/papers/",
    "/zh/papers/",
    "/en/",
    "/en/papers/hilo/",
    "/en/deep-dives/zipfusion/",
    "/zh/deep-dives/hilo/",
    "/en/code/",
    "/en/code/bellowskv/",
]


def test_pages_fit_a_phone_width_screen(demo_site, browser):
    page = browser.new_page(viewport={"width": 375, "height": 800})
    for path in PAGES:
        response = page.goto(demo_site + path)
        assert response.status == 200, path
        overflow = page.evaluate(
            "document.documentElement.scrollWidth - document.documentElement.clientWidth"
        )
        assert overflow <= 0, f"{path} is {overflow}px wider than the phone screen"
    page.close()


def test_a_reader_without_javascript_reads_and_switches_language(demo_site, browser):
    context = browser.new_context(java_script_enabled=False, viewport={"width": 375, "height": 800})
    page = context.new_page()
    page.goto(demo_site + "/en/infra/2026-10-28/")
    entries = page.locator("li.entry")
    assert entries.count() == 10
    assert page.locator("li.entry-lead .lead-label").inner_text().strip().lower() == "lead story"
    assert page.locator("strong.takeaway").first.is_visible()
    page.get_by_role("link", name="中文").click()
    assert page.url.endswith("/zh/infra/2026-10-28/")
    assert "评分 202 篇" in page.locator("p.stats").inner_text()
    page.locator("a.deep-dive-link").first.click()
    assert "/zh/deep-dives/hilo/" in page.url
    context.close()
