"""The search service: the entry points of the index page, the API and the search feed.

``browse()`` lists the papers the filters leave, newest first. ``search()`` turns what a
reader typed into plain terms, picks the backend for the database in use, and returns
``SearchResults``: a lazy, sliceable list of hits (a ``Paginator`` can page it) that also says
how the query was understood. It never raises on what a reader types: a query with nothing
searchable in it gives empty results.

When no paper has every term, the service tries, in order: word beginnings for unknown
words ("zipf" → ZipFusion), the closest spelling for unknown words ("degredation" →
degradation; pg_trgm on PostgreSQL, the same trigram similarity computed in Python on
SQLite), and finally papers with any of the terms.

With semantic search on, a query's first run makes its vector on another thread while this
one runs the lexical search (the model releases the GIL: the run costs the longer of the
two, not their sum), and what the hybrid search worked out (the fused first hits, the
count, how the query was understood) is kept in the shared cache under the ``index`` tag's
version and the vector index's generation: the same query and filters again cost one cache
round trip (two when the tags' versions are re-read) and no SQL until the index changes.
"""

from __future__ import annotations

import functools
import hashlib
import logging
import threading
from collections.abc import Iterable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import TypeVar

from django.conf import settings
from django.core.cache import cache
from django.db.models import Exists, OuterRef, QuerySet

from dailies.models import DailyEntry
from dailies.selectors import index_papers
from digest_site import cache_tags
from papers.models import Paper
from search import backends, vectors
from search.backends import MAX_RESULTS, Filters, Hit, Match
from search.backends.base import appearances, tagged_paper_ids
from search.embedding import ModelUnavailable, embed_query, model_id, query_vector_kept
from search.limits import (
    FUSE_DEPTH,
    MIN_SIMILARITY,
    QUERY_HITS_KEPT,
    RELAXED_WEIGHT,
    RESULTS_TIMEOUT,
    RRF_K,
    VECTOR_HITS,
)
from search.text import QueryTerm, parse_query, tokens, word_terms, words_by_term

P = TypeVar("P", bound=Paper)
log = logging.getLogger(__name__)

NO_FILTERS = Filters()

# A word this short is too ambiguous to expand or to correct.
MIN_PREFIX_CHARS = 3
MIN_CORRECTION_CHARS = 4


@dataclass
class SearchResults:
    """Hits for one query, best first, fetched a page at a time.

    ``count()`` is the number of hits, at most ``MAX_RESULTS`` (``capped`` says there are
    more); slicing runs the ranking query for that slice.
    """

    query: str
    filters: Filters
    language: str = "en"
    match: Match | None = None
    terms: list[QueryTerm] = field(default_factory=list)
    corrected: str | None = None
    relaxed: bool = False
    _total: int | None = None
    _backend: backends.Backend | None = None

    def _count(self) -> int:
        if self._total is None:
            if self.match is None or self.match.empty:
                self._total = 0
            else:
                self._total = self._backend.count(self.match, limit=MAX_RESULTS + 1)
        return self._total

    def count(self) -> int:
        """How many hits can be paged through (runs at most one query, once)."""
        return min(self._count(), MAX_RESULTS)

    @property
    def capped(self) -> bool:
        return self._count() > MAX_RESULTS

    def __len__(self) -> int:
        return self.count()

    def __bool__(self) -> bool:
        return self.count() > 0

    def __getitem__(self, index: slice) -> list[Hit]:
        if not isinstance(index, slice) or index.step not in (None, 1):
            raise TypeError("SearchResults are sliced a page at a time")
        start = max(0, index.start or 0)
        stop = min(MAX_RESULTS, self.count() if index.stop is None else index.stop)
        if self.match is None or stop <= start:
            return []
        # Once counted, the count bounds the matches: the backend may rank them all.
        estimate = self.match.estimate
        if self._total is not None:
            estimate = self._total if estimate is None else min(estimate, self._total)
        match = replace(self.match, estimate=estimate)
        return self._backend.ranked(match, offset=start, limit=stop - start)

    @property
    def highlighter(self) -> Highlighter:
        return Highlighter(self.terms, self.match.prefixes if self.match else ())


