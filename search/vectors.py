"""Paper embeddings and the vector index: the semantic half of search.

Writing: ``embeddings_refresh(paper_ids=…)`` embeds the papers whose stored embedding is
missing, from another model, or of another text, in batches, and stores them
(``PaperEmbedding``, the source of truth). The indexing task runs it for the papers it just
indexed, and the periodic sweep (``embeddings_refresh_stale``) for the rest: papers in the
search index first, then recent papers of a track (the desk's candidates).

Reading: a ``VectorBackend`` answers "the published papers nearest to this vector". The one
built here, ``InProcessVectors``, keeps the vectors of the indexed papers (the published
ones) in a float32 matrix a script. Below IVF_MIN_ROWS a script a query is compared with all
of them (exact). Past it, reading all 146 MB a worker of 100,000 papers for each query is
bound by memory bandwidth (bench/search.py), so the rows are kept list by list around
k-means centroids (an inverted file) and an unfiltered query reads only the lists nearest to
it, ranking their rows exactly: approximate, with the recall the bench measures; a filtered
query still compares every row the filters leave. The search service keeps each query's
results until the index changes. It is refreshed when the embeddings or the
index change: the writers bump a generation token in the shared cache, and a process that
sees a new token loads only the rows that changed. ``current()`` picks the backend as
``search.backends.current()`` picks the lexical one; an HNSW index in PostgreSQL (pgvector)
would be a second implementation of the same interface, but pgvector is not packaged for
this machine's PostgreSQL, so none is built and the in-process index serves both databases.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import itertools
import logging
import secrets
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
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
from search.limits import (
    EMBED_PER_RUN,
    IVF_LISTS_PER_SQRT,
    IVF_MIN_ROWS,
    IVF_PROBE,
    IVF_RETRAIN_GROWTH,
    IVF_TRAIN_PER_LIST,
    IVF_TRAIN_ROUNDS,
    MAX_VECTOR_INDEX,
)
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
# Names each load of an index in this process (any backend's): a key of the kept hits.
_serials = itertools.count(1)


@dataclass(frozen=True)
class _Lists:
    """An inverted file over one script's rows: k-means centroids, and the rows stored list
    by list (list ``j`` is rows ``offsets[j]:offsets[j + 1]``)."""

    centroids: np.ndarray  # (lists, DIMENSIONS) float32, unit rows
    labels: np.ndarray  # each row's list, ascending (the rows' order)
    offsets: np.ndarray  # (lists + 1,) int64
    trained: int  # the rows the centroids were trained on

    @property
    def nbytes(self) -> int:
        return self.centroids.nbytes + self.labels.nbytes + self.offsets.nbytes


@dataclass(frozen=True)
class _Script:
    """One script's rows in a contiguous matrix: in id order, or, past IVF_MIN_ROWS, list by
    list (``lists``; by id within a list)."""

    ids: np.ndarray
    matrix: np.ndarray
    lists: _Lists | None = None

    @property
    def nbytes(self) -> int:
        lists = self.lists.nbytes if self.lists is not None else 0
        return self.ids.nbytes + self.matrix.nbytes + lists

    def scores(self, vector: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(ids, cosine similarities) of the rows a query reads: every row, or those of the
        IVF_PROBE lists whose centroids are nearest to ``vector``."""
        import numpy as np

        if self.lists is None:
            return self.ids, self.matrix @ vector
        offsets = self.lists.offsets
        # Products this small on the calling thread: OpenBLAS wakes its threads for a list
        # of a thousand rows, which costs tens of ms on a busy machine (bench/search.py).
        with _one_blas_thread():
            probed = _top(self.lists.centroids @ vector, IVF_PROBE)
            spans = [(offsets[j], offsets[j + 1]) for j in probed]
            scores = np.concatenate([self.matrix[a:b] @ vector for a, b in spans])
        return np.concatenate([self.ids[a:b] for a, b in spans]), scores


@dataclass(frozen=True)
class _Index:
    """One load of the index. Each script's rows are their own contiguous matrix, so a query
    is one matrix-vector product a script (or a few, one a probed list), with no copy of the
    rows."""

    token: str | None  # the generation it was loaded at
    newest: dt.datetime | None  # the newest embedded_at it read
    serial: int  # names this load in the process: a key of the kept hits
    ids: np.ndarray  # every paper id, ascending
    han: np.ndarray  # ids' is-Han flags
    scripts: dict[str, _Script]

    @property
    def nbytes(self) -> int:
        rows = sum(script.nbytes for script in self.scripts.values())
        return self.ids.nbytes + self.han.nbytes + rows


_blas: object = None


def _one_blas_thread():
    """A context in which NumPy's BLAS runs on the calling thread only (threadpoolctl, which
    scikit-learn requires; the libraries are looked up once a process)."""
    global _blas
    if _blas is None:
        from threadpoolctl import ThreadpoolController

        _blas = ThreadpoolController()
    return _blas.limit(limits=1, user_api="blas")


def _empty_script() -> _Script:
    import numpy as np

    return _Script(np.empty(0, np.int64), np.empty((0, DIMENSIONS), np.float32))


