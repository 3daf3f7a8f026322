"""Paper embeddings and the vector index: the semantic half of search.

Writing: ``embeddings_refresh(paper_ids=…)`` embeds the papers whose stored embedding is
missing, from another model, or of another text, in batches, and stores them
(``PaperEmbedding``, the source of truth). The indexing task runs it for the papers it just
indexed, and the periodic sweep (``embeddings_refresh_stale``) for the rest: papers in the
search index first, then recent papers of a track (the desk's candidates).

Reading: a ``VectorBackend`` answers "the published papers nearest to this vector". The one
built here, ``InProcessVectors``, keeps the vectors of the indexed papers (the published
ones) in a float32 matrix a script and compares a query with all of them (exact). At 100,000
papers that is 146 MB a worker, read whole by each query: the scan is bound by memory
bandwidth, not arithmetic (bench/search.py). The search service keeps each query's hits
until the index changes. It is refreshed when the embeddings or the
index change: the writers bump a generation token in the shared cache, and a process that
sees a new token loads only the rows that changed. ``current()`` picks the backend as
``search.backends.current()`` picks the lexical one; an HNSW index in PostgreSQL (pgvector)
would be a second implementation of the same interface, but pgvector is not packaged for
this machine's PostgreSQL, so none is built and the in-process index serves both databases.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import logging
import secrets
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from django.conf import settings
from django.core.cache import cache
from django.db import transaction
from django.db.models import Exists, OuterRef, Q, QuerySet
from django.utils import timezone

from digest_site import invalidation
from papers.models import Paper, Summary
from search.backends.base import Filters, Hit, appearances, tagged_paper_ids
from search.embedding import DIMENSIONS, embed_passages, model_id
from search.limits import EMBED_PER_RUN, MAX_VECTOR_INDEX
from search.models import PaperEmbedding, SearchDocument

if TYPE_CHECKING:
    import numpy as np

log = logging.getLogger(__name__)

GENERATION_KEY = "search:vectors:generation"
# Papers added this recently and in a track are embedded even unpublished: the editor's desk
# shows each candidate's nearest published papers.
CANDIDATE_DAYS = 7
# Rows embedded this long before the newest one a process loaded are read again at its next
# refresh: a slow writer may commit a row stamped earlier than one already read.
RELOAD_OVERLAP = dt.timedelta(minutes=10)


def enabled() -> bool:
    return settings.SEARCH_VECTORS


# Writing ---------------------------------------------------------------------------------


def passage_text(paper: Paper) -> str:
    """What a paper's embedding is made of: its title and short name, each summary's
    headline and takeaway, then the summaries, then the abstract (cut by the model's
    bound, ``MAX_PASSAGE_CHARS``; the first parts matter most). Reads ``paper.summaries``
    (prefetch it)."""
    summaries = sorted(paper.summaries.all(), key=lambda s: s.language)
    parts = [paper.title]
    if paper.short_name and paper.short_name not in paper.title:
        parts.append(paper.short_name)
    parts += [s.headline for s in summaries] + [s.takeaway for s in summaries]
    parts += [s.body for s in summaries] + [paper.abstract]
    return "\n".join(p.strip() for p in parts if p and p.strip())


def text_script(text: str) -> str:
    """ "hani" when Chinese characters are at least a third of ``text``'s letters, else
    "latn"."""
    letters = [ch for ch in text if ch.isalpha()]
    han = sum(1 for ch in letters if "\u3400" <= ch <= "\u9fff" or "\uf900" <= ch <= "\ufaff")
    return "hani" if letters and han * 3 >= len(letters) else "latn"


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def embeddings_refresh(*, paper_ids: Iterable[int]) -> dict[str, int]:
    """Embed those of ``paper_ids`` whose embedding is missing, stale or of another model
    (at most EMBED_PER_RUN; the rest are left to the next sweep) and store them. Runs the
    model in batches, outside any transaction; each paper's row is upserted."""
    ids = sorted(set(paper_ids))[:EMBED_PER_RUN]
    if not ids:
        return {"embedded": 0, "unchanged": 0}
    current = model_id()
    stored = dict(
        PaperEmbedding.objects.filter(paper_id__in=ids, model=current).values_list(
            "paper_id", "digest"
        )
    )
    papers = Paper.objects.filter(pk__in=ids).prefetch_related("summaries").order_by("pk")
    todo: list[tuple[int, str, str]] = []
    unchanged: list[int] = []
    for paper in papers:
        text = passage_text(paper)
        digest = _digest(text)
        if stored.get(paper.pk) == digest:
            unchanged.append(paper.pk)
        else:
            todo.append((paper.pk, text, digest))
    now = timezone.now()
    if unchanged:
        # Seen again with the same text: not stale any more, and nothing to reload.
        PaperEmbedding.objects.filter(paper_id__in=unchanged).update(embedded_at=now)
    if todo:
        vectors = embed_passages([text for _, text, _ in todo])
        rows = [
            PaperEmbedding(
                paper_id=pk, model=current, digest=digest, script=text_script(text),
                vector=vectors[i].tobytes(), embedded_at=now,
            )
            for i, (pk, text, digest) in enumerate(todo)
        ]  # fmt: skip
        PaperEmbedding.objects.bulk_create(
            rows,
            update_conflicts=True,
            unique_fields=["paper"],
            update_fields=["model", "digest", "script", "vector", "embedded_at"],
        )
        transaction.on_commit(generation_bump)
        invalidation.embeddings_changed(pk for pk, _, _ in todo)
    return {"embedded": len(todo), "unchanged": len(unchanged)}


