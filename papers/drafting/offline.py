"""The offline drafter: the embedded default (no network, deterministic). It writes cards,
not prose it cannot write.

English: the paper's own sentences, picked by role (the problem, the approach, the results
with the numbers and the conditions written beside them), put in the third person ("the
authors propose …") and only those that stand alone — a connective that opens one
("However,") is dropped, and one that points back to a sentence left out ("This view …",
"Such queries …") is never taken. The headline says what the work is (from the approach
sentence), not the title again; the takeaway, a principle, is left for the editor. So every
number it writes occurs in the source.

Chinese: no translation. A short card of the entry's facts (system, organisations, venue,
the numbers the abstract states, the glossary terms it uses), saying what it is, recorded
as the offline card's (``CARD_NAME``) in the text's provenance; the summary is the editor's
to write.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal

from papers.drafting.base import (
    IntroDraft,
    IntroEntry,
    IntroInput,
    LanguageDraft,
    PaperDraft,
    PaperInput,
)
from papers.models import Summary

NAME = "offline-extractive"
VERSION = "2"
CARD_NAME = "offline-card"  # the drafter recorded for the Chinese card (``written_by``)

# Bounds (CONTENT.md and the columns the texts are stored in).
SUMMARY_MIN_WORDS = 80
SUMMARY_MAX_WORDS = 130
HEADLINE_MAX_CHARS = Summary._meta.get_field("headline").max_length
HEADLINE_TARGET_CHARS = 100  # a headline reads in one glance; the column allows more
TAKEAWAY_MAX_CHARS = Summary._meta.get_field("takeaway").max_length
TAKEAWAY_TARGET_CHARS = 220  # "one short sentence": longer ones are taken only if nothing fits
NUMBER_MAX_CHARS = 120
NUMBERS_MAX = 4
SENTENCE_MAX_WORDS = 60  # longer "sentences" (no punctuation, run-ons) are cut at a clause
ABSTRACT_MIN_WORDS = 8
INTRO_STANDOUTS = 2

CARD_NUMBERS_MAX = 6
CARD_TERMS_MAX = 5
CARD_NOTE_ZH = "离线资料卡：机器据论文信息整理，并非译文，中文摘要待编辑撰写。"

_WS = re.compile(r"\s+")
_MATH = re.compile(r"\$\$?(.+?)\$\$?", re.S)
_LATEX_WRAPPERS = re.compile(
    r"\\(?:mathrm|mathbf|mathit|text|textbf|textit|emph|texttt|mathcal|operatorname)\s*\{([^{}]*)\}"
)
_LATEX_SYMBOLS = {
    r"\times": "×",
    r"\%": "%",
    r"\sim": "~",
    r"\approx": "≈",
    r"\leq": "≤",
    r"\geq": "≥",
    r"\le": "≤",
    r"\ge": "≥",
    r"\pm": "±",
    r"\cdot": "·",
    r"\to": "→",
    r"\rightarrow": "→",
    r"\&": "&",
}
_LATEX_COMMAND = re.compile(r"\\[A-Za-z]+\*?|\\.")
_ABBREVIATIONS = frozenset(
    [
        "e.g.",
        "i.e.",
        "et",
        "al.",
        "etc.",
        "vs.",
        "cf.",
        "fig.",
        "figs.",
        "eq.",
        "eqs.",
        "sec.",
        "no.",
        "approx.",
        "resp.",
        "ref.",
        "refs.",
        "al.",
        "inc.",
        "ltd.",
        "dr.",
        "prof.",
        "mr.",
        "ms.",
        "st.",
        "ca.",
        "viz.",
    ]
)
_SENTENCE_END = re.compile(r"(?<=[.!?])[\"')\]]?\s+")
_CLAUSE_BREAK = re.compile(r"(?<=[,;:])\s+|\s+(?=—)|\s+(?=(?:while|whereas|and|but)\s)")
# A quantity: digits, then perhaps a unit, and no letter after it ("3D-parallel", "H100",
# "FP8" are names, not numbers).
_NUMBER = re.compile(
    r"(?<![\w.\-])(?:\d+(?:[.,]\d+)*)"
    r"(?:\s?(?:%|×|x|X|K|M|B|k|times|ms|µs|us|ns|s|GB/s|GB|TB|MB|KB|GiB|Gbps|percentage|"
    r"million|billion)"
    r"(?![A-Za-z]))?(?![A-Za-z\d]|-[A-Za-z]|[.,]\d)"
)
_MODEL_NAME = re.compile(r"\b[A-Z]{2,}\s$")  # "RTX 4090", "DGX 2": a name, not a quantity
_YEAR = re.compile(r"^(?:19|20)\d\d$")
_MAGNITUDE = re.compile(r"[%×]|\b(?:times|faster|slower|percentage|points?)\b|\d+(?:\.\d+)?x\b")
_IDEA = re.compile(
    r"\b(?:we|this (?:paper|work|article|write-up|post))\s+"
    r"(?:propose|present|introduce|design|develop|build|describe|show|argue|folds?|apply|"
    r"applies|presents|proposes|introduces|describes)\b",
    re.I,
)
_PAIN = re.compile(
    r"\b(?:however|suffer\w*|challeng\w*|bottleneck\w*|costly|expensive|overhead\w*|"
    r"struggl\w*|fail\w*|limit\w*|slow\w*|inefficien\w*|problem\w*|difficult\w*|"
    r"cannot|can't|unable|collapse\w*|waste\w*|costs?|but|yet|too large|hard)\b",
    re.I,
)
_RESULT = re.compile(
    r"\b(?:improv\w*|reduc\w*|speed\w*|faster|outperform\w*|achiev\w*|cut\w*|rais\w*|"
    r"lower\w*|increas\w*|decreas\w*|saves?|retain\w*|unchanged|identical|up to)\b",
    re.I,
)
_NAME_TOKEN = re.compile(r"^[A-Z][A-Za-z0-9]*(?:[-.][A-Za-z0-9]+)*$")
# Capitalised tokens that are common vocabulary of the field, not a system's name.
_COMMON_TOKENS = frozenset(
    [
        "AI",
        "API",
        "APIs",
        "ANN",
        "BF16",
        "CNN",
        "CPU",
        "CPUs",
        "CUDA",
        "DNN",
        "DRAM",
        "FP16",
        "FP32",
        "FP8",
        "FPGA",
        "GPU",
        "GPUs",
        "HBM",
        "HNSW",
        "HTTP",
        "INT4",
        "INT8",
        "IO",
        "KV",
        "LLM",
        "LLMs",
        "LRU",
        "ML",
        "MoE",
        "NLP",
        "NVMe",
        "OS",
        "QPS",
        "RAG",
        "RDMA",
        "RL",
        "RNN",
        "SLO",
        "SLOs",
        "SQL",
        "SSD",
        "SSDs",
        "TCP",
        "TPU",
        "TPUs",
        "TTFT",
        "TPOT",
        "VM",
        "VMs",
        "We",
        "This",
        "The",
        "In",
        "Our",
        "To",
        "For",
        "An",
        "A",
        "It",
    ]
)


@dataclass(frozen=True)
class _Sentence:
    index: int
    text: str  # without an opening connective (the card prints it in the third person)
    source: str  # as the abstract has it
    standalone: bool  # it reads without the sentence before it
    words: int
    has_number: bool
    is_idea: bool
    is_pain: bool
    is_result: bool


def clean_text(text: str) -> str:
    """One line of plain text: line breaks and runs of spaces collapsed, inline LaTeX
    reduced to its characters (digits untouched, so numbers stay the source's)."""

    def _math(match: re.Match) -> str:
        return _delatex(match.group(1))

    text = _MATH.sub(_math, text or "")
    text = _delatex(text) if "\\" in text else text
    return _WS.sub(" ", text.replace("{", "").replace("}", "")).strip()


def _delatex(text: str) -> str:
    for _ in range(3):
        text = _LATEX_WRAPPERS.sub(r"\1", text)
    for command, symbol in sorted(_LATEX_SYMBOLS.items(), key=lambda kv: -len(kv[0])):
        text = re.sub(re.escape(command) + r"(?![A-Za-z])", symbol, text)
    return _LATEX_COMMAND.sub("", text)


def split_sentences(text: str) -> list[str]:
    """Sentences of ``text`` (already cleaned), keeping abbreviations and decimals whole."""
    pieces = [p for p in _SENTENCE_END.split(text) if p and not p.isspace()]
    sentences: list[str] = []
    for piece in pieces:
        piece = piece.strip()
        if sentences:
            last_word = sentences[-1].rsplit(" ", 1)[-1].lower()
            if last_word in _ABBREVIATIONS or not (piece[0].isupper() or piece[0].isdigit()):
                sentences[-1] = f"{sentences[-1]} {piece}"
                continue
        sentences.append(piece)
    return [_bound_sentence(s) for s in sentences]


def _bound_sentence(sentence: str) -> str:
    """A run-on sentence is cut at its last clause boundary within the word bound."""
    words = sentence.split(" ")
    if len(words) <= SENTENCE_MAX_WORDS:
        return sentence
    head = " ".join(words[:SENTENCE_MAX_WORDS])
    cut = max(head.rfind(", "), head.rfind("; "), head.rfind(": "))
    if cut > len(head) // 2:
        head = head[:cut]
    return head.rstrip(" ,;:—-") + "…"


def _words(text: str) -> int:
    return len(text.split())


def numbers_in(text: str) -> list[str]:
    """The quantities ``text`` states (not digits inside names such as H100 or S3-FIFO, not
    years)."""
    found = []
    for match in _NUMBER.finditer(text):
        value = match.group(0)
        if _YEAR.match(value) or _MODEL_NAME.search(
            text[max(0, match.start() - 8) : match.start()]
        ):
            continue
        found.append(value)
    return found


def _classify(index: int, source: str) -> _Sentence:
    text = _CONNECTIVE.sub("", source)
    text = text[:1].upper() + text[1:]
    return _Sentence(
        index=index,
        text=text,
        source=source,
        standalone=not _POINTS_BACK.search(text),
        words=_words(text),
        has_number=bool(numbers_in(text)),
        is_idea=bool(_IDEA.search(source)),
        is_pain=bool(_PAIN.search(source)),
        is_result=bool(_RESULT.search(text)) or bool(_MAGNITUDE.search(text)),
    )


# A connective that opens a sentence ties it to the one before; the rest often stands alone.
_CONNECTIVE = re.compile(
    r"^(?:(?:however|moreover|furthermore|additionally|thus|therefore|hence|consequently|"
    r"yet|but|and)\b,?|(?:in addition|as a result|in contrast|instead|meanwhile|similarly|"
    r"also|finally|further|notably|specifically|in particular|importantly|overall|so|then|"
    r"first(?:ly)?|second(?:ly)?|third(?:ly)?),)\s+",
    re.I,
)
# Words that point back to a sentence the card may not print: never taken.
_POINTS_BACK = re.compile(
    r"^(?:this|these|those|that|such|it|its|they|their|them|both|here|there|the former|"
    r"the latter|the same|as such|other|another|to (?:this|that) end)\b"
    r"|^to (?:address|tackle|solve|overcome|mitigate|fill|bridge|close|remedy|fix|avoid) "
    r"(?:this|these|those|such|that|it|them|the (?:above|aforementioned))\b"
    r"|\b(?:this|these|those|such)\b(?!\s+(?:as|that|paper|work|study|article|post)\b)"
    r"|\b(?:the (?:former|latter|above|aforementioned)|themselves)\b",
    re.I,
)
_FIRST_PERSON = (
    (
        re.compile(r"^(?:in|with) (?:this|the) (?:paper|work|article|study),?\s+we\b", re.I),
        "The authors",
    ),
    (re.compile(r"^(?:this|the) (?:paper|work|article|study)\b", re.I), "The paper"),
    (re.compile(r"\b(?:this|the present) (paper|work|article|study)\b", re.I), r"the \1"),
    (re.compile(r"^We\b"), "The authors"),
    (re.compile(r"\bwe\b", re.I), "the authors"),
    (re.compile(r"^Our\b"), "The"),
    (re.compile(r"\bour\b", re.I), "the"),
    (re.compile(r"\bours\b", re.I), "the authors' approach"),
    (re.compile(r"\bus\b"), "the authors"),
)


_FIRST_PERSON_HINT = re.compile(r"\b(?:we|our|ours|us|this|the present)\b", re.I)


def _third_person(text: str) -> str:
    """The authors' "we" and "our" as a reader's card says them ("the authors", "the")."""
    if not _FIRST_PERSON_HINT.search(text):
        return text
    for pattern, replacement in _FIRST_PERSON:
        text = pattern.sub(replacement, text)
    return text


def find_short_name(paper: PaperInput, sentences: list[str] | None = None) -> str | None:
    """The system's name: the title's "Name: …" prefix, a one-word title, or a
    CamelCase/ALLCAPS token that opens an early abstract sentence and that the abstract
    repeats (or that opens the abstract)."""
    if paper.short_name:
        return paper.short_name
    title = clean_text(paper.title)
    excluded = {o.lower() for o in paper.organizations} | {t.lower() for t in _COMMON_TOKENS}
    if ":" in title:
        prefix = title.split(":", 1)[0].strip()
        if " " not in prefix and _is_name(prefix, excluded):
            return prefix
    if title and " " not in title and _is_name(title, excluded, allow_plain=True):
        return title
    sentences = sentences if sentences is not None else split_sentences(clean_text(paper.abstract))
    abstract = " ".join(sentences)
    for position, sentence in enumerate(sentences[:3]):
        first = sentence.split(" ", 1)[0].rstrip(",.;:'’s")
        if not _is_name(first, excluded):
            continue
        repeats = len(re.findall(rf"(?<![\w-]){re.escape(first)}(?![\w-])", abstract))
        if position == 0 or repeats >= 2:
            return first
    return None


def _is_name(token: str, excluded: set[str], *, allow_plain: bool = False) -> bool:
    if not token or len(token) > 40 or token.lower() in excluded or not _NAME_TOKEN.match(token):
        return False
    capitals = sum(1 for c in token if c.isupper())
    mixed = capitals >= 2 or any(c.isdigit() for c in token)
    return mixed or allow_plain


class OfflineDrafter:
    """Extractive English drafts from the abstract's own sentences."""

    name = NAME
    version = VERSION

    def draft_paper(self, paper: PaperInput) -> PaperDraft:
        draft = PaperDraft(drafter=self.name, drafter_version=self.version)
        abstract = clean_text(paper.abstract)
        sentences = split_sentences(abstract) if abstract else []
        draft.short_name = find_short_name(paper, sentences)
        if not abstract:
            draft.missing["en"] = "the paper has no abstract to draft from"
        elif _words(abstract) < ABSTRACT_MIN_WORDS:
            draft.missing["en"] = (
                f"the abstract is too short to draft from ({_words(abstract)} words; "
                f"at least {ABSTRACT_MIN_WORDS} needed)"
            )
        classified = [_classify(i, s) for i, s in enumerate(sentences)]
        numbers = tuple(_numbers(classified)) if "en" not in draft.missing else ()
        draft.languages["zh"] = _card_zh(paper, draft.short_name, numbers)
        draft.written_by["zh"] = (CARD_NAME, self.version, "", "")
        if "en" in draft.missing:
            return draft
        idea = _idea(classified, draft.short_name)
        chosen = _choose(classified, idea)
        if not chosen:
            draft.missing["en"] = "no sentence of the abstract reads on its own"
            return draft
        body = " ".join(_third_person(s.text) for s in chosen)
        words = _words(body)
        if words < SUMMARY_MIN_WORDS:
            draft.notes.append(
                f"en: summary has {words} words (under {SUMMARY_MIN_WORDS}): the abstract is short"
            )
        draft.notes.append("en: the takeaway is left for the editor")
        draft.languages["en"] = LanguageDraft(
            headline=_headline(paper, draft.short_name, idea),
            summary=body,
            takeaway="",
            numbers=numbers,
        )
        return draft

    def draft_intro(self, intro: IntroInput) -> IntroDraft:
        draft = IntroDraft(drafter=self.name, drafter_version=self.version)
        if not intro.entries:
            draft.missing = dict.fromkeys(("en", "zh"), "the daily has no entries to introduce")
            return draft
        draft.texts["en"] = _intro_en(intro)
        draft.texts["zh"] = _intro_zh(intro)
        return draft


def _idea(sentences: list[_Sentence], short_name: str | None) -> _Sentence:
    """The sentence that says what the work is: "we propose …", else the first one that
    opens with the system's name, else the first."""
    for sentence in sentences:
        if sentence.is_idea:
            return sentence
    if short_name:
        for sentence in sentences:
            if sentence.text.startswith(short_name):
                return sentence
    return sentences[0]


def _choose(sentences: list[_Sentence], idea: _Sentence) -> list[_Sentence]:
    """The card's sentences by role, each able to stand alone: the problem (one, before the
    approach when there is one), the approach and how it works, then the results with their
    numbers, within the word bound."""
    usable = [s for s in sentences if s.standalone]
    chosen: list[_Sentence] = []
    budget = SUMMARY_MAX_WORDS

    def take(candidate: _Sentence) -> None:
        nonlocal budget
        if candidate not in chosen and candidate.words <= budget:
            chosen.append(candidate)
            budget -= candidate.words

    # The problem is stated before the approach; a "limitation" sentence after it (what
    # the authors leave out, their lessons) is no problem statement.
    before = [s for s in usable if s.is_pain and not s.has_number and s.index < idea.index]
    for sentence in before[:1]:
        take(sentence)
    if idea.standalone:
        take(idea)
    how = [s for s in usable if s.index > idea.index and not s.has_number and not s.is_pain]
    for sentence in how[:2]:
        take(sentence)
    evidence = [s for s in usable if s.has_number and s.is_result]
    evidence += [s for s in usable if s.has_number and not s.is_result]
    for sentence in evidence:
        take(sentence)
    roles = {s.index: n for n, s in enumerate(chosen)}
    if SUMMARY_MAX_WORDS - budget < SUMMARY_MIN_WORDS:
        for sentence in sorted(usable, key=lambda s: (abs(s.index - idea.index), s.index)):
            if SUMMARY_MAX_WORDS - budget >= SUMMARY_MIN_WORDS:
                break
            take(sentence)

    # By role, then the abstract's order within one; a filler from before the approach is
    # context and goes with the problem, one from after it with the approach.
    def role(s: _Sentence) -> float:
        return roles.get(s.index, -0.5 if s.index < idea.index else 1.5)

    return sorted(chosen, key=lambda s: (role(s), s.index))


def _trim(text: str, limit: int, *, ellipsis: bool = True) -> str:
    if len(text) <= limit:
        return text
    room = limit - (1 if ellipsis else 0)
    cut = text[: room + 1].rsplit(" ", 1)[0] if " " in text[:room] else text[:room]
    cut = cut[:room].rstrip(" ,;:—-–(")
    cut = re.sub(r"\s+(?:a|an|the|of|for|to|with|and|or|in|on|by|from|at)$", "", cut, flags=re.I)
    return cut + ("…" if ellipsis else "")


_LEADING_IDEA = re.compile(
    r"^(?:(?:in|with) this (?:paper|work),?\s*)?"
    r"(?:we\s+(?:propose|present|introduce|design|develop|build|describe)|"
    r"the authors\s+(?:propose|present|introduce|design|develop|build|describe)|"
    r"this (?:paper|work|article|write-up|post)\s+(?:proposes|presents|introduces|describes))\s+",
    re.I,
)


def _headline(paper: PaperInput, short_name: str | None, idea: _Sentence) -> str:
    """What the work is, from the approach sentence ("PrefixRoute: a cache-affinity
    router", "KVStream manages storage for …"), not the title again; without an approach
    sentence, the title's subtitle, else the title."""
    title = clean_text(paper.title)
    name = short_name or ""
    if idea.is_idea or (name and idea.source.startswith(name)):
        source = _APPOSITIVE_ORIGIN.sub(" ", idea.source, count=1) if name else idea.source
        phrase, named = _compress(source, name)
        if named and phrase[len(name) :].startswith((",", ":")):
            rest = phrase[len(name) :].lstrip(" ,:")
            phrase = f"{name}: {rest[:1].upper()}{rest[1:]}"
        elif not named and name:
            phrase = f"{name}: {phrase}"
        text = _trim(_third_person(phrase), HEADLINE_TARGET_CHARS)
        if text.casefold() != title.casefold():
            return text
    rest = title
    if name and title.startswith(name):
        rest = title[len(name) :].lstrip(" :—-–")
    elif ":" in title:
        rest = title.split(":", 1)[1].strip()
    return _trim(f"{name}: {rest}" if name and rest else rest or title, HEADLINE_TARGET_CHARS)


# "C2KV, from SJTU and Alibaba, targets …": the origin is the card's, not the headline's.
_APPOSITIVE_ORIGIN = re.compile(r"(?<=\w),\s+from [^,]{2,80},\s+")


_HEAD_BREAKS = (":", ";", " — ", ", ")
_SOFT_BREAKS = (
    " so that ",
    " when ",
    " where ",
    " which ",
    " that ",
    " by ",
    " instead of ",
    " rather than ",
)


def _compress(sentence: str, name: str) -> tuple[str, bool]:
    """The idea sentence's first clause, without "<Name> is" / "We propose". The flag says
    whether the phrase still opens with the name ("PSR targets …")."""
    phrase = _LEADING_IDEA.sub("", sentence.rstrip(".…"))
    named = False
    if name and phrase.startswith(name):
        after = re.sub(r"^\s*\([^)]*\)", "", phrase[len(name) :])
        if re.match(r"^\s*(?:is|are)\s+", after):
            phrase = re.sub(r"^\s*(?:is|are)\s+", "", after).lstrip(" ,:")
        else:
            named = True
    for marks in (_HEAD_BREAKS, _SOFT_BREAKS):
        if len(phrase) <= HEADLINE_TARGET_CHARS - len(name) - 2 and marks is _SOFT_BREAKS:
            break
        cuts = [phrase.find(m) for m in marks if phrase.find(m) > 0]
        cuts = [c for c in cuts if _words(phrase[:c]) >= 3]
        if marks is _SOFT_BREAKS:
            # The longest clause that fits, not the first break ("… taken by the KV cache").
            room = HEADLINE_TARGET_CHARS - len(name) - 2
            found = [m.start() for m in re.finditer("|".join(marks), phrase)]
            fitting = [c for c in found if c <= room and _words(phrase[:c]) >= 3]
            cuts = fitting[-1:] or cuts
        if cuts:
            phrase = phrase[: min(cuts)]
            if marks is _SOFT_BREAKS:
                # "a scheme designed so that …" → "a scheme"
                phrase = re.sub(r"\s+\w+ed$", "", phrase)
    phrase = phrase.strip(" ,;:")
    if not phrase:
        return sentence, False
    return (phrase if named else phrase[:1].upper() + phrase[1:]), named


def _numbers(sentences: list[_Sentence]) -> list[str]:
    """The abstract's statements of numbers, each a sentence or clauses of one with its
    conditions, bounded in length; quantities with a magnitude (%, ×, faster) first."""
    found: list[tuple[int, int, str]] = []
    for sentence in sentences:
        if not sentence.has_number:
            continue
        for position, text in enumerate(_number_clauses(_third_person(sentence.text))):
            if _POINTS_BACK.search(text):
                continue  # "It cuts latency by 30%": whose latency, the card cannot say
            rank = 0 if _MAGNITUDE.search(text) else 1
            found.append((rank, sentence.index * 100 + position, text))
    best = sorted(found)[:NUMBERS_MAX]
    return [text for _, _, text in sorted(best, key=lambda f: f[1])]


def _number_clauses(sentence: str) -> list[str]:
    """A sentence's statements of numbers: the sentence itself when short; else its parts
    (split at ";" and ":"), and parts still too long are clauses merged left to right up to
    the bound, so a number keeps the conditions written beside it."""
    text = sentence.rstrip(".…")
    if len(text) <= NUMBER_MAX_CHARS:
        return [text]
    out: list[str] = []
    for part in _STRONG_BREAK.split(text):
        part = part.strip(" ,;:")
        if len(part) <= NUMBER_MAX_CHARS:
            chunks = [part]
        else:
            chunks = []
            for clause in _CLAUSE_BREAK.split(part):
                clause = clause.strip()
                if not clause:
                    continue
                if chunks and len(chunks[-1]) + 1 + len(clause) <= NUMBER_MAX_CHARS:
                    chunks[-1] = f"{chunks[-1]} {clause}"
                else:
                    chunks.append(clause)
        for chunk in chunks:
            chunk = _LEADING_CONJUNCTION.sub("", chunk.strip(" ,;:"))
            if chunk and numbers_in(chunk):
                out.append(_window(chunk[:1].upper() + chunk[1:]))
    return out


_STRONG_BREAK = re.compile(r"(?<=[;:])\s+")
_LEADING_CONJUNCTION = re.compile(r"^(?:and|while|whereas|but)\s+", re.I)


def _window(clause: str) -> str:
    """A clause over the bound is cut around its first number, at word boundaries."""
    if len(clause) <= NUMBER_MAX_CHARS:
        return clause
    match = _NUMBER.search(clause)
    start = max(0, (match.start() if match else 0) - NUMBER_MAX_CHARS // 3)
    if start:
        start = clause.find(" ", start) + 1 or start
    piece = clause[start:]
    trimmed = _trim(piece, NUMBER_MAX_CHARS - (1 if start else 0))
    return ("…" if start else "") + trimmed


def _intro_en(intro: IntroInput) -> str:
    """The day's count, the lead and the other entries by name and organisation, and where
    to start: facts only, no sentence of an entry's text."""
    entries = list(intro.entries)
    count = len(entries)
    papers = f"{count} paper{'s' if count != 1 else ''}"
    dives = intro.deep_dives
    lead, standouts, more = _intro_parts(entries)
    if intro.period == "week":
        dailies = f"{intro.dailies} dail{'ies' if intro.dailies != 1 else 'y'}"
        opening = f"This week's {intro.track_name_en} roundup gathers {papers} from {dailies}"
        first = f"The editors' first pick is {_named(lead, ' from ', '')}"
    else:
        opening = f"Today's {intro.track_name_en} daily has {papers}"
        first = f"The lead story is {_named(lead, ' from ', '')}"
    opening += f" and {dives} deep dive{'s' if dives != 1 else ''}." if dives else "."
    sentences = [opening, _stop(first)]
    if standouts:
        names = [_named(e, " (", ")") for e in standouts]
        if more:
            also = ", ".join(names) + f" and {more} more"
        elif len(names) > 1:
            also = ", ".join(names[:-1]) + f" and {names[-1]}"
        else:
            also = names[0]
        sentences.append(_stop(f"Also in it: {also}"))
    start = f"Start with {_entry_name(lead)}"
    dived = next((e for e in standouts if e.has_deep_dive), None)
    if lead.has_deep_dive:
        start += " and its deep dive"
    elif dived is not None:
        start += f", then the deep dive on {_entry_name(dived)}"
    sentences.append(_stop(start))
    return " ".join(sentences)


def _stop(sentence: str) -> str:
    """A full stop, unless the sentence ends with a trimmed name's ellipsis already."""
    return sentence if sentence.endswith("…") else sentence + "."


def _intro_zh(intro: IntroInput) -> str:
    """The Chinese intro from the same facts, written for Chinese readers (no translation)."""
    entries = list(intro.entries)
    track = intro.track_name_zh or intro.track_name_en
    if intro.period == "week":
        opening = f"本周{track}周报汇集 {intro.dailies} 期日报中的 {len(entries)} 篇论文"
        first = f"编辑首选 {_named(lead_of(entries), '（', '）', '、')}。"
    else:
        opening = f"今天的{track}日报收录 {len(entries)} 篇论文"
        first = f"头条是 {_named(lead_of(entries), '（', '）', '、')}。"
    opening += f"、{intro.deep_dives} 篇深度解读。" if intro.deep_dives else "。"
    lead, standouts, more = _intro_parts(entries)
    sentences = [opening, first]
    if standouts:
        also = "、".join(_named(e, "（", "）", "、") for e in standouts)
        sentences.append(f"另有 {also}" + (f" 等 {more} 篇。" if more else "。"))
    start = f"建议先读 {_entry_name(lead)}"
    dived = next((e for e in standouts if e.has_deep_dive), None)
    if lead.has_deep_dive:
        start += " 及其深度解读"
    elif dived is not None:
        start += f"，再看 {_entry_name(dived)} 的深度解读"
    sentences.append(start + "。")
    return "".join(sentences)


def lead_of(entries: list[IntroEntry]) -> IntroEntry:
    """The entry an intro opens with: the (first) lead, else the first."""
    return next((e for e in entries if e.is_lead), entries[0])


def _intro_parts(entries: list[IntroEntry]) -> tuple[IntroEntry, list[IntroEntry], int]:
    """The lead, the standouts (deep dives first, then position) and how many more."""
    lead = lead_of(entries)
    others = [e for e in entries if e is not lead]
    others.sort(key=lambda e: not e.has_deep_dive)  # stable: deep dives first, then position
    return lead, others[:INTRO_STANDOUTS], max(0, len(others) - INTRO_STANDOUTS)


def _named(entry: IntroEntry, before: str, after: str, joiner: str = ", ") -> str:
    """ "PrefixRoute (Alibaba)": the entry's name, with its organisations when it has any."""
    orgs = joiner.join(entry.organizations)
    return f"{_entry_name(entry)}{before}{orgs}{after}" if orgs else _entry_name(entry)


def _entry_name(entry: IntroEntry) -> str:
    return entry.short_name or _trim(clean_text(entry.title), 60)


def _card_zh(paper: PaperInput, short_name: str | None, numbers: tuple[str, ...]) -> LanguageDraft:
    """The Chinese card: the entry's facts, each from the source or the site's records, and
    a note saying what it is. No sentence of the abstract is rendered in Chinese."""
    labels = [o for o in paper.organizations if o][:3]
    facts = [CARD_NOTE_ZH]
    if short_name:
        facts.append(f"系统：{short_name}。")
    if labels:
        facts.append(f"机构：{'、'.join(labels)}。")
    if paper.venue:
        facts.append(f"发表场合：{paper.venue}。")
    terms = _card_terms(paper)
    if terms:
        facts.append(f"涉及术语：{'、'.join(terms)}。")
    figures = list(dict.fromkeys(_figure_zh(n) for text in numbers for n in numbers_in(text)))
    if figures:
        shown = "、".join(figures[:CARD_NUMBERS_MAX])
        facts.append(f"摘要给出的数字：{shown}（各数字的条件见英文摘要）。")
    about = " · ".join(x for x in (labels[0] if labels else "", paper.venue) if x)
    headline = f"{short_name}：论文资料卡" if short_name else "论文资料卡"
    if about:
        headline += f"（{about}）"
    return LanguageDraft(
        headline=_trim(headline, HEADLINE_MAX_CHARS), summary="".join(facts), takeaway=""
    )


def _figure_zh(number: str) -> str:
    """A figure as Chinese writes its unit ("5 percentage" → "5 个百分点", "3 times" → "3 倍")."""
    for unit, zh in ((" percentage", " 个百分点"), (" times", " 倍")):
        if number.endswith(unit):
            return number[: -len(unit)] + zh
    for unit, factor, zh in ((" million", 100, " 万"), (" billion", 10, " 亿")):
        if number.endswith(unit) and number[: -len(unit)].replace(".", "").isdigit():
            value = Decimal(number[: -len(unit)]) * factor  # 40 million = 4000 万
            return f"{value.normalize():f}{zh}"
    return number


def _card_terms(paper: PaperInput) -> list[str]:
    """The track's glossary terms the source uses, as "中文（English）" (or the term alone
    where engineers keep it in Latin letters)."""
    source = clean_text(paper.source_text).casefold()
    found = []
    for entry in paper.glossary:
        term = re.escape(entry.en.casefold())
        if not entry.zh or not re.search(rf"(?<![\w-]){term}(?![\w-])", source):
            continue
        zh = entry.zh[0]
        found.append(zh if zh.casefold() == entry.en.casefold() else f"{zh}（{entry.en}）")
        if len(found) == CARD_TERMS_MAX:
            break
    return found
