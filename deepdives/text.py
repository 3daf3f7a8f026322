"""Rendering and measuring deep-dive Markdown.

Markdown is converted with Python-Markdown and the HTML is then cleaned with nh3 (ammonia):
only an allow-list of tags and attributes survives, links keep only http(s)/mailto and
relative URLs, so no script, event handler, style or javascript:/data: URL reaches a page.
"""

from __future__ import annotations

import math
import re

import markdown
import nh3

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


def render_markdown(text: str) -> str:
    """Markdown → sanitised HTML. Raw HTML in the source is escaped, then cleaned again."""
    html = markdown.markdown(
        text,
        extensions=["fenced_code", "tables", "sane_lists", "toc", "abbr"],
        extension_configs={"toc": {"permalink": False}},
        output_format="html",
    )
    return nh3.clean(
        html,
        tags=ALLOWED_TAGS,
        attributes=ALLOWED_ATTRIBUTES,
        url_schemes=ALLOWED_URL_SCHEMES,
        link_rel="noopener noreferrer nofollow",
        strip_comments=True,
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
