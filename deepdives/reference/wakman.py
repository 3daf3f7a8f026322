"""WAKMan reference: replay recent traffic to pick the KV-cache eviction policy (as described).

No WAKMan paper text or code could be found, so the manager below is OUR derivation of the
design the daily describes ("every 15 minutes, replay the latest requests through simulated
LRU and S3-FIFO caches and run the winner for the next interval"). Mechanism as described,
not the authors' code. The S3-FIFO it uses is sourced: Algorithm 1 of Yang et al., "FIFO
Queues Are All You Need for Cache Eviction" (SOSP '23), with the defaults of libCacheSim's
original ``S3FIFOv0.c`` (small queue 10 %, ghost 90 % of the capacity, 2-bit frequency).
Promotion threshold: an object leaves the small queue for the main queue when its frequency
is >= 2 (the paper's ``t.freq > 1``); ``T = 1`` (the "accessed at least once" reading of the
prose, used by some ports) is available as a parameter and is shown to behave differently.

What is modelled:

* Two caches of ``C`` KV blocks: LRU (vLLM's default) and S3-FIFO, each with one
  ``access(block) -> hit`` operation.
* KV prefix hit accounting: a request is an ordered chain of block hashes; its hits are the
  leading blocks found in the cache (stop at the first miss). Every block of the request is
  then accessed (the missing ones are computed and inserted).
* WAKMan: the live cache runs one policy. At every epoch boundary (15 minutes of virtual
  time) it replays the epoch that just ended through a fresh LRU and a fresh S3-FIFO
  simulator, both warm-started from the live cache's residents at the start of that epoch,
  and switches to the policy with more prefix hits (ties and gains below a small margin keep
  the current policy). A switch keeps the cached blocks and only rebuilds the metadata.
  Replays work on their own copies and never touch the live cache.
* Baselines on the same phased block trace: fixed LRU, fixed S3-FIFO, and a per-epoch oracle
  that, from the live state at each epoch start, runs whichever policy turns out better on
  that very epoch (best in hindsight, greedy epoch by epoch).
* Synthetic phases at C = 1000 blocks. Phase A is LRU-friendly: a hot set plus follow-up
  blocks reused once, 300 requests later, as agent loops do. Phase B is S3-FIFO-friendly:
  popular prefixes that come back after long gaps, with one-shot blocks in between. The
  spec's checked figures (its Zipf phase B among them) are reproduced on single-key traces.

Run ``python -m deepdives.reference.wakman --seed 0`` from the project root.
"""

from __future__ import annotations

import argparse
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass
from typing import Protocol

import numpy as np

# --------------------------------------------------------------------------------------------
# Parameters
# --------------------------------------------------------------------------------------------

CAPACITY = 1000  # blocks in the cache (the spec's measurement point)
BLOCK_TOKENS = 16  # tokens per KV block (vLLM's default block size), for "prefill saved"
EPOCH_MINUTES = 15.0  # WAKMan's decision interval
REQUESTS_PER_MINUTE = 500  # virtual time: 7,500 block requests per 15-minute epoch
SWITCH_MARGIN = 0.002  # switch only if the rival's replay hit ratio is this much higher
POLICIES = ("LRU", "S3FIFO")
INITIAL_POLICY = "LRU"  # vLLM's default


@dataclass(frozen=True)
class S3Params:
    """S3-FIFO parameters: Algorithm 1 of the SOSP'23 paper with libCacheSim's defaults."""

    small_ratio: float = 0.10  # the small queue S's target share of the capacity
    ghost_ratio: float = 0.90  # ghost queue G holds ids only, as many as the main queue
    move_to_main_threshold: int = 2  # promote S -> M when freq >= T (the paper's freq > 1)
    freq_cap: int = 3  # 2-bit frequency counter


@dataclass(frozen=True)
class PhaseA:
    """LRU-friendly traffic: a uniform hot set plus follow-ups reused once, soon after."""

    hot_prob: float = 0.5  # a request that is not a scheduled follow-up is hot w.p. this
    hot_keys: int = 900
    reuse_gap: int = 300  # a follow-up block comes back this many requests later


