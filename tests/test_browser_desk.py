"""The editor's desk in a real browser (Debian's chromium through Playwright): an editor
finishes and publishes a daily; a reader then sees it in the editor's order."""

from __future__ import annotations

import re
import tempfile
from decimal import Decimal
from pathlib import Path

import pytest

from audit.models import AuditRecord
from dailies.models import Daily, EditorialAction
from papers.models import Score, Summary, SummaryFlag
from tests.factories import make_daily, make_paper, make_track, upcoming_date
from tests.test_browser import ARGS, CHROMIUM

pytestmark = [pytest.mark.browser]
if not CHROMIUM.exists():
    pytestmark.append(pytest.mark.skip(reason="Debian chromium is not installed"))

PASSWORD = "a long passphrase"
LISTEN = """
window.__violations = [];
document.addEventListener("securitypolicyviolation", (e) => {
  window.__violations.push(e.violatedDirective + " " + (e.blockedURI || "inline"));
});
"""


@pytest.fixture
def proposed(transactional_db, live_server, editor):
    """The proposed daily of tomorrow (three entries, an open flag on the second's Chinese
    text) and one more scored candidate; made before the browser starts (the ORM refuses to
    run inside its loop)."""
    editor.set_password(PASSWORD)
    editor.save()
    track = make_track()
    tomorrow = upcoming_date(track)
    papers = [make_paper(slug) for slug in ("alpha", "bravo", "charlie")]
    daily = make_daily(track=track, date=tomorrow, papers=papers, status=Daily.Status.DRAFT)
    extra = make_paper("delta")
    for paper in [*papers, extra]:
        paper.tracks.add(track)
    Score.objects.create(
        paper=extra, track=track, total=Decimal("3.85"), scorer="t", scorer_version="1"
    )
    summary = Summary.objects.get(paper=papers[1], language="zh")
    SummaryFlag.objects.create(
        summary=summary, kind="number", field="body", text="42", detail="Not in it.", start=0, end=2
    )
    return {
        "site": live_server.url,
        "daily": daily,
        "change": f"/admin/dailies/daily/{daily.pk}/change/",
        "public": f"/en/{track.slug}/{tomorrow:%Y-%m-%d}/",
        "entries": {e.paper.slug: e.pk for e in daily.entries.select_related("paper")},
    }


def _order(page) -> list[str]:
    return re.findall(r'<li class="entry[^"]*" id="([^"]+)"', page.content())


def _drag_to_top(page, row, top_row) -> None:
    """Drag the row's handle (its title line) above the top row's, as a hand does."""
    handle = row.locator("td.original p").first
    target = top_row.locator("td.original p").first
    handle.drag_to(target, target_position={"x": 5, "y": 1})


def _row(page, entry_id: int):
    return page.locator(
        f"#entries-group tr.has_original:has(input[name$='-id'][value='{entry_id}'])"
    )


