"""Related papers, "more like this" and the desk's nearest published papers.

With semantic search on, a paper's neighbours are the published papers whose embeddings
are nearest to its own (``search.vectors``): "KV cache offloading over CXL" finds "treating
KV caches as a storage tier" whatever their words. Without it, or for a paper not embedded
yet, the related papers are lexical: the paper's own words in the page's language (title,
short name, topic names, its summary's headline, takeaway and body) make an "any of these
terms" query on the search index; the terms chosen are the ones that are frequent in this
paper and rare in the corpus (tf-idf), so shared vocabulary ("KV cache", "向量检索") counts
and common words do not. A fixed number of queries either way.
"""

from __future__ import annotations

import logging
import math
from collections import Counter
from collections.abc import Sequence

from dailies.extensions import CoveredPaper
from dailies.selectors import paper_headings
from papers.models import Paper
from search import backends, vectors
from search.backends import Filters, Hit, Match
from search.embedding import ModelUnavailable
from search.limits import NEAREST_COVERED
from search.models import SearchDocument
from search.text import tokens

log = logging.getLogger(__name__)

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


def similar_papers(
    paper_id: int, *, limit: int, filters: Filters | None = None
) -> list[Hit] | None:
    """The published papers nearest in meaning to paper ``paper_id`` (itself left out),
    best first; None when it has no embedding or the vectors cannot answer (logged)."""
    if not vectors.enabled():
        return None
    backend = vectors.current()
    try:
        vector = backend.vectors_of([paper_id]).get(paper_id)
        if vector is None:
            return None
        return backend.nearest(vector, limit=limit, filters=filters, exclude=[paper_id])
    except (ModelUnavailable, ValueError):
        log.exception("papers like %s: the vector index failed", paper_id)
        return None


def related_papers(paper: Paper, *, language: str) -> list[Paper]:
    """Up to RELATED_PAPERS published papers like ``paper``, most similar first, each with
    its summaries' headlines (``selectors.paper_headings``)."""
    hits = similar_papers(paper.pk, limit=RELATED_PAPERS)
    if hits is None:
        hits = _lexical_related(paper, language)
    ids = [hit.paper_id for hit in hits if hit.paper_id != paper.pk][:RELATED_PAPERS]
    if not ids:
        return []
    found = paper_headings(ids)
    return [found[pk] for pk in ids if pk in found]


def _lexical_related(paper: Paper, language: str) -> list[Hit]:
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
    return backends.current().ranked(
        Match(terms=chosen, any_term=True), offset=0, limit=RELATED_PAPERS + 1
    )


def nearest_covered(paper_ids: Sequence[int]) -> dict[int, list[CoveredPaper]]:
    """For each of ``paper_ids`` (the desk's candidates, published or not), the
    NEAREST_COVERED published papers nearest in meaning, with the day each last appeared:
    an editor sees a repeat coming. Papers not embedded yet get none. Three queries."""
    if not vectors.enabled() or not paper_ids:
        return {}
    backend = vectors.current()
    try:
        own = backend.vectors_of(paper_ids)
        near = {
            pk: backend.nearest(vector, limit=NEAREST_COVERED, exclude=[pk])
            for pk, vector in own.items()
        }
    except (ModelUnavailable, ValueError):
        log.exception("desk: nearest published papers unavailable")
        return {}
    wanted = {hit.paper_id for hits in near.values() for hit in hits}
    found = {
        doc.paper_id: doc
        for doc in SearchDocument.objects.filter(paper__in=wanted)
        .select_related("paper")
        .only("paper_id", "last_appeared", "paper__slug", "paper__title", "paper__short_name")
    }
    return {
        pk: [
            CoveredPaper(found[h.paper_id].paper, found[h.paper_id].last_appeared, h.score)
            for h in hits
            if h.paper_id in found
        ]
        for pk, hits in near.items()
    }
