"""The ranking formula both backends share: PostgreSQL's ``ts_rank`` over the "any term" form
of the query, with weights A 1.0 (title, takeaways, headlines, topic names), B 0.4
(summaries), C 0.2 (abstract, organisations), so that every matched term counts the same
whatever their distance. PostgreSQL computes it itself (``TS_RANK_WEIGHTS``); SQLite with
``rank_or`` below, a line-for-line copy of PostgreSQL's ``calc_rank_or``, over positions
numbered as ``positions`` numbers them (the PostgreSQL backend's ``vector_literals`` numbers
them the same way). Ties go to the newer paper, then the higher id.
"""

from __future__ import annotations

from collections.abc import Sequence

# ts_rank's weights, in PostgreSQL's order {D, C, B, A}, and by class letter for rank_or.
TS_RANK_WEIGHTS = "{0.1, 0.2, 0.4, 1.0}"
WEIGHT_OF = {"A": 1.0, "B": 0.4, "C": 0.2}
FIELD_CLASSES = ("A", "B", "C")
# PostgreSQL keeps at most 256 positions per lexeme, and positions up to 16383.
MAX_POSITIONS = 256
MAX_POSITION = 16383


def positions(fields: Sequence[Sequence[str]]) -> dict[str, list[tuple[int, float]]]:
    """Each term's (position, weight) list, numbered as ``vector_literals`` numbers them:
    one position per token across the A, B and C fields, at most 256 per term."""
    found: dict[str, list[tuple[int, float]]] = {}
    position = 0
    for weight_class, terms in zip(FIELD_CLASSES, fields, strict=True):
        weight = WEIGHT_OF[weight_class]
        for term in terms:
            position = min(position + 1, MAX_POSITION)
            seen = found.setdefault(term, [])
            if len(seen) < MAX_POSITIONS and (not seen or seen[-1][0] != position):
                seen.append((position, weight))
    return found


def occurrences(
    fields: Sequence[Sequence[str]], terms: Sequence[str], prefixes: Sequence[str] = ()
) -> dict[str, list[tuple[int, float]]]:
    """What ``positions`` gives for the terms ``rank_or`` reads (the query's terms and the
    document's terms with one of its prefixes), the same lists, found by the lists' own
    searches instead of one Python step per token: so ``rank_or`` over either is the same
    number, and ranking a paper costs about its matched terms, not its length."""
    wanted = set(terms)
    if prefixes:
        for tokens in fields:
            wanted.update(t for t in set(tokens) if t.startswith(tuple(prefixes)))
    found: dict[str, list[tuple[int, float]]] = {}
    for term in wanted:
        seen: list[tuple[int, float]] = []
        start = 0
        for weight_class, tokens in zip(FIELD_CLASSES, fields, strict=True):
            weight = WEIGHT_OF[weight_class]
            index = -1
            for _ in range(tokens.count(term)):
                index = tokens.index(term, index + 1)
                position = min(start + index + 1, MAX_POSITION)
                if len(seen) < MAX_POSITIONS and (not seen or seen[-1][0] != position):
                    seen.append((position, weight))
            start += len(tokens)
        if seen:
            found[term] = seen
    return found


def rank_or(
    doc: dict[str, list[tuple[int, float]]], terms: Sequence[str], prefixes: Sequence[str] = ()
) -> float:
    """PostgreSQL's ``calc_rank_or`` (src/backend/utils/adt/tsrank.c), term for term: per
    query item, the heaviest occurrence counts fully and the others fade as 1/j²; the sum
    is scaled by π²/6 and averaged over the query's items."""
    items = sorted(set(terms)) + sorted(set(prefixes))
    if not items:
        return 0.0
    total = 0.0
    for term in sorted(set(terms)):
        total += _rank_entry(doc.get(term, ()))
    for prefix in sorted(set(prefixes)):
        for term in sorted(t for t in doc if t.startswith(prefix)):
            total += _rank_entry(doc[term])
    return total / len(items)


def _rank_entry(occurrences: Sequence[tuple[int, float]]) -> float:
    if not occurrences:
        return 0.0
    resj, wjm, jm = 0.0, -1.0, 0
    for j, (_, weight) in enumerate(occurrences):
        resj += weight / ((j + 1) * (j + 1))
        if weight > wjm:
            wjm, jm = weight, j
    return (wjm + resj - wjm / ((jm + 1) * (jm + 1))) / 1.64493406685