@dataclass(frozen=True)
class PhaseB:
    """S3-FIFO-friendly traffic: popular prefixes with one-shot blocks interleaved."""

    zipf_a: float | None = 1.2  # None: popular keys are drawn uniformly instead
    popular_keys: int = 5000  # Zipf draws are folded onto this many keys (``zipf % keys``)
    scan_prob: float = 0.6  # before each popular request, a one-shot block w.p. this


# The checked S3-FIFO / LRU figures of the spec (section B1), reproduced by ``s3fifo_checks``.
CHECK_REQUESTS = 300_000
# Phases for the WAKMan demo. Phase A is the spec's (900 hot blocks at 50 %, follow-ups reused
# 300 requests later). The spec's Zipf phase B gives S3-FIFO only a slim edge (~0.07 at steady
# state) that takes tens of thousands of requests to build after phase A, so the demo's phase
# B is a set of 800 popular prefixes drawn uniformly, each re-used ~2,000 requests later with
# 1.5 one-shot blocks per popular request in between: too far apart for LRU to bridge, close
# enough for S3-FIFO's ghost queue to catch and promote them.
DEMO_PHASE_A = PhaseA()
DEMO_PHASE_B = PhaseB(zipf_a=None, popular_keys=800, scan_prob=1.5)
FIRST_PHASE = "B"  # a cold cache flatters S3-FIFO on phase A (S fills the whole cache once)
MAIN_PHASE_EPOCHS = 6  # headline run: phases of 1.5 hours, B A B A
MAIN_EPOCHS = 24
SWEEP_PHASE_EPOCHS = (1, 2, 3)  # shorter phases, 12 epochs each (6 = the headline run)
SWEEP_EPOCHS = 12
COLD_A_EPOCHS = 3  # phase A alone from an empty cache, to show S3-FIFO's two regimes

# Key spaces, so that phases never share blocks by accident; one-shot keys count up from here.
HOT_A_BASE = 0
HOT_B_BASE = 1_000_000
FRESH_BASE = 10_000_000

Request = tuple[int, ...]  # one request: its chain of block hashes, in prefix order


# --------------------------------------------------------------------------------------------
# Caches
# --------------------------------------------------------------------------------------------


class Cache(Protocol):
    name: str
    capacity: int

    def access(self, key: int) -> bool: ...

    def __contains__(self, key: object) -> bool: ...

    def __len__(self) -> int: ...

    def residents_by_recency(self) -> list[int]: ...

    def clone(self) -> Cache: ...

    def state(self) -> tuple: ...


class LRUCache:
    """Least-recently-used eviction; ``OrderedDict`` order is recency, oldest first."""

    name = "LRU"

    def __init__(self, capacity: int) -> None:
        if capacity < 1:
            raise ValueError("capacity must be positive")
        self.capacity = capacity
        self._d: OrderedDict[int, None] = OrderedDict()

    def access(self, key: int) -> bool:
        d = self._d
        if key in d:
            d.move_to_end(key)
            return True
        if len(d) >= self.capacity:
            d.popitem(last=False)
        d[key] = None
        return False

    def __contains__(self, key: object) -> bool:
        return key in self._d

    def __len__(self) -> int:
        return len(self._d)

    def residents_by_recency(self) -> list[int]:
        return list(self._d)

    @classmethod
    def from_residents(cls, capacity: int, keys: Sequence[int]) -> LRUCache:
        """Rebuild LRU metadata for blocks already cached, given oldest to newest."""
        cache = cls(capacity)
        for k in list(keys)[-capacity:]:
            cache._d[k] = None
        return cache

    def clone(self) -> LRUCache:
        c = LRUCache(self.capacity)
        c._d = self._d.copy()
        return c

    def state(self) -> tuple:
        return ("LRU", tuple(self._d))


