"""The SQLite backend's spelling suggestions compare a query word only with the vocabulary
words that share a trigram with it (in SQL), and suggest what comparing every word would."""

from __future__ import annotations

import random
import string

import pytest

from search.backends.sqlite import (
    SIMILARITY_THRESHOLD,
    SqliteBackend,
    _trigrams,
    sharing_a_trigram,
    trigram_similarity,
)
from search.models import SearchTerm, SearchWord


def _vocabulary(rng: random.Random, n: int) -> list[str]:
    letters = "etaoinshrdlcu"  # few letters: many near spellings
    return sorted({"".join(rng.choices(letters, k=rng.randint(4, 10))) for _ in range(n)})


def _misspelt(rng: random.Random, word: str) -> str:
    chars = list(word)
    i = rng.randrange(len(chars))
    edit = rng.choice(["swap", "drop", "add", "change"])
    if edit == "swap" and i + 1 < len(chars):
        chars[i], chars[i + 1] = chars[i + 1], chars[i]
    elif edit == "drop" and len(chars) > 4:
        del chars[i]
    elif edit == "add":
        chars.insert(i, rng.choice(string.ascii_lowercase))
    else:
        chars[i] = rng.choice(string.ascii_lowercase)
    return "".join(chars)


@pytest.fixture
def vocabulary(db):
    rng = random.Random(7)
    words = _vocabulary(rng, 600)
    SearchWord.objects.bulk_create([SearchWord(word=w, term=w[:6]) for w in words])
    SearchTerm.objects.bulk_create(
        [SearchTerm(term=t, documents=rng.randint(1, 9)) for t in {w[:6] for w in words}]
    )
    return words


def test_every_word_similar_enough_shares_a_trigram(vocabulary):
    rng = random.Random(11)
    for _ in range(60):
        query = _misspelt(rng, rng.choice(vocabulary))
        kept = set(
            SearchWord.objects.filter(sharing_a_trigram(query)).values_list("word", flat=True)
        )
        for word in vocabulary:
            if trigram_similarity(query, word) > 0:
                assert word in kept, (query, word)
            if word in kept:
                assert _trigrams(query) & _trigrams(word), (query, word)


def test_the_suggestions_are_those_of_comparing_every_word(vocabulary):
    rng = random.Random(13)
    documents = dict(SearchTerm.objects.values_list("term", "documents"))
    backend = SqliteBackend()
    for _ in range(40):
        query = _misspelt(rng, rng.choice(vocabulary))
        every = sorted(
            (-trigram_similarity(query, w), -documents[w[:6]], w, w[:6])
            for w in vocabulary
            if abs(len(w) - len(query)) <= 3
            and trigram_similarity(query, w) >= SIMILARITY_THRESHOLD
        )
        assert backend.similar_words(query, limit=3) == [(t, w) for _, _, w, t in every[:3]]
