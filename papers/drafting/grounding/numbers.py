"""Numbers: every number a draft states must occur in its source.

How numbers are compared (the rules the tests pin):

- Every number in the draft must occur in the source (title, abstract, comments) *up to
  formatting*: 12,000 = 12 000 = 12K = 1.2 万; 2.38× = 2.38x = 2.38 × = 2.38-fold = 2.38 倍;
  两倍 = twice = 2×; 73.04% = 73.04 % = 73.04 percent; 4 ms = 4ms = 4 毫秒; ９ = 9 = nine.
- Equal value, and the draft no more precise than the source. "3" is grounded by "3.0"; "3.0"
  is not grounded by "3" (it claims a precision the source lacks); "2.4" is not grounded by
  "2.38" (rounding makes a different number). Trailing zeros of an integer are not taken as
  precision, so "12,000" and "12K" are the same number.
- Units must not conflict. A multiplier (×) or a percentage or percentage points in the draft
  needs the same kind in the source ("5%" is not "5 percentage points"; "2×" is not "2 GPUs").
  Other units (ms, GB, tokens, bits, …) need the same unit or none on either side: the draft's
  "8K context" is grounded by the source's "8K tokens".
- Signs are directions that words also state ("cut by 24.8%" = "−24.8%"): values compare by
  magnitude. Ranges (10–20%, 3 到 5 倍) check each end; a unit after the second end applies to
  the first. Half (half, 一半, halved) equals 50% and 0.5×.
- Not quantities, never checked: ordinals (first, 6th, 第一, 第 6 轮), "one"/"zero" and a lone
  一 (一种, 一个, 一次: idiom, not a count), vague counts (几个, 数十, 上千), URLs. In the source,
  ordinals, "one", "both" and "single" do count, so "turn 6" is grounded by "the sixth turn"
  and 两份 by "both".
- Tokens that mix letters and digits are names, not numbers (H100, FP8, BF16, Llama-3-8B,
  GSM8K, S3-FIFO, p95, 3FS, v2, arXiv ids, 0.6.3): each is checked whole against the source,
  case-insensitively. The numbers inside the source's model names (the 8B of Llama-3-8B)
  ground the same number standing alone in the draft.
- Derived numbers (the draft's "3× fewer" for the source's "66.7% fewer") are flagged by design:
  an editor confirms them.
- Conversions between units (4 ms = 4000 µs) are not attempted: they are derived numbers.
"""

from __future__ import annotations

import dataclasses
import functools
import re
from collections.abc import Iterable
from dataclasses import dataclass
from decimal import Decimal

from papers.drafting.grounding.text import (
    GroundingFlag,
    check_language,
    lowercased,
    normalise,
    quote,
    word_hits,
)


@dataclass(frozen=True)
class NumberMention:
    text: str
    start: int
    end: int
    value: Decimal  # normalised magnitude: "1.2 万" → 12000, "8K" → 8000, "73.04%" → 73.04
    unit: str  # "x", "%", "pp", "pt", "" (plain), "ms", "s", "gb", "tok", "bit", "date", …


# TeX in abstracts: "30\\%", "$3.2\\times$", "1.8 $\\times$". Replaced in place, padded to the
# same length (offsets stay valid); the padding after "×" is read as part of the number.
_TEX_PERCENT_RE = re.compile(r"\\%")
_TEX_TIMES_RE = re.compile(r"\s?\$?\s?\\times\b\s?\$?")
_TEX_PAD = "\x00"


def _detex(norm: str) -> str:
    if "\\" not in norm:
        return norm
    norm = _TEX_PERCENT_RE.sub(" %", norm)
    return _TEX_TIMES_RE.sub(lambda m: "×" + _TEX_PAD * (len(m[0]) - 1), norm)


# --- vocabularies ----------------------------------------------------------------------------
_SCALES = {
    "k": 10**3,
    "m": 10**6,
    "b": 10**9,
    "thousand": 10**3,
    "million": 10**6,
    "billion": 10**9,
    "trillion": 10**12,
    "千": 10**3,
    "万": 10**4,
    "十万": 10**5,
    "百万": 10**6,
    "千万": 10**7,
    "亿": 10**8,
    "万亿": 10**12,
}

_UNITS = {
    "x": ("×", "x", "倍", "-fold", "fold", "times"),
    "%": ("%", "percent", "per cent", "pct"),
    "pp": ("percentage points", "percentage point", "pp", "个百分点", "百分点"),
    "pt": ("points", "point", "-point", "pts", "pt", "点"),
    "ms": ("ms", "msec", "milliseconds", "millisecond", "毫秒"),
    "us": ("µs", "μs", "us", "microseconds", "microsecond", "微秒"),
    "ns": ("ns", "nanoseconds", "nanosecond", "纳秒"),
    "s": ("s", "sec", "secs", "seconds", "second", "秒"),
    "min": ("min", "mins", "minutes", "minute", "分钟"),
    "h": ("h", "hr", "hrs", "hours", "hour", "小时"),
    "day": ("days", "day", "天"),
    "kb": ("KB", "KiB"),
    "mb": ("MB", "MiB"),
    "gb": ("GB", "GiB"),
    "tb": ("TB", "TiB"),
    "pb": ("PB", "PiB"),
    "gb/s": ("GB/s",),
    "mb/s": ("MB/s",),
    "gbps": ("Gbps", "Gb/s"),
    "mbps": ("Mbps",),
    "ghz": ("GHz",),
    "mhz": ("MHz",),
    "tflops": ("TFLOPS", "TFLOP/s"),
    "qps": ("QPS",),
    "iops": ("IOPS",),
    "bit": ("-bit", "bits", "bit", "比特", "位"),
    "tok": ("-token", "tokens", "token", "toks", "tok"),
    "w": ("W",),
}
_UNIT_OF = {alias.casefold(): unit for unit, aliases in _UNITS.items() for alias in aliases}
# Units that must match in kind: a multiplier is never a count, a percentage never a point.
_STRONG_UNITS = frozenset({"x", "%", "pp", "frac"})
_UNIT_DISPLAY = {
    "x": "×",
    "%": "%",
    "pp": " percentage points",
    "pt": " points",
    "tok": " tokens",
    "bit": "-bit",
    "frac": " (a fraction)",
    "": "",
}

