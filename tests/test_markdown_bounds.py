"""Markdown in bounded time: a body is rendered only within the bounds of deepdives.text, each
tested at its edge, and the worst inputs known are accepted at those bounds and refused past
them (Python-Markdown took 25 s for "![" * 8000 before). How long those inputs take to render
is bench/markdown_bounds.py's to measure."""

from __future__ import annotations

import re

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
from tests.markdown_inputs import (
    BRACKET_UNITS,
    INLINE_UNITS,
    NESTING_MARKERS,
    OPENERS,
    blocks,
    bracket_block,
    everything_at_once,
    nested_texts,
    opener_text,
    scan,
)


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
    assert scan(under) <= MARKDOWN_MAX_BRACKET_SCAN < scan(under + "[")
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


@pytest.mark.parametrize("unit", BRACKET_UNITS)
def test_unclosed_brackets_are_accepted_to_the_bound_and_refused_past_it(unit):
    text = bracket_block(unit)
    assert markdown_problem(text) is None
    assert markdown_problem(text + unit) is not None


@pytest.mark.parametrize("unit", INLINE_UNITS)
def test_blocks_full_of_inline_markup_are_accepted_to_the_size_bound(unit):
    text = blocks(unit)
    assert len(text) > MARKDOWN_MAX_CHARS - MARKDOWN_MAX_BLOCK_CHARS
    assert markdown_problem(text) is None


@pytest.mark.parametrize("opener", OPENERS)
def test_unclosed_tags_and_fences_are_accepted_to_the_bound_and_refused_past_it(opener):
    assert markdown_problem(opener_text(opener)) is None
    # Past the bound by one opener, far inside the size bound.
    head = (opener.strip() + "\n\n") * MARKDOWN_MAX_OPENERS
    assert markdown_problem(head + opener) is not None


@pytest.mark.parametrize("marker", NESTING_MARKERS)
def test_deep_nesting_is_accepted_to_the_bound_and_refused_past_it(marker):
    by_marker, by_indent = nested_texts(marker)
    assert markdown_problem(by_marker) is None
    assert markdown_problem(marker + by_marker) is not None
    assert markdown_problem(by_indent) is None
    assert markdown_problem(by_indent + "\n" + "    " * MARKDOWN_MAX_NESTING + "- x")


def test_everything_at_once_is_accepted_and_renders():
    text = everything_at_once()
    assert markdown_problem(text) is None
    assert render_markdown(text).startswith("<p>")


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
