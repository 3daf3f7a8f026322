"""The worst Markdown inputs known, built at the bounds of deepdives.text: the bounds tests
check each is accepted there, and bench/markdown_bounds.py times their rendering."""

from __future__ import annotations

from deepdives.text import (
    MARKDOWN_MAX_BLOCK_CHARS,
    MARKDOWN_MAX_BRACKET_SCAN,
    MARKDOWN_MAX_CHARS,
    MARKDOWN_MAX_NESTING,
    MARKDOWN_MAX_OPENERS,
)

BRACKET_UNITS = ["[", "![", "[\\]", "[a](", "![a](", "[a][", "[`]`", "- ["]
INLINE_UNITS = [
    "*a* ",
    "**a** ",
    "`a` ",
    "`a",
    "_a ",
    "***a ",
    "&amp; ",
    "a  \n",
    "a|b\n",
    "<b>a</b> ",
]
OPENERS = ["<a\n", "<a ", "<div\n\n", "<http://\n", "```a\n", "~~~a\n"]
NESTING_MARKERS = ["> ", "- ", "1. ", "> - "]


def blocks(unit: str, total: int = MARKDOWN_MAX_CHARS, size: int = MARKDOWN_MAX_BLOCK_CHARS):
    """``unit`` repeated in blocks of ``size`` characters, blank-line separated, to ``total``."""
    # Tags open at most MARKDOWN_MAX_OPENERS times in all ("<b" and "</").
    if unit.startswith("<"):
        return " ".join([unit] * (MARKDOWN_MAX_OPENERS // 2)) + "\n\n" + blocks("a ", total - 900)
    block = (unit * (size // len(unit) + 1))[:size].strip() or unit
    count = (total + 2) // (len(block) + 2)
    return "\n\n".join([block] * count)


def bracket_block(unit: str, budget: int = MARKDOWN_MAX_BRACKET_SCAN) -> str:
    """As many ``unit`` in one block as keep the sum of each "[" 's distance to the block's
    end within ``budget``."""
    count = 1
    while scan(unit * (count + 1)) <= budget:
        count += 1
    return unit * count


def scan(block: str) -> int:
    return sum(len(block) - at for at, c in enumerate(block) if c == "[")


def opener_text(opener: str) -> str:
    """``opener`` unclosed as many times as the bound allows, then plain text to the size bound."""
    head = (opener.strip() + "\n\n") * MARKDOWN_MAX_OPENERS
    return head + blocks("word ", total=MARKDOWN_MAX_CHARS - len(head))


def nested_texts(marker: str) -> tuple[str, str]:
    """Blocks of ``marker`` nested to the bound: by markers on one line, and by indentation."""
    line = marker * (MARKDOWN_MAX_NESTING // len(marker.split())) + "x"
    indented = "\n".join("    " * level + "- x" for level in range(MARKDOWN_MAX_NESTING))
    return (
        blocks(line + "\n", size=len(line) + 1),
        blocks(indented + "\n", size=len(indented) + 1),
    )


def everything_at_once() -> str:
    head = "<a\n\n" * MARKDOWN_MAX_OPENERS
    brackets = bracket_block("![")
    rest = MARKDOWN_MAX_CHARS - len(head) - len(brackets) - 2
    return head + brackets + "\n\n" + blocks("*a* ", total=rest)


def worst_inputs() -> dict[str, str]:
    """Every worst input by name."""
    inputs = {f"brackets {unit!r}": bracket_block(unit) for unit in BRACKET_UNITS}
    inputs |= {f"inline {unit!r}": blocks(unit) for unit in INLINE_UNITS}
    inputs |= {f"opener {opener!r}": opener_text(opener) for opener in OPENERS}
    for marker in NESTING_MARKERS:
        by_marker, by_indent = nested_texts(marker)
        inputs[f"nesting {marker!r}"] = by_marker
    inputs["nesting by indentation"] = by_indent
    inputs["everything at once"] = everything_at_once()
    return inputs
