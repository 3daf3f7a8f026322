"""CoLoc reference program: co-access-aware placement of vectors across storage tiers.

What is modelled
    A corpus of entities, each with a text vector and an image vector, stored on four tiers
    (DRAM, CXL memory, NVMe SSD, a remote capacity tier). Queries search an in-memory index of
    the text vectors; a multimodal query then fetches the image vectors of the same entities.
    The search never reads the placement, so every layout returns the same results; only the
    cost of fetching the result vectors changes. We compare, at equal tier capacities:

    * hotness-only placement (each item ranked by its own access count),
    * modality-siloed placement (each modality in its own region, hotness within it),
    * CoLoc: build a co-access graph from a training window of the query log, group items that
      are fetched together into pages of at most B items (greedy union-find over edges by
      descending weight), rank groups by heat (accesses per slot) and fill tiers fastest first.

    Cost model (ours): a query reads every distinct page it touches; tiers are read in parallel,
    so latency = fixed search time + max over touched tiers of (tier latency + pages x page bytes
    / tier bandwidth). The falsifiable null is a log with no co-access structure (uniformly random
    result sets), where CoLoc should gain nothing.

Provenance
    No CoLoc paper or code was found when this was written. The grouping-and-placement mechanism
    is derived from the daily's one-paragraph description ("keep vectors queried together in the
    same tier") plus standard building blocks: **mechanism as described**, our design, not the
    authors'. All tier parameters and the workload are synthetic. Only the direction of the claim
    is reproduced (fewer cross-tier queries, lower modelled latency, unchanged results), not the
    paper's numbers.

Run from the project root:  python -m deepdives.reference.coloc --seed 0
"""

from __future__ import annotations

import argparse
import time
from dataclasses import dataclass

import numpy as np

# ---------------------------------------------------------------------------------------------
# Parameters
# ---------------------------------------------------------------------------------------------

PAGE_ITEMS = 16  # B: vectors per page; the unit of I/O and the largest group CoLoc may form
VECTOR_BYTES = 3072  # cost model only: a 768-d float32 vector (the search uses Workload.dim)
SEARCH_US = 100.0  # in-memory ANN search time, identical for every layout
EDGE_MIN_WEIGHT = 2  # ignore pairs seen together only once: one co-access is mostly chance
PRIOR_WEIGHT = 0.5  # same-entity text/image pair: a tie-breaker, never enough on its own
PACK_LOOKBACK = 8  # open pages a group may be packed into (keeps pages in heat order)
RECALL_SAMPLE = 4_000  # queries checked against exact search for recall@k
NULL_EPSILON = 0.03  # |relative latency change| below this counts as "no gain" on the null log


@dataclass(frozen=True)
class Tier:
    name: str
    latency_us: float
    bandwidth_gb_s: float
    capacity_frac: float | None  # share of all items the tier can hold; None = unbounded


# Four tiers, as in the paper's setup; the values are ours (typical orders of magnitude).
TIERS: tuple[Tier, ...] = (
    Tier("DRAM", 1.0, 20.0, 0.10),
    Tier("CXL memory", 3.0, 8.0, 0.15),
    Tier("NVMe SSD", 80.0, 3.0, 0.25),
    Tier("remote capacity tier", 800.0, 1.0, None),
)


@dataclass(frozen=True)
class Workload:
    n_topics: int = 300  # groups of similar entities; nearest neighbours mostly stay inside one
    topic_min: int = 4  # with <= 8 entities a topic's text+image vectors fit one page of 16
    topic_max: int = 8
    dim: int = 32
    topic_spread: float = 0.35  # entity scatter around its topic centre (centres have scale 1)
    query_noise: float = 0.15  # query = target entity's text vector + this much noise
    k: int = 5  # text results per query
    mm_fraction: float = 0.5  # share of queries that also fetch the matching image vectors
    zipf_s: float = 1.0  # popularity skew over target entities
    n_train: int = 20_000  # window the placement is built from
    n_test: int = 20_000  # later window it is evaluated on
    ivf_lists: int = 48
    ivf_probe: int = 3


