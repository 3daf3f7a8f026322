"""Keeping the search index in step with what readers may see.

Only papers of published dailies are indexed. The services that change publication
(``dailies.services``, the demo loader) report the papers they change through
``dailies.extensions.papers_changed``; ``search_index_on_papers_changed`` receives them once
the change has committed. Edits to papers and summaries are picked up by
``search_index_refresh_stale()``, which the periodic task runs (papers cannot call up into
dailies); ``manage.py rebuild_search_index`` backfills everything. The page and the API also
check publication when they read, so a stale row can never show an unpublished paper.
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field

from celery import current_app
from django.db import transaction
from django.db.models import Exists, OuterRef, Prefetch, Q, QuerySet, Subquery

from dailies.models import DailyEntry
from dailies.selectors import published_papers
from digest_site import invalidation
from papers.models import Paper, Summary
from search import backends, vectors
from search.models import SearchDocument
from search.text import Token, tokens

log = logging.getLogger(__name__)

# Weight classes, most important first (PostgreSQL's A, B, C).
HEAD, BODY, EXTRA = "A", "B", "C"
WEIGHTS = (HEAD, BODY, EXTRA)


@dataclass
class IndexDocument:
    """A paper as the index stores it: its terms per weight class, and the day it last
    appeared (newer wins ties)."""

    paper_id: int
    last_appeared: dt.date
    fields: dict[str, list[Token]] = field(default_factory=lambda: {w: [] for w in WEIGHTS})

    def add(self, weight: str, text: str | None) -> None:
        if text:
            self.fields[weight].extend(tokens(text))

    def terms(self, weight: str) -> list[str]:
        return [t.term for t in self.fields[weight]]

    def term_fields(self) -> dict[str, list[str]]:
        return {weight: self.terms(weight) for weight in WEIGHTS}

    def distinct_terms(self) -> set[str]:
        return {t.term for weight in WEIGHTS for t in self.fields[weight]}

    def spellings(self) -> set[tuple[str, str]]:
        """(word as written, term) of its Latin words long enough to be misspelled."""
        return {
            (t.surface, t.term)
            for weight in WEIGHTS
            for t in self.fields[weight]
            if t.surface.isascii() and t.surface.isalpha() and 4 <= len(t.surface) <= 64
        }


def papers_to_index(paper_ids: Iterable[int] | None = None) -> QuerySet[Paper]:
    """Published papers with what the index reads (lazy; 4 queries when evaluated).

    ``paper_ids`` None means every published paper.
    """
    newest = (
        DailyEntry.objects.published()
        .filter(paper=OuterRef("pk"))
        .order_by("-daily__date")
        .values("daily__date")[:1]
    )
    papers = published_papers()
    if paper_ids is not None:
        papers = papers.filter(pk__in=list(paper_ids))
    return (
        papers.annotate(last_appeared=Subquery(newest))
        .prefetch_related(
            Prefetch("summaries", queryset=Summary.objects.order_by("language")),
            "topics",
            "organizations",
        )
        .order_by("pk")
    )


def document_for(paper: Paper) -> IndexDocument:
    """What the index stores for ``paper`` (annotated and prefetched by ``papers_to_index``).

    Title, short name, takeaways, headlines and topic names weigh most; summaries next;
    the abstract and organisations least.
    """
    doc = IndexDocument(paper.pk, paper.last_appeared)
    doc.add(HEAD, paper.title)
    if paper.short_name and paper.short_name not in paper.title:
        doc.add(HEAD, paper.short_name)
    summaries = list(paper.summaries.all())
    for summary in summaries:
        doc.add(HEAD, summary.headline)
        doc.add(HEAD, summary.takeaway)
    for topic in paper.topics.all():
        doc.add(HEAD, topic.name_en)
        doc.add(HEAD, topic.name_zh)
    for summary in summaries:
        doc.add(BODY, summary.body)
    doc.add(EXTRA, paper.abstract)
    for org in paper.organizations.all():
        doc.add(EXTRA, " ".join(filter(None, [org.label, org.name, org.name_zh])))
    return doc


def _documents(paper_ids: Sequence[int], batch_size: int = 500) -> Iterator[IndexDocument]:
    """Index documents of the published papers among ``paper_ids`` (4 queries per batch)."""
    for start in range(0, len(paper_ids), batch_size):
        chunk = paper_ids[start : start + batch_size]
        yield from (document_for(paper) for paper in papers_to_index(chunk))


@transaction.atomic
def search_index_refresh(*, paper_ids: Iterable[int]) -> dict[str, int]:
    """Index the published papers among ``paper_ids`` and drop the others (runs queries).

    Safe when two run at once: the backend serialises index writers, which also keeps the
    vocabulary's document counts exact.
    """
    ids = sorted(set(paper_ids))
    if not ids:
        return {"indexed": 0, "removed": 0}
    backend = backends.current()
    backend.lock_for_writing()
    docs = list(_documents(ids))
    indexed = {d.paper_id for d in docs}
    gone = [pk for pk in ids if pk not in indexed]
    backend.write(docs, replace=ids)
    invalidation.search_index_changed()  # the search pages read these rows
    if vectors.enabled():
        # Papers came into or left the index: each process's vector index follows.
        transaction.on_commit(vectors.generation_bump)
    log.debug("search index: %d indexed, %d removed", len(docs), len(gone))
    return {"indexed": len(docs), "removed": len(gone)}


def search_index_on_papers_changed(paper_ids: list[int]) -> None:
    """Refresh the papers a committed change of dailies touched (registered with
    ``dailies.extensions.register_on_papers_changed``, which runs it on commit).

    A failure is logged there, not raised: publication has already committed, and the stale
    sweep or ``manage.py rebuild_search_index`` repairs the index. The papers' embeddings are
    made by the indexing task on the worker (the model takes about half a second a paper).
    """
    search_index_refresh(paper_ids=paper_ids)
    if vectors.enabled():
        # By its name, not imported: the tasks module imports this one.
        current_app.tasks["search.tasks.embed_papers"].delay(paper_ids)


def stale_paper_ids() -> list[int]:
    """Papers whose index row is out of date (two queries): published but not indexed,
    indexed but no longer published, or edited (paper or summary) since they were indexed."""
    docs = SearchDocument.objects.filter(paper=OuterRef("pk"))
    edited = docs.filter(
        Q(indexed_at__lt=OuterRef("updated_at"))
        | Exists(
            Summary.objects.filter(
                paper=OuterRef(OuterRef("pk")), updated_at__gt=OuterRef("indexed_at")
            )
        )
    )
    published = published_papers()
    changed = published.filter(~Exists(docs) | Exists(edited)).values_list("pk", flat=True)
    withdrawn = SearchDocument.objects.exclude(paper__in=published.values("pk"))
    return sorted({*changed, *withdrawn.values_list("paper_id", flat=True)})


def search_index_refresh_stale(*, limit: int = 2000) -> dict[str, int]:
    """Refresh what ``stale_paper_ids`` finds, at most ``limit`` papers per call."""
    return search_index_refresh(paper_ids=stale_paper_ids()[:limit])


def search_index_rebuild(
    *, progress: Callable[[int], object] | None = None, batch_size: int = 500
) -> dict[str, int]:
    """Rebuild the whole index from the published papers (runs many queries).

    Each batch is its own transaction, so readers keep a working index while it runs;
    ``progress`` is called with the number of papers done after each batch. The vocabulary
    is recounted at the end.
    """
    backend = backends.current()
    ids = list(published_papers().order_by("pk").values_list("pk", flat=True))
    with transaction.atomic():
        backend.lock_for_writing()
        stale = set(SearchDocument.objects.values_list("paper_id", flat=True)) - set(ids)
        backend.write([], replace=sorted(stale), count_terms=False)
    for start in range(0, len(ids), batch_size):
        chunk = ids[start : start + batch_size]
        docs = list(_documents(chunk, batch_size))
        with transaction.atomic():
            backend.lock_for_writing()
            backend.write(docs, replace=chunk, count_terms=False)
            backends.learn_spellings(pair for doc in docs for pair in doc.spellings())
        if progress:
            progress(len(chunk))
    with transaction.atomic():
        backend.lock_for_writing()
        backend.recount_terms()
    invalidation.search_index_changed()
    return {"indexed": len(ids), "removed": len(stale)}