_ONES = {
    "zero": 0,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "thirteen": 13,
    "fourteen": 14,
    "fifteen": 15,
    "sixteen": 16,
    "seventeen": 17,
    "eighteen": 18,
    "nineteen": 19,
    "twenty": 20,
    "thirty": 30,
    "forty": 40,
    "fifty": 50,
    "sixty": 60,
    "seventy": 70,
    "eighty": 80,
    "ninety": 90,
}
_WORD_SCALES = {"hundred": 100, "thousand": 10**3, "million": 10**6, "billion": 10**9}
_ORDINAL_WORDS = {
    "first": 1,
    "second": 2,
    "third": 3,
    "fourth": 4,
    "fifth": 5,
    "sixth": 6,
    "seventh": 7,
    "eighth": 8,
    "ninth": 9,
    "tenth": 10,
    "eleventh": 11,
    "twelfth": 12,
    "twentieth": 20,
    "hundredth": 100,
}
_MULTIPLIER_WORDS = {
    "twice": 2,
    "thrice": 3,
    "double": 2,
    "doubles": 2,
    "doubled": 2,
    "doubling": 2,
    "triple": 3,
    "triples": 3,
    "tripled": 3,
    "tripling": 3,
    "quadruple": 4,
    "quadruples": 4,
    "quadrupled": 4,
    "quadrupling": 4,
}

_CN_DIGITS = {"零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5}
_CN_DIGITS.update({"六": 6, "七": 7, "八": 8, "九": 9})
_CN_UNITS = {"十": 10, "百": 100, "千": 1000}
_CN_BIG = {"万": 10**4, "亿": 10**8}
# Measure words that make a Chinese numeral a count ("三个模型", "两级", "四层").
_CN_MEASURES_TEXT = (
    "个百分点 百分点 倍 成 个 次 种 层 位 级 路 套 名 条 台 块 张 篇 轮 步 份 项 组 类 处 点 "
    "年 月 天 周 小时 分钟 秒 毫秒 微秒 纳秒 节点 卡 颗 核 批 行 列 段 句 家 款 支 片 遍 趟 "
    "度 道 阶 跳 端 人 比特 万 亿 千"
)
_CN_MEASURES = _CN_MEASURES_TEXT.split()
_CN_MEASURE_UNITS = {
    "个百分点": "pp",
    "百分点": "pp",
    "倍": "x",
    "点": "pt",
    "小时": "h",
    "分钟": "min",
    "秒": "s",
    "毫秒": "ms",
    "微秒": "us",
    "纳秒": "ns",
    "天": "day",
    "位": "bit",
    "比特": "bit",
}
# --- regular expressions (compiled once) ---------------------------------------------------
_TOKEN_CHARS_TEXT = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_."
_URL_RE = re.compile(r"https?://\S+|www\.\S+")
_LETTER_TOKEN_RE = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:[-_.][A-Za-z0-9]+)*")
# A lowercase word joined to a number ("top-5", "level-3") is a number, not a name.
_WORD_DASH_NUMBER_RE = re.compile(r"[a-z]+-\d+(?:\.\d+)?")
# Digit-led tokens: a number glued to letters (8K, 16GB, 2.38x, 6th) or a name (3FS, 2D, 5G).
_DIGIT_TOKEN_RE = re.compile(r"\d+(?:[.,]\d+)*([A-Za-z]+)[A-Za-z0-9]*")
_GLUED_QUANTITY = (
    frozenset({"k", "m", "b", "st", "nd", "rd", "th"})
    | {alias.casefold() for alias in _UNIT_OF if alias.isascii() and alias.isalpha()}
    | {"kb", "mb", "gb", "tb", "pb"}
)

_NOT_BEFORE_NUMBER = frozenset(_TOKEN_CHARS_TEXT + ",")
_NUMBER_RE = re.compile(
    r"(?:(?P<int>\d{1,3}(?:,\d{3})+(?![0-9])|\d{1,3}(?: \d{3})+(?![0-9.,\-])|\d+)"
    r"(?:\.(?P<frac>\d+))?"
    r"|\.(?P<lead>\d+))"
)


def _alternation(words: Iterable[str]) -> str:
    return "|".join(re.escape(w) for w in sorted(set(words), key=len, reverse=True))


