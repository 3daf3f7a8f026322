"""Deep-dive pages: Markdown rendered, hostile HTML removed, reading time per language."""

from __future__ import annotations

import time

import pytest
from django.core.exceptions import ValidationError

from deepdives.text import reading_minutes, render_markdown
from tests.factories import make_daily, make_deep_dive, make_paper

HOSTILE = """# {title}

<script>alert('pwned')</script>
<img src="x.png" onerror="alert(1)">
<p onclick="steal()" style="position:fixed;top:0">click</p>
<a href="javascript:alert(2)">js link</a>
[md js](javascript:alert(3)) and [md data](data:text/html;base64,PHNjcmlwdD4=)
<a href="data:text/html,<script>alert(4)</script>">data link</a>
<iframe src="https://evil.example/"></iframe>
<style>body {{ display: none }}</style>
<svg onload="alert(5)"><circle r="1"/></svg>
<a href="JaVaScRiPt:alert(6)">mixed case</a>
<a href="&#106;avascript:alert(7)">entity</a>

Safe [link](https://example.org/paper) and `inline code`.

```html
<script>shown as text</script>
```
"""


@pytest.fixture
def hostile_dive(db):
    paper = make_paper("hostile")
    make_daily(papers=[paper])
    return make_deep_dive(
        paper,
        slug="hostile-dive",
        body_en=HOSTILE.format(title="English"),
        body_zh=HOSTILE.format(title="中文") + "\n这是一段中文正文。",
    )


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_it_strips_scripts_handlers_styles_and_dangerous_urls(hostile_dive, anonymous, lang):
    response = anonymous.get(f"/{lang}/deep-dives/hostile-dive/")
    assert response.status_code == 200
    html = response.content.decode()
    body = html.split('<div class="prose"', 1)[1].split("</div>", 1)[0]
    lowered = body.lower()
    for bad in (
        "<script",
        "onerror",
        "onclick",
        "onload",
        "javascript:",
        "data:",
        "<iframe",
        "<style",
        "style=",
        "<svg",
        "alert(1)",
        "alert(2)",
    ):
        assert bad not in lowered, bad
    assert 'href="https://example.org/paper"' in body
    assert "<code>inline code</code>" in body
    # the fenced block survives as escaped text, not as markup
    assert "&lt;script&gt;shown as text&lt;/script&gt;" in body


def test_it_renders_tables_and_headings():
    html = render_markdown("## Results\n\n| a | b |\n|---|---|\n| 1 | 2 |\n")
    assert '<h2 id="results">Results</h2>' in html
    assert "<table>" in html and "<td>1</td>" in html


def test_it_computes_reading_time_per_language():
    assert reading_minutes(" ".join(["word"] * 440), "en") == 2
    assert reading_minutes("字" * 1200, "zh") == 3
    assert reading_minutes("", "en") == 0
    # code does not count as reading
    assert reading_minutes("word\n\n```\n" + "code " * 5000 + "\n```\n", "en") == 1


def test_it_shows_each_languages_own_reading_time(db, anonymous):
    paper = make_paper("timed")
    make_daily(papers=[paper])
    make_deep_dive(paper, slug="timed-dive", body_en="word " * 1100, body_zh="字" * 400)
    assert "5 min read" in anonymous.get("/en/deep-dives/timed-dive/").content.decode()
    assert "阅读约 1 分钟" in anonymous.get("/zh/deep-dives/timed-dive/").content.decode()


def test_it_falls_back_to_the_other_language_with_a_note(db, anonymous):
    paper = make_paper("english-only")
    make_daily(papers=[paper])
    make_deep_dive(paper, slug="en-only", body_en="Only English here.", body_zh="")
    html = anonymous.get("/zh/deep-dives/en-only/").content.decode()
    assert "尚未翻译" in html
    assert '<div class="prose" lang="en">' in html
    assert "尚未翻译" not in anonymous.get("/en/deep-dives/en-only/").content.decode()


def test_a_body_over_the_rendering_bounds_shows_as_plain_text_fast(db, anonymous):
    # Stored before the bounds (or past the form): the page shows it, escaped, not a 500.
    paper = make_paper("pathological")
    make_daily(papers=[paper])
    body = "## Heading\n\n<b>bold</b> " + "![" * 8000
    make_deep_dive(paper, slug="slow-dive", body_en=body, body_zh="")
    start = time.perf_counter()
    response = anonymous.get("/en/deep-dives/slow-dive/")
    assert time.perf_counter() - start < 1
    assert response.status_code == 200
    html = response.content.decode()
    assert "&lt;b&gt;bold&lt;/b&gt; ![![" in html
    assert "<b>bold</b>" not in html


@pytest.mark.django_db
def test_saving_a_body_over_the_bounds_says_why(editor_client):
    paper = make_paper("refused")
    dive = make_deep_dive(paper, slug="refused-dive", body_en="Fine.", body_zh="")
    dive.body_en = "[" * 8000
    with pytest.raises(ValidationError) as caught:
        dive.full_clean()
    assert "blank line" in caught.value.message_dict["body_en"][0]
    dive.body_en = "[" * 400
    dive.full_clean()


def test_a_diagram_keeps_its_lines_and_can_be_scrolled_by_keyboard():
    from deepdives.text import render_markdown

    html = render_markdown("```\nDRAM [t7 t2 t9 ...] [t4 ...]      CoLoc\n```")
    assert '<pre tabindex="0"><code>DRAM [t7 t2 t9 ...]' in html