def stale_embedding_ids(*, limit: int = EMBED_PER_RUN) -> list[int]:
    """Papers to embed (at most ``limit``; three queries): indexed papers without an
    embedding of the current model or edited since it was made, then papers of a track added
    in the last CANDIDATE_DAYS days without one."""
    current = PaperEmbedding.objects.filter(paper=OuterRef("pk"), model=model_id())
    edited = current.filter(
        Q(embedded_at__lt=OuterRef("updated_at"))
        | Exists(
            Summary.objects.filter(
                paper=OuterRef(OuterRef("pk")), updated_at__gt=OuterRef("embedded_at")
            )
        )
    )
    indexed = Paper.objects.filter(Exists(SearchDocument.objects.filter(paper=OuterRef("pk"))))
    ids = list(
        indexed.filter(~Exists(current) | Exists(edited))
        .order_by("-pk")
        .values_list("pk", flat=True)[:limit]
    )
    if len(ids) < limit:
        since = timezone.now() - dt.timedelta(days=CANDIDATE_DAYS)
        recent = (
            Paper.objects.filter(created_at__gte=since, tracks__isnull=False)
            .filter(~Exists(current))
            .exclude(pk__in=ids)
            .order_by("-pk")
            .values_list("pk", flat=True)
            .distinct()
        )
        ids += list(recent[: limit - len(ids)])
    return ids


def embeddings_refresh_stale(*, limit: int = EMBED_PER_RUN) -> dict[str, int]:
    return embeddings_refresh(paper_ids=stale_embedding_ids(limit=limit))


def generation_bump() -> None:
    """Tell every process's vector index that embeddings or the index changed."""
    try:
        cache.set(GENERATION_KEY, secrets.token_hex(8), None)
    except Exception:  # the processes reload at the next bump, or when the token is gone
        log.warning("vector index generation not bumped (cache unavailable)", exc_info=True)


def generation() -> str | None:
    """The current generation token (one made if the cache has none); None when the cache
    is unavailable, and a process then keeps the index it has."""
    try:
        token = cache.get(GENERATION_KEY)
        if token is None:
            cache.add(GENERATION_KEY, secrets.token_hex(8), None)
            token = cache.get(GENERATION_KEY)
        return token
    except Exception:
        log.warning("vector index generation unknown (cache unavailable)", exc_info=True)
        return None


# Reading ---------------------------------------------------------------------------------


class VectorBackend(Protocol):
    """The published papers nearest to a unit vector, best first, as ``Hit``s whose score is
    the cosine similarity; and the stored vector of a paper."""

    def nearest(
        self,
        vector: np.ndarray,
        *,
        limit: int,
        min_similarity: float = -1.0,
        filters: Filters | None = None,
        exclude: Sequence[int] = (),
    ) -> list[Hit]: ...

    def nearest_by_script(
        self,
        vector: np.ndarray,
        *,
        limit: int,
        min_similarity: float = -1.0,
        filters: Filters | None = None,
        exclude: Sequence[int] = (),
    ) -> dict[str, list[Hit]]: ...

    def scripts_of(self, paper_ids: Sequence[int]) -> dict[int, str]: ...

    def version(self) -> object: ...

    def vectors_of(self, paper_ids: Sequence[int]) -> dict[int, np.ndarray]: ...


def _filtered_ids(filters: Filters) -> list[int] | None:
    """The ids of the papers the filters leave (one query), None without filters."""
    if not filters:
        return None
    papers = SearchDocument.objects.all()
    entries = appearances(filters)
    if entries is not None:
        papers = papers.filter(paper__in=entries.values("paper_id"))
    if filters.topic:
        papers = papers.filter(paper__in=tagged_paper_ids(filters.topic))
    return list(papers.values_list("paper_id", flat=True))