class S3FIFOCache:
    """S3-FIFO (SOSP'23 Algorithm 1): small FIFO S, main FIFO M (2-bit CLOCK), ghost FIFO G.

    Queues are ``OrderedDict``s of key -> frequency; the first entry is the tail (oldest), new
    entries go to the head (end). The small queue is not hard-capped: while M is not full, S
    may hold more than 10 % of the cache; the 10 % only decides which queue ``evict`` uses.
    """

    name = "S3FIFO"

    def __init__(
        self, capacity: int, params: S3Params = S3Params(), track_recency: bool = True
    ) -> None:
        small = int(capacity * params.small_ratio)
        if capacity < 2 or small < 1:
            raise ValueError("capacity too small for a 10% small queue")
        self.capacity = capacity
        self.params = params
        self.small_target = small
        self.main_cap = capacity - small
        self.ghost_cap = int(capacity * params.ghost_ratio)
        self.threshold = params.move_to_main_threshold
        self.freq_cap = params.freq_cap
        self.S: OrderedDict[int, int] = OrderedDict()
        self.M: OrderedDict[int, int] = OrderedDict()
        self.G: OrderedDict[int, None] = OrderedDict()
        # Last access tick per resident, only needed to rank residents by recency when the
        # manager switches policy; pure simulators skip it (it costs a dict write per access).
        self.track_recency = track_recency
        self._last: dict[int, int] = {}
        self._tick = 0

    # -- Algorithm 1 ---------------------------------------------------------------------

    def access(self, key: int) -> bool:
        if self.track_recency:
            self._tick += 1
            self._last[key] = self._tick
        # Hit: bump the capped counter, no queue movement (lazy promotion). ``get`` saves a
        # second lookup on this hot path.
        freq = self.S.get(key)
        if freq is not None:
            if freq < self.freq_cap:
                self.S[key] = freq + 1
            return True
        freq = self.M.get(key)
        if freq is not None:
            if freq < self.freq_cap:
                self.M[key] = freq + 1
            return True
        self._insert(key)
        return False

    def _insert(self, key: int) -> None:
        S, M = self.S, self.M
        while len(S) + len(M) >= self.capacity:
            # evict() of Algorithm 1, inlined: the 10 % target only picks the queue
            if len(S) >= self.small_target:
                self._evict_small()
            else:
                self._evict_main()
        if key in self.G:  # seen recently and evicted from S: straight to M
            del self.G[key]
            M[key] = 0
        else:
            S[key] = 0

    def _evict_small(self) -> None:
        S, M, G = self.S, self.M, self.G
        while S:
            key, freq = S.popitem(last=False)
            if freq >= self.threshold:
                M[key] = 0  # promotion clears the counter (libCacheSim inserts a new object)
                if len(M) > self.main_cap:
                    self._evict_main()
            else:  # one real eviction: remember the id in the ghost queue
                if self.track_recency:
                    del self._last[key]
                G[key] = None
                if len(G) > self.ghost_cap:
                    G.popitem(last=False)
                return

    def _evict_main(self) -> None:
        M = self.M
        while M:
            key, freq = M.popitem(last=False)
            if freq >= 1:  # FIFO-reinsertion with a 2-bit counter
                M[key] = min(freq, self.freq_cap) - 1
            else:
                if self.track_recency:
                    del self._last[key]
                return

    # -- Introspection and policy switching ----------------------------------------------

    def __contains__(self, key: object) -> bool:
        return key in self.S or key in self.M

    def __len__(self) -> int:
        return len(self.S) + len(self.M)

    def freq(self, key: int) -> int:
        return self.S[key] if key in self.S else self.M[key]

    def residents_by_recency(self) -> list[int]:
        if not self.track_recency:
            raise RuntimeError("this simulator does not track recency")
        keys = [*self.S, *self.M]
        return sorted(keys, key=self._last.__getitem__)

    @classmethod
    def from_residents(
        cls,
        capacity: int,
        keys: Sequence[int],
        params: S3Params = S3Params(),
        track_recency: bool = True,
    ) -> S3FIFOCache:
        """Adopt blocks already cached: all go to M with freq 0, oldest at the tail."""
        cache = cls(capacity, params, track_recency)
        for k in list(keys)[-capacity:]:
            cache._tick += 1
            cache._last[k] = cache._tick
            cache.M[k] = 0
        return cache

    def clone(self) -> S3FIFOCache:
        c = S3FIFOCache(self.capacity, self.params, self.track_recency)
        c.S, c.M, c.G = self.S.copy(), self.M.copy(), self.G.copy()
        c._last, c._tick = self._last.copy(), self._tick
        return c

    def state(self) -> tuple:
        return ("S3FIFO", tuple(self.S.items()), tuple(self.M.items()), tuple(self.G))


