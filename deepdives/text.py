"""Rendering and measuring deep-dive Markdown.

Markdown is converted with Python-Markdown and the HTML is then cleaned with nh3 (ammonia):
only an allow-list of tags and attributes survives, links keep only http(s)/mailto and
relative URLs, so no script, event handler, style or javascript:/data: URL reaches a page.
"""

from __future__ import annotations

import math
import re

import nh3
from django.utils.html import linebreaks
from django.utils.translation import gettext as _

from papers.languages import Language

ENGLISH_WORDS_PER_MINUTE = 220
CHINESE_CHARS_PER_MINUTE = 400

_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_LATIN_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9'’\-.]*")
_FENCED = re.compile(r"^(```|~~~).*?^\1", re.S | re.M)

ALLOWED_TAGS = {
    "a",
    "abbr",
    "b",
    "blockquote",
    "br",
    "caption",
    "code",
    "dd",
    "del",
    "div",
    "dl",
    "dt",
    "em",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "hr",
    "i",
    "kbd",
    "li",
    "ol",
    "p",
    "pre",
    "span",
    "strong",
    "sub",
    "sup",
    "table",
    "tbody",
    "td",
    "tfoot",
    "th",
    "thead",
    "tr",
    "ul",
}
ALLOWED_ATTRIBUTES = {
    "a": {"href", "title"},
    "abbr": {"title"},
    "code": {"class"},
    "div": {"class"},
    "span": {"class"},
    "td": {"align"},
    "th": {"align"},
    "h2": {"id"},
    "h3": {"id"},
    "h4": {"id"},
}
ALLOWED_URL_SCHEMES = {"http", "https", "mailto"}
EXTENSIONS = ["fenced_code", "tables", "sane_lists", "toc", "abbr"]

# Python-Markdown takes time super-linear in some inputs and recurses once per nesting level,
# and no thread can be stopped once it renders; so a body is rendered only within these
# bounds, under which the worst inputs known render in well under a second
# (tests/test_markdown_bounds.py). Demo bodies (with their run citations): at most 13,630
# characters, blocks of 2,341, bracket scans of 1,781, one tag opener and a nesting of 13.
MARKDOWN_MAX_CHARS = 30_000
# The longest run of lines without a blank line: inline parsing rebuilds a paragraph's text
# once per link, emphasis or code span in it.
MARKDOWN_MAX_BLOCK_CHARS = 4_000
# Summed over every "[", the characters from it to the end of its block: a link's text and
# target are looked for by scanning forward, to the block's end when they never close.
MARKDOWN_MAX_BRACKET_SCAN = 100_000
# "<" before a letter, "/", "!" or "?" and lines opening a ``` or ~~~ fence: one that never
# closes is scanned to the end of the whole text.
MARKDOWN_MAX_OPENERS = 60
# Quote and list markers before a line's text, and each four columns of indentation before
# them (each level is parsed again per level below it).
MARKDOWN_MAX_NESTING = 8

_TAG_OPENER = re.compile(r"<[A-Za-z/!?]|^(?:```|~~~)", re.M)
_LINE_PREFIX = re.compile(r"(?:[ \t]*(?:>|(?:[-*+]|\d{1,9}[.)])(?=[ \t]|$)))*[ \t]*")
_BRACKET = re.compile(r"\[")
_MARKER = re.compile(r">|(?:[-*+]|\d{1,9}[.)])(?=[ \t]|$)")


class MarkdownTooComplex(ValueError):
    """A body over one of the bounds above; its message says which, for an editor."""