def test_an_editor_finishes_and_publishes_the_daily_at_the_desk(proposed, editor):
    from playwright.sync_api import sync_playwright

    site, ids = proposed["site"], proposed["entries"]
    shot = Path(tempfile.mkdtemp(prefix="desk-")) / "desk-1440.png"
    violations: list[str] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        context = browser.new_context(viewport={"width": 1440, "height": 1000})
        context.add_init_script(LISTEN)
        page = context.new_page()
        page.on(
            "console",
            lambda m: violations.append(m.text) if "Content Security Policy" in m.text else None,
        )
        try:
            page.goto(site + "/admin/login/")
            page.fill("#id_username", "editor")
            page.fill("#id_password", PASSWORD)
            page.click("input[type=submit]")
            page.wait_for_url(site + "/admin/")
            page.goto(site + proposed["change"])
            # Drag the third entry to the top, make it the lead, save once.
            rows = page.locator("#entries-group tr.has_original")
            assert rows.count() == 3
            _drag_to_top(page, _row(page, ids["charlie"]), _row(page, ids["alpha"]))
            first = page.locator("#entries-group tr.has_original").first
            assert first.locator("input[name$='-id']").input_value() == str(ids["charlie"])
            _row(page, ids["alpha"]).locator("input[name$='-is_lead']").uncheck()
            _row(page, ids["charlie"]).locator("input[name$='-is_lead']").check()
            page.click("input[name=_continue]")
            page.wait_for_load_state("load")
            assert "was changed successfully" in page.content()
            # Add a candidate from the panel with one click: it takes its newest score.
            page.locator("tr.desk-candidate:has-text('Delta') button[name=_add]").click()
            page.wait_for_load_state("load")
            assert "Added" in page.content()
            assert page.locator("#entries-group tr.has_original").count() == 4
            # Edit the Chinese summary of the lead, side by side with the English one.
            block = page.locator(f"#desk-entry-{ids['charlie']}")
            en = block.locator("textarea[name=en-body]").bounding_box()
            zh = block.locator("textarea[name=zh-body]").bounding_box()
            assert zh["x"] > en["x"] + en["width"] - 1 and abs(zh["y"] - en["y"]) < 5
            block.locator("textarea[name=zh-body]").fill("编辑改写的中文摘要。这是要点句。")
            block.locator("button[name=_save_texts]").click()
            page.wait_for_load_state("load")
            assert "Saved the zh text" in page.content()
            # Preview: the public page as staff, with a way back to the desk.
            page.goto(site + proposed["public"])
            assert _order(page)[:2] == ["charlie", "alpha"]
            page.locator("p.status-flag a").click()
            page.wait_for_url(re.compile(re.escape(proposed["change"])))
            # Publishing is refused while the flag is open; the checklist links to it.
            page.locator("button[name=_publish_now]").click()
            page.wait_for_load_state("load")
            assert "Fix the text or confirm it" in page.content()
            link = page.locator(f"a[href='#desk-entry-{ids['bravo']}-zh']").first
            assert link.count() == 1
            page.screenshot(path=str(shot), full_page=True)
            page.locator(f"#desk-entry-{ids['bravo']} button[name=_confirm_zh]").click()
            page.wait_for_load_state("load")
            assert "Confirmed 1 flag" in page.content()
            page.locator("button[name=_publish_now]").click()
            page.wait_for_load_state("load")
            assert "Published" in page.content()
            history = page.locator("table.desk-history").inner_text()
            for kind in ("Moved a story", "Chose the lead story", "Added a paper", "Edited a text"):
                assert kind in history
            assert "editor" in history
            assert page.evaluate("window.__violations") == [] and violations == []
            # An anonymous reader sees the daily in the new order.
            reader = browser.new_context().new_page()
            reader.goto(site + proposed["public"])
            assert _order(reader) == ["charlie", "alpha", "bravo", "delta"]
            assert reader.locator("li.entry-lead").get_attribute("id") == "charlie"
        except Exception:
            page.screenshot(path=str(shot), full_page=True)
            print(f"\nscreenshot of the desk at 1,440 px: {shot}")
            raise
        finally:
            browser.close()
    # The stored rows: the history lists every action of the journey with its editor.
    daily = Daily.objects.get(pk=proposed["daily"].pk)
    assert daily.status == Daily.Status.PUBLISHED
    kinds = set(daily.actions.values_list("kind", "user__username"))
    Kind = EditorialAction.Kind
    for kind in (Kind.REORDERED, Kind.LEAD, Kind.ADDED, Kind.TEXT_EDITED):
        assert (kind, "editor") in kinds
    assert AuditRecord.objects.get(action=AuditRecord.Action.PUBLISH).user == editor
    assert daily.entries.get(paper__slug="delta").score == Decimal("3.85")


def _login(page, site: str) -> None:
    page.goto(site + "/admin/login/")
    page.fill("#id_username", "editor")
    page.fill("#id_password", PASSWORD)
    page.click("input[type=submit]")
    page.wait_for_url(site + "/admin/")