def make_cache(
    policy: str, capacity: int, residents: Sequence[int] = (), track_recency: bool = True
) -> Cache:
    """A cache of the named policy holding ``residents`` (oldest first)."""
    if policy == "LRU":
        return LRUCache.from_residents(capacity, residents)
    if policy == "S3FIFO":
        return S3FIFOCache.from_residents(capacity, residents, track_recency=track_recency)
    raise ValueError(f"unknown policy {policy!r}")


def convert(cache: Cache, policy: str) -> Cache:
    """Switch policy: keep the cached blocks, rebuild the metadata (identity if unchanged)."""
    if cache.name == policy:
        return cache
    return make_cache(policy, cache.capacity, cache.residents_by_recency())


# --------------------------------------------------------------------------------------------
# Hit accounting
# --------------------------------------------------------------------------------------------


def hit_ratio(cache: Cache, keys: Iterable[int]) -> float:
    """Plain object hit ratio of a single-key trace (for the S3-FIFO checks)."""
    keys = list(keys)
    return sum(map(cache.access, keys)) / max(len(keys), 1)


def serve(cache: Cache, request: Request) -> int:
    """Prefix hits of one request; every block is then accessed (misses computed, inserted)."""
    hits = 0
    in_prefix = True
    for block in request:
        hit = cache.access(block)
        if in_prefix and hit:
            hits += 1
        else:
            in_prefix = False
    return hits


def serve_all(cache: Cache, requests: Iterable[Request]) -> tuple[int, int]:
    """(prefix-hit blocks, requested blocks) over a list of requests."""
    access = cache.access
    hits = blocks = 0
    for r in requests:
        if len(r) == 1:  # a one-block request: its prefix hit is just the access result
            hits += access(r[0])
            blocks += 1
        else:
            hits += serve(cache, r)
            blocks += len(r)
    return hits, blocks


# --------------------------------------------------------------------------------------------
# Synthetic traces
# --------------------------------------------------------------------------------------------


class KeyCounter:
    """Hands out fresh block ids (one-shot and follow-up blocks) that never repeat."""

    def __init__(self, start: int = FRESH_BASE) -> None:
        self.next = start

    def take(self, n: int) -> np.ndarray:
        out = np.arange(self.next, self.next + n, dtype=np.int64)
        self.next += n
        return out


def phase_a_keys(
    rng: np.random.Generator, n: int, p: PhaseA, fresh: KeyCounter, base: int = HOT_A_BASE
) -> list[int]:
    """``n`` requests: each slot is a due follow-up, else hot (w.p. hot_prob) or a new block.

    A new block is scheduled to come back exactly ``reuse_gap`` requests later (the next free
    slot if that one is taken), so every follow-up block is used exactly twice.
    """
    out = np.empty(n, np.int64)
    due: dict[int, int] = {}
    u = rng.random(n)
    hot = rng.integers(0, p.hot_keys, n) + base
    new_ids = fresh.take(n)
    n_new = 0
    for i in range(n):
        key = due.pop(i, None)
        if key is not None:
            out[i] = key
        elif u[i] < p.hot_prob:
            out[i] = hot[i]
        else:
            key = int(new_ids[n_new])
            n_new += 1
            out[i] = key
            j = i + p.reuse_gap
            while j in due:
                j += 1
            due[j] = key
    return out.tolist()


def phase_b_keys(
    rng: np.random.Generator, n: int, p: PhaseB, fresh: KeyCounter, base: int = HOT_B_BASE
) -> list[int]:
    """``n`` requests: popular keys, each preceded by one-shot keys (``scan_prob`` on average).

    ``scan_prob`` may exceed 1: the number of one-shot keys before a popular one is then
    ``floor(scan_prob)`` plus one more with probability ``scan_prob - floor(scan_prob)``.
    """
    whole = int(np.floor(p.scan_prob))

    def draw(m: int) -> tuple[np.ndarray, np.ndarray]:
        if p.zipf_a is None:
            pop = rng.integers(0, p.popular_keys, m)
        else:
            pop = rng.zipf(p.zipf_a, m) % p.popular_keys
        return pop + base, whole + (rng.random(m) < p.scan_prob - whole)

    pop, scans = draw(int(np.ceil(n / (1.0 + p.scan_prob))) + 64)
    while int((scans + 1).sum()) < n:  # rare: top up so that the cut below has n requests
        more_pop, more_scans = draw(int(np.ceil(n / (1.0 + p.scan_prob))))
        pop, scans = np.concatenate([pop, more_pop]), np.concatenate([scans, more_scans])
    lengths = scans + 1
    out = np.empty(int(lengths.sum()), np.int64)
    pop_pos = np.cumsum(lengths) - 1  # the popular key closes each group
    mask = np.ones(out.size, bool)
    mask[pop_pos] = False
    out[pop_pos] = pop
    out[mask] = fresh.take(int(mask.sum()))
    return out[:n].tolist()


