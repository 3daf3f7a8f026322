"""Text → index terms, the same way for documents and queries, in Chinese and English.

Both backends receive terms made here, never raw text: PostgreSQL gets tsvector/tsquery
literals and SQLite FTS5 gets space-separated terms, so neither depends on a database parser,
locale or stemmer, and the two find the same papers.

- Latin-script words are NFKC-normalised, case-folded and stemmed with the Snowball English
  stemmer (the algorithm PostgreSQL's ``english`` configuration uses); ``KVCache`` also yields
  ``kv`` and ``cache``.
- Runs of Chinese characters are segmented with jieba: documents in "search" mode, which also
  emits the shorter words inside longer ones (注意力 → 注意, 注意力), queries in precise mode, so
  a two- or three-character query finds the word inside a longer run.
- Everything that is not a letter or a digit separates terms. Quotes, operators and SQL in a
  query are therefore just separators: a query can never be anything but a list of plain terms.
"""

from __future__ import annotations

import functools
import logging
import re
import threading
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from search.limits import MAX_QUERY_CHARS, MAX_QUERY_TERMS

if TYPE_CHECKING:
    import jieba

# Longer "words" are noise (hashes, base64); they are neither indexed nor searched.
MAX_TERM_CHARS = 40

_HAN = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
# A run of Chinese characters, or a run of other letters and digits (no underscore).
RUN_RE = re.compile(rf"(?P<han>[{_HAN}]+)|(?P<word>[^\W_{_HAN}]+)")
# A run of other letters and digits alone: RUN_RE's words (a run of Chinese ends one too).
WORD_CHAR = rf"[^\W_{_HAN}]"
WORD_RE = re.compile(rf"{WORD_CHAR}+")
# Where a camel-cased word splits: KVCache → KV|Cache, BellowsKV → Bellows|KV.
CAMEL_RE = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")

# Lucene's English stop words, and the Chinese function words that carry nothing alone.
STOP_WORDS = frozenset(
    {
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "but",
        "by",
        "for",
        "if",
        "in",
        "into",
        "is",
        "it",
        "no",
        "not",
        "of",
        "on",
        "or",
        "such",
        "that",
        "the",
        "their",
        "then",
        "there",
        "these",
        "they",
        "this",
        "to",
        "was",
        "will",
        "with",
    }
)
STOP_HAN = frozenset("的了是在和与及把被也都就而并或这那之其为对从以于着个将让给等")

_jieba_ready = threading.Lock()
_jieba_initialised = False


def _segmenter() -> jieba.Tokenizer:
    """jieba's default tokenizer, initialised once per process, quietly.

    The dictionary ships inside the wheel; initialising reads it (about a second) and
    nothing is downloaded. jieba is imported here, not at the top, so that a process that
    segments no Chinese (a manage.py command, a worker start) does not pay for it.
    """
    import jieba

    global _jieba_initialised
    if not _jieba_initialised:
        with _jieba_ready:
            if not _jieba_initialised:
                jieba.setLogLevel(logging.WARNING)
                jieba.initialize()
                _jieba_initialised = True
    return jieba.dt


@functools.cache
def _stemmer():
    """The English stemmer, made on first use: importing snowballstemmer loads every
    language's stemmer (a fifth of a second)."""
    import snowballstemmer

    return snowballstemmer.stemmer("english")


_stem_lock = threading.Lock()


@functools.lru_cache(maxsize=200_000)
def stem(word: str) -> str:
    """Snowball English stem of a lower-case word; words with digits are kept whole."""
    if not word.isalpha() or not word.isascii():
        return word
    # snowballstemmer's stemmer objects keep state between calls: one thread at a time.
    with _stem_lock:
        return _stemmer().stemWord(word)


@dataclass(frozen=True, slots=True)
class Token:
    """One term found in a text: ``term`` is what is indexed, ``surface`` the word as written
    (lower-cased), ``start``/``end`` its place in the original text."""

    term: str
    surface: str
    start: int
    end: int


def _fold(text: str) -> str:
    return unicodedata.normalize("NFKC", text).casefold()


def latin_tokens(word: str, start: int = 0, *, parts: bool = True) -> Iterator[Token]:
    """The terms of one Latin-script word (and of its camel-case parts)."""
    folded = _fold(word)
    if len(folded) > MAX_TERM_CHARS:
        return
    if folded not in STOP_WORDS:
        yield Token(stem(folded), folded, start, start + len(word))
    if parts:
        pieces = CAMEL_RE.findall(word)
        if len(pieces) > 1:
            for piece in pieces:
                low = _fold(piece)
                # "S3" or "v2" parts would be noise: only parts of two letters or more.
                if len(low) > 1 and not low.isdigit() and low not in STOP_WORDS:
                    yield Token(stem(low), low, start, start + len(word))


