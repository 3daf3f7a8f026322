"""Accessibility in a real browser (Debian's chromium through Playwright): axe-core finds no
serious or critical violation on the reader's pages, in the light and the dark theme, and no
page is wider than a 390 px phone.

axe-core comes from the npm registry (package.json / package-lock.json; ``npm ci``). The
site's CSP forbids inline scripts, and Playwright's add_script_tag(path=…) injects inline
content, so axe runs in a context that bypasses the CSP, for the axe run only; the CSP
itself is checked in tests/test_browser_csp.py.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.test_browser import CHROMIUM

ROOT = Path(__file__).resolve().parent.parent
AXE = ROOT / "node_modules" / "axe-core" / "axe.min.js"
PHONE_WIDTH = 390
BLOCKING = {"serious", "critical"}

pytestmark = [pytest.mark.browser]
if not CHROMIUM.exists() and not os.environ.get("REQUIRE_BROWSER"):
    pytestmark.append(pytest.mark.skip(reason="Debian chromium is not installed (CI installs it)"))

PAGES = [
    "/en/",
    "/en/infra/2026-10-28/",
    "/zh/infra/2026-10-28/",
    "/en/papers/",
    "/en/papers/?q=cache",
    "/en/papers/hilo/",
    "/en/topics/kv-cache/",
    "/en/deep-dives/",
    "/en/deep-dives/hilo/",
    "/zh/deep-dives/hilo/",
    "/en/code/",
    "/en/code/bellowskv/",
]


@pytest.fixture(scope="module")
def axe_source() -> str:
    """axe-core's source; installed with ``npm ci`` when missing. Without npm the test skips
    (with the reason), unless REQUIRE_BROWSER says it must run (CI)."""
    if not AXE.exists():
        npm = shutil.which("npm")
        if npm is None:
            if os.environ.get("REQUIRE_BROWSER"):
                pytest.fail("npm is needed to install axe-core (npm ci)")
            pytest.skip("npm is not installed: cannot install axe-core")
        subprocess.run([npm, "ci", "--no-audit", "--no-fund"], cwd=ROOT, check=True)
    return AXE.read_text(encoding="utf-8")


def _violations(page, axe_source: str) -> list[str]:
    page.evaluate(axe_source)
    result = page.evaluate(
        "async () => (await axe.run(document, {resultTypes: ['violations']})).violations"
        ".map(v => ({id: v.id, impact: v.impact, help: v.help,"
        " nodes: v.nodes.slice(0, 3).map(n => n.target.join(' '))}))"
    )
    return [
        f"{v['impact']} {v['id']}: {v['help']} at {v['nodes']}"
        for v in result
        if v["impact"] in BLOCKING
    ]


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_axe_finds_no_serious_violation_and_nothing_overflows(
    demo_site, browser, axe_source, scheme
):
    context = browser.new_context(
        bypass_csp=True, color_scheme=scheme, viewport={"width": PHONE_WIDTH, "height": 800}
    )
    page = context.new_page()
    problems = []
    for path in PAGES:
        response = page.goto(demo_site + path)
        assert response.status == 200, path
        problems += [f"{path}: {v}" for v in _violations(page, axe_source)]
        overflow = page.evaluate(
            "document.documentElement.scrollWidth - document.documentElement.clientWidth"
        )
        if overflow > 0:
            problems.append(f"{path}: {overflow}px wider than a {PHONE_WIDTH}px screen")
    context.close()
    assert not problems, "\n".join(problems)


def _toggle_dark(demo_site, browser):
    context = browser.new_context(java_script_enabled=False, color_scheme="light")
    page = context.new_page()
    page.goto(demo_site + "/en/papers/")
    light = page.evaluate("getComputedStyle(document.body).backgroundColor")
    with page.expect_navigation():
        page.get_by_role("link", name="Dark", exact=True).click()
    assert page.url.endswith("/en/papers/")
    return context, page, light


def test_the_theme_toggle_works_without_javascript(demo_site, browser):
    context, page, light = _toggle_dark(demo_site, browser)
    page.goto(demo_site + "/en/topics/")
    assert page.locator("html").get_attribute("data-theme") == "dark"
    assert page.evaluate("getComputedStyle(document.body).backgroundColor") != light
    context.close()


def test_the_page_the_toggle_returns_to_is_in_the_new_theme(demo_site, browser):
    context, page, _ = _toggle_dark(demo_site, browser)
    assert page.locator("html").get_attribute("data-theme") == "dark"
    context.close()