_LATIN_SCALES = [s for s in _SCALES if s.isascii() and len(s) > 1]
_CJK_SCALES = [s for s in _SCALES if not s.isascii()]
_LATIN_UNITS = [a for a in _UNIT_OF if a.isascii() and a not in {"%"}]
_CJK_UNITS = [a for a in _UNIT_OF if not a.isascii()]
_SUFFIX_RE = re.compile(
    r"(?P<ord>(?:st|nd|rd|th)(?![A-Za-z]))?"
    r"(?:(?P<scale1>[kKmMbB])(?![A-Za-z])"
    rf"|[ ]?(?P<scale2>(?:{_alternation(_LATIN_SCALES)})(?![A-Za-z])|{_alternation(_CJK_SCALES)}))?"
    r"(?:[ ]?(?P<unit>%|×|"
    rf"(?:{_alternation(_LATIN_UNITS)})(?![A-Za-z0-9])|{_alternation(_CJK_UNITS)}))?",
    re.I,
)
# "10-20", "10 - 20", "10 to 20", "3 到 5"; not "0.95 -24.8" (a minus sign)
_RANGE_CONNECTOR_RE = re.compile(r"--?| --? |\s*(?:~|to|到|至)\s*", re.I)
_PERCENT_PREFIX_RE = re.compile(r"百分之\s*$")
_ORDINAL_PREFIX_RE = re.compile(r"第\s*$")

_NUMBER_WORDS = frozenset(_ONES) | frozenset(_WORD_SCALES)
_FOLD_WORDS = {f"{w}fold": v for w, v in _ONES.items() if 2 <= v <= 10 or v == 20}
_FOLD_WORDS.update({"hundredfold": 100, "thousandfold": 1000})
_HALF_WORDS = frozenset({"half", "halve", "halves", "halved", "halving"})
_NUMBER_WORD_GAP_RE = re.compile(r"[ -]")
# "twice as fast", "twice the throughput": a multiplier; "written twice": a count of two.
_TWICE_AS_RE = re.compile(
    r"\s+(?:as|the|that|more|less|fewer|faster|slower|higher|lower|larger|smaller|bigger|"
    r"longer|shorter|many|much|over)\b",
    re.I,
)
# half-precision, half precision, first-half: not a quantity
_NOT_HALF_RE = re.compile(r"-|\s+precision\b", re.I)
_ZH_HALF_RE = re.compile(r"一半|减半|折半|半数")
_ZH_MULTIPLIER_RE = re.compile(r"翻了两番|翻了一番|翻两番|翻一番|翻番|翻倍")
_SOURCE_ONLY_WORDS = {"both": 2, "pair": 2, "single": 1, "none": 0}
_INTERESTING_WORDS = frozenset(
    _NUMBER_WORDS
    | set(_FOLD_WORDS)
    | set(_MULTIPLIER_WORDS)
    | _HALF_WORDS
    | set(_ORDINAL_WORDS)
    | set(_SOURCE_ONLY_WORDS)
    | {"and"}
)
_CN_NUM_RE = re.compile(r"[零〇一二两三四五六七八九十百千万亿]+")
_NOT_BEFORE_CN_NUMBER = frozenset("几数上成好多每零〇一二两三四五六七八九十百千万亿")
_CN_MEASURE_RE = re.compile(rf"\s?(?:{_alternation(_CN_MEASURES)})")
_CN_PERCENT_RE = re.compile(r"百分之\s*([零〇一二两三四五六七八九十百千]+)")
# 三分之二 (百分之 is a percentage, read above)
_CN_FRACTION_RE = re.compile(
    r"([零〇一二两三四五六七八九十]+)\s*分之\s*([零〇一二两三四五六七八九十]+)"
)
_FRACTION_WORDS = {"half": 2, "third": 3, "quarter": 4, "fourth": 4, "fifth": 5, "tenth": 10}
_EN_FRACTION_RE = re.compile(
    r"\b(a|one|two|three|four|five|seven|nine)[ -]"
    r"(third|quarter|fourth|fifth|tenth)s?\b",
    re.I,
)
# 2/3, 1/4: small proper fractions only (not 4/3, not dates such as 12/31)
_DIGIT_FRACTION_RE = re.compile(r"(?<![0-9./])([1-9])/([2-9]|10)(?![0-9./])")
# A fraction's value, as exact as the comparison needs.
_FRACTION_QUANTUM = Decimal("0.0001")


# --- values ---------------------------------------------------------------------------------
def _quantum_of_integer(digits: str) -> Decimal:
    stripped = digits.rstrip("0")
    zeros = len(digits) - len(stripped) if stripped else 0
    return Decimal(10) ** zeros


def _cn_value(chars: str) -> int | None:
    if not any(c in _CN_UNITS or c in _CN_BIG for c in chars):
        # 二〇二六, 三: digit by digit
        return int("".join(str(_CN_DIGITS[c]) for c in chars))
    total, section, number = 0, 0, 0
    for c in chars:
        if c in _CN_DIGITS:
            number = _CN_DIGITS[c]
        elif c in _CN_UNITS:
            if number == 0 and c == "十":
                number = 1
            section += number * _CN_UNITS[c]
            number = 0
        elif c == "万":
            total += (section + number or 1) * 10**4
            section, number = 0, 0
        elif c == "亿":
            total = (total + section + number or 1) * 10**8
            section, number = 0, 0
    return total + section + number


def _word_value(words: list[str]) -> int:
    total, current = 0, 0
    for word in words:
        word = word.casefold()
        if word in _ONES:
            current += _ONES[word]
        elif word == "hundred":
            current = (current or 1) * 100
        else:
            total += (current or 1) * _WORD_SCALES[word]
            current = 0
    return total + current


