"""The offline extractive drafter: the embedded default (no network, deterministic).

It only copies: the English headline, summary, takeaway and headline numbers are the paper's
own title and abstract sentences (or clauses of them), chosen to follow CONTENT.md's moves as
far as extraction allows — the pain, the idea, the evidence with its numbers. So every number
it writes occurs in the source. It writes no Chinese; the pages show the English with the
"not yet translated" note.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

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
VERSION = "1"

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

ENGLISH_ONLY = "the offline drafter writes English only"

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
_NUMBER = re.compile(
    r"(?<![\w.\-])(?:\d+(?:[.,]\d+)*)(?:\s?(?:%|×|x\b|X\b|K\b|M\b|B\b|times\b|ms\b|percentage))?"
)
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
    text: str
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
        if _YEAR.match(value):
            continue
        found.append(value)
    return found


def _classify(index: int, text: str) -> _Sentence:
    return _Sentence(
        index=index,
        text=text,
        words=_words(text),
        has_number=bool(numbers_in(text)),
        is_idea=bool(_IDEA.search(text)),
        is_pain=bool(_PAIN.search(text)),
        is_result=bool(_RESULT.search(text)) or bool(_MAGNITUDE.search(text)),
    )


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
        draft.missing["zh"] = ENGLISH_ONLY
        abstract = clean_text(paper.abstract)
        sentences = split_sentences(abstract) if abstract else []
        draft.short_name = find_short_name(paper, sentences)
        if not abstract:
            draft.missing["en"] = "the paper has no abstract to draft from"
            return draft
        if _words(abstract) < ABSTRACT_MIN_WORDS:
            draft.missing["en"] = (
                f"the abstract is too short to draft from ({_words(abstract)} words; "
                f"at least {ABSTRACT_MIN_WORDS} needed)"
            )
            return draft
        classified = [_classify(i, s) for i, s in enumerate(sentences)]
        idea = _idea(classified, draft.short_name)
        chosen = _choose(classified, idea)
        body = " ".join(s.text for s in chosen)
        words = _words(body)
        if words < SUMMARY_MIN_WORDS:
            draft.notes.append(
                f"en: summary has {words} words (under {SUMMARY_MIN_WORDS}): the abstract is short"
            )
        takeaway = _takeaway(chosen, idea)
        draft.languages["en"] = LanguageDraft(
            headline=_headline(paper, draft.short_name, idea),
            summary=body,
            takeaway=takeaway,
            numbers=tuple(_numbers(classified)),
        )
        return draft

    def draft_intro(self, intro: IntroInput) -> IntroDraft:
        draft = IntroDraft(drafter=self.name, drafter_version=self.version)
        draft.missing["zh"] = ENGLISH_ONLY
        if not intro.entries:
            draft.missing["en"] = "the daily has no entries to introduce"
            return draft
        draft.texts["en"] = _intro_en(intro)
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
    """Sentences for the summary, in the abstract's order: the idea, up to two pain
    sentences, the evidence, then the mechanism around the idea, within the word bound."""
    chosen = {idea.index: idea}
    budget = SUMMARY_MAX_WORDS - idea.words

    def take(candidate: _Sentence) -> None:
        nonlocal budget
        if candidate.index not in chosen and candidate.words <= budget:
            chosen[candidate.index] = candidate
            budget -= candidate.words

    pains = [s for s in sentences if s.is_pain and not s.has_number and s.index != idea.index]
    before = [s for s in pains if s.index < idea.index]
    for sentence in (before or pains)[:2]:
        take(sentence)
    evidence = [s for s in sentences if s.has_number and s.is_result]
    evidence += [s for s in sentences if s.has_number and not s.is_result]
    for sentence in evidence:
        take(sentence)
    # Fill with what surrounds the idea (how it works), nearest first.
    by_distance = sorted(sentences, key=lambda s: (abs(s.index - idea.index), s.index))
    for sentence in by_distance:
        if SUMMARY_MAX_WORDS - budget >= SUMMARY_MIN_WORDS:
            break
        take(sentence)
    return [chosen[i] for i in sorted(chosen)]


def _takeaway(chosen: list[_Sentence], idea: _Sentence) -> str:
    """A sentence of the summary: the idea sentence, else a result with its number, else the
    shortest — short ones first, and never over the column."""
    for limit in (TAKEAWAY_TARGET_CHARS, TAKEAWAY_MAX_CHARS):
        if idea in chosen and len(idea.text) <= limit:
            return idea.text
        results = [s for s in chosen if s.is_result and s.has_number and len(s.text) <= limit]
        if results:
            return min(results, key=lambda s: (len(s.text), s.index)).text
        fits = [s for s in chosen if len(s.text) <= limit]
        if fits:
            return min(fits, key=lambda s: (len(s.text), s.index)).text
    # Every sentence is over the column: a word-boundary prefix still occurs in the summary.
    return _trim(chosen[0].text, TAKEAWAY_MAX_CHARS, ellipsis=False)


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
    r"this (?:paper|work|article|write-up|post)\s+(?:proposes|presents|introduces|describes))\s+",
    re.I,
)


def _headline(paper: PaperInput, short_name: str | None, idea: _Sentence) -> str:
    """ "<Name>: <the title's subject>", or the title trimmed; when the title is only a name,
    "<Name>: <the idea sentence's first clause>"."""
    title = clean_text(paper.title)
    rest = title
    if short_name and title.startswith(short_name):
        rest = title[len(short_name) :].lstrip(" :—-–")
    elif short_name and ":" in title:
        # "Let the Gate Decide: Per-Lookup Precision …" — the name replaces the slogan.
        rest = title.split(":", 1)[1].strip()
    if rest and _words(rest) >= 3 and not rest.startswith("("):
        text = f"{short_name}: {rest}" if short_name else rest
        return _trim(text, HEADLINE_TARGET_CHARS)
    # A title that is only a name says nothing: compress the idea sentence instead.
    name = short_name or title
    phrase, named = _compress(idea.text, name)
    return _trim(phrase if named else f"{name}: {phrase}", HEADLINE_TARGET_CHARS)


_HEAD_BREAKS = (":", ";", " — ", ", ")
_SOFT_BREAKS = (" so that ", " when ", " where ", " which ", " that ", " by ", " instead of ")


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
        for position, text in enumerate(_number_clauses(sentence.text)):
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
    entries = list(intro.entries)
    count = len(entries)
    papers = f"{count} paper{'s' if count != 1 else ''}"
    dives = intro.deep_dives
    opening = f"Today's {intro.track_name_en} daily has {papers}"
    opening += f" and {dives} deep dive{'s' if dives != 1 else ''}." if dives else "."
    sentences = [opening]
    lead = next((e for e in entries if e.is_lead), entries[0])
    sentences.append(f"The lead story is {_entry_name(lead)}: {_sentence(lead.takeaway)}")
    others = [e for e in entries if e is not lead]
    others.sort(key=lambda e: not e.has_deep_dive)  # stable: deep dives first, then position
    standouts = others[:INTRO_STANDOUTS]
    for entry in standouts:
        sentences.append(f"{_entry_name(entry)}: {_sentence(entry.takeaway)}")
    dived = [e for e in [lead, *standouts] if e.has_deep_dive]
    start = f"Start with {_entry_name(lead)}"
    if dived and dived[0] is not lead:
        start += f", then the deep dive on {_entry_name(dived[0])}"
    elif lead.has_deep_dive:
        start += " and its deep dive"
    sentences.append(start + ".")
    return " ".join(s for s in sentences if s)


def _entry_name(entry: IntroEntry) -> str:
    return entry.short_name or _trim(clean_text(entry.title), 60)


def _sentence(text: str) -> str:
    text = clean_text(text)
    if not text:
        return "see the entry."
    return text if text[-1] in ".!?…" else text + "."
