"""Checks of a model's answer, per language, before anything of it is used.

The bounds are deliberately far outside ../shared/CONTENT.md (80–130 English words, 150–260
Chinese characters): they catch an answer that is broken (empty, truncated, a whole page, the
wrong language), not one that is merely a little long. Every bound is here, at the top.
Grounding (numbers, names, glossary) is the service's job, after drafting.
"""

from __future__ import annotations

import json
import re
import unicodedata
from dataclasses import dataclass, field

from papers.drafting.base import LanguageDraft
from papers.languages import LANGUAGE_CODES
from papers.models import Paper, Summary

LANGUAGES = LANGUAGE_CODES

# A summary's length: English words, Chinese (CJK) characters.
EN_SUMMARY_WORDS = (40, 220)
ZH_SUMMARY_CHARS = (80, 450)
# The headline and the takeaway must fit their columns.
HEADLINE_MAX_CHARS = Summary._meta.get_field("headline").max_length  # 200
TAKEAWAY_MAX_CHARS = Summary._meta.get_field("takeaway").max_length  # 300
# The takeaway is one short sentence.
EN_TAKEAWAY_MAX_WORDS = 40
ZH_TAKEAWAY_MAX_CHARS = 80
# Headline numbers: a few, each a figure with its conditions.
NUMBERS_MAX = 8
NUMBER_MAX_CHARS = 200
SHORT_NAME_MAX_CHARS = Paper._meta.get_field("short_name").max_length  # 80
# An intro: three to five sentences.
EN_INTRO_WORDS = (25, 250)
ZH_INTRO_CHARS = (40, 500)
# Which language a text is in: the share of CJK characters among its "tokens" (each CJK
# character, each Latin word). Chinese prose that keeps KV cache, MoE or SGLang in Latin
# letters stays above 0.75 (the demo texts: 0.81–0.97); English that quotes a Chinese term,
# even in a short headline, stays below 0.2.
ZH_MIN_CJK_SHARE = 0.5
EN_MAX_CJK_SHARE = 0.25
# A Chinese text may keep terms and names in Latin letters (KV cache, SGLang, "time to first
# token") but not whole English sentences, which the CJK share alone lets through: a run of
# at least this many Latin words with at least this many English function words is one.
ZH_ENGLISH_RUN_MIN_WORDS = 6
ZH_ENGLISH_RUN_MIN_FUNCTION_WORDS = 2
_FUNCTION_WORDS_TEXT = (
    "the a an is are was were be been it its this that these those we our they their of to "
    "and or with by for in on from which as can than while when has have not"
)
_FUNCTION_WORDS = frozenset(_FUNCTION_WORDS_TEXT.split())

_CJK = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_CJK_CHAR = re.compile(f"[{_CJK}]")
_LATIN_WORD = re.compile(r"[A-Za-z0-9]+(?:[-'’.][A-Za-z0-9]+)*")
_QUOTES = str.maketrans(dict.fromkeys("“”„‟«»「」『』″", '"') | dict.fromkeys("‘’‚‛′", "'"))
_SPACE = re.compile(r"\s+")
# Latin words joined by spaces and the punctuation English uses inside a sentence.
_LATIN_RUN = re.compile(
    r"[A-Za-z0-9][\w'’.%×/-]*(?:[ ,;:()\"“”‘’]+[A-Za-z0-9][\w'’.%×/-]*)+", re.ASCII
)


def english_sentence(text: str) -> str | None:
    """The first run of ``text`` that reads as an English sentence, or None."""
    for m in _LATIN_RUN.finditer(text):
        words = _LATIN_WORD.findall(m[0])
        function = sum(1 for w in words if w.casefold() in _FUNCTION_WORDS)
        if len(words) >= ZH_ENGLISH_RUN_MIN_WORDS and function >= ZH_ENGLISH_RUN_MIN_FUNCTION_WORDS:
            return m[0]
    return None


def english_words(text: str) -> int:
    return len(_LATIN_WORD.findall(text))


def cjk_chars(text: str) -> int:
    return len(_CJK_CHAR.findall(text))


def cjk_share(text: str) -> float:
    """CJK characters over CJK characters plus Latin words (0 for text with neither)."""
    cjk = cjk_chars(text)
    latin = len(_LATIN_WORD.findall(_CJK_CHAR.sub(" ", text)))
    return cjk / (cjk + latin) if cjk + latin else 0.0