@dataclass(frozen=True)
class Highlighter:
    """Decides which words of a text the query matched (see ``search.highlight``)."""

    terms: Sequence[QueryTerm]
    prefixes: Sequence[str] = ()
    # With prefixes (a query's unknown words, expanded), the distinct words worked out so
    # far and those of them that matched: a page of results (titles, summaries, abstracts)
    # repeats its words. Without, the process knows its words by term (``words_by_term``).
    words_seen: set[str] = field(default_factory=set, compare=False, repr=False)
    words_matched: set[str] = field(default_factory=set, compare=False, repr=False)

    @cached_property
    def han_words(self) -> list[str]:
        return [t.term for t in self.terms if not t.is_latin]

    @cached_property
    def latin_terms(self) -> frozenset[str]:
        return frozenset(t.term for t in self.terms if t.is_latin)

    def matched(self, words: set[str]) -> set[str]:
        """Those of ``words`` (Latin-script words of a text) that matched, themselves or
        one of their camel-case parts; each distinct word is worked out once (per process:
        ``words_by_term``; per highlighter with the prefixes of unknown words)."""
        if not self.prefixes:
            return words_by_term.matching(words, self.latin_terms)
        new = words.difference(self.words_seen)
        if new:
            latin, prefixes = self.latin_terms, tuple(self.prefixes)
            for word in new:
                terms = word_terms(word)
                if not latin.isdisjoint(terms) or (
                    prefixes and any(term.startswith(prefixes) for term in terms)
                ):
                    self.words_matched.add(word)
            self.words_seen.update(new)
        return words & self.words_matched


def search(query: str, filters: Filters = NO_FILTERS, *, language: str = "en") -> SearchResults:
    """Search the published papers (runs one or two queries now, more as the results are
    counted and sliced).

    ``query`` and ``filters`` are as the request's parser made them (``normalise_query``,
    ``Filters``); the filters reach the backend as they are. ``language`` is the reader's: it
    does not narrow the search (both languages are always searched); it is kept on the
    results for their presentation.

    With semantic search on, the lexical results are fused with the papers nearest to the
    query's meaning (``HybridResults``), kept in the shared cache until the index changes;
    when the model cannot be used, the lexical results are returned as they are and a line
    is logged."""
    if not (vectors.enabled() and query.strip()):
        return lexical_search(query, filters, language=language)
    key = _results_key(query, filters)
    kept, generation = _kept_results(key, query, filters, language)
    if kept is not None:
        return kept
    vector = _embed_ahead(query)
    lexical = lexical_search(query, filters, language=language)
    semantic = _semantic_hits(query, filters, vector)
    if semantic is None:
        return lexical
    return HybridResults(
        query=query,
        filters=filters,
        language=language,
        match=lexical.match,
        terms=lexical.terms,
        corrected=lexical.corrected,
        relaxed=lexical.relaxed,
        lexical=lexical,
        semantic=semantic,
        _key=key,
        _generation=generation,
    )


_embedder: ThreadPoolExecutor | None = None
_embedder_lock = threading.Lock()


def _embed_ahead(query: str) -> Future | None:
    """The query's vector, being made on the process's embedding thread (None when this
    process already has it)."""
    global _embedder
    if query_vector_kept(query):
        return None
    with _embedder_lock:
        if _embedder is None:
            # One thread: the model runs one query at a time in a process, as before.
            _embedder = ThreadPoolExecutor(max_workers=1, thread_name_prefix="query-embedding")
    return _embedder.submit(embed_query, query)


def _semantic_hits(
    query: str, filters: Filters, vector: Future | None = None
) -> dict[str, list[Hit]] | None:
    """The published papers nearest to the query's meaning, each script's apart, or None
    (logged) when the model or the vector index cannot answer. ``vector`` is the query's
    vector being made (``_embed_ahead``): waited for, then read from the process's memory."""
    try:
        if vector is not None:
            vector.result()
        if filters:
            hits = vectors.current().nearest_by_script(
                embed_query(query), limit=VECTOR_HITS, min_similarity=MIN_SIMILARITY,
                filters=filters,
            )  # fmt: skip
        else:
            hits = _kept_hits(query, VECTOR_HITS, MIN_SIMILARITY, vectors.current().version())
        return {script: list(ranked) for script, ranked in hits.items()}
    except ModelUnavailable as e:
        log.warning("search %r: lexical results only (%s)", query[:50], e)
    except Exception:
        log.exception("search %r: lexical results only (the vector index failed)", query[:50])
    return None


# A filtered query is not kept: what its filters leave changes without the index changing.
@functools.lru_cache(maxsize=QUERY_HITS_KEPT)
def _kept_hits(
    query: str, limit: int, min_similarity: float, version: object
) -> dict[str, list[Hit]]:
    """A query's nearest papers of each script, kept until the index (``version``) changes."""
    return vectors.current().nearest_by_script(
        embed_query(query), limit=limit, min_similarity=min_similarity
    )


