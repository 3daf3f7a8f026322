"""Marking the words a query matched, safely.

Every piece of text is HTML-escaped before it is wrapped in ``<mark>``; the result is a
``SafeString`` made only of escaped text and our own tags. Latin-script words are matched the
way the index matches them (stemmed, camel-case parts); Chinese query words are found
wherever they occur, which needs no segmentation and stays fast on a page of results.
"""

from __future__ import annotations

import functools
import re

from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

from search.service import Highlighter
from search.text import WORD_CHAR, WORD_RE

EXCERPT_CHARS = 180
# How much text to keep before the first match, so it is read in context.
LEAD_CHARS = 50
BREAKS = ("。", "；", "，", ". ", "; ", ", ", " ")
# Matched words whose patterns are kept (a query's words and their forms: a few each).
WORDS_KEPT = 1_000
# ``WORD_RE`` within ASCII text: a run of ASCII letters and digits.
_ASCII_WORD_RE = re.compile(r"[A-Za-z0-9]+")


def spans(text: str, hl: Highlighter, matched: set[str] | None = None) -> list[tuple[int, int]]:
    """Where ``text`` holds a matched word: sorted, non-overlapping (start, end) pairs.
    ``matched``: its Latin-script words that matched, if already worked out
    (``matched_latin``)."""
    # A results page asks this of some 10,000 words, most of which match nothing: the
    # text's distinct words are asked at once (the highlighter works out those it has not
    # seen), and only the words that matched are looked for again, where they stand alone
    # (a run of ``WORD_RE``, as the words were found).
    found: list[tuple[int, int]] = []
    for word in matched_latin(text, hl) if matched is None else matched:
        found.extend(run.span() for run in _alone(word).finditer(text))
    for word in hl.han_words:
        at = text.find(word)
        while at != -1:
            found.append((at, at + len(word)))
            at = text.find(word, at + len(word))
    return _merge(sorted(found))


def matched_latin(text: str, hl: Highlighter) -> set[str]:
    """The Latin-script words of ``text`` (its runs of ``WORD_RE``) that matched. Whitespace
    is never part of one: they are the same once the text's spaces are collapsed."""
    # Most English texts are ASCII (which a str knows without a look), where a run is one
    # of ASCII letters and digits: found from a plain class, in some 60% of the time.
    return hl.matched(set((_ASCII_WORD_RE if text.isascii() else WORD_RE).findall(text)))


@functools.lru_cache(maxsize=WORDS_KEPT)
def _alone(word: str) -> re.Pattern:
    """``word`` where it is a whole run of letters and digits (as ``WORD_RE`` finds runs).

    The word comes first and what stands before it is looked at after it matched (a
    lookbehind over the character before and the word): a pattern that opens with the word
    is searched for as a literal, where one that opened with the lookbehind tried it at
    every character of the text (ten times as long over a page's summaries)."""
    literal = re.escape(word)
    return re.compile(rf"{literal}(?<!{WORD_CHAR}{literal})(?!{WORD_CHAR})")


def _merge(found: list[tuple[int, int]]) -> list[tuple[int, int]]:
    merged: list[tuple[int, int]] = []
    for start, end in found:
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged


def mark(text: str, found: list[tuple[int, int]]) -> SafeString:
    """``text`` escaped, with each span wrapped in ``<mark>``."""
    out, at = [], 0
    for start, end in found:
        out.append(escape(text[at:start]))
        out.append(f"<mark>{escape(text[start:end])}</mark>")
        at = end
    out.append(escape(text[at:]))
    return mark_safe("".join(out))


def matched_words(text: str, found: list[tuple[int, int]]) -> int:
    """How many different words the spans cover (to pick the excerpt that shows most)."""
    return len({text[a:b].casefold() for a, b in found})


def highlight(text: str, hl: Highlighter) -> SafeString:
    """The whole of ``text`` with its matched words marked (a title, say)."""
    return mark(text, spans(text, hl))


def best_excerpt(
    texts: list[tuple[str, str]], hl: Highlighter, length: int = EXCERPT_CHARS
) -> tuple[SafeString, str, int] | None:
    """The excerpt of whichever ``(text, language)`` shows the most different matched
    words (the first one on a tie), with its language and its place in ``texts``; None
    when none matched."""
    best, best_words = None, 0
    for at, (text, language) in enumerate(texts):
        # Counted in the text as it is: collapsing its spaces neither joins marks nor parts
        # them (no word, and no query word, holds a space).
        matched = matched_latin(text, hl)
        if hl.han_words:  # the marks are counted (touching ones are joined: one word)
            words = matched_words(text, spans(text, hl, matched))
        else:  # each mark a whole run, none touching: the different ones are the words
            words = len({word.casefold() for word in matched})
        if words > best_words:
            best, best_words = (text, matched, language, at), words
    if best is None:
        return None
    # Only the chosen text is looked through for its marks (a result has three texts).
    text, matched, language, at = best
    text = " ".join(text.split())
    return _window(text, spans(text, hl, matched), length), language, at


def excerpt(text: str, hl: Highlighter, length: int = EXCERPT_CHARS) -> SafeString | None:
    """About ``length`` characters of ``text`` around its first matched word, marked and
    with "…" where it was cut; None when nothing in ``text`` matched."""
    text = " ".join(text.split())
    found = spans(text, hl)
    if not found:
        return None
    return _window(text, found, length)


def _window(text: str, found: list[tuple[int, int]], length: int) -> SafeString:
    first = found[0][0]
    start = 0 if first <= LEAD_CHARS else _snap_start(text, first - LEAD_CHARS, first)
    end = min(len(text), start + length)
    if end < len(text):
        end = _snap_end(text, start + length // 2, end)
    window = [
        (max(a, start) - start, min(b, end) - start) for a, b in found if a < end and b > start
    ]
    body = mark(text[start:end], window)
    prefix = "…" if start > 0 else ""
    suffix = "…" if end < len(text) else ""
    return mark_safe(f"{prefix}{body}{suffix}")


def _snap_start(text: str, low: int, first: int) -> int:
    """Start after the last break between ``low`` and the first match."""
    for brk in BREAKS:
        at = text.rfind(brk, low, first)
        if at != -1:
            return at + len(brk)
    return low


def _snap_end(text: str, low: int, high: int) -> int:
    """End at the last break between ``low`` and ``high``."""
    for brk in BREAKS:
        at = text.rfind(brk, low, high)
        if at != -1:
            return at + len(brk.rstrip()) if brk.strip() else at
    return high
