"""C2KV reference: compress each document into a few slot KVs once, compose them at query time.

No C2KV paper or code could be found, so this is OUR derivation of the design the daily
describes ("a few learnable compression tokens are appended to each document and read with it;
only their KV entries are kept as the document's cache; the small caches are built once and
concatenated at query time"), built on gist tokens (Mu et al., arXiv 2304.08467). Mechanism as
described, not the authors' code. Training a language model is out of scope, so the model is a
one-layer associative-recall toy.

What is modelled, on synthetic data:

* Documents of ``n`` tokens. There are ``F`` kinds of fact ("fields": think author, date,
  venue ...) and a document holds each with probability 2/3, on one token that carries the
  field's marker in its selector features, a random key and a value from a vocabulary. The other
  tokens are filler with random keys and values. A query asks for the value of one fact by (a
  noisy copy of) its key; popular fields are asked about more often.
* A frozen reader: one softmax attention head with keys ``[content ; RoPE part]``. It is a
  content-addressed recall head, so its queries have a zero RoPE part; RoPE is still applied
  and re-rotated on composition, and the tests check that this is exact.
* The extractor: ``m`` learnable compression-token queries ``c_j`` shared by all documents.
  Token j attends over its own document only, ``a_j = softmax_i(tau * c_j . s_i)``, and its
  cached KV is the attended average of the document's keys and values. Only these ``m`` entries
  are kept. ``c`` is trained by 200 steps of plain gradient descent (hand-written backward
  pass) on the recall loss, with several documents composed per training example and the query
  seeing compression tokens only, never raw document tokens. Compression tokens that end up
  unused (flat attention, or a copy of another token) are re-seeded early in training.
* Serving: each document is compressed once, at canonical positions ``0..m-1``. A request
  concatenates the caches of its ``r`` retrieved documents, re-rotating each segment's RoPE keys
  by its offset, prefills only the query, and reads ``r*m`` entries instead of ``r*n``.
* Baselines at the same ``m``: the untrained extractor, mean-pooling ``m`` chunks of the
  document, and keeping ``m`` random tokens. The ceiling is full context: every raw token's KV.

Run ``python -m deepdives.reference.c2kv --seed 0`` from the project root.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from functools import lru_cache

import numpy as np

# --------------------------------------------------------------------------------------------
# Parameters
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class TaskConfig:
    """The associative-recall task and the frozen one-layer reader."""

    n_tokens: int = 64  # n: tokens per document
    n_fields: int = 12  # F: kinds of fact; a document holds at most one fact of each kind
    field_presence: float = 2 / 3  # chance a document has a given field (8 facts on average)
    field_popularity: float = 0.8  # queries pick field f with weight (f + 1) ** -popularity
    d_sel: int = 16  # selector features (what compression tokens attend with)
    d_key: int = 16  # content part of a key
    d_rope: int = 8  # RoPE part of a key (decoupled, as in MLA); even
    d_value: int = 32
    n_values: int = 256  # value vocabulary; answers are decoded by nearest value embedding
    selector_noise: float = 0.6  # norm of the noise on a token's selector features
    query_noise: float = 0.7  # norm of the noise added to a fact's key to make its query
    beta: float = 10.0  # reader inverse temperature
    rope_base: float = 10000.0


@dataclass(frozen=True)
class TrainConfig:
    """Plain gradient descent on the compression-token queries ``c`` (m x d_sel)."""

    tau: float = 8.0  # compression tokens' attention temperature
    lr: float = 2.0
    steps: int = 200
    episodes: int = 8  # training examples per step
    docs_per_episode: int = 4  # documents composed in each training example
    queries_per_episode: int = 8
    pool_docs: int = 512  # training documents (evaluation uses fresh ones)
    init_scale: float = 0.1
    restart_every: int = 25  # re-seed unused compression tokens this often ...
    restart_until: int = 125  # ... until this step
    restart_peak: float = 0.5  # a token whose attention peak is below this is unused
    log_every: int = 25


SLOT_COUNTS = (2, 4, 8, 12)  # m values trained for the compression sweep
HEADLINE_SLOTS = 8  # n / m = 8x
HEADLINE_DOCS = 4  # r documents per request
DOC_COUNTS = (1, 2, 4, 8, 16, 32)  # r values for the composition sweep (no retraining)
EVAL_DOCS = 1024  # held-out documents per evaluation, grouped into requests of r
EVAL_QUERY_TOTAL = 1024  # held-out queries per evaluation
FIELD_ATTENTION = 0.5  # a compression token "owns" a field if it puts this much weight on its fact
BYTES_PER_VALUE = 2  # BF16 cache

# --------------------------------------------------------------------------------------------
# Synthetic documents
# --------------------------------------------------------------------------------------------


def unit(x: np.ndarray) -> np.ndarray:
    return x / np.linalg.norm(x, axis=-1, keepdims=True)


@dataclass(frozen=True)
class World:
    """What all documents share: field markers and the value vocabulary."""

    markers: np.ndarray  # (F, d_sel) unit vectors
    values: np.ndarray  # (n_values, d_value) unit vectors


@dataclass(frozen=True)
class Docs:
    """A batch of N documents of n tokens (arrays lead with N)."""

    sel: np.ndarray  # (N, n, d_sel)
    key: np.ndarray  # (N, n, d_key) content part of each token's key
    rope: np.ndarray  # (N, n, d_rope) RoPE part before rotation
    value: np.ndarray  # (N, n, d_value)
    value_id: np.ndarray  # (N, n)
    fact_pos: np.ndarray  # (N, F) token position of each field's fact, -1 if absent

    def __len__(self) -> int:
        return int(self.sel.shape[0])

    def take(self, idx: np.ndarray) -> Docs:
        return Docs(
            *(a[idx] for a in (self.sel, self.key, self.rope, self.value)),
            self.value_id[idx],
            self.fact_pos[idx],
        )


def make_world(cfg: TaskConfig, rng: np.random.Generator) -> World:
    return World(
        unit(rng.standard_normal((cfg.n_fields, cfg.d_sel))),
        unit(rng.standard_normal((cfg.n_values, cfg.d_value))),
    )


def make_docs(
    n_docs: int,
    cfg: TaskConfig,
    world: World,
    rng: np.random.Generator,
    n_tokens: int | None = None,
) -> Docs:
    n = cfg.n_tokens if n_tokens is None else n_tokens
    sel = cfg.selector_noise * unit(rng.standard_normal((n_docs, n, cfg.d_sel)))
    fact_pos = np.argsort(rng.random((n_docs, n)), axis=1)[:, : cfg.n_fields]
    present = rng.random((n_docs, cfg.n_fields)) < cfg.field_presence
    present[:, 0] |= ~present.any(axis=1)  # every document holds at least one fact
    d_idx, f_idx = np.nonzero(present)
    sel[d_idx, fact_pos[d_idx, f_idx]] += world.markers[f_idx]
    fact_pos = np.where(present, fact_pos, -1)
    value_id = rng.integers(0, cfg.n_values, (n_docs, n))
    return Docs(
        sel,
        unit(rng.standard_normal((n_docs, n, cfg.d_key))),
        rng.standard_normal((n_docs, n, cfg.d_rope)) / np.sqrt(cfg.d_rope),
        world.values[value_id],
        value_id,
        fact_pos,
    )


def field_weights(cfg: TaskConfig) -> np.ndarray:
    """How often each field is asked about, when present: (f + 1) ** -popularity."""
    return (np.arange(cfg.n_fields) + 1.0) ** -cfg.field_popularity


@dataclass(frozen=True)
class Queries:
    """Q queries per episode of r documents: which document and field, and the query vector."""

    doc: np.ndarray  # (B, Q) index of the document inside its episode
    field: np.ndarray  # (B, Q)
    q: np.ndarray  # (B, Q, d_key + d_rope); the RoPE part is zero (content-addressed head)
    answer: np.ndarray  # (B, Q) value id


def make_queries(
    docs: Docs, r: int, n_queries: int, cfg: TaskConfig, rng: np.random.Generator
) -> Queries:
    """Queries for episodes made of consecutive groups of r documents.

    Each query picks one of the episode's documents, then one of the fields that document
    holds, popular fields more often.
    """
    b = len(docs) // r
    doc = rng.integers(0, r, (b, n_queries))
    flat = np.arange(b)[:, None] * r + doc
    weight = field_weights(cfg)[None, None, :] * (docs.fact_pos[flat] >= 0)
    cdf = np.cumsum(weight, axis=-1)
    u = rng.random((b, n_queries, 1)) * cdf[..., -1:]
    field = np.minimum(np.sum(cdf < u, axis=-1), cfg.n_fields - 1)
    pos = docs.fact_pos[flat, field]
    noise = cfg.query_noise * unit(rng.standard_normal((b, n_queries, cfg.d_key)))
    q = np.concatenate([docs.key[flat, pos] + noise, np.zeros((b, n_queries, cfg.d_rope))], -1)
    return Queries(doc, field, q, docs.value_id[flat, pos])


# --------------------------------------------------------------------------------------------
# RoPE (on the decoupled part of the key)
# --------------------------------------------------------------------------------------------


@lru_cache(maxsize=8)
def rope_freqs(half: int, base: float) -> np.ndarray:
    return base ** (-np.arange(half) / half)


def rope(x: np.ndarray, positions: np.ndarray, base: float = 10000.0) -> np.ndarray:
    """Rotate (..., T, d) by positions (T,) or (..., T), half-split layout."""
    half = x.shape[-1] // 2
    freqs = rope_freqs(half, base)
    ang = np.asarray(positions, np.float64)[..., None] * freqs
    cos, sin = np.cos(ang), np.sin(ang)
    x1, x2 = x[..., :half], x[..., half:]
    return np.concatenate([x1 * cos - x2 * sin, x1 * sin + x2 * cos], axis=-1)


# --------------------------------------------------------------------------------------------
# Caches: compression, composition, reading
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Cache:
    """KV entries of N documents (or N composed requests): keys are ``[content ; rotated RoPE]``."""

    key: np.ndarray  # (N, S, d_key + d_rope)
    value: np.ndarray  # (N, S, d_value)

    @property
    def entries(self) -> int:
        return int(self.key.shape[1])

    def nbytes_per_doc(self, layers: int = 1) -> int:
        return layers * self.entries * (self.key.shape[2] + self.value.shape[2]) * BYTES_PER_VALUE


def softmax(z: np.ndarray, axis: int) -> np.ndarray:
    z = z - z.max(axis=axis, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=axis, keepdims=True)


def slot_attention(c: np.ndarray, docs: Docs, tau: float) -> np.ndarray:
    """(N, n, m): compression token j's attention over the tokens of its own document."""
    n_docs, n, d = docs.sel.shape
    z = (docs.sel.reshape(-1, d) @ c.T).reshape(n_docs, n, -1)
    return softmax(tau * z, axis=1)