# The tags whose retirement changes what a search finds (``digest_site.invalidation``).
RESULTS_TAGS = ("index", cache_tags.ALL)


def _results_key(query: str, filters: Filters) -> str | None:
    """The shared cache's key of a hybrid search's results: the query and filters, the
    versions of RESULTS_TAGS (re-read at most PAGE_CACHE_VERSION_RECHECK_MS late, as the
    page cache reads them), the model and the fusion's bounds (the vector index's generation
    is stored with the results). None when the cache cannot say (nothing is kept then)."""
    try:
        recheck = settings.PAGE_CACHE_VERSION_RECHECK_MS / 1000
        versions = cache_tags.versions(RESULTS_TAGS, recheck)
        if None in versions.values():
            versions = cache_tags.stamp(RESULTS_TAGS)
    except Exception:  # an unavailable cache costs the search its kept results, nothing more
        log.warning("search results not kept (cache unavailable)", exc_info=True)
        return None
    bounds = (FUSE_DEPTH, VECTOR_HITS, MIN_SIMILARITY, RRF_K, RELAXED_WEIGHT)
    parts = (model_id(), sorted(versions.items()), bounds, filters, query)
    return "search:results:" + hashlib.sha256(repr(parts).encode()).hexdigest()


@dataclass(frozen=True)
class _KeptResults:
    """What a hybrid search worked out, as the shared cache keeps it."""

    match: Match | None
    terms: list[QueryTerm]
    corrected: str | None
    relaxed: bool
    fused: list[Hit]
    lexical_total: int | None


def _kept_results(
    key: str | None, query: str, filters: Filters, language: str
) -> tuple[HybridResults | None, str | None]:
    """The results kept under ``key`` if they were made at the vector index's current
    generation, and that generation (one round trip to the cache for both)."""
    if key is None:
        return None, None
    try:
        found = cache.get_many([vectors.GENERATION_KEY, key])
    except Exception:
        log.warning("search results not read (cache unavailable)", exc_info=True)
        return None, None
    generation = found.get(vectors.GENERATION_KEY)
    stored = found.get(key)
    if generation is None:  # made by the vector index's next load; nothing is kept till then
        return None, None
    if not (isinstance(stored, tuple) and len(stored) == 2 and stored[0] == generation):
        return None, generation
    kept = stored[1]
    if not isinstance(kept, _KeptResults):
        return None, generation
    understood = {
        "query": query, "filters": filters, "language": language, "match": kept.match,
        "terms": kept.terms, "corrected": kept.corrected, "relaxed": kept.relaxed,
    }  # fmt: skip
    lexical = SearchResults(
        **understood,
        _total=kept.lexical_total,
        _backend=backends.current() if kept.match is not None else None,
    )
    results = HybridResults(
        **understood, lexical=lexical, _fused=kept.fused, _key=key, _generation=generation
    )
    return results, generation


def rrf(*rankings: Sequence[Hit], weights: Sequence[float] = ()) -> list[Hit]:
    """Reciprocal rank fusion: each paper scores the sum of weight / (RRF_K + rank) over the
    rankings it is in (rank from 1; weight 1 unless given); best first, ties by first
    appearance. A paper only the vector ranking found is marked ``by_meaning``."""
    scores: dict[int, float] = {}
    by_words: set[int] = set()
    for at, ranking in enumerate(rankings):
        weight = weights[at] if at < len(weights) else 1.0
        for rank, hit in enumerate(ranking, start=1):
            scores[hit.paper_id] = scores.get(hit.paper_id, 0.0) + weight / (RRF_K + rank)
            if not hit.by_meaning:
                by_words.add(hit.paper_id)
    order = sorted(scores, key=lambda pk: -scores[pk])
    return [Hit(pk, scores[pk], by_meaning=pk not in by_words) for pk in order]


def fuse_by_script(
    words: Sequence[Hit],
    meaning: dict[str, list[Hit]],
    *,
    scripts: dict[int, str],
    query_script: str,
    weight: float = 1.0,
) -> list[Hit]:
    """Each script's papers fused apart (``rrf`` of their lexical hits, weighed ``weight``,
    and their nearest by meaning), then taken in turn by rank (``vectors.interleave``).

    A query's words match text in its own script only, as the model scores a text in the
    query's language higher: fused together, a Chinese query's Chinese papers would carry
    both signals and the English paper it describes one, and push it off the page. Ranked
    apart, each script's best comes first, and exact names still win within their script
    (and across: a paper with both signals scores more at its rank). ``scripts`` is the
    script of the papers embedded; a lexical hit not embedded counts as the query's."""
    lexical: dict[str, list[Hit]] = {script: [] for script in meaning}
    for hit in words:
        lexical.setdefault(scripts.get(hit.paper_id, query_script), []).append(hit)
    fused = [
        rrf(lexical[script], meaning.get(script, []), weights=(weight, 1.0)) for script in lexical
    ]
    return vectors.interleave(fused)