def test_saving_an_entry_keeps_an_unsaved_intro_and_says_so(proposed, editor):
    """The desk's forms post one at a time: an entry's "Save texts" must not lose the intro
    typed above it (nor the reverse); it is put back, marked and named until saved."""
    from playwright.sync_api import sync_playwright

    site, ids = proposed["site"], proposed["entries"]
    intro = "An intro typed but not saved yet."
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        page = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
        try:
            _login(page, site)
            page.goto(site + proposed["change"])
            page.fill("#daily_form textarea[name=intro_en]", intro)
            block = page.locator(f"#desk-entry-{ids['alpha']}")
            block.locator("textarea[name=zh-body]").fill("编辑改写的中文摘要。这是要点句。")
            block.locator("button[name=_save_texts]").click()
            page.wait_for_load_state("load")
            assert "Saved the zh text" in page.content()
            assert page.input_value("#daily_form textarea[name=intro_en]") == intro
            notice = page.locator("#desk-unsaved")
            assert notice.is_visible() and "Intro" in notice.inner_text()
            # Not stored yet: the entry's save carried only the entry (a fresh tab shows so).
            other = page.context.new_page()
            other.goto(site + proposed["change"])
            assert other.input_value("#daily_form textarea[name=intro_en]") == "Today's intro."
            assert not other.locator("#desk-unsaved").is_visible()
            other.close()
            # The daily's own Save then stores it.
            page.click("input[name=_continue]")
            page.wait_for_load_state("load")
            assert "was changed successfully" in page.content()
            assert not page.locator("#desk-unsaved").is_visible()
        finally:
            browser.close()
    daily = Daily.objects.get(pk=proposed["daily"].pk)
    assert daily.intro_en == intro
    assert Summary.objects.get(paper__slug="alpha", language="zh").body.startswith("编辑改写")


OVERFLOW = """() => {
  const width = document.documentElement.clientWidth;
  const wide = [];
  for (const el of document.querySelectorAll("body *")) {
    const box = el.getBoundingClientRect();
    const parent = el.parentElement && el.parentElement.getBoundingClientRect();
    if (box.width && box.right > width + 1 && !(parent && parent.right > width + 1)) {
      wide.push(el.tagName.toLowerCase() + (el.id ? "#" + el.id : "") + " " + box.right);
    }
  }
  return {scroll: document.documentElement.scrollWidth, width: width, wide: wide};
}"""


@pytest.mark.parametrize("locale", ["en", "zh-CN"])
def test_the_desk_fits_a_phone_without_scrolling_sideways(proposed, editor, locale):
    """At 390 px the change page of a draft daily (publish-at, candidates, entries) is no
    wider than the screen: wide tables scroll in their own box, not the page."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        context = browser.new_context(viewport={"width": 390, "height": 844}, locale=locale)
        page = context.new_page()
        try:
            _login(page, proposed["site"])
            page.goto(proposed["site"] + proposed["change"])
            assert page.locator("#desk-schedule").is_visible()
            assert page.locator("tr.desk-candidate").count() >= 1
            found = page.evaluate(OVERFLOW)
        finally:
            browser.close()
    assert found["scroll"] <= found["width"], found


def test_an_editor_marks_the_drafts_they_read_reviewed(proposed, editor):
    """Machine drafts nobody reviewed: two ticked as read go in one click, one more from its
    entry; the rest still block, and the page keeps working without a stray warning."""
    from playwright.sync_api import sync_playwright

    Summary.objects.filter(paper__slug__in=["alpha", "bravo", "charlie"]).update(
        provenance=Summary.Provenance.MACHINE
    )
    site, ids = proposed["site"], proposed["entries"]
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        page = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
        try:
            _login(page, site)
            page.goto(site + proposed["change"])
            assert page.locator("li.desk-blocker-unreviewed").count() == 6
            for value in (f"{ids['alpha']}-en", f"{ids['alpha']}-zh"):
                page.check(f"input[form=desk-review-read][value='{value}']")
            page.click("button[name=_mark_read_reviewed]")
            page.wait_for_load_state("load")
            assert "Marked 2 texts reviewed." in page.content()
            page.locator(f"#desk-entry-{ids['charlie']} button[name=_mark_reviewed]").first.click()
            page.wait_for_load_state("load")
            assert "Marked 1 text reviewed." in page.content()
            assert page.locator("li.desk-blocker-unreviewed").count() == 3
            assert not page.locator("#desk-unsaved").is_visible()
        finally:
            browser.close()
    reviewed = Summary.objects.filter(reviewed_by=editor).values_list("paper__slug", "language")
    assert sorted(reviewed) == [("alpha", "en"), ("alpha", "zh"), ("charlie", "en")]