def cache_from_attention(a: np.ndarray, docs: Docs, cfg: TaskConfig) -> Cache:
    """Slot KV = attention-weighted document KV; RoPE at canonical positions 0..m-1."""
    at = a.transpose(0, 2, 1)
    m = a.shape[2]
    rope_part = rope(at @ docs.rope, np.arange(m), cfg.rope_base)
    return Cache(np.concatenate([at @ docs.key, rope_part], -1), at @ docs.value)


def compress(c: np.ndarray, docs: Docs, cfg: TaskConfig, tau: float) -> Cache:
    """C2KV: run each document (independently) with the compression tokens; keep their KV."""
    return cache_from_attention(slot_attention(c, docs, tau), docs, cfg)


def full_cache(docs: Docs, cfg: TaskConfig) -> Cache:
    """Every raw token's KV, each document at canonical positions 0..n-1."""
    n = docs.sel.shape[1]
    rope_part = rope(docs.rope, np.arange(n), cfg.rope_base)
    return Cache(np.concatenate([docs.key, rope_part], -1), docs.value)


def identity_cache(docs: Docs, cfg: TaskConfig) -> Cache:
    """The m = n sanity case: slot j attends only to token j, so slots copy the document."""
    n_docs, n, _ = docs.sel.shape
    return cache_from_attention(np.broadcast_to(np.eye(n), (n_docs, n, n)), docs, cfg)