@dataclass
class HybridResults(SearchResults):
    """The lexical results fused with the semantic hits: the first FUSE_DEPTH lexical hits
    and the semantic ones ranked together (``fuse_by_script``), then the rest of the lexical
    hits in their order. The count is the lexical count plus the semantic hits not among
    the fused lexical ones (a semantic hit further down the lexical ranking is counted twice
    and shown once: at most VECTOR_HITS a script fewer on the last page)."""

    lexical: SearchResults | None = None
    # The nearest papers by meaning, by script (``VectorBackend.nearest_by_script``).
    semantic: dict[str, list[Hit]] = field(default_factory=dict)
    _fused: list[Hit] | None = None
    # Where the shared cache keeps what was worked out (``_results_key``), and the vector
    # index's generation when the search began; None: not kept.
    _key: str | None = None
    _generation: str | None = None

    def _keep(self) -> None:
        if self._key is None or self._generation is None or self._fused is None:
            return
        lexical_total = self.lexical._total if self.lexical is not None else 0
        kept = _KeptResults(
            self.match, self.terms, self.corrected, self.relaxed, self._fused, lexical_total
        )
        try:
            cache.set(self._key, (self._generation, kept), RESULTS_TIMEOUT)
        except Exception:
            log.warning("search results not kept (cache unavailable)", exc_info=True)

    def fused(self) -> list[Hit]:
        if self._fused is None:
            words = self.lexical[0:FUSE_DEPTH] if self.lexical else []
            # Papers with only some of the words (or a corrected spelling) are a guess.
            weight = RELAXED_WEIGHT if (self.relaxed or self.corrected) else 1.0
            self._fused = fuse_by_script(
                words,
                self.semantic,
                scripts=vectors.current().scripts_of([h.paper_id for h in words]),
                query_script=vectors.text_script(self.query),
                weight=weight,
            )
            self._keep()
        return self._fused

    def _count(self) -> int:
        if self._total is None:
            fused = self.fused()
            counted = self.lexical is not None and self.lexical._total is None
            lexical = self.lexical._count() if self.lexical else 0
            self._total = len(fused) + max(0, lexical - FUSE_DEPTH)
            if counted:
                self._keep()
        return self._total

    def __getitem__(self, index: slice) -> list[Hit]:
        if not isinstance(index, slice) or index.step not in (None, 1):
            raise TypeError("SearchResults are sliced a page at a time")
        start = max(0, index.start or 0)
        stop = min(MAX_RESULTS, self.count() if index.stop is None else index.stop)
        fused = self.fused()
        hits = fused[start:stop]
        lexical = self.lexical
        # Past the fused hits come the lexical ones after the first FUSE_DEPTH, if any.
        more = lexical is not None and (lexical._total is None or lexical._total > FUSE_DEPTH)
        if stop > len(fused) and more:
            seen = {h.paper_id for h in fused}
            tail_start = FUSE_DEPTH + max(0, start - len(fused))
            tail_stop = FUSE_DEPTH + (stop - len(fused))
            hits += [h for h in lexical[tail_start:tail_stop] if h.paper_id not in seen]
        return hits

    @property
    def highlighter(self) -> Highlighter:
        if self.lexical is not None:
            return self.lexical.highlighter
        return Highlighter([])


def lexical_search(
    query: str, filters: Filters = NO_FILTERS, *, language: str = "en"
) -> SearchResults:
    """The words' half of ``search``: the lexical backend's ranking, with its fallbacks."""
    terms = parse_query(query)
    results = SearchResults(query=query, filters=filters, language=language, terms=terms)
    if not terms:
        return results
    backend = backends.current()
    counts = backends.term_counts(t.term for t in terms)
    terms = _split_unknown_han(terms, counts)
    known = [t for t in terms if counts.get(t.term)]
    unknown = [t for t in terms if not counts.get(t.term)]

    def attempt(
        use: list[QueryTerm], *, prefixes: Sequence[str] = (), any_term: bool = False, **notes
    ) -> SearchResults | None:
        found = _results(backend, query, filters, use, counts, prefixes, any_term, notes)
        found.language = language
        return found if found.count() else None

    if not unknown:
        found = attempt(terms)
        if found:
            return found
    else:
        expandable = [t.term for t in unknown if t.is_latin and len(t.term) >= MIN_PREFIX_CHARS]
        if len(expandable) == len(unknown):
            found = attempt(known, prefixes=expandable)
            if found:
                return found
        corrected = _corrections(backend, unknown)
        if corrected:
            counts.update(backends.term_counts(t.term for t in corrected.values()))
            use = [corrected.get(t.term, t) for t in terms if t.term in corrected or t in known]
            spelled = " ".join(t.surface for t in use)
            found = attempt(use, corrected=spelled)
            if found:
                return found
            known = use
    if len(known) > 1 or (known and unknown):
        found = attempt(known, any_term=True, relaxed=True)
        if found:
            return found
    return results