def _normalised_with_positions(text: str) -> tuple[str, list[int]]:
    """``text`` as compared for "the takeaway occurs in the summary" (compatibility forms
    folded, quotes unified, whitespace removed: Chinese spacing around Latin words varies),
    and for each character of the result the index of the character it came from."""
    chars: list[str] = []
    positions: list[int] = []
    for index, char in enumerate(text):
        if char.isspace():
            continue
        for folded in unicodedata.normalize("NFKC", char).translate(_QUOTES):
            if not folded.isspace():
                chars.append(folded)
                positions.append(index)
    return "".join(chars), positions


_END = ".。!！"


def takeaway_span(takeaway: str, summary: str) -> str | None:
    """The part of ``summary`` that is the takeaway, up to whitespace, quotes and a final
    full stop; None when the summary does not contain it. The drafter stores this span, so
    the stored takeaway occurs verbatim in the stored summary."""
    if takeaway and takeaway in summary:
        return takeaway
    needle, _ = _normalised_with_positions(takeaway)
    needle = needle.rstrip(_END)
    haystack, positions = _normalised_with_positions(summary)
    at = haystack.find(needle) if needle else -1
    if at < 0:
        return None
    start, end = positions[at], positions[at + len(needle) - 1] + 1
    if end < len(summary) and summary[end] in _END:
        end += 1
    return summary[start:end]


def _language_problem(language: str, text: str, what: str) -> str | None:
    share = cjk_share(text)
    if language == "zh" and share < ZH_MIN_CJK_SHARE:
        return f"the zh {what} is not Chinese ({share:.0%} CJK, at least {ZH_MIN_CJK_SHARE:.0%})"
    if language == "zh" and (sentence := english_sentence(text)):
        quoted = sentence if len(sentence) <= 60 else sentence[:59] + "…"
        return (
            f"the zh {what} has an English sentence (“{quoted}”): write it in Chinese; "
            "only terms and names stay in Latin letters"
        )
    if language == "en" and share > EN_MAX_CJK_SHARE:
        return f"the en {what} is Chinese, not English ({share:.0%} CJK)"
    return None


def _length_problem(language: str, text: str, what: str, bounds: tuple[int, int]) -> str | None:
    low, high = bounds
    count, unit = (
        (english_words(text), "words") if language == "en" else (cjk_chars(text), "characters")
    )
    if not low <= count <= high:
        return f"the {language} {what} has {count} {unit}, outside {low}–{high}"
    return None


def language_problems(language: str, data: object) -> tuple[LanguageDraft | None, list[str]]:
    """Check one language's object of a ``paper_summary`` answer."""
    if not isinstance(data, dict):
        return None, [f"{language} is missing or not an object"]
    problems = []
    texts: dict[str, str] = {}
    for key in ("headline", "summary", "takeaway"):
        value = data.get(key)
        if not isinstance(value, str) or not value.strip():
            problems.append(f"{language}.{key} is missing or not a non-empty string")
        else:
            texts[key] = _SPACE.sub(" ", value).strip() if key != "summary" else value.strip()
    numbers = data.get("numbers")
    if not isinstance(numbers, list) or not all(isinstance(n, str) for n in numbers):
        problems.append(f"{language}.numbers is missing or not a list of strings")
        numbers = []
    numbers = [n.strip() for n in numbers if n.strip()]
    if problems:
        return None, problems

    headline, summary, takeaway = texts["headline"], texts["summary"], texts["takeaway"]
    for what, text in (("headline", headline), ("summary", summary), ("takeaway", takeaway)):
        problem = _language_problem(language, text, what)
        if problem:
            problems.append(problem)
    if len(headline) > HEADLINE_MAX_CHARS:
        problems.append(
            f"the {language} headline has {len(headline)} characters, over {HEADLINE_MAX_CHARS}"
        )
    bounds = EN_SUMMARY_WORDS if language == "en" else ZH_SUMMARY_CHARS
    problem = _length_problem(language, summary, "summary", bounds)
    if problem:
        problems.append(problem)
    if len(takeaway) > TAKEAWAY_MAX_CHARS:
        problems.append(
            f"the {language} takeaway has {len(takeaway)} characters, over {TAKEAWAY_MAX_CHARS}"
        )
    short = (0, EN_TAKEAWAY_MAX_WORDS) if language == "en" else (0, ZH_TAKEAWAY_MAX_CHARS)
    problem = _length_problem(language, takeaway, "takeaway", short)
    if problem:
        problems.append(problem + " (it must be one short sentence)")
    span = takeaway_span(takeaway, summary)
    if span is None:
        problems.append(f"the {language} takeaway does not occur inside the {language} summary")
    if len(numbers) > NUMBERS_MAX:
        problems.append(f"{language}.numbers has {len(numbers)} items, over {NUMBERS_MAX}")
    long = [n for n in numbers if len(n) > NUMBER_MAX_CHARS]
    if long:
        problems.append(f"a {language} number is over {NUMBER_MAX_CHARS} characters")
    if problems:
        return None, problems
    return LanguageDraft(headline, summary, span, tuple(numbers)), []