def _arrange(ids: np.ndarray, matrix: np.ndarray, lists: _Lists | None, kept: int) -> _Script:
    """A script's rows (``ids``, ``matrix``; their first ``kept`` rows were in ``lists``, in
    the same order) as the index stores them: by id below IVF_MIN_ROWS, else list by list.
    The lists' centroids are kept, and only the other rows placed, until the script has
    grown IVF_RETRAIN_GROWTH times past the rows they were trained on."""
    import numpy as np

    if len(ids) < IVF_MIN_ROWS:
        order = np.argsort(ids, kind="stable")
        return _Script(ids[order], np.ascontiguousarray(matrix[order], np.float32))
    if lists is None or len(ids) > lists.trained * IVF_RETRAIN_GROWTH:
        centroids = _kmeans(matrix, np.argsort(ids, kind="stable"), _list_count(len(ids)))
        labels, trained = _nearest_centroid(matrix, centroids), len(ids)
    else:
        centroids, trained = lists.centroids, lists.trained
        labels = np.concatenate([lists.labels[:kept], _nearest_centroid(matrix[kept:], centroids)])
    order = np.lexsort((ids, labels))
    labels = labels[order]
    offsets = np.searchsorted(labels, np.arange(len(centroids) + 1)).astype(np.int64)
    return _Script(
        ids[order],
        np.ascontiguousarray(matrix[order], np.float32),
        _Lists(centroids, labels, offsets, trained),
    )


def _list_count(rows: int) -> int:
    return max(1, int(IVF_LISTS_PER_SQRT * rows**0.5))


def _nearest_centroid(matrix: np.ndarray, centroids: np.ndarray) -> np.ndarray:
    """Each row's nearest centroid (by cosine), a block of rows at a time."""
    import numpy as np

    out = np.empty(len(matrix), np.int64)
    for start in range(0, len(matrix), 8192):
        out[start : start + 8192] = np.argmax(matrix[start : start + 8192] @ centroids.T, axis=1)
    return out


def _kmeans(matrix: np.ndarray, by_id: np.ndarray, k: int) -> np.ndarray:
    """``k`` unit centroids of ``matrix``'s rows (spherical k-means, IVF_TRAIN_ROUNDS
    rounds, on a sample of IVF_TRAIN_PER_LIST rows a list). The seed is fixed and the sample
    drawn from the rows in id order (``by_id``): the same rows give the same centroids in
    every process."""
    import numpy as np

    rng = np.random.default_rng(36)
    take = min(len(matrix), k * IVF_TRAIN_PER_LIST)
    sample = matrix[by_id[np.sort(rng.choice(len(matrix), take, replace=False))]]
    centroids = sample[rng.choice(take, k, replace=False)].copy()
    for _ in range(IVF_TRAIN_ROUNDS):
        labels = _nearest_centroid(sample, centroids)
        order = np.argsort(labels, kind="stable")
        counts = np.bincount(labels, minlength=k)
        starts = np.cumsum(counts) - counts
        filled = counts > 0
        sums = np.empty_like(centroids)
        sums[filled] = np.add.reduceat(sample[order], starts[filled], axis=0)
        # An empty list starts again from a row drawn at random.
        sums[~filled] = sample[rng.choice(take, int((~filled).sum()), replace=False)]
        centroids = sums / np.maximum(np.linalg.norm(sums, axis=1, keepdims=True), 1e-12)
    return centroids.astype(np.float32)


class InProcessVectors:
    """The indexed papers' vectors in this process's memory, ordered by paper id."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._state: _Index | None = None

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
        new_ids, new_matrix = np.empty(0, np.int64), np.empty((0, DIMENSIONS), np.float32)
        new_han = np.empty(0, bool)
        if len(changed):
            new_ids, new_matrix, new_han = _read_vectors(
                rows.filter(paper_id__in=changed.tolist()).values_list(
                    "paper_id", "vector", "script"
                )
            )
        scripts = {}
        for script, mine in (("latn", ~new_han), ("hani", new_han)):
            was = old[script]
            keep = np.isin(was.ids, ids) & ~np.isin(was.ids, changed)
            lists = was.lists
            if lists is not None:
                lists = replace(lists, labels=lists.labels[keep])
            # A new C-ordered matrix, this script's own, ordered as it is searched.
            scripts[script] = _arrange(
                np.concatenate([was.ids[keep], new_ids[mine]]),
                np.concatenate([was.matrix[keep], new_matrix[mine]]),
                lists,
                int(keep.sum()),
            )
        all_ids = np.concatenate([scripts["latn"].ids, scripts["hani"].ids])
        han = np.repeat([False, True], [len(scripts["latn"].ids), len(scripts["hani"].ids)])
        order = np.argsort(all_ids, kind="stable")
        serial = next(_serials)
        return _Index(token, newest, serial, all_ids[order], han[order], scripts)

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
            rows = index.scripts[script]
            if allowed is not None:
                # Filtered: every row the filters leave is compared (exact); the lists
                # probed would hold few of them.
                ids, scores = rows.ids, rows.matrix @ vector
                kept = np.flatnonzero(np.isin(ids, allowed))
                ids, scores = ids[kept], scores[kept]
            else:
                ids, scores = rows.scores(vector)
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
