"""What every grounding check shares: the flag it returns, the languages, text normalised
character for character (offsets stay valid) and the quoting of a detail sentence."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

LANGUAGES = ("en", "zh")
FLAG_KINDS = ("number", "organization", "venue", "glossary")
NAME_KINDS = ("organization", "venue")
# The longest quoted span a detail sentence repeats; keeps every detail well under the
# 300 characters a stored flag's detail holds.
QUOTE_MAX_CHARS = 60


@dataclass(frozen=True)
class GroundingFlag:
    kind: str  # "number" | "organization" | "venue" | "glossary"
    text: str  # the offending span as it appears in the draft
    start: int  # offsets into the checked text
    end: int
    detail: str  # one sentence for the editor


# Character for character (offsets stay valid): full-width ASCII to ASCII (except the
# full-width comma, which is Chinese punctuation, not a thousands separator), dashes and the
# minus sign to "-", odd spaces to " ".
_TRANSLATE = {i: i - 0xFEE0 for i in range(0xFF01, 0xFF5F) if i != 0xFF0C}
_TRANSLATE.update(
    {
        0x2212: "-",
        0x2010: "-",
        0x2011: "-",
        0x2012: "-",
        0x2013: "-",
        0x00A0: " ",
        0x2009: " ",
        0x202F: " ",
        0x3000: " ",
        0x2019: "'",
    }
)


_TRANSLATE_LOWER = {**_TRANSLATE, **{i: i + 32 for i in range(0x41, 0x5B)}}
for _wide in range(0xFF21, 0xFF3B):  # full-width capitals
    _TRANSLATE_LOWER[_wide] = _wide - 0xFEE0 + 32


def normalise(text: str) -> str:
    return text.translate(_TRANSLATE)


def lowercased(text: str) -> str:
    """``normalise`` with ASCII letters in lower case; same length, so offsets hold."""
    return text.translate(_TRANSLATE_LOWER)


_LOWER_WORD_RE = re.compile(r"[a-z0-9]+")


@functools.lru_cache(maxsize=1024)
def _word_re(word: str) -> re.Pattern:
    # the word first, then the boundary behind it: a literal start lets the search skip ahead
    word = re.escape(word)
    return re.compile(rf"{word}(?<![a-z0-9]{word})(?![a-z0-9])")


def word_hits(lowered: str, vocabulary: frozenset[str] | dict) -> list[tuple[int, int, str]]:
    """Where the words of ``vocabulary`` occur in ``lowered``, in order: one set operation
    over the text's words, then a search for the few that occur."""
    present = vocabulary & set(_LOWER_WORD_RE.findall(lowered)) if vocabulary else ()
    hits = [
        (m.start(), m.end(), word) for word in present for m in _word_re(word).finditer(lowered)
    ]
    hits.sort()
    return hits


ALNUM = "A-Za-z0-9"


def check_language(language: str) -> None:
    if language not in LANGUAGES:
        raise ValueError(f"language must be one of {', '.join(LANGUAGES)}, not {language!r}")


def quote(text: str) -> str:
    text = " ".join(text.split())
    if len(text) > QUOTE_MAX_CHARS:
        text = text[: QUOTE_MAX_CHARS - 1] + "…"
    return f"“{text}”"