def mean_pool_cache(docs: Docs, m: int, cfg: TaskConfig) -> Cache:
    """Parameter-free baseline: slot j is the mean of the j-th of m contiguous chunks."""
    n_docs, n, _ = docs.sel.shape
    chunk = np.minimum(np.arange(n) * m // n, m - 1)
    a = np.zeros((n, m))
    a[np.arange(n), chunk] = 1.0
    a /= a.sum(axis=0, keepdims=True)
    return cache_from_attention(np.broadcast_to(a, (n_docs, n, m)), docs, cfg)


def keep_tokens_cache(docs: Docs, m: int, cfg: TaskConfig, rng: np.random.Generator) -> Cache:
    """Eviction baseline: keep m random tokens of each document (no idea what will be asked)."""
    n_docs, n, _ = docs.sel.shape
    keep = np.sort(np.argsort(rng.random((n_docs, n)), axis=1)[:, :m], axis=1)
    a = np.zeros((n_docs, n, m))
    a[np.arange(n_docs)[:, None], keep, np.arange(m)[None, :]] = 1.0
    return cache_from_attention(a, docs, cfg)


def rerotate(key: np.ndarray, delta: np.ndarray | int, cfg: TaskConfig) -> np.ndarray:
    """Move cached keys by ``delta`` positions: R(p + delta) k = R(delta) R(p) k."""
    content, rot = key[..., : cfg.d_key], key[..., cfg.d_key :]
    s = key.shape[-2]
    pos = np.broadcast_to(np.asarray(delta, np.float64)[..., None], (*np.shape(delta), s))
    return np.concatenate([content, rope(rot, pos, cfg.rope_base)], -1)


def compose(cache: Cache, r: int, cfg: TaskConfig, prefix: int = 0) -> Cache:
    """Concatenate consecutive groups of r per-document caches into one cache per request.

    Segment i of a request is re-rotated by ``prefix + i * entries`` so the segments occupy
    consecutive positions. Nothing else is recomputed: each document's entries are reused as
    they were stored.
    """
    n_docs, s, dk = cache.key.shape
    b = n_docs // r
    offsets = prefix + np.arange(r) * s
    key = rerotate(cache.key[: b * r].reshape(b, r, s, dk), np.broadcast_to(offsets, (b, r)), cfg)
    return Cache(key.reshape(b, r * s, dk), cache.value[: b * r].reshape(b, r * s, -1))


def read(q: np.ndarray, cache: Cache, beta: float) -> tuple[np.ndarray, np.ndarray]:
    """The frozen reader: softmax attention of (B, Q, d) queries over (B, S, .) caches."""
    p = softmax(beta * (q @ cache.key.transpose(0, 2, 1)), axis=2)
    return p, p @ cache.value


def decode(out: np.ndarray, world: World) -> np.ndarray:
    return np.argmax(out @ world.values.T, axis=-1)


def accuracy(cache: Cache, queries: Queries, world: World, cfg: TaskConfig) -> float:
    _, out = read(queries.q, cache, cfg.beta)
    return float(np.mean(decode(out, world) == queries.answer))


# --------------------------------------------------------------------------------------------
# The training mask (the layout the extractor is trained with)
# --------------------------------------------------------------------------------------------


def training_layout(doc_lengths: Sequence[int], m: int, n_query: int) -> np.ndarray:
    """Segment labels of ``[doc_1 ; c_1..c_m ; doc_2 ; c ; ... ; query]``.

    Returns an (L, 3) int array: (kind, document, index) with kind 0 = document token,
    1 = compression token, 2 = query token.
    """
    rows = []
    for d, n in enumerate(doc_lengths):
        rows += [(0, d, i) for i in range(n)] + [(1, d, j) for j in range(m)]
    rows += [(2, -1, i) for i in range(n_query)]
    return np.array(rows, np.int64)


def training_mask(doc_lengths: Sequence[int], m: int, n_query: int) -> np.ndarray:
    """Boolean (L, L) mask, True = may attend.

    Document tokens attend causally within their own document. Compression token j attends to
    its document and to compression tokens up to j of the same document. Query tokens attend to
    every compression token and causally to earlier query tokens, never to raw document tokens.
    Different documents never see each other, which is what makes their caches composable.
    """
    lay = training_layout(doc_lengths, m, n_query)
    kind, doc, idx = lay[:, 0], lay[:, 1], lay[:, 2]
    qk, kk = kind[:, None], kind[None, :]
    same_doc = doc[:, None] == doc[None, :]
    causal = idx[:, None] >= idx[None, :]
    doc_rows = (qk == 0) & (kk == 0) & same_doc & causal
    slot_rows = (qk == 1) & same_doc & ((kk == 0) | ((kk == 1) & causal))
    query_rows = (qk == 2) & ((kk == 1) | ((kk == 2) & causal))
    return doc_rows | slot_rows | query_rows


def masked_read(
    q: np.ndarray, keys: np.ndarray, values: np.ndarray, allowed: np.ndarray, beta: float
) -> tuple[np.ndarray, np.ndarray]:
    """Softmax attention with a boolean mask; masked logits are -inf, so their weight is 0."""
    s = np.where(allowed, beta * (q @ keys.T), -np.inf)
    p = softmax(s, axis=-1)
    return p, p @ values


# --------------------------------------------------------------------------------------------
# Training (plain gradient descent, hand-written backward pass)
# --------------------------------------------------------------------------------------------


def loss_and_grad(
    c: np.ndarray, docs: Docs, queries: Queries, r: int, world: World, cfg: TaskConfig, tau: float
) -> tuple[float, np.ndarray]:
    """Mean squared distance between the read-out and the answer's value embedding, and d/dc.

    ``docs`` must hold exactly the documents of the episodes, r per episode, in order.

    Forward: a = softmax_i(tau c.s_i); slot KV = a^T [K, R, V]; compose r documents; the query
    reads the slots only. The backward pass follows the same steps in reverse. RoPE parts carry
    no gradient because the queries' RoPE part is zero.
    """
    a = slot_attention(c, docs, tau)
    cache = compose(cache_from_attention(a, docs, cfg), r, cfg)
    p, out = read(queries.q, cache, cfg.beta)
    target = world.values[queries.answer]
    b, nq, _ = out.shape
    loss = float(np.mean(np.sum((out - target) ** 2, axis=-1)))
    d_out = 2.0 * (out - target) / (b * nq)
    d_value = p.transpose(0, 2, 1) @ d_out  # (B, r*m, d_value)
    d_p = d_out @ cache.value.transpose(0, 2, 1)
    d_s = p * (d_p - np.sum(d_p * p, axis=2, keepdims=True))
    d_key = cfg.beta * d_s.transpose(0, 2, 1) @ queries.q[..., : cfg.d_key]  # content part
    # Back to each document's m slots, then through the slot averages and their softmax.
    m = a.shape[2]
    d_key = d_key.reshape(-1, m, cfg.d_key).transpose(0, 2, 1)
    d_value = d_value.reshape(-1, m, cfg.d_value).transpose(0, 2, 1)
    d_a = docs.key @ d_key + docs.value @ d_value  # (N, n, m)
    d_z = a * (d_a - np.sum(a * d_a, axis=1, keepdims=True))
    return loss, tau * (d_z.reshape(-1, m).T @ docs.sel.reshape(-1, cfg.d_sel))


@dataclass(frozen=True)
class Trained:
    c: np.ndarray
    step: list[int]
    loss: list[float]  # held-out recall loss at HEADLINE_DOCS documents per request
    accuracy: list[float]  # held-out accuracy, same requests
    restarts: int  # compression tokens re-seeded because they were unused


def unused_slots(a: np.ndarray, peak: float) -> np.ndarray:
    """(m,) bool: compression tokens that attend diffusely, or to the same token as an earlier one.

    Gradient descent can leave a compression token with a flat attention: its key is then an
    average of the document, no query ever attends to it, and its gradient vanishes. Two tokens
    can also settle on the same fact. Either way the token is wasted.
    """
    unused = a.max(axis=1).mean(axis=0) < peak
    top = a.argmax(axis=1)  # (N, m)
    for j in range(a.shape[2]):
        for k in range(j):
            if not unused[k] and np.mean(top[:, j] == top[:, k]) > 0.5:
                unused[j] = True
    return unused


def restart_unused(
    c: np.ndarray, a: np.ndarray, tc: TrainConfig, rng: np.random.Generator
) -> tuple[np.ndarray, int]:
    """Re-seed unused compression tokens in a random direction, at the live tokens' mean norm
    (the dead-unit restart used for k-means centroids and VQ codebooks)."""
    unused = unused_slots(a, tc.restart_peak)
    if not unused.any() or unused.all():
        return c, 0
    out = c.copy()
    scale = np.linalg.norm(c[~unused], axis=1).mean()
    out[unused] = scale * unit(rng.standard_normal((int(unused.sum()), c.shape[1])))
    return out, int(unused.sum())


def train(
    m: int,
    cfg: TaskConfig,
    tc: TrainConfig,
    world: World,
    rng: np.random.Generator,
    probe: tuple[Docs, Queries] | None = None,
) -> Trained:
    pool = make_docs(tc.pool_docs, cfg, world, rng)
    c = tc.init_scale * rng.standard_normal((m, cfg.d_sel))
    steps, losses, accs = [], [], []
    restarts = 0
    r, n_ep = tc.docs_per_episode, tc.episodes
    for step in range(tc.steps + 1):
        if probe is not None and step % tc.log_every == 0:
            docs_p, q_p = probe
            cache = compose(compress(c, docs_p, cfg, tc.tau), HEADLINE_DOCS, cfg)
            steps.append(step)
            accs.append(accuracy(cache, q_p, world, cfg))
            losses.append(loss_and_grad(c, docs_p, q_p, HEADLINE_DOCS, world, cfg, tc.tau)[0])
        if step == tc.steps:
            break
        # Each example composes r distinct training documents (a fresh draw every step).
        idx = np.argsort(rng.random((n_ep, tc.pool_docs)), axis=1)[:, :r].ravel()
        docs = pool.take(idx)
        if 0 < step <= tc.restart_until and step % tc.restart_every == 0:
            c, n_new = restart_unused(c, slot_attention(c, docs, tc.tau), tc, rng)
            restarts += n_new
        queries = make_queries(docs, r, tc.queries_per_episode, cfg, rng)
        _, grad = loss_and_grad(c, docs, queries, r, world, cfg, tc.tau)
        c -= tc.lr * grad
    return Trained(c, steps, losses, accs, restarts)


# --------------------------------------------------------------------------------------------
# Measurements
# --------------------------------------------------------------------------------------------


def eval_set(
    r: int, cfg: TaskConfig, world: World, rng: np.random.Generator, docs: Docs | None = None
) -> tuple[Docs, Queries]:
    """Held-out documents (fresh unless given) grouped into requests of r, with about
    EVAL_QUERY_TOTAL queries."""
    docs = make_docs(EVAL_DOCS, cfg, world, rng) if docs is None else docs
    per_request = -(-EVAL_QUERY_TOTAL * r // len(docs))  # ceiling division
    return docs, make_queries(docs, r, per_request, cfg, rng)


def slot_fields(c: np.ndarray, docs: Docs, tau: float) -> list[int]:
    """For each compression token, the field whose fact it attends to most (-1 if none >= 0.5).

    Attention is averaged over the documents that hold the field.
    """
    a = slot_attention(c, docs, tau)  # (N, n, m)
    present = docs.fact_pos >= 0
    pos = np.where(present, docs.fact_pos, 0)
    on_fact = np.take_along_axis(a, pos[:, :, None], axis=1)  # (N, F, m)
    mean = (on_fact * present[:, :, None]).sum(0) / np.maximum(present.sum(0), 1)[:, None]
    best = mean.argmax(axis=0)
    return [int(f) if mean[f, j] >= FIELD_ATTENTION else -1 for j, f in enumerate(best)]


def method_accuracies(
    c: np.ndarray,
    docs: Docs,
    queries: Queries,
    r: int,
    world: World,
    cfg: TaskConfig,
    tc: TrainConfig,
    rng: np.random.Generator,
) -> dict[str, float]:
    """Recall accuracy of full context, C2KV and the two same-size baselines on one eval set."""
    m = c.shape[0]
    caches = {
        "full_context": full_cache(docs, cfg),
        "c2kv": compress(c, docs, cfg, tc.tau),
        "mean_pool": mean_pool_cache(docs, m, cfg),
        "keep_tokens": keep_tokens_cache(docs, m, cfg, rng),
    }
    return {k: accuracy(compose(v, r, cfg), queries, world, cfg) for k, v in caches.items()}


def sanity_checks(
    c: np.ndarray,
    docs: Docs,
    queries: Queries,
    cfg: TaskConfig,
    tc: TrainConfig,
) -> dict[str, object]:
    """Composability, RoPE re-rotation, the mask and the identity compressor, measured."""
    r = HEADLINE_DOCS
    # 1. A document's cache does not depend on which other documents it is retrieved with.
    alone = compress(c, docs.take(np.arange(1)), cfg, tc.tau)
    in_batch = compress(c, docs, cfg, tc.tau)
    independent = bool(
        np.array_equal(alone.key[0], in_batch.key[0])
        and np.array_equal(alone.value[0], in_batch.value[0])
    )
    # 2. Re-rotated raw caches equal keys rotated at their final positions directly.
    n = cfg.n_tokens
    composed = compose(full_cache(docs, cfg), r, cfg)
    pos = np.arange(r * n)
    direct = rope(docs.rope[:r].reshape(r * n, -1), pos, cfg.rope_base)
    rope_err = float(np.max(np.abs(composed.key[0, :, cfg.d_key :] - direct)))
    # 4. The training layout with its mask computes exactly what the composed slot cache gives.
    m = c.shape[0]
    seg = n + m  # each document and its compression tokens, as laid out in training
    keys, values = [], []
    for d in range(r):
        raw = full_cache(docs.take(np.array([d])), cfg)
        keys += [rerotate(raw.key[0], d * seg, cfg), rerotate(in_batch.key[d], d * seg + n, cfg)]
        values += [raw.value[0], in_batch.value[d]]
    allowed = training_mask([n] * r, m, 1)[-1][:-1]  # the query's row, minus itself
    k_all = np.concatenate(keys)
    p_layout, out_layout = masked_read(
        queries.q[0], k_all, np.concatenate(values), allowed, cfg.beta
    )
    _, out_cache = read(queries.q[:1], compose(in_batch, r, cfg), cfg.beta)
    raw_cols = training_layout([n] * r, m, 0)[:, 0] == 0
    # 5. With m = n and slots that copy their token, C2KV equals full context exactly.
    ident = compose(identity_cache(docs, cfg), r, cfg)
    _, out_id = read(queries.q, ident, cfg.beta)
    _, out_full = read(queries.q, composed, cfg.beta)
    return {
        "cache_independent_of_batch": independent,
        "rope_rerotation_max_abs_err": rope_err,
        "mask_weight_on_raw_doc_tokens": float(p_layout[:, raw_cols].sum()),
        "mask_layout_vs_cache_max_abs_diff": float(np.max(np.abs(out_layout - out_cache[0]))),
        "identity_compressor_equals_full_context": bool(np.array_equal(out_id, out_full)),
    }


def costs(cfg: TaskConfig, m: int, r: int) -> dict[str, object]:
    """Token and byte counts per request of r documents (one layer of the toy)."""
    n = cfg.n_tokens
    per_entry = (cfg.d_key + cfg.d_rope + cfg.d_value) * BYTES_PER_VALUE
    return {
        "doc_tokens_prefilled_at_serve": {"full_prefill": r * n, "full_kv_reuse": 0, "c2kv": 0},
        "kv_entries_read_per_decode_step": {"full": r * n, "c2kv": r * m},
        "cache_bytes_per_doc": {"full": n * per_entry, "c2kv": m * per_entry},
        "offline_tokens_per_doc_once": n + m,
        "compression_ratio": n / m,
    }


def run(seed: int = 0) -> dict[str, object]:
    """Every measurement for one seed; plain JSON-serialisable data."""
    cfg, tc = TaskConfig(), TrainConfig()
    world = make_world(cfg, np.random.default_rng(seed))
    probe = eval_set(HEADLINE_DOCS, cfg, world, np.random.default_rng([seed, 1]))
    docs, queries = eval_set(HEADLINE_DOCS, cfg, world, np.random.default_rng([seed, 3]))

    keys = ("full_context", "c2kv", "mean_pool", "keep_tokens", "untrained", "top_m_fields_share")
    by_m: dict[str, list] = {"slots": [], "compression_ratio": [], **{k: [] for k in keys}}
    trained: dict[int, Trained] = {}
    for m in SLOT_COUNTS:
        rng = np.random.default_rng([seed, 2, m])
        c0 = tc.init_scale * np.random.default_rng([seed, 2, m]).standard_normal((m, cfg.d_sel))
        tr = train(m, cfg, tc, world, rng, probe if m == HEADLINE_SLOTS else None)
        trained[m] = tr
        acc = method_accuracies(tr.c, docs, queries, HEADLINE_DOCS, world, cfg, tc, rng)
        untrained = compose(compress(c0, docs, cfg, tc.tau), HEADLINE_DOCS, cfg)
        by_m["slots"].append(m)
        by_m["compression_ratio"].append(cfg.n_tokens / m)
        for k, v in acc.items():
            by_m[k].append(v)
        by_m["untrained"].append(accuracy(untrained, queries, world, cfg))
        # The best m field-locked slots can do: answer every query on the m most-asked fields.
        by_m["top_m_fields_share"].append(float(np.mean(queries.field < m)))

    c = trained[HEADLINE_SLOTS].c
    by_r: dict[str, list] = {"docs": [], "full_context": [], "c2kv": []}
    for r in DOC_COUNTS:
        # The same held-out documents, regrouped into requests of r, with new queries.
        docs_r, queries_r = eval_set(r, cfg, world, np.random.default_rng([seed, 4, r]), docs)
        by_r["docs"].append(r)
        for name, cache in (
            ("full_context", full_cache(docs_r, cfg)),
            ("c2kv", compress(c, docs_r, cfg, tc.tau)),
        ):
            by_r[name].append(accuracy(compose(cache, r, cfg), queries_r, world, cfg))

    i = SLOT_COUNTS.index(HEADLINE_SLOTS)
    tr = trained[HEADLINE_SLOTS]
    fields = slot_fields(c, docs, tc.tau)
    owned = sorted({f for f in fields if f >= 0})
    return {
        "system": "C2KV",
        "mechanism": "as described (derived; no public code)",
        "seed": seed,
        "config": {"task": asdict(cfg), "train": asdict(tc)},
        "headline": {
            "slots": HEADLINE_SLOTS,
            "docs": HEADLINE_DOCS,
            "compression_ratio": cfg.n_tokens / HEADLINE_SLOTS,
            "full_context_accuracy": by_m["full_context"][i],
            "c2kv_accuracy": by_m["c2kv"][i],
            "kept_fraction": by_m["c2kv"][i] / by_m["full_context"][i],
            "untrained_accuracy": by_m["untrained"][i],
            "mean_pool_accuracy": by_m["mean_pool"][i],
            "keep_tokens_accuracy": by_m["keep_tokens"][i],
            "top_m_fields_share": by_m["top_m_fields_share"][i],
            "slot_fields": fields,
            "owned_fields": owned,
            "queries_on_owned_fields": float(np.mean(np.isin(queries.field, owned))),
            "restarts": tr.restarts,
        },
        "by_slots": by_m,
        "by_docs": by_r,
        "training": {"step": tr.step, "loss": tr.loss, "accuracy": tr.accuracy},
        "checks": sanity_checks(c, docs, queries, cfg, tc),
        "costs": costs(cfg, HEADLINE_SLOTS, HEADLINE_DOCS),
    }


# --------------------------------------------------------------------------------------------
# Report
# --------------------------------------------------------------------------------------------


def report(res: dict) -> str:
    hd, bm, br, ck, co = (res[k] for k in ("headline", "by_slots", "by_docs", "checks", "costs"))
    cfg = res["config"]["task"]
    lines = [
        f"C2KV reference (mechanism as described), seed {res['seed']}",
        f"task: {cfg['n_tokens']}-token documents, each holding a fact of each of "
        f"{cfg['n_fields']} fields with probability {cfg['field_presence']:.2f}; "
        f"{hd['docs']} documents per request",
        f"at m = {hd['slots']} slots ({hd['compression_ratio']:.0f}x fewer KV entries): "
        f"full context {hd['full_context_accuracy']:.3f}, C2KV {hd['c2kv_accuracy']:.3f} "
        f"({100 * hd['kept_fraction']:.1f}% kept); untrained slots {hd['untrained_accuracy']:.3f}, "
        f"mean-pooled chunks {hd['mean_pool_accuracy']:.3f}, "
        f"{hd['slots']} kept tokens {hd['keep_tokens_accuracy']:.3f}",
        f"fields owned by a learned compression token: {hd['owned_fields']} (field 0 is asked "
        f"most); they cover {100 * hd['queries_on_owned_fields']:.1f}% of queries, the best "
        f"{hd['slots']} fields {100 * hd['top_m_fields_share']:.1f}%; "
        f"{hd['restarts']} unused tokens re-seeded in training",
        "accuracy by slots m (ratio: C2KV / mean-pool / keep-tokens / full):",
    ]
    for j, m in enumerate(bm["slots"]):
        lines.append(
            f"  m={m:2d} ({bm['compression_ratio'][j]:4.1f}x): {bm['c2kv'][j]:.3f} / "
            f"{bm['mean_pool'][j]:.3f} / {bm['keep_tokens'][j]:.3f} / {bm['full_context'][j]:.3f}"
        )
    lines.append(
        "accuracy by documents composed r (C2KV / full): "
        + ", ".join(
            f"{r}: {a:.3f}/{b:.3f}"
            for r, a, b in zip(br["docs"], br["c2kv"], br["full_context"], strict=True)
        )
    )
    tr = res["training"]
    lines.append(
        f"training at m = {hd['slots']}: held-out accuracy "
        + " -> ".join(f"{a:.2f}" for a in tr["accuracy"][:: max(1, len(tr["accuracy"]) // 6)])
        + f" over {tr['step'][-1]} steps"
    )
    pf, kv, by = (
        co["doc_tokens_prefilled_at_serve"],
        co["kv_entries_read_per_decode_step"],
        co["cache_bytes_per_doc"],
    )
    lines += [
        f"serve-time document prefill: full {pf['full_prefill']} tokens, C2KV {pf['c2kv']}; "
        f"KV entries read per step {kv['full']} -> {kv['c2kv']}; "
        f"cache per document {by['full']} -> {by['c2kv']} bytes (one layer)",
        f"checks: cache independent of batch {ck['cache_independent_of_batch']}; RoPE "
        f"re-rotation error {ck['rope_rerotation_max_abs_err']:.1e}; weight on raw document "
        f"tokens {ck['mask_weight_on_raw_doc_tokens']:.1f}; masked layout vs cache "
        f"{ck['mask_layout_vs_cache_max_abs_diff']:.1e}; identity compressor = full context "
        f"{ck['identity_compressor_equals_full_context']}",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n", 1)[0])
    parser.add_argument("--seed", type=int, default=0, help="seed for the synthetic data")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    res = run(args.seed)
    print(report(res))
    print(f"(ran in {time.perf_counter() - start:.2f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