def markdown_problem(text: str) -> str | None:
    """Why ``text`` may not be rendered (a sentence for its editor), or None: each bound
    above, checked in time linear in the text."""
    if len(text) > MARKDOWN_MAX_CHARS:
        return _("A Markdown body may have at most %(n)d characters.") % {"n": MARKDOWN_MAX_CHARS}
    if len(_TAG_OPENER.findall(text)) > MARKDOWN_MAX_OPENERS:
        return _(
            "A Markdown body may open at most %(n)d HTML tags and code fences "
            "(write a lone < as &lt;)."
        ) % {"n": MARKDOWN_MAX_OPENERS}
    # Blank lines as Python-Markdown reads them: only spaces and tabs, "\r" is a line end.
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    block = 0
    scan = 0
    for line in reversed(lines):
        if not line.strip(" \t"):
            block = 0
            continue
        if block:
            block += 1  # the line end between this line and the next
        # Going backwards, each "[" is this far from its block's end.
        scan += sum(block + len(line) - m.start() for m in _BRACKET.finditer(line))
        block += len(line)
        if block > MARKDOWN_MAX_BLOCK_CHARS:
            return _(
                "A paragraph, list or table may have at most %(n)d characters; "
                "separate it with a blank line."
            ) % {"n": MARKDOWN_MAX_BLOCK_CHARS}
        prefix = _LINE_PREFIX.match(line).group(0)
        markers = len(_MARKER.findall(prefix))
        indent = len(prefix) - len(prefix.lstrip(" \t"))
        depth = markers + len(prefix[:indent].expandtabs(4)) // 4 if markers else 0
        if depth > MARKDOWN_MAX_NESTING:
            return _("Quotes and lists may be nested at most %(n)d deep.") % {
                "n": MARKDOWN_MAX_NESTING
            }
    if scan > MARKDOWN_MAX_BRACKET_SCAN:
        return _("Too many unclosed or long-reaching [ brackets; write a lone [ as \\[.")
    return None


def render_markdown(text: str) -> str:
    """Markdown → sanitised HTML; raw HTML in the source is cleaned to the allow-list.
    Raises ``MarkdownTooComplex`` for a text over the bounds above."""
    return _render(text)[0]


def render_markdown_with_toc(text: str) -> tuple[str, list[dict]]:
    """``render_markdown`` and the toc extension's headings ([{level, id, name, children}]).
    A text over the bounds is shown as escaped plain paragraphs, without headings, so a
    page never fails on a body stored before a bound was set."""
    try:
        return _render(text)
    except MarkdownTooComplex:
        return linebreaks(text, autoescape=True), []


def _render(text: str) -> tuple[str, list[dict]]:
    problem = markdown_problem(text)
    if problem is not None:
        raise MarkdownTooComplex(problem)
    # Imported here: every process imports this module at start, few of them render.
    import markdown

    md = markdown.Markdown(
        extensions=EXTENSIONS,
        extension_configs={"toc": {"permalink": False}},
        output_format="html",
    )
    html = md.convert(text)
    clean = nh3.clean(
        html,
        tags=ALLOWED_TAGS,
        attributes=ALLOWED_ATTRIBUTES,
        url_schemes=ALLOWED_URL_SCHEMES,
        link_rel="noopener noreferrer nofollow",
        strip_comments=True,
    )
    # Code and diagrams keep their lines and scroll sideways on a phone; a scrolling block
    # must take the keyboard's focus to be scrolled without a pointer.
    clean = _PRE.sub(lambda m: _wide_columns(m.group(0)), clean)
    return clean.replace("<pre>", '<pre tabindex="0">'), md.toc_tokens


_PRE = re.compile(r"<pre>.*?</pre>", re.S)
_TAG = re.compile(r"(<[^>]*>)")
# East Asian wide and fullwidth characters: two columns of a terminal (and of a diagram).
_WIDE = re.compile(
    "([\u1100-\u115f\u2e80-\u303e\u3041-\u33ff\u3400-\u4dbf\u4e00-\u9fff"
    "\ua000-\ua4cf\uac00-\ud7a3\uf900-\ufaff\ufe30-\ufe4f\uff00-\uff60\uffe0-\uffe6])"
)


def _wide_columns(pre: str) -> str:
    """Each wide character of a code block in a box of exactly two columns (``span.wide``):
    a diagram is drawn counting them as two, as a terminal does, but no monospace font a
    browser falls back to for Chinese draws them at twice its Latin width."""
    parts = _TAG.split(pre)
    return "".join(
        part if part.startswith("<") else _WIDE.sub(r'<span class="wide">\1</span>', part)
        for part in parts
    )


def reading_minutes(text: str, language: str) -> int:
    """Minutes to read ``text``: words for English, characters for Chinese (code excluded)."""
    if not text.strip():
        return 0
    prose = _FENCED.sub(" ", text)
    cjk = len(_CJK.findall(prose))
    latin = len(_LATIN_WORD.findall(_CJK.sub(" ", prose)))
    if language == Language.ZH:
        minutes = cjk / CHINESE_CHARS_PER_MINUTE + latin / ENGLISH_WORDS_PER_MINUTE
    else:
        minutes = (latin + cjk / 2) / ENGLISH_WORDS_PER_MINUTE
    return max(1, math.ceil(minutes))