# Words whose terms are kept (a few hundred bytes each): a page's words are mostly the
# corpus's common ones. A longer word than WORD_TERMS_LONGEST is worked out each time: it
# yields no term (MAX_TERM_CHARS) and would only fill the cache (a pasted blob, say).
WORD_TERMS_KEPT = 50_000
WORD_TERMS_LONGEST = 4 * MAX_TERM_CHARS


def word_terms(word: str) -> tuple[str, ...]:
    """The terms of one Latin-script word of a text, its camel-case parts' included
    (``latin_tokens``), worked out once per process: the highlighter asks for every word of
    every result on a page, and the pages of one corpus repeat its words."""
    if len(word) > WORD_TERMS_LONGEST:
        return _terms_of(word)
    return _kept_terms_of(word)


def _terms_of(word: str) -> tuple[str, ...]:
    return tuple(token.term for token in latin_tokens(word, parts=True))


_kept_terms_of = functools.lru_cache(maxsize=WORD_TERMS_KEPT)(_terms_of)


class WordsByTerm:
    """The Latin-script words this process has met in texts, by each of their terms
    (``word_terms``), so that which of a text's words a query's terms match is a few set
    operations in C: a page of search results asks it of some 2,500 distinct words, and
    asking them one by one was a tenth of the page. At most ``kept`` words are known (the
    words of a corpus repeat); past that it starts afresh. A word longer than
    ``WORD_TERMS_LONGEST`` is worked out each time and never kept, as by ``word_terms``."""

    def __init__(self, kept: int) -> None:
        self.kept = kept
        self._known: set[str] = set()
        self._by_term: dict[str, set[str]] = {}
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._known)

    def clear(self) -> None:
        with self._lock:
            self._known.clear()
            self._by_term.clear()

    def matching(self, words: set[str], terms: frozenset[str]) -> set[str]:
        """Those of ``words`` one of whose terms is in ``terms``."""
        found: set[str] = set()
        with self._lock:
            new = words.difference(self._known)
            if new:
                if len(self._known) + len(new) > self.kept:
                    self._known.clear()
                    self._by_term.clear()
                    new = words
                for word in new:
                    if len(word) > WORD_TERMS_LONGEST or len(self._known) >= self.kept:
                        if not terms.isdisjoint(_terms_of(word)):
                            found.add(word)
                        continue
                    for term in _kept_terms_of(word):
                        self._by_term.setdefault(term, set()).add(word)
                    self._known.add(word)
            for term in terms:
                having = self._by_term.get(term)
                if having:
                    found |= words & having
        return found


words_by_term = WordsByTerm(WORD_TERMS_KEPT)


def _han_tokens(run: str, start: int, *, mode: str) -> Iterator[Token]:
    for word, a, b in _segmenter().tokenize(run, mode=mode):
        word = word.strip()
        if word and word not in STOP_HAN and len(word) <= MAX_TERM_CHARS:
            yield Token(word, word, start + a, start + b)


def tokens(text: str, *, query: bool = False) -> Iterator[Token]:
    """The terms of ``text`` with their places. Documents get the generous segmentation
    (sub-words, camel-case parts); queries the precise one."""
    for match in RUN_RE.finditer(text):
        if match.group("han"):
            yield from _han_tokens(
                match.group(), match.start(), mode="default" if query else "search"
            )
        else:
            yield from latin_tokens(match.group(), match.start(), parts=not query)


def terms(text: str) -> list[str]:
    """The index terms of a document text, in order, repeats kept (they count)."""
    return [t.term for t in tokens(text)]


@dataclass(frozen=True, slots=True)
class QueryTerm:
    term: str
    surface: str

    @property
    def is_latin(self) -> bool:
        return self.surface.isascii()


def parse_query(raw: str | None) -> list[QueryTerm]:
    """A query as distinct plain terms, in the order typed; never raises.

    Everything but letters and digits is a separator, so quotes, operators, SQL and markup
    are dropped rather than interpreted; the text is cut to ``MAX_QUERY_CHARS`` first.
    """
    text = normalise_query(raw)
    seen: dict[str, QueryTerm] = {}
    for token in tokens(text, query=True):
        if token.term not in seen:
            seen[token.term] = QueryTerm(token.term, token.surface)
        if len(seen) == MAX_QUERY_TERMS:
            break
    return list(seen.values())


def normalise_query(raw: str | None) -> str:
    """The query as the reader typed it, trimmed and bounded, for forms and links."""
    # Control characters and odd spaces (U+3000…) become plain spaces.
    text = "".join(ch if ch.isprintable() else " " for ch in (raw or "")[:MAX_QUERY_CHARS])
    return " ".join(text.split())