@dataclass(frozen=True)
class _Found:
    """A number found by the scanner, with what the comparison needs beyond the mention."""

    mention: NumberMention
    quantum: Decimal
    scale: int = 1  # the factor a suffix (K, 万, million) applied
    checkable: bool = True  # False: ordinals, "one", "both" — only ever grounding
    metric: str | None = None  # what it measures, in the source (see _metrics)


@dataclass(frozen=True)
class _Identifier:
    text: str
    start: int
    end: int
    needle: str  # what must occur in the source


class _Spans:
    """Taken characters, so one stretch of text is read only once."""

    def __init__(self, length: int) -> None:
        self._taken = bytearray(length)

    def free(self, start: int, end: int) -> bool:
        return self._taken.find(1, start, end) == -1

    def take(self, start: int, end: int) -> None:
        self._taken[start:end] = b"\x01" * (end - start)


def _mention(text: str, start: int, end: int, value, unit: str) -> NumberMention:
    return NumberMention(text[start:end], start, end, abs(Decimal(value)), unit)


_DIGITS_RE = re.compile(r"[0-9]+")
_TOKEN_CHARS = frozenset(_TOKEN_CHARS_TEXT + "-")
_ARXIV_TOKEN_RE = re.compile(r"(\d{4}\.\d{4,5})(?:v\d+)?")
_DATE_TOKEN_RE = re.compile(r"((?:19|20)\d{2})-(\d{1,2})-(\d{1,2})")
_VERSION_TOKEN_RE = re.compile(r"v?\d+\.\d+\.\d+(?:\.\d+)*")
_ZH_DATE_RE = re.compile(r"((?:19|20)\d{2})\s*年\s*(\d{1,2})\s*月\s*(\d{1,2})\s*日")
_ARXIV_PREFIX_RE = re.compile(r"arxiv:\s*$", re.I)


def _scan(text: str, *, for_source: bool) -> tuple[list[_Found], list[_Identifier]]:
    """Every number and every name-like token of ``text``. ``for_source`` also returns what
    grounds but is never checked (ordinals, "one", "both") and the numbers inside names.

    Driven by the digits: each run of digits is read once, as part of the token around it
    (an arXiv id, a date, a version, a name such as H100) or else as a number. Regular
    expressions that start with a lookbehind scan a text one position at a time, so the
    passes over the whole text start with a literal or a character class."""
    norm = _detex(normalise(text))
    spans = _Spans(len(text))
    found: list[_Found] = []
    identifiers: list[_Identifier] = []
    runs = [(m.start(), m.end()) for m in _DIGITS_RE.finditer(norm)]
    if runs:
        _scan_tokens(text, norm, runs, spans, found, identifiers, for_source=for_source)
    _scan_fractions(text, norm, spans, found, for_source=for_source)
    if runs:
        _scan_digits(text, norm, runs, spans, found, for_source=for_source)
    _scan_words(text, norm, spans, found, for_source=for_source)
    _scan_chinese(text, norm, spans, found, for_source=for_source)
    found.sort(key=lambda f: f.mention.start)
    return found, identifiers


def _scan_tokens(text, norm, runs, spans, found, identifiers, *, for_source) -> None:
    def identify(start: int, end: int, needle: str) -> None:
        identifiers.append(_Identifier(text[start:end], start, end, needle))
        spans.take(start, end)

    if "://" in norm or "www." in norm:
        for m in _URL_RE.finditer(norm):
            spans.take(m.start(), m.end())
    if "年" in norm:
        for m in _ZH_DATE_RE.finditer(norm):
            _add_date(text, m, spans, found, for_source=for_source)
    length = len(norm)
    for run_start, run_end in runs:
        if not spans.free(run_start, run_end):
            continue
        start, end = run_start, run_end
        while start > 0 and norm[start - 1] in _TOKEN_CHARS:
            start -= 1
        while end < length and norm[end] in _TOKEN_CHARS:
            end += 1
        while norm[start] in "._-":
            start += 1
        while norm[end - 1] in "._-":
            end -= 1
        token = norm[start:end]
        if m := _ARXIV_TOKEN_RE.fullmatch(token):
            prefix = _ARXIV_PREFIX_RE.search(norm, max(0, start - 8), start)
            identify(prefix.start() if prefix else start, end, m[1])
        elif m := _DATE_TOKEN_RE.fullmatch(token):
            _add_date(text, m, spans, found, for_source=for_source, offset=start)
        elif _VERSION_TOKEN_RE.fullmatch(token):
            identify(start, end, token)
        elif token[0].isalpha():
            m = _LETTER_TOKEN_RE.match(norm, start)
            if m is None or m.end() < run_end or _WORD_DASH_NUMBER_RE.fullmatch(m[0]):
                continue
            identify(start, m.end(), m[0])
            if for_source:
                # the 8B of Llama-3-8B grounds a bare "8B"
                for part in re.split(r"[-_]", m[0]):
                    sub = _scan_plain(part)
                    if sub is not None:
                        found.append(sub)
        elif start == run_start and (m := _DIGIT_TOKEN_RE.match(norm, start)):
            if m[1].casefold() in _GLUED_QUANTITY and m.end() == m.end(1):
                continue  # 8K, 16GB, 2.38x, 6th: a number with its suffix
            identify(start, m.end(), m[0])


def _add_date(text, m, spans, found, *, for_source, offset=0) -> None:
    start, end = offset + m.start(), offset + m.end()
    if not spans.free(start, end):
        return
    year, month, day = int(m[1]), int(m[2]), int(m[3])
    found.append(_Found(_mention(text, start, end, year * 10000 + month * 100 + day, "date"), 1))
    spans.take(start, end)
    if for_source:  # a year alone in the draft is grounded by the source's full date
        for part in (year, month, day):
            found.append(_Found(NumberMention("", 0, 0, Decimal(part), ""), Decimal(1)))


