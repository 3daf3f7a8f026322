"""Names: every organisation or venue a draft names must be the paper's."""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from dataclasses import dataclass

from papers.drafting.grounding.text import (
    ALNUM,
    NAME_KINDS,
    GroundingFlag,
    lowercased,
    normalise,
    quote,
    word_hits,
)

_YEAR_TAIL_RE = re.compile(r"^(?P<base>.*?\S)\s*(?:'(?P<y2>\d{2})|(?P<y4>(?:19|20)\d{2}))$")
_YEAR_AFTER = r"(?:\s*'(?P<y2>\d{2})(?![0-9])|\s*(?P<y4>(?:19|20)\d{2})(?![0-9]))?"
_ALNUM_WORD_RE = re.compile(r"[A-Za-z0-9]+")


def clean_name(name: str) -> str:
    return " ".join(normalise(name).split())


def split_year(name: str) -> tuple[str, int | None]:
    m = _YEAR_TAIL_RE.match(name)
    if not m:
        return name, None
    year = int(m["y4"]) if m["y4"] else 2000 + int(m["y2"])
    return m["base"], year


def _is_match_of(written: str, name: str) -> bool:
    """Case-insensitive, except where that would read ordinary words as names: a short
    all-capitals acronym (FAST, ATC, AMD) matches only in capitals, and no capitalised name
    matches a word written all in lower case ("fast", "bing")."""
    letters = [c for c in name if c.isascii() and c.isalpha()]
    if letters and len(letters) <= 4 and all(c.isupper() for c in letters):
        return written == name
    return not (written.islower() and not name.islower() and name.isascii())


@dataclass(frozen=True)
class _NameHit:
    start: int
    name_end: int
    end: int  # after the year, when one follows
    base: str
    year: int | None


class _NameMatcher:
    """Finds a vocabulary of names in a text. Latin names are looked up by their first word
    (one pass over the text's words, whatever the vocabulary's size); others (微软) by
    substring."""

    def __init__(self, bases: tuple[str, ...], with_year: bool) -> None:
        year = _YEAR_AFTER if with_year else ""
        self.by_first_word: dict[str, list[tuple[str, re.Pattern]]] = {}
        self.others: list[tuple[str, re.Pattern]] = []
        for base in sorted(bases, key=len, reverse=True):
            body = r"\s+".join(re.escape(part) for part in base.split(" "))
            if base[-1].isascii() and base[-1].isalnum():
                body += rf"(?![{ALNUM}])"
            first = _ALNUM_WORD_RE.match(base)
            if first and base[0].isascii():
                pattern = re.compile(rf"(?P<name>{body}){year}", re.I)
                self.by_first_word.setdefault(first[0].casefold(), []).append((base, pattern))
            else:
                self.others.append((base, re.compile(rf"(?P<name>{body}){year}", re.I)))
        self.first_words = frozenset(self.by_first_word)

    def hits(self, text: str) -> list[_NameHit]:
        norm = normalise(text)
        candidates: list[_NameHit] = []
        for start, _, word in word_hits(lowercased(norm), self.first_words):
            for base, pattern in self.by_first_word[word]:
                m = pattern.match(norm, start)
                if m and _is_match_of(" ".join(m["name"].split()), base):
                    candidates.append(self._hit(m, base))
                    break
        folded = norm.casefold() if self.others else ""
        for base, pattern in self.others:
            # a substring test first: most texts name none of these (微软 in English prose)
            if base.split(" ", 1)[0].casefold() not in folded:
                continue
            for m in pattern.finditer(norm):
                if m.start() and base[0].isascii() and norm[m.start() - 1].isalnum():
                    continue
                candidates.append(self._hit(m, base))
        candidates.sort(key=lambda h: (h.start, -h.name_end))
        hits: list[_NameHit] = []
        for hit in candidates:  # the longest name at each place, none overlapping
            if not hits or hit.start >= hits[-1].name_end:
                hits.append(hit)
        return hits

    @staticmethod
    def _hit(m: re.Match, base: str) -> _NameHit:
        groups = m.groupdict()
        year = None
        if groups.get("y4"):
            year = int(groups["y4"])
        elif groups.get("y2"):
            year = 2000 + int(groups["y2"])
        return _NameHit(m.start(), m.end("name"), m.end(), base, year)


@functools.lru_cache(maxsize=64)
def _name_matcher(bases: tuple[str, ...], with_year: bool) -> _NameMatcher:
    return _NameMatcher(bases, with_year)


@functools.lru_cache(maxsize=256)
def name_vocabulary(
    kind: str, paper_names: tuple[str, ...], known_names: tuple[str, ...]
) -> tuple[_NameMatcher, dict[str, frozenset[int]], str]:
    """The matcher over every name, the paper's own names (casefolded base → its years) and
    how the paper's names read in a detail sentence."""
    venue = kind == "venue"
    paper_years: dict[str, set[int]] = {}
    written: list[str] = []
    bases: dict[str, str] = {}
    for raw in paper_names:
        name = clean_name(raw)
        if not name:
            continue
        base, year = split_year(name) if venue else (name, None)
        paper_years.setdefault(base.casefold(), set())
        if year is not None:
            paper_years[base.casefold()].add(year)
        written.append(name)
        bases.setdefault(base.casefold(), base)
    for raw in known_names:
        name = clean_name(raw)
        if name:
            base = split_year(name)[0] if venue else name
            bases.setdefault(base.casefold(), base)
    matcher = _name_matcher(tuple(sorted(bases.values())), venue)
    years = {key: frozenset(value) for key, value in paper_years.items()}
    return matcher, years, ", ".join(dict.fromkeys(written[:3])) or "none recorded"


def check_names(
    draft: str, *, kind: str, paper_names: Iterable[str], known_names: Iterable[str]
) -> list[GroundingFlag]:
    """A flag for every name the site knows (``known_names``: organisations or venues, with
    their aliases) that ``draft`` mentions but that is not one of ``paper_names``; for venues,
    also for the paper's venue given with another year ("NSDI 2026" for NSDI 2027).

    Latin names match as whole words, case-insensitively (but see ``_is_match_of``); others
    (微软) as plain substrings. Of overlapping names the longest counts, so the paper's
    "Microsoft Research" is not read as a bare "Microsoft"."""
    if kind not in NAME_KINDS:
        raise ValueError(f"kind must be one of {', '.join(NAME_KINDS)}, not {kind!r}")
    matcher, paper_years, own = name_vocabulary(kind, tuple(paper_names), tuple(known_names))
    noun = "organisations" if kind == "organization" else "venue"
    flags: list[GroundingFlag] = []
    for hit in matcher.hits(draft):
        years = paper_years.get(hit.base.casefold())
        if years is None:
            written = draft[hit.start : hit.name_end]
            detail = f"{quote(written)} is not one of the paper's {noun} ({quote(own)[1:-1]})."
            flags.append(GroundingFlag(kind, written, hit.start, hit.name_end, detail))
        elif hit.year is not None and years and hit.year not in years:
            written = draft[hit.start : hit.end]
            expected = " or ".join(f"{hit.base} {y}" for y in sorted(years))
            detail = f"{quote(written)} gives another year than the paper's {expected}."
            flags.append(GroundingFlag(kind, written, hit.start, hit.end, detail))
    return flags