def twice_keys(rng: np.random.Generator, n_keys: int, max_gap: float) -> list[int]:
    """Every key used exactly twice: key i at time i, again at i + U(0, max_gap)."""
    first = np.arange(n_keys, dtype=np.float64)
    second = first + rng.uniform(0.0, max_gap, n_keys)
    times = np.concatenate([first, second])
    keys = np.concatenate([np.arange(n_keys), np.arange(n_keys)])
    return keys[np.argsort(times, kind="stable")].tolist()


def s3fifo_checks(seed: int) -> dict[str, dict[str, float]]:
    """The spec's checked S3-FIFO vs LRU figures (C = 1000), on our reading of its traces."""
    rng = np.random.default_rng(seed)
    scan = phase_b_keys(rng, CHECK_REQUESTS, PhaseB(), KeyCounter())
    pairs = phase_a_keys(rng, CHECK_REQUESTS, PhaseA(), KeyCounter())
    twice = twice_keys(rng, 50_000, 500.0)
    out = {}
    for name, keys in (("zipf_scan", scan), ("hot_pairs", pairs)):
        out[name] = {
            "LRU": hit_ratio(LRUCache(CAPACITY), keys),
            "S3FIFO": hit_ratio(S3FIFOCache(CAPACITY, track_recency=False), keys),
        }
    out["used_twice"] = {
        "S3FIFO_T2": hit_ratio(S3FIFOCache(CAPACITY, track_recency=False), twice),
        "S3FIFO_T1": hit_ratio(
            S3FIFOCache(CAPACITY, S3Params(move_to_main_threshold=1), track_recency=False),
            twice,
        ),
    }
    return out


@dataclass(frozen=True)
class PhasedTrace:
    epochs: list[list[Request]]  # requests of each 15-minute epoch
    phase_of_epoch: list[str]  # "A" or "B"