def _scan_plain(part: str) -> _Found | None:
    m = re.fullmatch(r"(\d+(?:\.\d+)?)([KMBkmb]?)", part)
    if not m:
        return None
    scale = _SCALES[m[2].lower()] if m[2] else 1
    digits = m[1]
    quantum = (
        Decimal(10) ** -len(digits.split(".")[1]) if "." in digits else _quantum_of_integer(digits)
    )
    return _Found(NumberMention("", 0, 0, Decimal(digits) * scale, ""), quantum * scale, scale)


def _scan_digits(text, norm, runs, spans, found, *, for_source) -> None:
    previous: _Found | None = None
    for run_start, run_end in runs:
        if not spans.free(run_start, run_end):
            continue
        start = run_start
        if start and norm[start - 1] == ".":
            start -= 1  # .95
        if start and norm[start - 1] in _NOT_BEFORE_NUMBER:
            continue
        m = _NUMBER_RE.match(norm, start)
        if m is None:
            continue
        if m["lead"] is not None:
            value = Decimal("0." + m["lead"])
            quantum = Decimal(10) ** -len(m["lead"])
        else:
            digits = m["int"].replace(",", "").replace(" ", "")
            if m["frac"] is not None:
                value = Decimal(digits + "." + m["frac"])
                quantum = Decimal(10) ** -len(m["frac"])
            else:
                value = Decimal(digits)
                quantum = _quantum_of_integer(digits)
        suffix = _SUFFIX_RE.match(norm, m.end())
        end = m.end()
        scale_text = unit_text = None
        ordinal = False
        if suffix and suffix.end() > m.end():
            ordinal = suffix["ord"] is not None
            scale_text = suffix["scale1"] or suffix["scale2"]
            unit_text = suffix["unit"]
            end = suffix.end()
            while end < len(norm) and norm[end] == _TEX_PAD:
                end += 1
        if ordinal or _ORDINAL_PREFIX_RE.search(norm, max(0, start - 3), start):
            if for_source:
                mention = _mention(text, start, end, value, "")
                found.append(_Found(mention, quantum, checkable=False))
            spans.take(start, end)
            previous = None
            continue
        factor = 1
        if scale_text:
            factor = _SCALES[scale_text.casefold()]
            value *= factor
            quantum *= factor
        unit = _UNIT_OF.get(unit_text.casefold(), "") if unit_text else ""
        if _PERCENT_PREFIX_RE.search(norm, max(0, start - 5), start):
            unit = "%"
        current = _Found(_mention(text, start, end, value, unit), quantum, factor)
        if previous is not None and _RANGE_CONNECTOR_RE.fullmatch(
            norm, previous.mention.end, start
        ):
            found[-1] = _widen_range_start(found[-1], current)
        found.append(current)
        spans.take(start, end)
        previous = current


def _fraction(text, start, end, numerator: int, denominator: int) -> _Found | None:
    if not 0 < numerator < denominator:
        return None
    value = (Decimal(numerator) / Decimal(denominator)).quantize(_FRACTION_QUANTUM)
    return _Found(_mention(text, start, end, value, "frac"), _FRACTION_QUANTUM)


def _scan_fractions(text, norm, spans, found, *, for_source: bool) -> None:
    """Two-thirds, a quarter, 三分之二, 2/3: one value whatever the language. In the source,
    the two numbers of "4/8" also ground "4 of 8" (as they did before fractions were read)."""
    if "分之" in norm:
        for m in _CN_FRACTION_RE.finditer(norm):
            f = _fraction(text, m.start(), m.end(), _cn_value(m[2]), _cn_value(m[1]))
            if f is not None and spans.free(m.start(), m.end()):
                found.append(f)
                spans.take(m.start(), m.end())
    for m in _EN_FRACTION_RE.finditer(norm):
        word = m[1].casefold()
        numerator = 1 if word in ("a", "one") else _ONES[word]
        f = _fraction(text, m.start(), m.end(), numerator, _FRACTION_WORDS[m[2].casefold()])
        if f is not None and spans.free(m.start(), m.end()):
            found.append(f)
            spans.take(m.start(), m.end())
    if "/" in norm:
        for m in _DIGIT_FRACTION_RE.finditer(norm):
            f = _fraction(text, m.start(), m.end(), int(m[1]), int(m[2]))
            if f is not None and spans.free(m.start(), m.end()):
                found.append(f)
                spans.take(m.start(), m.end())
                if for_source:
                    found += [p for p in (_scan_plain(m[1]), _scan_plain(m[2])) if p]


def _widen_range_start(first: _Found, second: _Found) -> _Found:
    """In "10–20%" or "10-20K" the second end's unit and scale belong to the first too."""
    mention, quantum = first.mention, first.quantum
    value, unit, scale = mention.value, mention.unit, first.scale
    if not unit and second.mention.unit:
        unit = second.mention.unit
    if first.scale == 1 and second.scale != 1:
        value, quantum, scale = value * second.scale, quantum * second.scale, second.scale
    if (value, unit) == (mention.value, mention.unit):
        return first
    new = NumberMention(mention.text, mention.start, mention.end, value, unit)
    return _Found(new, quantum, scale, first.checkable)


