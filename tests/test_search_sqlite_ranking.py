"""The SQLite backend ranks a row from ``occurrences`` (the query's terms found by the token
lists' own searches), which gives ``rank_or`` what ``positions`` (one Python step per token)
gives it: the same lists, so the same rank, also past PostgreSQL's 256 positions per term and
past its last position (16383)."""

from __future__ import annotations

import random

import pytest

from search.backends.ranking import MAX_POSITION, MAX_POSITIONS, occurrences, positions, rank_or
from search.backends.sqlite import _sqlite_rank

WORDS = ["quasar", "quartz", "pulsar", "nova", "nebula", "qubit", "star"]


def _fields(rng: random.Random, lengths: tuple[int, int, int]) -> tuple[list[str], ...]:
    return tuple([rng.choice(WORDS) for _ in range(n)] for n in lengths)


def _read(doc: dict, terms: tuple[str, ...], prefixes: tuple[str, ...]) -> dict:
    """What ``rank_or`` reads of ``doc``."""
    return {t: v for t, v in doc.items() if t in terms or any(t.startswith(p) for p in prefixes)}


@pytest.mark.parametrize(
    "lengths",
    [
        (0, 0, 0),
        (3, 0, 0),
        (0, 5, 9),
        (12, 80, 150),
        (10, 2000, 0),  # more than MAX_POSITIONS of each word
        (50, MAX_POSITION - 60, 400),  # past the last position, in the C field
        (MAX_POSITION + 5, 3, 3),  # past it already in the A field
    ],
)
@pytest.mark.parametrize(
    ("terms", "prefixes"),
    [
        (("quasar",), ()),
        (("quasar", "nova"), ()),
        (("absent",), ()),
        (("pulsar",), ("qua",)),
        (("quasar",), ("qu", "neb")),
        ((), ("star",)),
    ],
)
def test_it_finds_the_lists_positions_finds(lengths, terms, prefixes):
    rng = random.Random(f"{lengths} {terms} {prefixes}")
    fields = _fields(rng, lengths)
    full = positions(fields)
    found = occurrences(fields, terms, prefixes)
    assert found == _read(full, terms, prefixes)
    assert all(len(v) <= MAX_POSITIONS for v in found.values())
    assert rank_or(found, terms, prefixes) == rank_or(full, terms, prefixes)


def test_its_sql_function_ranks_as_rank_or_over_every_position():
    rng = random.Random(7)
    for _ in range(200):
        fields = _fields(rng, (rng.randint(0, 20), rng.randint(0, 120), rng.randint(0, 200)))
        expected = round(rank_or(positions(fields), ("quasar", "nova"), ("qu",)), 6)
        assert _sqlite_rank(*(" ".join(f) for f in fields), "quasar nova qu*") == expected
