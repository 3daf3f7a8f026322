"""The vocabulary both backends keep beside the index: how many indexed papers contain each
term (``SearchTerm``), and the Latin words as written with the term each indexes as
(``SearchWord``, for spelling suggestions). Plain ORM, the same on every database."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import TYPE_CHECKING

from search.models import SearchTerm, SearchWord

if TYPE_CHECKING:
    from search.index import IndexDocument


def term_counts(terms: Iterable[str]) -> dict[str, int]:
    """How many indexed papers contain each term (one query)."""
    terms = list(terms)
    if not terms:
        return {}
    return dict(SearchTerm.objects.filter(term__in=terms).values_list("term", "documents"))


def apply_term_deltas(old: Counter[str], docs: list[IndexDocument]) -> None:
    """Move the vocabulary's document counts from ``old`` to ``docs``' terms, and learn
    the docs' spellings (3–4 queries)."""
    new: Counter[str] = Counter()
    for doc in docs:
        new.update(doc.distinct_terms())
    delta = Counter(new)
    delta.subtract(old)
    changed = {t: n for t, n in delta.items() if n and len(t) <= 64}
    if changed:
        existing = {s.term: s for s in SearchTerm.objects.filter(term__in=list(changed))}
        for term, n in changed.items():
            if term in existing:
                existing[term].documents = max(0, existing[term].documents + n)
        SearchTerm.objects.bulk_update(existing.values(), ["documents"], batch_size=500)
        SearchTerm.objects.bulk_create(
            [
                SearchTerm(term=t, documents=n)
                for t, n in changed.items()
                if t not in existing and n > 0
            ],
            batch_size=500,
            ignore_conflicts=True,
        )
    learn_spellings(word_pair for doc in docs for word_pair in doc.spellings())


def learn_spellings(pairs: Iterable[tuple[str, str]]) -> None:
    """Remember (word, term) pairs for spelling suggestions (one query per 1,000)."""
    rows = dict(pairs)
    SearchWord.objects.bulk_create(
        [SearchWord(word=w, term=t) for w, t in rows.items()],
        batch_size=1000,
        ignore_conflicts=True,
    )


def recount_from(rows: Iterable[tuple[str, int]]) -> None:
    SearchTerm.objects.all().delete()
    SearchTerm.objects.bulk_create(
        (SearchTerm(term=t, documents=n) for t, n in rows if len(t) <= 64), batch_size=2000
    )