MIX_SWEEP = (0.0, 0.25, 0.5, 0.75, 1.0)
STRUCTURE_SWEEP = (0.0, 0.25, 0.5, 0.75, 1.0)


# ---------------------------------------------------------------------------------------------
# Synthetic corpus, index and query log
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Corpus:
    text: np.ndarray  # (n_entities, dim) float32
    image: np.ndarray  # (n_entities, dim) float32, a separate embedding space
    topic: np.ndarray  # (n_entities,) topic id

    @property
    def n_entities(self) -> int:
        return int(self.text.shape[0])

    @property
    def n_items(self) -> int:
        # Item ids: text vector of entity e is e, its image vector is n_entities + e.
        return 2 * self.n_entities

    def vectors(self) -> np.ndarray:
        return np.concatenate([self.text, self.image])


def make_corpus(rng: np.random.Generator, wl: Workload) -> Corpus:
    sizes = rng.integers(wl.topic_min, wl.topic_max + 1, size=wl.n_topics)
    topic = np.repeat(np.arange(wl.n_topics), sizes)
    # Shuffle entity ids so that id order carries no topic locality (the baselines pack by id).
    topic = topic[rng.permutation(topic.size)]
    text_c = rng.standard_normal((wl.n_topics, wl.dim))
    image_c = rng.standard_normal((wl.n_topics, wl.dim))
    text = text_c[topic] + wl.topic_spread * rng.standard_normal((topic.size, wl.dim))
    image = image_c[topic] + wl.topic_spread * rng.standard_normal((topic.size, wl.dim))
    return Corpus(text.astype(np.float32), image.astype(np.float32), topic)


@dataclass(frozen=True)
class IvfIndex:
    centroids: np.ndarray
    lists: tuple[np.ndarray, ...]