def _scan_words(text, norm, spans, found, *, for_source) -> None:
    """English number words (nine, twenty-five, two hundred), multipliers (twice, twofold,
    doubled), half, and for the source also ordinals and "both"/"single"/"none"."""
    tokens = word_hits(lowercased(norm), _INTERESTING_WORDS)

    def add(start, end, value, unit, quantum=1, checkable=True):
        if checkable or for_source:
            mention = _mention(text, start, end, value, unit)
            found.append(_Found(mention, Decimal(quantum), checkable=checkable))
        spans.take(start, end)

    i = 0
    while i < len(tokens):
        start, end, word = tokens[i]
        i += 1
        if not spans.free(start, end):
            continue
        if word in _NUMBER_WORDS:
            words = [word]
            while i < len(tokens):
                gap_ok = _NUMBER_WORD_GAP_RE.fullmatch(norm, end, tokens[i][0])
                if gap_ok and tokens[i][2] in _NUMBER_WORDS:
                    end, words = tokens[i][1], [*words, tokens[i][2]]
                    i += 1
                elif (
                    gap_ok
                    and tokens[i][2] == "and"
                    and words[-1] in _WORD_SCALES
                    and i + 1 < len(tokens)
                    and tokens[i + 1][2] in _ONES
                    and norm[tokens[i][1] : tokens[i + 1][0]] == " "
                ):
                    end, words = tokens[i + 1][1], [*words, tokens[i + 1][2]]
                    i += 2
                else:
                    break
            value = _word_value(words)
            unit = ""
            suffix = _SUFFIX_RE.match(norm, end)
            if suffix and suffix["unit"] and not suffix["scale1"]:
                unit = _UNIT_OF.get(suffix["unit"].casefold(), "")
                end = suffix.end()
            # "one" and "zero" alone are idiom far more often than counts (one of the …)
            checkable = not (len(words) == 1 and words[0] in ("one", "zero"))
            add(start, end, value, unit, _quantum_of_integer(str(value)), checkable)
        elif word in _FOLD_WORDS:
            add(start, end, _FOLD_WORDS[word], "x")
        elif word in _MULTIPLIER_WORDS and word != "double":  # double buffering: an adjective
            unit = "" if word == "twice" and not _TWICE_AS_RE.match(norm, end) else "x"
            add(start, end, _MULTIPLIER_WORDS[word], unit)
        elif word in _HALF_WORDS and not _NOT_HALF_RE.match(norm, end):
            if not (start and norm[start - 1] == "-"):
                add(start, end, Decimal("0.5"), "x", Decimal("0.1"))
        elif for_source and word in _ORDINAL_WORDS:
            add(start, end, _ORDINAL_WORDS[word], "", checkable=False)
        elif for_source and word in _SOURCE_ONLY_WORDS:
            add(start, end, _SOURCE_ONLY_WORDS[word], "", checkable=False)
    for m in _ZH_HALF_RE.finditer(norm):
        if spans.free(m.start(), m.end()):
            add(m.start(), m.end(), Decimal("0.5"), "x", Decimal("0.1"))
    for m in _ZH_MULTIPLIER_RE.finditer(norm):
        if spans.free(m.start(), m.end()):
            add(m.start(), m.end(), 4 if "两" in m[0] else 2, "x")


def _scan_chinese(text, norm, spans, found, *, for_source) -> None:
    for m in _CN_PERCENT_RE.finditer(norm):
        if spans.free(m.start(), m.end()):
            value = _cn_value(m[1])
            quantum = _quantum_of_integer(str(value))
            found.append(_Found(_mention(text, m.start(), m.end(), value, "%"), quantum))
            spans.take(m.start(), m.end())
    for m in _CN_NUM_RE.finditer(norm):
        chars = m[0]
        if m.start() and norm[m.start() - 1] in _NOT_BEFORE_CN_NUMBER:
            continue  # 几十个, 数百, 上千: no number to check
        if not spans.free(m.start(), m.end()) or all(c in _CN_BIG or c in "千百" for c in chars):
            continue
        ordinal = _ORDINAL_PREFIX_RE.search(norm, max(0, m.start() - 2), m.start()) is not None
        measure = _CN_MEASURE_RE.match(norm, m.end())
        if ordinal:
            if for_source:
                found.append(
                    _Found(
                        _mention(text, m.start(), m.end(), _cn_value(chars), ""),
                        Decimal(1),
                        checkable=False,
                    )
                )
            spans.take(m.start(), m.end())
            continue
        if measure is None:
            continue
        word = measure[0].strip()
        value = _cn_value(chars)
        if value is None:
            continue
        # a lone 一 is "a"/"one" (一种, 一个, 一次), not a count to check
        # 一倍 is a doubling ("提升一倍"), a number to check
        checkable = chars != "一" or word == "倍"
        if not checkable and not for_source:
            continue
        end = m.end()
        unit = ""
        quantum = _quantum_of_integer(str(value)) if value else Decimal(1)
        if word in ("万", "亿", "千"):
            factor = _SCALES[word]
            value *= factor
            quantum *= factor
            end = measure.end()
            after = _SUFFIX_RE.match(norm, end)
            if after and after["unit"]:
                unit = _UNIT_OF.get(after["unit"].casefold(), "")
                end = after.end()
        elif word == "倍" and chars == "一":
            value, unit, end = 2, "x", measure.end()  # "+100%": twice as much
        elif word == "成":
            value, unit, end = value * 10, "%", measure.end()
            quantum *= 10
        else:
            unit, end = _CN_MEASURE_UNITS.get(word, ""), measure.end()
        mention = _mention(text, m.start(), end, value, unit)
        found.append(_Found(mention, quantum, checkable=checkable))
        spans.take(m.start(), end)