def _results(
    backend: backends.Backend,
    text: str,
    filters: Filters,
    terms: list[QueryTerm],
    counts: dict[str, int],
    prefixes: Sequence[str],
    any_term: bool,
    notes: dict,
) -> SearchResults:
    term_names = tuple(t.term for t in terms)
    known = [counts.get(t, 0) for t in term_names]
    estimate = None
    if not prefixes and known:
        estimate = sum(known) if any_term else min(known)
    exact_count = None
    if len(term_names) == 1 and not prefixes and not filters:
        # One term, no filters: the vocabulary already holds the number of matches.
        exact_count = known[0]
    match = Match(
        terms=term_names,
        prefixes=tuple(prefixes),
        any_term=any_term,
        filters=filters,
        estimate=estimate,
        exact_count=exact_count,
    )
    return SearchResults(
        query=text, filters=filters, match=match, terms=terms, _backend=backend, **notes
    )


def _split_unknown_han(terms: list[QueryTerm], counts: dict[str, int]) -> list[QueryTerm]:
    """A Chinese query word no paper contains, split into the shorter words inside it
    (so "副本互证" still finds "副本"…); runs one query when there is one to split."""
    split: list[QueryTerm] = []
    for term in terms:
        pieces = []
        if not term.is_latin and not counts.get(term.term):
            pieces = [
                QueryTerm(t.term, t.surface) for t in tokens(term.term) if t.term != term.term
            ]
        split.extend(pieces or [term])
    if len(split) != len(terms):
        counts.update(backends.term_counts(t.term for t in split))
    return list(dict.fromkeys(split))


def _corrections(backend: backends.Backend, unknown: list[QueryTerm]) -> dict[str, QueryTerm]:
    """Unknown words → the closest word in the vocabulary (one query per word)."""
    corrected = {}
    for term in unknown:
        if term.is_latin and len(term.surface) >= MIN_CORRECTION_CHARS:
            similar = backend.similar_words(term.surface, limit=1)
            if similar:
                new_term, word = similar[0]
                corrected[term.term] = QueryTerm(new_term, word)
    return corrected


def browse(filters: Filters) -> QuerySet[Paper]:
    """The index narrowed by ``filters``, newest first, prefetched like the index (lazy): what
    the page, the API and the feed list when there is no query."""
    papers = index_papers()
    if filters.topic:
        papers = papers.filter(topics__slug=filters.topic)
    entries = appearances(filters)
    if entries is not None:
        papers = papers.filter(Exists(entries.filter(paper=OuterRef("pk"))))
    return papers


def browse_count(filters: Filters) -> int:
    """How many papers ``browse(filters)`` lists: the distinct papers of the published
    entries in the filters' track and days, with the filters' topic (one pass over the
    entries, not the listing's per-paper test of its latest appearance)."""
    entries = appearances(filters)
    if entries is None:
        entries = DailyEntry.objects.published()
    if filters.topic:
        entries = entries.filter(paper_id__in=tagged_paper_ids(filters.topic))
    return entries.values("paper_id").distinct().count()


def ordered_papers(hits: Iterable[Hit], papers: QuerySet[P]) -> list[tuple[P, Hit]]:
    """The papers of ``hits`` in hit order, each with its hit (one query plus the
    queryset's prefetches).

    ``papers`` must only hold what readers may see (``published_papers()`` or
    ``index_papers()``): this is the second guard, so a stale index row never shows an
    unpublished paper.
    """
    hits = list(hits)
    return in_hit_order(hits, {p.pk: p for p in papers.filter(pk__in=[h.paper_id for h in hits])})


def in_hit_order(hits: Iterable[Hit], papers: dict[int, P]) -> list[tuple[P, Hit]]:
    """The papers of ``hits`` (``papers`` by id: those readers may see) in hit order, each
    with its hit; a hit whose paper is not among them is left out."""
    return [(papers[h.paper_id], h) for h in hits if h.paper_id in papers]
