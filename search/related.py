"""Related papers: the published papers whose indexed text is closest to a paper's.

The paper's own words in the page's language (title, short name, topic names, its summary's
headline, takeaway and body) make an "any of these terms" query on the search index; the
terms chosen are the ones that are frequent in this paper and rare in the corpus (tf-idf),
so shared vocabulary ("KV cache", "向量检索") counts and common words do not. A fixed
number of queries: one for the terms' document counts, one ranked search, two (in one
round trip) to load the headings of the papers found.
"""

from __future__ import annotations

import math
from collections import Counter

from dailies.selectors import paper_headings
from papers.models import Paper
from search import backends
from search.backends import Match
from search.text import tokens

# How many related papers a paper page lists, and how many terms the query uses.
RELATED_PAPERS = 5
QUERY_TERMS = 12


def _paper_terms(paper: Paper, language: str) -> Counter[str]:
    """Reads the summaries and topics read with the paper (``dailies.selectors.paper_page``)."""
    texts = [paper.title, paper.short_name]
    texts += [topic.name(language) for topic in paper.topics.all()]
    summary = paper.summary(language)
    if summary is not None:
        texts += [summary.headline, summary.takeaway, summary.body]
    counts: Counter[str] = Counter()
    for text in texts:
        if text:
            counts.update(t.term for t in tokens(text))
    return counts


def related_papers(paper: Paper, *, language: str) -> list[Paper]:
    """Up to RELATED_PAPERS published papers like ``paper``, most similar first, each with
    its summaries' headlines (``selectors.paper_headings``)."""
    counts = _paper_terms(paper, language)
    if not counts:
        return []
    documents = backends.term_counts(counts)
    total = max(documents.values(), default=0) + 1
    # A term only this paper has cannot relate it to another.
    weighted = [
        (tf * math.log(total / df), term)
        for term, tf in counts.items()
        if (df := documents.get(term, 0)) >= 2
    ]
    chosen = tuple(term for _, term in sorted(weighted, reverse=True)[:QUERY_TERMS])
    if not chosen:
        return []
    hits = backends.current().ranked(
        Match(terms=chosen, any_term=True), offset=0, limit=RELATED_PAPERS + 1
    )
    ids = [hit.paper_id for hit in hits if hit.paper_id != paper.pk][:RELATED_PAPERS]
    if not ids:
        return []
    found = paper_headings(ids)
    return [found[pk] for pk in ids if pk in found]