# --- numbers: the public functions ---------------------------------------------------------
def extract_numbers(text: str, *, language: str) -> list[NumberMention]:
    """The numbers of ``text`` that a grounding check compares, in order of appearance.
    Names with digits (H100, Llama-3-8B), ordinals and idiomatic "one" are not among them."""
    check_language(language)
    found, _ = _scan(text, for_source=False)
    return [f.mention for f in found if f.checkable]


# --- what a number measures -----------------------------------------------------------------
# A speedup or a percentage is grounded only on the same metric as in the source: "latency
# -35%, throughput +20%" swapped is two true numbers and two false claims. The metric of a
# number is the nearest metric word in its clause; a number with none (in the draft or at
# one of its places in the source) is compared by value alone, as before.
METRIC_UNITS = frozenset({"x", "%", "pp"})
_METRICS = {
    "latency": ("latency", "latencies", "delay", "response time", "延迟", "时延", "响应时间"),
    "time to first token": ("ttft", "time to first token", "time-to-first-token", "首 token"),
    "throughput": ("throughput", "goodput", "tokens/s", "qps", "吞吐", "吞吐量"),
    "speed": ("speedup", "speedups", "speed-up", "speed", "faster", "slower", "加速", "更快"),
    "memory": ("memory", "footprint", "hbm", "vram", "显存", "内存"),
    "storage": ("storage", "disk", "存储", "磁盘"),
    "accuracy": ("accuracy", "准确率", "精度", "正确率"),
    "recall": ("recall", "召回率", "召回"),
    "cost": ("cost", "costs", "price", "成本", "费用"),
    "energy": ("energy", "power", "能耗", "功耗"),
    "hit rate": ("hit rate", "hit ratio", "命中率"),
    "bandwidth": ("bandwidth", "带宽"),
    "utilization": ("utilization", "utilisation", "利用率"),
    "communication": ("communication", "traffic", "通信", "流量"),
    "error": ("error", "errors", "error rate", "错误", "误差", "错误率"),
    "time": ("time", "duration", "耗时", "时间"),
    "overhead": ("overhead", "开销"),
    "perplexity": ("perplexity", "困惑度"),
}
_METRIC_OF = {alias: metric for metric, aliases in _METRICS.items() for alias in aliases}
# Metrics one sentence may state as another ("2× faster" for a throughput gain).
_RELATED_METRICS = {
    frozenset(pair)
    for pair in (
        ("speed", "throughput"),
        ("speed", "latency"),
        ("speed", "time"),
        ("speed", "time to first token"),
        ("time to first token", "latency"),
        ("time to first token", "time"),
        ("latency", "time"),
        ("error", "accuracy"),
    )
}
_LATIN_METRIC_WORDS = [a for a in _METRIC_OF if a.isascii()]
_CJK_METRIC_WORDS = [a for a in _METRIC_OF if not a.isascii()]
_METRIC_RE = re.compile(
    rf"\b(?:{_alternation(_LATIN_METRIC_WORDS)})\b|{_alternation(_CJK_METRIC_WORDS)}"
)
_CLAUSE_BREAK_RE = re.compile(
    r"[,;:，；：、。！？!?\n]|\.(?![0-9])|\b(?:and|while|whereas|but|versus|vs)\b|而|但|并且|同时"
)

# A metric right after its number binds first: "12.5% of the memory", "35% lower latency".
_BOUND_AFTER_RE = re.compile(
    r"[\s\x00]*(?:(?:of|in)\s+(?:the\s+)?|(?:lower|higher|less|more|fewer|better|smaller|"
    r"larger|reduction in|increase in|improvement in|gain in)\s+|的\s*)?"
)


def _metrics_match(draft: str, source: str) -> bool:
    return draft == source or frozenset((draft, source)) in _RELATED_METRICS


def _metrics(text: str, found: list[_Found]) -> list[str | None]:
    """The metric of each found number that has a METRIC_UNITS unit (else None)."""
    result: list[str | None] = [None] * len(found)
    if not any(f.mention.unit in METRIC_UNITS for f in found):
        return result
    lowered = lowercased(text)
    hits = [(m.start(), m.end(), _METRIC_OF[m[0]]) for m in _METRIC_RE.finditer(lowered)]
    if not hits:
        return result
    breaks = [(m.start(), m.end()) for m in _CLAUSE_BREAK_RE.finditer(lowered)]
    for i, f in enumerate(found):
        start, end = f.mention.start, f.mention.end
        if f.mention.unit not in METRIC_UNITS or start == end:
            continue
        low = max((b_end for b_start, b_end in breaks if b_end <= start), default=0)
        high = min((b_start for b_start, _ in breaks if b_start >= end), default=len(text))
        best = None
        for h_start, h_end, metric in hits:
            if h_start < low or h_end > high:
                continue
            gap = start - h_end if h_end <= start else h_start - end
            if h_start >= end and _BOUND_AFTER_RE.fullmatch(lowered, end, h_start):
                gap = -1
            if gap >= -1 and (best is None or gap < best[0]):
                best = (gap, metric)
        result[i] = best[1] if best else None
    return result


@dataclass(frozen=True)
class _SourceIndex:
    by_value: dict[Decimal, list[_Found]]
    lowered: str


