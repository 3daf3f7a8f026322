"""Markdown in bounded time: a body is rendered only within the bounds of deepdives.text, each
tested at its edge, and the worst inputs known render at those bounds in well under a second
(Python-Markdown took 25 s for "![" * 8000 before)."""

from __future__ import annotations

import re
import time

import markdown  # noqa: F401  (deepdives.text imports it at its first render: not in a timed one)
import pytest
from django.utils import translation

from deepdives.text import (
    MARKDOWN_MAX_BLOCK_CHARS,
    MARKDOWN_MAX_BRACKET_SCAN,
    MARKDOWN_MAX_CHARS,
    MARKDOWN_MAX_NESTING,
    MARKDOWN_MAX_OPENERS,
    MarkdownTooComplex,
    markdown_problem,
    render_markdown,
)

# Generous: the worst of these takes about 0.6 s of processor time, all of them at once 0.7 s.
SECONDS = 1.0


def blocks(unit: str, total: int = MARKDOWN_MAX_CHARS, size: int = MARKDOWN_MAX_BLOCK_CHARS):
    # Tags open at most MARKDOWN_MAX_OPENERS times in all ("<b" and "</").
    if unit.startswith("<"):
        return " ".join([unit] * (MARKDOWN_MAX_OPENERS // 2)) + "\n\n" + blocks("a ", total - 900)
    """``unit`` repeated in blocks of ``size`` characters, blank-line separated, to ``total``."""
    block = (unit * (size // len(unit) + 1))[:size].strip() or unit
    count = (total + 2) // (len(block) + 2)
    return "\n\n".join([block] * count)


def bracket_block(unit: str, budget: int = MARKDOWN_MAX_BRACKET_SCAN) -> str:
    """As many ``unit`` in one block as keep the sum of each "[" 's distance to the block's
    end within ``budget``."""
    count = 1
    while _scan(unit * (count + 1)) <= budget:
        count += 1
    return unit * count


def _scan(block: str) -> int:
    return sum(len(block) - at for at, c in enumerate(block) if c == "[")


def render_time(text: str) -> float:
    assert markdown_problem(text) is None
    # Processor time, which other work on a busy machine does not inflate.
    start = time.process_time()
    render_markdown(text)
    return time.process_time() - start


def test_the_size_bound_at_its_edge():
    text = blocks("word ")
    text += "\n\n" + "a" * (MARKDOWN_MAX_CHARS - len(text) - 2)
    assert len(text) == MARKDOWN_MAX_CHARS and markdown_problem(text) is None
    assert str(MARKDOWN_MAX_CHARS) in markdown_problem(text + "a")


def test_the_block_bound_at_its_edge():
    lines = "\n".join(["a" * 79] * (MARKDOWN_MAX_BLOCK_CHARS // 80))
    block = lines + "\n" + "b" * (MARKDOWN_MAX_BLOCK_CHARS - len(lines) - 1)
    assert len(block) == MARKDOWN_MAX_BLOCK_CHARS
    assert markdown_problem(f"intro\n\n{block}\n \nafter") is None
    assert str(MARKDOWN_MAX_BLOCK_CHARS) in markdown_problem(f"intro\n\n{block}b\n\nafter")
    # A line end "\r" joins lines as Python-Markdown reads them.
    half = "a" * (MARKDOWN_MAX_BLOCK_CHARS // 2)
    assert markdown_problem(f"{half}\r{half}") is not None


def test_the_bracket_bound_at_its_edge():
    # n brackets reach n * (n + 1) / 2 characters in all.
    under = bracket_block("[")
    assert _scan(under) <= MARKDOWN_MAX_BRACKET_SCAN < _scan(under + "[")
    assert markdown_problem(under) is None
    assert markdown_problem(under + "[") is not None
    assert markdown_problem(under[:-1] + "a[") is not None
    # Brackets count to the end of their own block only.
    half = "[" * (len(under) // 2)
    assert markdown_problem(f"{half}\n\n{half}\n\n{half}") is None
    assert markdown_problem(f"{half}\n{half}\n\n{half}") is not None


def test_the_opener_bound_at_its_edge():
    assert markdown_problem("<b>x</b> " * (MARKDOWN_MAX_OPENERS // 2)) is None
    assert markdown_problem("<a " * MARKDOWN_MAX_OPENERS + "\n```\n") is not None
    assert markdown_problem("```\ncode\n```\n" * (MARKDOWN_MAX_OPENERS // 2)) is None
    assert markdown_problem("~~~\ncode\n~~~\n" * (MARKDOWN_MAX_OPENERS // 2 + 1)) is not None
    # A lone "<" before a space, digit or "=" is plain text and costs nothing.
    assert markdown_problem(blocks("a < b <= 3 <4 ")) is None


@pytest.mark.parametrize("marker", ["> ", "- ", "1. ", "* ", "> - "])
def test_the_nesting_bound_at_its_edge(marker):
    depth = MARKDOWN_MAX_NESTING // len(marker.split())
    assert markdown_problem(marker * depth + "x") is None
    assert markdown_problem(marker * (depth + 1) + "x") is not None


def test_indentation_counts_four_columns_a_level():
    assert markdown_problem(" " * 4 * (MARKDOWN_MAX_NESTING - 1) + "- x") is None
    assert markdown_problem(" " * 4 * (MARKDOWN_MAX_NESTING - 1) + "- - x") is not None
    assert markdown_problem("\t" * (MARKDOWN_MAX_NESTING - 1) + "> x") is None
    assert markdown_problem("\t" * MARKDOWN_MAX_NESTING + "> x") is not None
    # Indented code is not nested.
    assert markdown_problem(" " * 4 * (MARKDOWN_MAX_NESTING + 1) + "x") is None


def test_render_refuses_a_text_over_a_bound():
    with pytest.raises(MarkdownTooComplex):
        render_markdown("![" * 8000)


@pytest.mark.parametrize("unit", ["[", "![", "[\\]", "[a](", "![a](", "[a][", "[`]`", "- ["])
def test_unclosed_brackets_render_fast_at_the_bound(unit):
    text = bracket_block(unit)
    assert markdown_problem(text + unit) is not None
    assert render_time(text) < SECONDS


@pytest.mark.parametrize(
    "unit",
    ["*a* ", "**a** ", "`a` ", "`a", "_a ", "***a ", "&amp; ", "a  \n", "a|b\n", "<b>a</b> "],
)
def test_blocks_full_of_inline_markup_render_fast_at_the_bound(unit):
    assert render_time(blocks(unit)) < SECONDS


@pytest.mark.parametrize("opener", ["<a\n", "<a ", "<div\n\n", "<http://\n", "```a\n", "~~~a\n"])
def test_unclosed_tags_and_fences_render_fast_at_the_bound(opener):
    head = (opener.strip() + "\n\n") * MARKDOWN_MAX_OPENERS
    text = head + blocks("word ", total=MARKDOWN_MAX_CHARS - len(head))
    assert markdown_problem(text + opener) is not None
    assert render_time(text) < SECONDS


@pytest.mark.parametrize("marker", ["> ", "- ", "1. ", "> - "])
def test_deep_nesting_renders_fast_at_the_bound(marker):
    line = marker * (MARKDOWN_MAX_NESTING // len(marker.split())) + "x"
    assert render_time(blocks(line + "\n", size=len(line) + 1)) < SECONDS
    indented = "\n".join("    " * level + "- x" for level in range(MARKDOWN_MAX_NESTING))
    assert markdown_problem(indented + "\n" + "    " * MARKDOWN_MAX_NESTING + "- x")
    assert render_time(blocks(indented + "\n", size=len(indented) + 1)) < SECONDS


def test_everything_at_once_renders_fast():
    head = "<a\n\n" * MARKDOWN_MAX_OPENERS
    brackets = bracket_block("![")
    rest = MARKDOWN_MAX_CHARS - len(head) - len(brackets) - 2
    text = head + brackets + "\n\n" + blocks("*a* ", total=rest)
    assert render_time(text) < SECONDS


def test_each_bound_tells_a_chinese_editor_in_chinese():
    too_much = {
        "size": "a" * (MARKDOWN_MAX_CHARS + 1),
        "openers": "<a " * (MARKDOWN_MAX_OPENERS + 1),
        "block": "a" * (MARKDOWN_MAX_BLOCK_CHARS + 1),
        "nesting": "> " * (MARKDOWN_MAX_NESTING + 1) + "x",
        "brackets": bracket_block("[") + "[",
    }
    for bound, text in too_much.items():
        english = markdown_problem(text)
        with translation.override("zh"):
            chinese = markdown_problem(text)
        assert english and chinese and chinese != english, bound
        assert re.search(r"[\u4e00-\u9fff]", chinese), bound
