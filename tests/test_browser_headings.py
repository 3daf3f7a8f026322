"""Headings on a phone (Debian's chromium through Playwright): a daily's date is never split
across lines ("2026-10-" then "28"), which Chinese line breaking does at its hyphens."""

from __future__ import annotations

import pytest

from tests.factories import make_daily, make_paper
from tests.test_browser import CHROMIUM

pytestmark = [pytest.mark.browser]
if not CHROMIUM.exists():
    pytestmark.append(pytest.mark.skip(reason="Debian chromium is not installed"))

DATE_LINES = """() => {
  const h1 = document.querySelector("h1");
  const text = [...h1.childNodes].filter((n) => n.textContent.includes("2026-10-28"))[0];
  const range = document.createRange();
  range.selectNodeContents(text);
  return new Set([...range.getClientRects()].map((r) => Math.round(r.top))).size;
}"""


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_dailys_date_stays_on_one_line_at_390_px(transactional_db, live_server, browser, lang):
    make_daily(papers=[make_paper("alpha")])
    page = browser.new_page(viewport={"width": 390, "height": 844})
    page.goto(f"{live_server.url}/{lang}/infra/2026-10-28/")
    lines = page.evaluate(DATE_LINES)
    page.close()
    assert lines == 1