@functools.lru_cache(maxsize=512)
def _source_index(source: str) -> _SourceIndex:
    found, _ = _scan(source, for_source=True)
    found = [
        dataclasses.replace(f, metric=metric) if metric else f
        for f, metric in zip(found, _metrics(source, found), strict=True)
    ]
    by_value: dict[Decimal, list[_Found]] = {}
    for f in found:
        by_value.setdefault(f.mention.value, []).append(f)
    return _SourceIndex(by_value, normalise(source).casefold())


def _units_compatible(draft: str, source: str) -> bool:
    if draft == source or not draft:
        return True
    if draft in _STRONG_UNITS or draft == "date":
        return False
    if draft == "pt":
        return source in ("", "pp")
    return not source


def _equivalents(mention: NumberMention) -> list[tuple[Decimal, str]]:
    keys = [(mention.value, mention.unit)]
    # half = 50% = 0.5×
    if mention.unit == "x" and mention.value == Decimal("0.5"):
        keys.append((Decimal(50), "%"))
    elif mention.unit == "%" and mention.value == 50:
        keys.append((Decimal("0.5"), "x"))
    # a quarter = 25%; two-thirds has no exact percentage (66.7% is derived: flagged)
    if mention.unit == "frac":
        if mention.value == mention.value.quantize(Decimal("0.001")):
            keys.append((mention.value * 100, "%"))
        if mention.value == Decimal("0.5"):
            keys.append((mention.value, "x"))
    elif mention.unit == "%" and mention.value < 100:
        keys.append((mention.value / 100, "frac"))
    elif mention.unit == "x" and mention.value == Decimal("0.5"):
        keys.append((mention.value, "frac"))
    if mention.unit == "x" and "一倍" in mention.text:
        keys.append((Decimal(100), "%"))  # 提升一倍: +100%
    return keys


def _display(value: Decimal, unit: str, quantum: Decimal) -> str:
    if unit == "date":
        digits = f"{int(value):08d}"
        return f"{digits[:4]}-{digits[4:6]}-{digits[6:]}"
    if quantum < 1:  # as precise as the draft wrote it: 3.0, not 3
        text = format(value.quantize(quantum), "f")
    else:
        text = f"{int(value):,}" if value >= 10000 else f"{int(value)}"
    return text + _UNIT_DISPLAY.get(unit, f" {unit}")


def _number_flag(
    found: _Found, index: _SourceIndex, metric: str | None = None
) -> GroundingFlag | None:
    mention = found.mention
    same_value_other_unit: _Found | None = None
    coarser: _Found | None = None
    other_metric: _Found | None = None
    for i, (value, unit) in enumerate(_equivalents(mention)):
        for candidate in index.by_value.get(value, ()):
            if not _units_compatible(unit, candidate.mention.unit):
                same_value_other_unit = same_value_other_unit or candidate
            elif i == 0 and found.quantum < candidate.quantum:  # half = 50% is exact
                coarser = coarser or candidate
            elif metric and candidate.metric and not _metrics_match(metric, candidate.metric):
                other_metric = other_metric or candidate
            else:
                return None
    if other_metric is not None:
        detail = (
            f"{quote(mention.text)} is given for {metric} here, but the source gives it for "
            f"{other_metric.metric} (another metric)."
        )
        return GroundingFlag("number", mention.text, mention.start, mention.end, detail)
    shown = _display(mention.value, mention.unit, found.quantum)
    said = quote(mention.text)
    if " ".join(mention.text.split()) != shown:
        said += f" ({shown})"
    if coarser is not None and coarser.mention.text:
        detail = (
            f"{said} is more precise than the source, which says {quote(coarser.mention.text)}."
        )
    elif same_value_other_unit is not None and same_value_other_unit.mention.text:
        detail = (
            f"{said} does not occur in the source, which has "
            f"{quote(same_value_other_unit.mention.text)}, a different quantity."
        )
    else:
        detail = f"{said} does not occur in the source."
    return GroundingFlag("number", mention.text, mention.start, mention.end, detail)


def _identifier_grounded(identifier: _Identifier, index: _SourceIndex) -> bool:
    needles = [identifier.needle.casefold()]
    if needles[0].endswith("s") and needles[0][-2:-1].isdigit():
        needles.append(needles[0][:-1])  # H100s
    # an arXiv id stands for each of its versions
    version = r"(?:v\d+)?" if _ARXIV_TOKEN_RE.fullmatch(needles[0]) else ""
    for needle in needles:
        pattern = rf"(?<![a-z0-9]){re.escape(needle)}{version}(?![a-z0-9])"
        if re.search(pattern, index.lowered):
            return True
    return False


def check_numbers(draft: str, source: str, *, language: str) -> list[GroundingFlag]:
    """A flag for every number (and every name with digits, such as H100) of ``draft`` that
    ``source`` does not state, up to formatting. See the module docstring for the rules."""
    check_language(language)
    index = _source_index(source)
    found, identifiers = _scan(draft, for_source=False)
    flags = [
        flag
        for f, metric in zip(found, _metrics(draft, found), strict=True)
        if f.checkable and (flag := _number_flag(f, index, metric))
    ]
    for identifier in identifiers:
        if not _identifier_grounded(identifier, index):
            flags.append(
                GroundingFlag(
                    "number",
                    identifier.text,
                    identifier.start,
                    identifier.end,
                    f"{quote(identifier.text)} does not occur in the source "
                    "(names with digits are checked as whole tokens).",
                )
            )
    flags.sort(key=lambda flag: flag.start)
    return flags