def _indexed_embeddings() -> QuerySet[PaperEmbedding]:
    """The current model's embeddings of the papers in the search index (the published)."""
    return PaperEmbedding.objects.filter(
        model=model_id(), paper__in=SearchDocument.objects.values("paper_id")
    )


def _read_vectors(rows: Iterable[tuple]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(ids, vectors, is-Han flags) of (paper id, vector, script) rows."""
    import numpy as np

    ids, blobs, han = [], [], []
    for pk, blob, script in rows:
        ids.append(pk)
        blobs.append(bytes(blob))
        han.append(script == "hani")
    matrix = np.frombuffer(b"".join(blobs), dtype=np.float32).reshape(-1, DIMENSIONS)
    return np.asarray(ids, dtype=np.int64), matrix, np.asarray(han, dtype=bool)


SCRIPTS = ("latn", "hani")


@dataclass(frozen=True)
class _Index:
    """One load of the index. Each script's rows are their own contiguous matrix, so a query
    is one matrix-vector product a script, with no copy of the rows."""

    token: str | None  # the generation it was loaded at
    newest: dt.datetime | None  # the newest embedded_at it read
    serial: int  # this process's count of loads: names the index in the hits' cache
    ids: np.ndarray  # every paper id, ascending
    han: np.ndarray  # ids' is-Han flags
    scripts: dict[str, tuple[np.ndarray, np.ndarray]]  # script: (ids ascending, their rows)

    @property
    def nbytes(self) -> int:
        rows = sum(i.nbytes + m.nbytes for i, m in self.scripts.values())
        return self.ids.nbytes + self.han.nbytes + rows


def _empty_script() -> tuple[np.ndarray, np.ndarray]:
    import numpy as np

    return np.empty(0, np.int64), np.empty((0, DIMENSIONS), np.float32)


class InProcessVectors:
    """The indexed papers' vectors in this process's memory, ordered by paper id."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._state: _Index | None = None
        self._loads = 0

    def clear(self) -> None:
        with self._lock:
            self._state = None

    def index(self) -> _Index:
        """The index, brought up to date when the generation changed."""
        token = generation()
        state = self._state
        if state is None or (token is not None and token != state.token):
            with self._lock, transaction.atomic():
                state = self._state
                if state is None or (token is not None and token != state.token):
                    self._loads += 1
                    state = self._state = self._load(token, state)
        return state

    def version(self) -> int:
        """What names the index a query would be answered from now (it changes with every
        load): a key of the cached hits."""
        return self.index().serial

    def _load(self, token: str | None, state: _Index | None) -> _Index:
        """This process's index brought up to date: every row when it has none, else the
        rows embedded since its newest (less RELOAD_OVERLAP) and those of papers that came
        into or left the index (two to three queries)."""
        import numpy as np

        rows = _indexed_embeddings()
        ids = np.fromiter(
            rows.order_by("paper_id").values_list("paper_id", flat=True)[: MAX_VECTOR_INDEX + 1],
            dtype=np.int64,
        )
        if len(ids) > MAX_VECTOR_INDEX:
            ids = ids[:MAX_VECTOR_INDEX]
            log.warning(
                "vector index full: %d papers (MAX_VECTOR_INDEX), the newest left out",
                MAX_VECTOR_INDEX,
            )
        newest = rows.order_by("-embedded_at").values_list("embedded_at", flat=True).first()
        old = {script: _empty_script() for script in SCRIPTS}
        if state is None or state.newest is None:
            changed = ids
        else:
            old = state.scripts
            recent = rows.filter(embedded_at__gte=state.newest - RELOAD_OVERLAP)
            recent_ids = np.fromiter(recent.values_list("paper_id", flat=True), dtype=np.int64)
            changed = np.union1d(np.setdiff1d(ids, state.ids), np.intersect1d(recent_ids, ids))
        new_ids, new_matrix = _empty_script()
        new_han = np.empty(0, bool)
        if len(changed):
            new_ids, new_matrix, new_han = _read_vectors(
                rows.filter(paper_id__in=changed.tolist()).values_list(
                    "paper_id", "vector", "script"
                )
            )
        scripts = {}
        for script, mine in (("latn", ~new_han), ("hani", new_han)):
            old_ids, old_matrix = old[script]
            keep = np.isin(old_ids, ids) & ~np.isin(old_ids, changed)
            script_ids = np.concatenate([old_ids[keep], new_ids[mine]])
            order = np.argsort(script_ids, kind="stable")
            # Indexing by ``order`` makes a new C-ordered matrix: this script's own.
            matrix = np.concatenate([old_matrix[keep], new_matrix[mine]])[order]
            scripts[script] = (script_ids[order], np.ascontiguousarray(matrix, np.float32))
        all_ids = np.concatenate([scripts["latn"][0], scripts["hani"][0]])
        han = np.repeat([False, True], [len(scripts["latn"][0]), len(scripts["hani"][0])])
        order = np.argsort(all_ids, kind="stable")
        return _Index(token, newest, self._loads, all_ids[order], han[order], scripts)

    def nearest(
        self,
        vector: np.ndarray,
        *,
        limit: int,
        min_similarity: float = -1.0,
        filters: Filters | None = None,
        exclude: Sequence[int] = (),
    ) -> list[Hit]:
        # The model scores a text in the query's language higher than the same meaning in
        # the other: each script's papers are ranked apart, then taken in turn by rank.
        by_script = self.nearest_by_script(
            vector, limit=limit, min_similarity=min_similarity, filters=filters, exclude=exclude
        )
        return interleave(by_script.values())[:limit]

    def nearest_by_script(
        self,
        vector: np.ndarray,
        *,
        limit: int,
        min_similarity: float = -1.0,
        filters: Filters | None = None,
        exclude: Sequence[int] = (),
    ) -> dict[str, list[Hit]]:
        """The ``limit`` nearest papers of each script ("latn", "hani"), best first."""
        import numpy as np

        index = self.index()
        allowed = _filtered_ids(filters) if filters else None
        vector = np.asarray(vector, np.float32)
        want = limit + len(exclude)
        skip = set(exclude)
        ranked: dict[str, list[Hit]] = {}
        for script in SCRIPTS:
            ids, matrix = index.scripts[script]
            scores = matrix @ vector
            if allowed is not None:
                rows = np.flatnonzero(np.isin(ids, allowed))
                ids, scores = ids[rows], scores[rows]
            top = _top(scores, want)
            kept = [i for i in top if scores[i] >= min_similarity and int(ids[i]) not in skip]
            ranked[script] = [Hit(int(ids[i]), float(scores[i]), by_meaning=True) for i in kept]
            del ranked[script][limit:]
        return ranked

    def scripts_of(self, paper_ids: Sequence[int]) -> dict[int, str]:
        """The script of those of ``paper_ids`` in the index ("latn" or "hani"; no query)."""
        import numpy as np

        index = self.index()
        ids, han = index.ids, index.han
        wanted = np.asarray(list(paper_ids), dtype=np.int64)
        at = np.clip(np.searchsorted(ids, wanted), 0, max(len(ids) - 1, 0))
        found = (ids[at] == wanted) if len(ids) else np.zeros(len(wanted), bool)
        return {
            int(pk): ("hani" if han[i] else "latn")
            for pk, i, ok in zip(wanted, at, found, strict=True)
            if ok
        }

    def vectors_of(self, paper_ids: Sequence[int]) -> dict[int, np.ndarray]:
        """The stored vectors (current model) of ``paper_ids``, published or not (one
        query)."""
        rows = PaperEmbedding.objects.filter(paper_id__in=list(paper_ids), model=model_id())
        ids, matrix, _ = _read_vectors(rows.values_list("paper_id", "vector", "script"))
        return {int(pk): matrix[i] for i, pk in enumerate(ids)}


def interleave(rankings: Iterable[Sequence[Hit]]) -> list[Hit]:
    """Several rankings taken in turn by rank: every first, then every second…; hits of
    the same rank by score, best first. A paper already taken is not taken again."""
    rankings = [list(r) for r in rankings]
    out: list[Hit] = []
    seen: set[int] = set()
    for rank in range(max((len(r) for r in rankings), default=0)):
        tier = sorted((r[rank] for r in rankings if rank < len(r)), key=lambda h: -h.score)
        for hit in tier:
            if hit.paper_id not in seen:
                seen.add(hit.paper_id)
                out.append(hit)
    return out


def _top(scores: np.ndarray, k: int) -> np.ndarray:
    """Positions of the ``k`` highest ``scores``, highest first."""
    import numpy as np

    k = min(k, len(scores))
    if k <= 0:
        return np.empty(0, np.int64)
    top = np.argpartition(-scores, k - 1)[:k]
    return top[np.argsort(-scores[top], kind="stable")]


_IN_PROCESS = InProcessVectors()


def current() -> VectorBackend:
    """The vector backend for the database in use: the in-process index on both (see the
    module's note on pgvector)."""
    return _IN_PROCESS