def split_epochs(requests: Sequence[Request], minutes: Sequence[float]) -> list[list[Request]]:
    """Group requests into 15-minute epochs by their virtual arrival time (in minutes)."""
    idx = (np.asarray(minutes, np.float64) // EPOCH_MINUTES).astype(np.int64)
    epochs: list[list[Request]] = [[] for _ in range(int(idx.max()) + 1 if idx.size else 0)]
    for r, e in zip(requests, idx.tolist(), strict=True):
        epochs[e].append(r)
    return epochs


def phased_trace(
    rng: np.random.Generator,
    phase_epochs: Sequence[int],
    first: str = FIRST_PHASE,
    phase_a: PhaseA = DEMO_PHASE_A,
    phase_b: PhaseB = DEMO_PHASE_B,
    requests_per_minute: int = REQUESTS_PER_MINUTE,
) -> PhasedTrace:
    """Alternate phases A and B; ``phase_epochs[i]`` is the length of the i-th phase in epochs.

    Requests arrive at a steady rate in virtual time and are cut into 15-minute epochs by
    their arrival minute. A phase that comes back reuses its own hot keys (the same prompts
    and histories return); one-shot and follow-up blocks are always fresh.
    """
    per_epoch = int(round(requests_per_minute * EPOCH_MINUTES))
    fresh = KeyCounter()
    keys: list[int] = []
    labels: list[str] = []
    kind = first
    for n_ep in phase_epochs:
        n = n_ep * per_epoch
        if kind == "A":
            keys += phase_a_keys(rng, n, phase_a, fresh)
        else:
            keys += phase_b_keys(rng, n, phase_b, fresh)
        labels += [kind] * n_ep
        kind = "B" if kind == "A" else "A"
    minutes = np.arange(len(keys)) / requests_per_minute
    epochs = split_epochs([(k,) for k in keys], minutes)
    return PhasedTrace(epochs, labels)


# --------------------------------------------------------------------------------------------
# WAKMan and the baselines
# --------------------------------------------------------------------------------------------


def replay(policy: str, capacity: int, residents: Sequence[int], window: Sequence[Request]) -> int:
    """Prefix hits a fresh simulator of ``policy`` would have scored on ``window``.

    Pure: it builds its own cache from the resident list and never sees the live cache.
    """
    sim = make_cache(policy, capacity, residents, track_recency=False)
    return serve_all(sim, window)[0]


def decide(scores: dict[str, int], current: str, blocks: int, margin: float) -> str:
    """The replay winner, unless it beats the current policy by no more than ``margin``."""
    best = max(POLICIES, key=lambda p: (scores[p], p == current))  # ties favour current
    if scores[best] - scores[current] <= margin * max(blocks, 1):
        return current
    return best


@dataclass
class ManagerRun:
    policy: list[str]  # policy live during each epoch
    hits: list[int]
    blocks: list[int]
    replay_scores: list[dict[str, int] | None]  # replays made at the start of each epoch
    switches: int


def run_wakman(
    epochs: Sequence[Sequence[Request]],
    capacity: int = CAPACITY,
    initial: str = INITIAL_POLICY,
    margin: float = SWITCH_MARGIN,
    on_epoch: Callable[[int, Cache], None] | None = None,
) -> ManagerRun:
    """Serve the epochs with WAKMan: replay the last window on both policies, run the winner."""
    live: Cache = make_cache(initial, capacity)
    out = ManagerRun([], [], [], [], 0)
    start_residents: list[int] = []
    for e, reqs in enumerate(epochs):
        scores = None
        if e > 0:
            window = epochs[e - 1]
            scores = {q: replay(q, capacity, start_residents, window) for q in POLICIES}
            n_blocks = sum(len(r) for r in window)
            choice = decide(scores, live.name, n_blocks, margin)
            if choice != live.name:
                live = convert(live, choice)
                out.switches += 1
        if on_epoch is not None:
            on_epoch(e, live)
        start_residents = live.residents_by_recency()
        hits, blocks = serve_all(live, reqs)
        out.policy.append(live.name)
        out.hits.append(hits)
        out.blocks.append(blocks)
        out.replay_scores.append(scores)
    return out


def run_fixed(
    epochs: Sequence[Sequence[Request]], policy: str, capacity: int = CAPACITY
) -> list[int]:
    """Per-epoch prefix hits of one policy kept for the whole trace."""
    cache = make_cache(policy, capacity, track_recency=False)
    return [serve_all(cache, reqs)[0] for reqs in epochs]


def run_oracle(epochs: Sequence[Sequence[Request]], capacity: int = CAPACITY) -> ManagerRun:
    """Per-epoch oracle: from the live state, run each policy on the epoch, keep the better.

    Same switching rule as WAKMan (contents kept, metadata rebuilt), but it knows the epoch
    before choosing, so it has no lag. Greedy per epoch, not a global optimum.
    """
    live: Cache = make_cache(INITIAL_POLICY, capacity)
    out = ManagerRun([], [], [], [], 0)
    for reqs in epochs:
        trials = {}
        for q in POLICIES:
            cand = convert(live.clone(), q)
            trials[q] = (serve_all(cand, reqs)[0], cand)
        best = max(POLICIES, key=lambda q: (trials[q][0], q == live.name))
        if best != live.name:
            out.switches += 1
        hits, live = trials[best]
        out.policy.append(best)
        out.hits.append(hits)
        out.blocks.append(sum(len(r) for r in reqs))
        out.replay_scores.append(None)
    return out


def compare(trace: PhasedTrace, capacity: int = CAPACITY) -> dict[str, object]:
    """WAKMan against fixed LRU, fixed S3-FIFO and the per-epoch oracle on one trace."""
    wak = run_wakman(trace.epochs, capacity)
    orc = run_oracle(trace.epochs, capacity)
    lru = run_fixed(trace.epochs, "LRU", capacity)
    s3 = run_fixed(trace.epochs, "S3FIFO", capacity)
    blocks = wak.blocks
    total = sum(blocks)

    def ratio(h: Sequence[int]) -> list[float]:
        return [hh / b for hh, b in zip(h, blocks, strict=True)]

    overall = {
        "LRU": sum(lru) / total,
        "S3FIFO": sum(s3) / total,
        "WAKMan": sum(wak.hits) / total,
        "oracle": sum(orc.hits) / total,
    }
    return {
        "epochs": len(blocks),
        "blocks": total,
        "overall_hit_ratio": overall,
        "prefill_tokens_saved": {
            "LRU": sum(lru) * BLOCK_TOKENS,
            "S3FIFO": sum(s3) * BLOCK_TOKENS,
            "WAKMan": sum(wak.hits) * BLOCK_TOKENS,
            "oracle": sum(orc.hits) * BLOCK_TOKENS,
        },
        "switches": {"WAKMan": wak.switches, "oracle": orc.switches},
        "per_epoch": {
            "epoch": list(range(len(blocks))),
            "phase": list(trace.phase_of_epoch),
            "LRU": ratio(lru),
            "S3FIFO": ratio(s3),
            "WAKMan": ratio(wak.hits),
            "oracle": ratio(orc.hits),
            "wakman_policy": wak.policy,
            "oracle_policy": orc.policy,
            "replay_LRU": [
                None if s is None else s["LRU"] / b
                for s, b in zip(wak.replay_scores, [0, *blocks[:-1]], strict=True)
            ],
            "replay_S3FIFO": [
                None if s is None else s["S3FIFO"] / b
                for s, b in zip(wak.replay_scores, [0, *blocks[:-1]], strict=True)
            ],
        },
    }


def phase_schedule(phase_len: int, n_epochs: int) -> list[int]:
    """Phase lengths filling ``n_epochs`` (the last phase may be shorter)."""
    full, rest = divmod(n_epochs, phase_len)
    return [phase_len] * full + ([rest] if rest else [])


def run(seed: int = 0) -> dict[str, object]:
    """Run every measurement; the result is plain JSON-serialisable data."""
    rng = np.random.default_rng(seed)
    checks = s3fifo_checks(seed)
    main = compare(phased_trace(rng, phase_schedule(MAIN_PHASE_EPOCHS, MAIN_EPOCHS)))
    sweep: dict[str, list] = {
        "phase_epochs": [],
        "LRU": [],
        "S3FIFO": [],
        "WAKMan": [],
        "oracle": [],
        "wakman_switches": [],
        "epochs": [],
    }
    runs = [
        (n, compare(phased_trace(rng, phase_schedule(n, SWEEP_EPOCHS)))) for n in SWEEP_PHASE_EPOCHS
    ]
    for length, res in [*runs, (MAIN_PHASE_EPOCHS, main)]:
        sweep["phase_epochs"].append(length)
        for k in ("LRU", "S3FIFO", "WAKMan", "oracle"):
            sweep[k].append(res["overall_hit_ratio"][k])
        sweep["wakman_switches"].append(res["switches"]["WAKMan"])
        sweep["epochs"].append(res["epochs"])
    # S3-FIFO's result on phase A depends on where it starts: from a cold cache the small queue
    # fills the whole cache once and the hot set settles in M; after phase B it collapses.
    cold = phased_trace(rng, [COLD_A_EPOCHS], first="A")
    cold_a = {q: sum(run_fixed(cold.epochs, q)) / sum(map(len, cold.epochs)) for q in POLICIES}
    a_epochs = [i for i, ph in enumerate(main["per_epoch"]["phase"]) if ph == "A"]
    after_b = {q: float(np.mean([main["per_epoch"][q][i] for i in a_epochs])) for q in POLICIES}
    overall = main["overall_hit_ratio"]
    return {
        "system": "WAKMan",
        "mechanism": "as described (derived; no public code); S3-FIFO per SOSP'23 Algorithm 1",
        "seed": seed,
        "config": {
            "capacity_blocks": CAPACITY,
            "block_tokens": BLOCK_TOKENS,
            "epoch_minutes": EPOCH_MINUTES,
            "requests_per_minute": REQUESTS_PER_MINUTE,
            "requests_per_epoch": int(REQUESTS_PER_MINUTE * EPOCH_MINUTES),
            "switch_margin": SWITCH_MARGIN,
            "initial_policy": INITIAL_POLICY,
            "s3fifo": asdict(S3Params()),
            "phase_a": asdict(DEMO_PHASE_A),
            "phase_b": asdict(DEMO_PHASE_B),
            "first_phase": FIRST_PHASE,
            "main_phase_epochs": MAIN_PHASE_EPOCHS,
            "main_epochs": MAIN_EPOCHS,
            "sweep_epochs": SWEEP_EPOCHS,
        },
        "s3fifo_checks": checks,
        "main": main,
        "gain_vs_lru_points": 100.0 * (overall["WAKMan"] - overall["LRU"]),
        "gap_to_oracle_points": 100.0 * (overall["oracle"] - overall["WAKMan"]),
        "by_phase_length": sweep,
        "phase_a_start_state": {"cold": cold_a, "after_phase_b": after_b},
    }


def report(res: dict) -> str:
    """A short human-readable summary of ``run()``'s output."""
    ck, mn, cfg = res["s3fifo_checks"], res["main"], res["config"]
    t = cfg["s3fifo"]["move_to_main_threshold"]
    lines = [
        f"WAKMan reference (mechanism as described; S3-FIFO per SOSP'23, promote at freq >= {t})"
        f", seed {res['seed']}",
        f"S3-FIFO vs LRU at C = {cfg['capacity_blocks']}, {CHECK_REQUESTS:,} requests:",
        f"  Zipf(1.2) + 60% one-shot:   LRU {ck['zipf_scan']['LRU']:.3f}  "
        f"S3-FIFO {ck['zipf_scan']['S3FIFO']:.3f}",
        f"  hot 900 + pairs, gap 300:   LRU {ck['hot_pairs']['LRU']:.3f}  "
        f"S3-FIFO {ck['hot_pairs']['S3FIFO']:.3f}",
        f"  each key used twice:        S3-FIFO T=2 {ck['used_twice']['S3FIFO_T2']:.3f}  "
        f"T=1 {ck['used_twice']['S3FIFO_T1']:.3f}",
        f"phased trace: {mn['epochs']} epochs of {cfg['epoch_minutes']:g} min "
        f"({cfg['requests_per_epoch']:,} block requests each), phases of "
        f"{cfg['main_phase_epochs']} epochs starting with {cfg['first_phase']}:",
    ]
    ov, saved = mn["overall_hit_ratio"], mn["prefill_tokens_saved"]
    for name in ("LRU", "S3FIFO", "WAKMan", "oracle"):
        lines.append(f"  {name:8s} hit ratio {ov[name]:.3f}   prefill tokens saved {saved[name]:,}")
    lines.append(
        f"  WAKMan vs LRU {res['gain_vs_lru_points']:+.1f} points, "
        f"{res['gap_to_oracle_points']:.1f} points below the oracle; "
        f"switches {mn['switches']['WAKMan']} (oracle {mn['switches']['oracle']})"
    )
    pe = mn["per_epoch"]
    lines.append(
        "  policy per epoch: "
        + "".join("L" if p == "LRU" else "S" for p in pe["wakman_policy"])
        + "  (phases "
        + "".join(pe["phase"])
        + ")"
    )
    sw = res["by_phase_length"]
    st = res["phase_a_start_state"]
    lines.append(
        f"phase A hit ratio, cold cache: LRU {st['cold']['LRU']:.3f} S3-FIFO "
        f"{st['cold']['S3FIFO']:.3f}; after phase B: LRU {st['after_phase_b']['LRU']:.3f} "
        f"S3-FIFO {st['after_phase_b']['S3FIFO']:.3f}"
    )
    lines.append("by phase length (hit ratio LRU / S3-FIFO / WAKMan / oracle):")
    for i, length in enumerate(sw["phase_epochs"]):
        lines.append(
            f"  {length} epoch(s) per phase, {sw['epochs'][i]} epochs: {sw['LRU'][i]:.3f} / "
            f"{sw['S3FIFO'][i]:.3f} / {sw['WAKMan'][i]:.3f} / {sw['oracle'][i]:.3f}  "
            f"({sw['wakman_switches'][i]} switches)"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n", 1)[0])
    parser.add_argument("--seed", type=int, default=0, help="seed for the synthetic traces")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    res = run(args.seed)
    print(report(res))
    print(f"(ran in {time.perf_counter() - start:.2f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
