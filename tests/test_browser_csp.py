"""Pages in a real browser under the Content-Security-Policy: nothing is blocked, the
stylesheet applies, the language switch and the admin still work."""

from __future__ import annotations

import re

import pytest

from tests.test_browser import CHROMIUM, PAGES

pytestmark = [pytest.mark.browser]
if not CHROMIUM.exists():
    pytestmark.append(pytest.mark.skip(reason="Debian chromium is not installed"))

# Runs before any page script: records every violation the page reports.
LISTEN = """
window.__violations = [];
document.addEventListener("securitypolicyviolation", (e) => {
  window.__violations.push(e.violatedDirective + " " + (e.blockedURI || "inline"));
});
"""
PASSPHRASE = "a long passphrase"
PAPER = "rgb(252, 252, 251)"  # --paper in static/css/site.css


@pytest.fixture
def watched(browser):
    """A page that reports CSP and Permissions-Policy complaints from the console."""
    context = browser.new_context()
    context.add_init_script(LISTEN)
    page = context.new_page()
    complaints: list[str] = []
    page.on(
        "console",
        lambda msg: (
            complaints.append(msg.text)
            if re.search(r"Content Security Policy|Permissions-Policy|Refused to", msg.text)
            else None
        ),
    )
    page.on("pageerror", lambda error: complaints.append(f"page error: {error}"))
    yield page, complaints
    context.close()


def _assert_clean(page, complaints: list[str], path: str) -> None:
    page.wait_for_load_state("load")
    assert page.evaluate("window.__violations") == [], path
    assert complaints == [], path


def test_it_renders_every_page_under_the_policy_with_its_stylesheet(demo_site, watched):
    page, complaints = watched
    for path in [*PAGES, "/en/topics/", "/en/infra/", "/en/papers/no-such-paper/"]:
        response = page.goto(demo_site + path)
        assert response.status in (200, 404), path
        assert "default-src 'self'" in response.headers["content-security-policy"]
        _assert_clean(page, complaints, path)
        background = page.evaluate("getComputedStyle(document.body).backgroundColor")
        assert background == PAPER, path


def test_it_keeps_the_language_switch_working_under_the_policy(demo_site, watched):
    page, complaints = watched
    page.goto(demo_site + "/en/infra/2026-10-28/")
    page.get_by_role("link", name="中文").click()
    page.wait_for_url("**/zh/infra/2026-10-28/")
    assert "评分 202 篇" in page.locator("p.stats").inner_text()
    page.get_by_role("link", name="English").click()
    page.wait_for_url("**/en/infra/2026-10-28/")
    _assert_clean(page, complaints, "language switch")


@pytest.fixture
def admin_site(transactional_db, live_server, django_user_model):
    """The demo and a superuser who may sign in to the admin, on pytest-django's live server
    with the database flushed after the test: signing in writes, and on PostgreSQL the
    module's shared server (demo_site) kept a connection from it open past the session's end."""
    from dailies.demo import demo_load

    demo_load()
    django_user_model.objects.create_superuser("root", "root@example.org", PASSPHRASE)
    return live_server.url


def test_it_keeps_the_admin_working_under_the_policy(admin_site, watched):
    page, complaints = watched
    page.goto(admin_site + "/admin/login/")
    page.fill("#id_username", "root")
    page.fill("#id_password", PASSPHRASE)
    page.click("input[type=submit]")
    page.wait_for_url(admin_site + "/admin/")
    _assert_clean(page, complaints, "/admin/")
    # A change list with actions (admin JavaScript) and a change form with inlines.
    page.goto(admin_site + "/admin/dailies/daily/")
    assert page.locator("#changelist-form").count() == 1
    _assert_clean(page, complaints, "/admin/dailies/daily/")
    page.locator("#result_list tbody a").first.click()
    page.wait_for_load_state("load")
    assert page.locator("form").count() >= 1
    _assert_clean(page, complaints, "a daily's change form")
    # The action checkbox is driven by admin/js/actions.js: it must run.
    page.goto(admin_site + "/admin/dailies/daily/")
    page.locator("#action-toggle").check()
    assert page.locator("tr.selected").count() >= 1
    _assert_clean(page, complaints, "admin actions")
