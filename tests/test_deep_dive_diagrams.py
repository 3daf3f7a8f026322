"""Text diagrams in deep dives: drawn counting a Chinese character as two columns (as a
terminal does), they are shown that way, and every box the demo draws closes in those columns."""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path

import pytest

from deepdives.text import render_markdown
from tests.factories import make_daily, make_deep_dive, make_paper
from tests.test_browser import CHROMIUM

CONTENT = Path(__file__).resolve().parent.parent / "deepdives" / "content"
FENCE = re.compile(r"^```.*?^```", re.S | re.M)
SIDES = {"┌": "└", "┐": "┘"}
ARROWS = "▼▲↓↑"


def test_a_wide_character_in_a_code_block_takes_exactly_two_columns():
    html = render_markdown("显存 **x**\n\n```\n│ 位平面 → 3 │\n```\n\n`代码`")
    pre = html.split("<pre", 1)[1].split("</pre>", 1)[0]
    assert '│ <span class="wide">位</span><span class="wide">平</span>' in pre
    assert "→ 3 │" in pre  # arrows and box lines are one column, left as they are
    assert "<p>显存" in html and "<code>代码</code>" in html  # prose is left alone


def _columns(line: str) -> dict[int, str]:
    found, col = {}, 0
    for ch in line:
        found[col] = ch
        col += 2 if unicodedata.east_asian_width(ch) in "WF" else 1
    return found


def _open_boxes(text: str) -> list[str]:
    """Each corner whose side does not reach its bottom corner in the same column."""
    problems = []
    for block in FENCE.findall(text):
        lines = block.split("\n")[1:-1]
        grid = [_columns(line) for line in lines]
        for i, row in enumerate(grid):
            for col, ch in row.items():
                if ch not in SIDES or (i + 1 < len(grid) and grid[i + 1].get(col) in ARROWS):
                    continue  # a connector's corner pointing down is no box
                for j in range(i + 1, len(grid)):
                    if grid[j].get(col) == SIDES[ch]:
                        break
                    if grid[j].get(col) not in ("│", "├", "┤", "┼"):
                        problems.append(f"column {col} of {lines[j]!r}")
                        break
    return problems


@pytest.mark.parametrize("path", sorted(CONTENT.glob("*.md")), ids=lambda p: p.name)
def test_every_box_in_a_demo_diagram_closes(path):
    assert _open_boxes(path.read_text(encoding="utf-8")) == []


DIAGRAM = (CONTENT / "zipfusion.zh.md").read_text(encoding="utf-8")
COLUMNS = """() => {
  const pre = [...document.querySelectorAll(".prose pre")]
    .find((p) => p.textContent.includes("位平面"));
  const rows = {};
  const walker = document.createTreeWalker(pre, NodeFilter.SHOW_TEXT);
  let node;
  while ((node = walker.nextNode())) {
    for (let i = 0; i < node.data.length; i++) {
      if (!"│┌┐└┘".includes(node.data[i])) continue;
      const range = document.createRange();
      range.setStart(node, i);
      range.setEnd(node, i + 1);
      const box = range.getBoundingClientRect();
      (rows[Math.round(box.top)] = rows[Math.round(box.top)] || []).push(Math.round(box.left));
    }
  }
  return Object.values(rows);
}"""


@pytest.mark.browser
@pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian chromium is not installed")
def test_a_chinese_diagram_lines_up_in_the_browser(transactional_db, live_server, browser):
    """The boxes of the ZipFusion diagram, drawn around Chinese words, have their sides one
    above the other on the page (a Chinese glyph in a monospace block is not two columns wide
    by itself, and the Chinese page's letter-spacing widens every column)."""
    paper = make_paper("zipfusion")
    make_daily(papers=[paper])
    make_deep_dive(paper, slug="diagram", body_zh=DIAGRAM, title_zh="图")
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.goto(live_server.url + "/zh/deep-dives/diagram/")
    rows = page.evaluate(COLUMNS)
    page.close()
    assert len(rows) == 5 and all(len(row) == 4 for row in rows), rows
    assert all(row == rows[0] for row in rows), rows