class MalformedAnswer(ValueError):
    pass


def parse_object(content: str | None) -> dict:
    """The answer's one JSON object, or ``MalformedAnswer`` saying what is wrong."""
    if not isinstance(content, str) or not content.strip():
        raise MalformedAnswer("the answer is empty")
    try:
        data = json.loads(content)
    except ValueError as exc:
        raise MalformedAnswer(f"the answer is not JSON ({exc})") from None
    if not isinstance(data, dict):
        raise MalformedAnswer(f"the answer is JSON but not an object ({type(data).__name__})")
    return data


@dataclass
class PaperAnswer:
    """What of a ``paper_summary`` answer is usable: the languages that passed, and for each
    language that did not, why (problems joined in one sentence)."""

    languages: dict[str, LanguageDraft] = field(default_factory=dict)
    problems: dict[str, str] = field(default_factory=dict)
    short_name: str | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def usable(self) -> dict[str, LanguageDraft]:
        return self.languages


def paper_answer_validate(
    content: str | None, *, languages: tuple[str, ...] = LANGUAGES
) -> PaperAnswer:
    """Check the ``languages`` of a ``paper_summary`` answer (one, when each language is
    asked for in its own request; another language in the answer is ignored)."""
    result = PaperAnswer()
    try:
        data = parse_object(content)
    except MalformedAnswer as exc:
        result.problems = dict.fromkeys(languages, str(exc))
        return result
    short_name = data.get("short_name")
    if isinstance(short_name, str) and 0 < len(short_name.strip()) <= SHORT_NAME_MAX_CHARS:
        result.short_name = short_name.strip()
    elif short_name is not None and short_name != "":
        result.notes.append(f"short_name {str(short_name)[:100]!r} ignored (not a short string)")
    for language in languages:
        draft, problems = language_problems(language, data.get(language))
        if draft is not None:
            result.languages[language] = draft
        else:
            result.problems[language] = "; ".join(problems)
    return result


@dataclass
class IntroAnswer:
    texts: dict[str, str] = field(default_factory=dict)
    problems: dict[str, str] = field(default_factory=dict)

    @property
    def usable(self) -> dict[str, str]:
        return self.texts


Answer = PaperAnswer | IntroAnswer


def intro_answer_validate(
    content: str | None, *, languages: tuple[str, ...] = LANGUAGES
) -> IntroAnswer:
    """Check the ``languages`` of a ``daily_intro`` answer (one, when each language is asked
    for in its own request)."""
    result = IntroAnswer()
    try:
        data = parse_object(content)
    except MalformedAnswer as exc:
        result.problems = dict.fromkeys(languages, str(exc))
        return result
    for language in languages:
        text = data.get(language)
        if not isinstance(text, str) or not text.strip():
            result.problems[language] = f"{language} is missing or not a non-empty string"
            continue
        text = text.strip()
        bounds = EN_INTRO_WORDS if language == "en" else ZH_INTRO_CHARS
        problems = [
            p
            for p in (
                _language_problem(language, text, "intro"),
                _length_problem(language, text, "intro", bounds),
            )
            if p
        ]
        if problems:
            result.problems[language] = "; ".join(problems)
        else:
            result.texts[language] = text
    return result