def _sq_dists(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return (a * a).sum(1)[:, None] - 2.0 * a @ b.T + (b * b).sum(1)[None, :]


def build_ivf(rng: np.random.Generator, x: np.ndarray, n_lists: int, iters: int = 8) -> IvfIndex:
    cent = x[rng.choice(len(x), n_lists, replace=False)].copy()
    for _ in range(iters):  # plain Lloyd k-means; a few rounds are enough for a coarse quantiser
        assign = _sq_dists(x, cent).argmin(1)
        for c in range(n_lists):
            members = x[assign == c]
            if len(members):
                cent[c] = members.mean(0)
    assign = _sq_dists(x, cent).argmin(1)
    return IvfIndex(cent, tuple(np.flatnonzero(assign == c) for c in range(n_lists)))


def ivf_search(
    index: IvfIndex, x: np.ndarray, q: np.ndarray, k: int, n_probe: int, chunk: int = 2048
) -> np.ndarray:
    """Approximate top-k ids per query: only vectors in the n_probe nearest lists compete.

    Reads only the in-memory index and vectors, never the tier layout.
    """
    list_of = np.empty(len(x), dtype=np.int64)
    for c, members in enumerate(index.lists):
        list_of[members] = c
    out = []
    for s in range(0, len(q), chunk):
        qc = q[s : s + chunk]
        probes = np.argsort(_sq_dists(qc, index.centroids), axis=1)[:, :n_probe]
        probed = np.zeros((len(qc), len(index.lists)), dtype=bool)
        np.put_along_axis(probed, probes, True, axis=1)
        d = _sq_dists(qc, x)
        d[~probed[:, list_of]] = np.inf
        out.append(_top_k(d, k))
    return np.concatenate(out)


def exact_search(x: np.ndarray, q: np.ndarray, k: int) -> np.ndarray:
    return _top_k(_sq_dists(q, x), k)


def _top_k(d: np.ndarray, k: int) -> np.ndarray:
    top = np.argpartition(d, k - 1, axis=1)[:, :k]
    return np.take_along_axis(top, np.argsort(np.take_along_axis(d, top, 1), 1), 1)


@dataclass(frozen=True)
class QueryLog:
    """Result sets R(q) as a flat array: items[ptr[q]:ptr[q+1]] are the items query q fetches.

    Each R(q) is a set (no repeated item), which the co-access counting relies on.
    """

    items: np.ndarray
    ptr: np.ndarray

    @property
    def n_queries(self) -> int:
        return len(self.ptr) - 1

    @property
    def qid(self) -> np.ndarray:
        return np.repeat(np.arange(self.n_queries), np.diff(self.ptr))

    @classmethod
    def from_lists(cls, results: list[np.ndarray]) -> QueryLog:
        sets = [np.unique(np.asarray(r, dtype=np.int64)) for r in results]
        ptr = np.concatenate([[0], np.cumsum([len(r) for r in sets])]).astype(np.int64)
        items = np.concatenate(sets) if sets else np.empty(0, np.int64)
        return cls(items, ptr)

    @classmethod
    def from_padded(cls, rows: np.ndarray) -> QueryLog:
        """Rows of distinct item ids, padded with -1 on the right."""
        keep = rows >= 0
        ptr = np.concatenate([[0], np.cumsum(keep.sum(1))]).astype(np.int64)
        return cls(rows[keep].astype(np.int64), ptr)


def _zipf_weights(rng: np.random.Generator, n: int, s: float) -> np.ndarray:
    w = 1.0 / np.arange(1, n + 1) ** s
    return rng.permutation(w / w.sum())  # a random entity gets each popularity rank


def _distinct_random_rows(rng: np.random.Generator, n: int, width: int, high: int) -> np.ndarray:
    rows = rng.integers(0, high, size=(n, width))
    while True:  # redraw the (rare) rows that repeat an item
        srt = np.sort(rows, axis=1)
        bad = (srt[:, 1:] == srt[:, :-1]).any(1)
        if not bad.any():
            return rows
        rows[bad] = rng.integers(0, high, size=(int(bad.sum()), width))


@dataclass(frozen=True)
class Window:
    """One window of queries, searched once; logs with any query mix are derived from it.

    Drawing the mix from fixed uniforms (u_mm, u_random) couples the sweep points: raising the
    multimodal share only turns more of the same queries multimodal.
    """

    found: np.ndarray  # (n, k) text results of the approximate search
    u_mm: np.ndarray  # (n,) a query is multimodal if u_mm < mm_fraction
    u_random: np.ndarray  # (n,) its result set is random if u_random < random_fraction
    random_rows: np.ndarray  # (n, 2k) distinct uniformly random items, used for random queries


def search_window(
    rng: np.random.Generator,
    corpus: Corpus,
    index: IvfIndex,
    wl: Workload,
    n: int,
    popularity: np.ndarray,
) -> tuple[Window, float]:
    """Draw n queries around popular entities and search the text index; returns recall@k too."""
    target = rng.choice(corpus.n_entities, size=n, p=popularity)
    noise = wl.query_noise * rng.standard_normal((n, wl.dim)).astype(np.float32)
    q = corpus.text[target] + noise
    found = ivf_search(index, corpus.text, q, wl.k, wl.ivf_probe)
    m = min(n, RECALL_SAMPLE)  # exact search on a sample is enough to estimate recall
    truth = exact_search(corpus.text, q[:m], wl.k)
    recall = float((found[:m, :, None] == truth[:, None, :]).any(-1).mean())
    rand = _distinct_random_rows(rng, n, 2 * wl.k, corpus.n_items)
    return Window(found, rng.random(n), rng.random(n), rand), recall


def make_log(w: Window, n_entities: int, mm_fraction: float, random_fraction: float) -> QueryLog:
    """R(q): the k text results, plus their image vectors for multimodal queries."""
    n, k = w.found.shape
    is_mm = w.u_mm < mm_fraction
    is_random = w.u_random < random_fraction
    rows = np.full((n, 2 * k), -1, dtype=np.int64)
    rows[:, :k] = w.found
    rows[is_mm, k:] = n_entities + w.found[is_mm]  # the same entities' image vectors
    # Structure-free queries fetch as many items as structured ones, drawn uniformly.
    rows[is_random] = w.random_rows[is_random]
    rows[is_random & ~is_mm, k:] = -1
    return QueryLog.from_padded(rows)


# ---------------------------------------------------------------------------------------------
# Layouts
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Layout:
    name: str
    tier: np.ndarray  # (n_items,) tier index of each item
    page: np.ndarray  # (n_items,) global page id of each item

    @property
    def n_pages(self) -> int:
        return int(self.page.max()) + 1

    def page_tier(self) -> np.ndarray:
        out = np.zeros(self.n_pages, dtype=np.int64)
        out[self.page] = self.tier
        return out


def tier_page_capacity(n_items: int, tiers: tuple[Tier, ...], page_items: int) -> list[int]:
    """Pages each tier holds; the last tier takes whatever is left."""
    caps = [int(t.capacity_frac * n_items) // page_items for t in tiers if t.capacity_frac]
    return [*caps, n_items]  # n_items pages is more than any layout can need


def access_counts(log: QueryLog, n_items: int) -> np.ndarray:
    return np.bincount(log.items, minlength=n_items).astype(np.float64)


def _make_layout(name: str, pages: list[list[int]], page_tiers: list[int], n_items: int) -> Layout:
    tier = np.full(n_items, -1, dtype=np.int64)
    page = np.full(n_items, -1, dtype=np.int64)
    for p, (members, t) in enumerate(zip(pages, page_tiers, strict=True)):
        tier[members] = t
        page[members] = p
    assert (tier >= 0).all(), "every item must be placed"
    return Layout(name, tier, page)


def _chunk(items: np.ndarray, size: int) -> list[list[int]]:
    return [items[i : i + size].tolist() for i in range(0, len(items), size)]


def _by_heat(items: np.ndarray, heat: np.ndarray) -> np.ndarray:
    return items[np.argsort(-heat[items], kind="stable")]


def hotness_layout(train: QueryLog, n_items: int, tiers: tuple[Tier, ...], b: int) -> Layout:
    """Baseline (a): hottest items first, each judged alone; packed by id within a tier."""
    return _silo_layout("hotness-only", train, [np.arange(n_items)], n_items, tiers, b)


def siloed_layout(
    train: QueryLog, n_items: int, n_modalities: int, tiers: tuple[Tier, ...], b: int
) -> Layout:
    """Baseline (b): each modality gets its share of every tier; hotness within a modality."""
    per = n_items // n_modalities
    silos = [np.arange(m * per, (m + 1) * per) for m in range(n_modalities)]
    return _silo_layout("modality-siloed", train, silos, n_items, tiers, b)


def _silo_layout(
    name: str,
    train: QueryLog,
    silos: list[np.ndarray],
    n_items: int,
    tiers: tuple[Tier, ...],
    b: int,
) -> Layout:
    caps = tier_page_capacity(n_items, tiers, b)
    heat = access_counts(train, n_items)
    pages: list[list[int]] = []
    page_tiers: list[int] = []
    for s, silo in enumerate(silos):
        order = _by_heat(silo, heat)
        start = 0
        for t, cap in enumerate(caps):
            chunk = np.sort(order[start : start + _silo_share(cap, silos, s) * b])
            pages.extend(_chunk(chunk, b))
            page_tiers.extend([t] * ((len(chunk) + b - 1) // b))
            start += len(chunk)
    return _make_layout(name, pages, page_tiers, n_items)


def _silo_share(cap: int, silos: list[np.ndarray], s: int) -> int:
    """Whole pages of a tier given to silo s: proportional, remainder to the first silos."""
    total = sum(len(x) for x in silos)
    shares = [cap * len(x) // total for x in silos]
    return shares[s] + (1 if s < cap - sum(shares) else 0)


def cooccurrence(log: QueryLog, n_nodes: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Edges (a, b, w) with a < b and w = number of result sets holding both a and b."""
    sizes = np.diff(log.ptr)
    keys: list[np.ndarray] = []
    for s in np.unique(sizes):
        if s < 2:
            continue
        qs = np.flatnonzero(sizes == s)
        rows = np.sort(log.items[log.ptr[qs][:, None] + np.arange(s)], axis=1)
        i, j = np.triu_indices(int(s), 1)
        keys.append((rows[:, i] * n_nodes + rows[:, j]).ravel())
    if not keys:
        empty = np.empty(0, np.int64)
        return empty, empty, np.empty(0)
    uniq, w = np.unique(np.concatenate(keys), return_counts=True)
    return uniq // n_nodes, uniq % n_nodes, w.astype(np.float64)


def _add_edges(
    n_nodes: int, *edge_sets: tuple[np.ndarray, np.ndarray, np.ndarray]
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Sum the weights of several edge lists over the same nodes."""
    key = np.concatenate([a * n_nodes + b for a, b, _ in edge_sets])
    w = np.concatenate([w for _, _, w in edge_sets])
    uniq, inv = np.unique(key, return_inverse=True)
    return uniq // n_nodes, uniq % n_nodes, np.bincount(inv, weights=w)


def group_nodes(
    sizes: np.ndarray,
    edges: tuple[np.ndarray, np.ndarray, np.ndarray],
    cap: int,
    min_weight: float,
) -> np.ndarray:
    """Greedy union-find: merge along the heaviest edges while a group's size stays <= cap.

    Returns a group label per node (the root's index).
    """
    parent = list(range(len(sizes)))
    size = [int(x) for x in sizes]

    def find(x: int) -> int:
        root = x
        while parent[root] != root:
            root = parent[root]
        while parent[x] != root:  # path compression
            parent[x], x = root, parent[x]
        return root

    src, dst, w = edges
    order = np.argsort(-w, kind="stable")
    order = order[w[order] >= min_weight]
    for a, b in zip(src[order].tolist(), dst[order].tolist(), strict=True):
        ra, rb = find(a), find(b)
        if ra != rb and size[ra] + size[rb] <= cap:
            parent[rb] = ra
            size[ra] += size[rb]
    return np.array([find(i) for i in range(len(sizes))], dtype=np.int64)


def _members(labels: np.ndarray) -> tuple[np.ndarray, list[np.ndarray]]:
    """Unique-label index per node, and the node list of every label."""
    _, gid = np.unique(labels, return_inverse=True)
    order = np.argsort(gid, kind="stable")
    return gid, np.split(order, np.cumsum(np.bincount(gid))[:-1])


def pack_groups(groups: list[np.ndarray], b: int, lookback: int = PACK_LOOKBACK) -> list[list[int]]:
    """Pack groups, in the given order, into pages of b slots; a group is never split."""
    pages: list[list[int]] = []
    for g in groups:
        for p in pages[-lookback:]:
            if len(p) + len(g) <= b:
                p.extend(g.tolist())
                break
        else:
            pages.append(g.tolist())
    return pages


def entity_prior(entity: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Weight PRIOR_WEIGHT between the vectors of one entity (a chain links them all)."""
    order = np.argsort(entity, kind="stable")
    same = entity[order[1:]] == entity[order[:-1]]
    a, b = order[:-1][same], order[1:][same]
    return np.minimum(a, b), np.maximum(a, b), np.full(len(a), PRIOR_WEIGHT)


def coloc_layout(
    train: QueryLog,
    n_items: int,
    tiers: tuple[Tier, ...],
    b: int,
    entity: np.ndarray | None = None,
) -> Layout:
    """CoLoc, mechanism as described: co-access groups of <= b items, hottest first."""
    caps = tier_page_capacity(n_items, tiers, b)
    heat = access_counts(train, n_items)
    edges = cooccurrence(train, n_items)
    if entity is not None:  # same-entity prior: text and image of one entity lean together
        edges = _add_edges(n_items, edges, entity_prior(entity))
    else:
        entity = np.arange(n_items)
    # 1) Items fetched together form groups of at most b: a group always fits in one page.
    gid, groups = _members(group_nodes(np.ones(n_items), edges, b, EDGE_MIN_WEIGHT))
    # 2) Group heat h(g) = accesses per slot.
    g_heat = np.bincount(gid, weights=heat) / np.bincount(gid)
    # 3) Hottest groups first; ties (e.g. never-accessed items) go by entity, so cold leftovers
    #    are packed entity by entity. Pages fill tiers fastest first; a group is never split.
    g_entity = np.array([entity[g].min() for g in groups])
    pages = pack_groups([groups[i] for i in np.lexsort((g_entity, -g_heat))], b)
    bounds = np.cumsum(caps)
    page_tiers = [int(np.searchsorted(bounds, p, side="right")) for p in range(len(pages))]
    return _make_layout("CoLoc", pages, page_tiers, n_items)


def _distinct_per_query(log: QueryLog, node_of: np.ndarray, n_nodes: int) -> QueryLog:
    """The same log with each item replaced by its node (page), duplicates removed."""
    key = np.unique(log.qid * n_nodes + node_of[log.items])
    q = key // n_nodes
    ptr = np.concatenate([[0], np.cumsum(np.bincount(q, minlength=log.n_queries))])
    return QueryLog(key % n_nodes, ptr)


def random_pages_layout(layout: Layout, b: int, rng: np.random.Generator) -> Layout:
    """Same tier for every item as `layout`, but items packed into pages at random."""
    tier = layout.tier.copy()
    page = np.empty_like(layout.page)
    next_page = 0
    for t in np.unique(tier):
        ids = rng.permutation(np.flatnonzero(tier == t))
        page[ids] = next_page + np.arange(len(ids)) // b
        next_page += (len(ids) + b - 1) // b
    return Layout(layout.name + " (random pages)", tier, page)


# ---------------------------------------------------------------------------------------------
# Storage: materialise a layout and fetch through it
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class TierStore:
    """Vectors physically copied into one array per tier, in page order."""

    arrays: tuple[np.ndarray, ...]
    tier: np.ndarray
    offset: np.ndarray


def materialise(layout: Layout, vectors: np.ndarray) -> TierStore:
    arrays: list[np.ndarray] = []
    offset = np.empty(len(vectors), dtype=np.int64)
    for t in range(int(layout.tier.max()) + 1):
        ids = np.flatnonzero(layout.tier == t)
        ids = ids[np.lexsort((ids, layout.page[ids]))]
        offset[ids] = np.arange(len(ids))
        arrays.append(vectors[ids].copy())
    return TierStore(tuple(arrays), layout.tier.copy(), offset)


def fetch(store: TierStore, items: np.ndarray) -> np.ndarray:
    out = np.empty((len(items), store.arrays[0].shape[1]), dtype=store.arrays[0].dtype)
    for t, arr in enumerate(store.arrays):
        sel = store.tier[items] == t
        out[sel] = arr[store.offset[items[sel]]]
    return out


# ---------------------------------------------------------------------------------------------
# Cost model
# ---------------------------------------------------------------------------------------------


def pages_per_tier(layout: Layout, log: QueryLog, n_tiers: int) -> np.ndarray:
    """(n_queries, n_tiers) count of distinct pages each query reads from each tier."""
    pages = _distinct_per_query(log, layout.page, layout.n_pages)
    counts = np.zeros((log.n_queries, n_tiers), dtype=np.int64)
    np.add.at(counts, (pages.qid, layout.page_tier()[pages.items]), 1)
    return counts


def query_latency_us(counts: np.ndarray, tiers: tuple[Tier, ...], b: int) -> np.ndarray:
    page_bytes = b * VECTOR_BYTES
    lat = np.array([t.latency_us for t in tiers])
    per_page_us = np.array([page_bytes / (t.bandwidth_gb_s * 1e3) for t in tiers])  # GB/s->B/us
    cost = np.where(counts > 0, lat + counts * per_page_us, 0.0)
    return SEARCH_US + cost.max(1)  # tiers are read in parallel: the slowest one decides


def evaluate(layout: Layout, log: QueryLog, tiers: tuple[Tier, ...], b: int) -> dict:
    counts = pages_per_tier(layout, log, len(tiers))
    lat = query_latency_us(counts, tiers, b)
    touched = (counts > 0).sum(1)
    return {
        "layout": layout.name,
        "cross_tier_rate": float((touched > 1).mean()),
        "pages_per_query": float(counts.sum(1).mean()),
        "slow_pages_per_query": float(counts[:, 2:].sum(1).mean()),  # SSD + remote tier
        "mean_us": float(lat.mean()),
        "p50_us": float(np.percentile(lat, 50)),
        "p99_us": float(np.percentile(lat, 99)),
    }


# ---------------------------------------------------------------------------------------------
# Experiments
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Scenario:
    corpus: Corpus
    train: Window  # the placement is built from this window ...
    test: Window  # ... and measured on this later one
    recall: float  # recall@k of the text search on the test window
    entity: np.ndarray  # (n_items,) entity of each item

    def logs(self, mm_fraction: float, random_fraction: float) -> tuple[QueryLog, QueryLog]:
        n_e = self.corpus.n_entities
        return (
            make_log(self.train, n_e, mm_fraction, random_fraction),
            make_log(self.test, n_e, mm_fraction, random_fraction),
        )


def build_scenario(seed: int, wl: Workload) -> Scenario:
    rng = np.random.default_rng(seed)
    corpus = make_corpus(rng, wl)
    index = build_ivf(rng, corpus.text, wl.ivf_lists)
    pop = _zipf_weights(rng, corpus.n_entities, wl.zipf_s)
    train, _ = search_window(rng, corpus, index, wl, wl.n_train, pop)
    test, recall = search_window(rng, corpus, index, wl, wl.n_test, pop)
    entity = np.arange(corpus.n_items) % corpus.n_entities
    return Scenario(corpus, train, test, recall, entity)


def build_layouts(
    sc: Scenario, train: QueryLog, tiers: tuple[Tier, ...] = TIERS, b: int = PAGE_ITEMS
) -> list[Layout]:
    n_items = sc.corpus.n_items
    return [
        hotness_layout(train, n_items, tiers, b),
        siloed_layout(train, n_items, 2, tiers, b),
        coloc_layout(train, n_items, tiers, b, sc.entity),
    ]


def compare_layouts(
    sc: Scenario,
    mm_fraction: float,
    random_fraction: float = 0.0,
    tiers: tuple[Tier, ...] = TIERS,
    b: int = PAGE_ITEMS,
) -> dict:
    """Build every layout on the training window, measure them on the test window."""
    train, test = sc.logs(mm_fraction, random_fraction)
    layouts = build_layouts(sc, train, tiers, b)
    rows = {lay.name: evaluate(lay, test, tiers, b) for lay in layouts}
    base, co = rows["hotness-only"], rows["CoLoc"]
    return {
        "layouts": rows,
        "latency_reduction_vs_hotness": 1.0 - co["mean_us"] / base["mean_us"],
        "p99_reduction_vs_hotness": 1.0 - co["p99_us"] / base["p99_us"],
        "items_per_tier": {
            lay.name: np.bincount(lay.tier, minlength=len(tiers)).tolist() for lay in layouts
        },
    }


def results_identical(vectors: np.ndarray, layouts: list[Layout], log: QueryLog) -> bool:
    """Fetch every result of the log through each materialised layout; all must be bit-equal."""
    want = vectors[log.items]
    return all(np.array_equal(fetch(materialise(lay, vectors), log.items), want) for lay in layouts)


def run(seed: int = 0) -> dict:
    started = time.perf_counter()
    wl = Workload()
    sc = build_scenario(seed, wl)
    main_cmp = compare_layouts(sc, wl.mm_fraction)
    train, test = sc.logs(wl.mm_fraction, 0.0)
    identical = results_identical(sc.corpus.vectors(), build_layouts(sc, train), test)
    # The falsifiable null: every result set uniformly random, so there is nothing to co-locate.
    null_cmp = compare_layouts(sc, wl.mm_fraction, random_fraction=1.0)
    mix_series = [_sweep_point("mm_fraction", mm, compare_layouts(sc, mm)) for mm in MIX_SWEEP]
    structure_series = [
        _sweep_point("random_fraction", rf, compare_layouts(sc, wl.mm_fraction, rf))
        for rf in STRUCTURE_SWEEP
    ]
    return {
        "system": "CoLoc",
        "seed": seed,
        "mechanism": "as described (derived; no paper or code found)",
        "setup": {
            "entities": sc.corpus.n_entities,
            "items": sc.corpus.n_items,
            "page_items": PAGE_ITEMS,
            "train_queries": wl.n_train,
            "test_queries": wl.n_test,
            "mm_fraction": wl.mm_fraction,
            "k": wl.k,
            "tiers": [
                {
                    "name": t.name,
                    "latency_us": t.latency_us,
                    "bandwidth_gb_s": t.bandwidth_gb_s,
                    "capacity_frac": t.capacity_frac,
                }
                for t in TIERS
            ],
        },
        "recall_at_k": sc.recall,  # one search for all layouts: placement cannot change it
        "results_identical_across_layouts": identical,
        "main": main_cmp,
        "null": null_cmp,
        "null_epsilon": NULL_EPSILON,
        "mix_sweep": mix_series,
        "structure_sweep": structure_series,
        "runtime_s": round(time.perf_counter() - started, 3),
    }


def _sweep_point(key: str, value: float, cmp: dict) -> dict:
    rows = cmp["layouts"]
    return {
        key: value,
        "cross_tier_hotness": rows["hotness-only"]["cross_tier_rate"],
        "cross_tier_coloc": rows["CoLoc"]["cross_tier_rate"],
        "mean_us_hotness": rows["hotness-only"]["mean_us"],
        "mean_us_coloc": rows["CoLoc"]["mean_us"],
        "latency_reduction": cmp["latency_reduction_vs_hotness"],
    }


# ---------------------------------------------------------------------------------------------
# Report
# ---------------------------------------------------------------------------------------------


def _layout_table(rows: dict) -> list[str]:
    lines = [
        f"  {'layout':<16}{'cross-tier':>11}{'pages/q':>9}{'slow pg/q':>10}"
        f"{'mean us':>9}{'p50 us':>8}{'p99 us':>8}"
    ]
    for r in rows.values():
        lines.append(
            f"  {r['layout']:<16}{r['cross_tier_rate']:>10.1%} {r['pages_per_query']:>8.2f}"
            f"{r['slow_pages_per_query']:>10.2f}{r['mean_us']:>9.1f}{r['p50_us']:>8.1f}"
            f"{r['p99_us']:>8.1f}"
        )
    return lines


def report(res: dict) -> str:
    s = res["setup"]
    m, n = res["main"], res["null"]
    lines = [
        f"CoLoc reference program (mechanism as described), seed {res['seed']}",
        f"{s['entities']} entities x 2 modalities = {s['items']} vectors, pages of "
        f"{s['page_items']}, 4 tiers; {s['mm_fraction']:.0%} multimodal queries; placement "
        f"built on {s['train_queries']} queries, measured on the next {s['test_queries']}.",
        "",
        "Structured log (equal tier capacities):",
        *_layout_table(m["layouts"]),
        f"  CoLoc vs hotness-only: mean latency {-m['latency_reduction_vs_hotness']:+.1%}, "
        f"p99 {-m['p99_reduction_vs_hotness']:+.1%}",
        f"  recall@{s['k']} {res['recall_at_k']:.3f} for every layout; fetched vectors "
        f"bit-identical across layouts: {res['results_identical_across_layouts']}",
        "",
        "Null log (uniformly random result sets, no co-access structure):",
        *_layout_table(n["layouts"]),
        f"  CoLoc vs hotness-only: mean latency {-n['latency_reduction_vs_hotness']:+.1%} "
        f"(|change| < {res['null_epsilon']:.0%} counts as no gain)",
        "",
        "Multimodal share sweep (CoLoc vs hotness-only):",
    ]
    for p in res["mix_sweep"]:
        lines.append(
            f"  mm {p['mm_fraction']:>4.0%}: cross-tier {p['cross_tier_hotness']:6.1%} -> "
            f"{p['cross_tier_coloc']:5.1%}, mean latency {-p['latency_reduction']:+.1%}"
        )
    lines.append("Structure sweep (share of queries with random result sets):")
    for p in res["structure_sweep"]:
        lines.append(
            f"  random {p['random_fraction']:>4.0%}: cross-tier {p['cross_tier_hotness']:6.1%} -> "
            f"{p['cross_tier_coloc']:5.1%}, mean latency {-p['latency_reduction']:+.1%}"
        )
    lines.append(f"runtime {res['runtime_s']:.2f} s")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    args = parser.parse_args(argv)
    print(report(run(args.seed)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
