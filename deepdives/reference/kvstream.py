"""KVStream reference: read a KV prefix from local NVMe and the shared PFS at once (as described).

No KVStream paper text or code could be found, so this is OUR derivation of the design the
daily describes ("write each KV block both to the node's NVMe and to the cluster's parallel
file system; read from both at once; whichever source finishes its batch first takes the next
one"). Mechanism as described, not the authors' code.

What is modelled:

* A tiered store. Every KV block is written to local NVMe (capacity-limited, LRU-evicted) and
  to the shared parallel file system (PFS, durable). A block that fell out of the NVMe LRU is
  PFS-only. Write acknowledgement can wait for both copies (strong) or the first (fast).
* Two storage sources with their own per-I/O latency and a bandwidth that varies in time:
  NVMe at a steady 6 GB/s with 80 us per I/O; the PFS at 10-20 GB/s per client with 1 ms per
  I/O, dropping to 1.5-3 GB/s during contention episodes (an on/off Markov process). A read
  of ``n`` bytes started at ``t`` ends when the source's cumulative bandwidth has delivered
  ``n`` bytes after ``t + latency``.
* The KVStream read: the blocks a request needs are cut, in prefix order, into batches of
  ``s`` blocks in one shared FIFO queue. Each source runs a reader loop that pops the next
  batch it can serve (NVMe only batches whose blocks are all still on NVMe), reads it, and
  comes back for more, so the faster source ends up taking more batches (self-scheduling).
  Optional tail hedging: when the queue is empty, an idle reader duplicates the other
  reader's in-flight batch; the first copy to finish is delivered, the other is cancelled.
* Baselines on the same bandwidth traces: NVMe only (blocks missing from NVMe are fetched
  from the PFS afterwards, one batch at a time), PFS only, a static split of the batches in
  proportion to the sources' nominal bandwidths, and the fluid ideal: the shortest time in
  which the two bandwidths combined could move the bytes (no latency, NVMe limited to the
  blocks it holds).

Not modelled: adaptive batch sizes (the batch size is swept instead), layer-wise pipelining
with compute, contention caused by other readers of the same PFS, and the write path's
effect on read bandwidth.

Run ``python -m deepdives.reference.kvstream --seed 0`` from the project root.
"""

from __future__ import annotations

import argparse
import time
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field

import numpy as np

# --------------------------------------------------------------------------------------------
# Parameters
# --------------------------------------------------------------------------------------------

GB = 1e9  # bandwidths are in decimal GB/s, as storage vendors quote them


@dataclass(frozen=True)
class ModelKV:
    """KV bytes of a Llama-3-8B-like model: 32 layers, 8 KV heads of 128 dims, BF16."""

    layers: int = 32
    kv_heads: int = 8
    head_dim: int = 128
    dtype_bytes: int = 2
    block_tokens: int = 16  # one block = 16 tokens of K and V for every layer

    @property
    def bytes_per_token(self) -> int:
        return 2 * self.layers * self.kv_heads * self.head_dim * self.dtype_bytes

    @property
    def block_bytes(self) -> int:
        return self.block_tokens * self.bytes_per_token  # 2 MiB


@dataclass(frozen=True)
class NVMeParams:
    read_gbps: float = 6.0
    latency_s: float = 80e-6
    write_gbps: float = 3.0


@dataclass(frozen=True)
class PFSParams:
    """Per-client PFS bandwidth: an on/off contention process on a 10 ms grid."""

    normal_gbps: tuple[float, float] = (10.0, 20.0)  # uniform per slot when uncontended
    contended_gbps: tuple[float, float] = (1.5, 3.0)  # uniform per slot during an episode
    mean_normal_s: float = 0.4  # mean length of an uncontended stretch (exponential)
    mean_contended_s: float = 0.2  # mean length of a contention episode (exponential)
    latency_s: float = 1e-3
    write_gbps: float = 5.0
    slot_s: float = 0.01
    horizon_s: float = 90.0


MODEL = ModelKV()
NVME = NVMeParams()
PFS = PFSParams()
# Batch size, chosen per request (our rule): enough batches for the two readers to balance
# (about 16 per request), but no more blocks than needed to amortise the PFS's 1 ms per I/O
# (32 blocks = 64 MiB, about 4.5 ms of transfer at 15 GB/s).
TARGET_BATCHES = 16
MAX_BATCH_BLOCKS = 32
HEDGE = True
TRIALS = 40  # random start times into the PFS bandwidth trace, per configuration
START_WINDOW_S = 60.0  # reads start uniformly in [0, 60 s) of the 90 s trace
PREFIX_TOKENS = (1024, 4096, 16384, 65536, 131072)
HEADLINE_TOKENS = 32768
CONTENDED_FRACTIONS = (0.0, 0.2, 0.33, 0.5, 0.7)  # share of time the PFS is contended
RESIDENCY = (1.0, 0.75, 0.5, 0.25, 0.0)  # share of the prefix's blocks still on NVMe
BATCH_SWEEP = (1, 2, 4, 8, 16, 32, 64)
STRATEGIES = ("nvme_only", "pfs_only", "static_split", "kvstream")
# A static split is tuned to the PFS's nominal (uncontended) bandwidth, 15 GB/s.
NOMINAL_PFS_GBPS = float(np.mean(PFS.normal_gbps))


# --------------------------------------------------------------------------------------------
# Bandwidth over time
# --------------------------------------------------------------------------------------------


class BandwidthTrace:
    """Piecewise-constant bandwidth (bytes/s) on a grid of ``slot_s`` seconds.

    Beyond the horizon the source keeps its mean rate. A trace whose rate is zero from some
    time on (a source that is down) never finishes a read started after that time.
    """

    def __init__(self, rates: np.ndarray, slot_s: float) -> None:
        self.rates = np.asarray(rates, np.float64)
        if self.rates.ndim != 1 or self.rates.size == 0 or (self.rates < 0).any():
            raise ValueError("rates must be a non-empty 1-D array of non-negative numbers")
        self.slot_s = float(slot_s)
        self.cum = np.concatenate([[0.0], np.cumsum(self.rates * self.slot_s)])
        self.horizon = self.rates.size * self.slot_s
        self.tail_rate = float(self.rates.mean()) if self.rates[-1] > 0 else 0.0

    @classmethod
    def constant(cls, gbps: float, horizon_s: float = 1.0) -> BandwidthTrace:
        return cls(np.array([gbps * GB]), horizon_s)

    def bytes_until(self, t: float) -> float:
        """Bytes the source could have delivered between time 0 and ``t``."""
        if t >= self.horizon:
            return float(self.cum[-1] + (t - self.horizon) * self.tail_rate)
        k = int(t // self.slot_s)
        return float(self.cum[k] + (t - k * self.slot_s) * self.rates[k])

    def time_of_bytes(self, target: float) -> float:
        """The first time by which ``target`` cumulative bytes have been delivered."""
        if target <= 0.0:
            return 0.0
        if target > self.cum[-1]:
            if self.tail_rate == 0.0:
                return float("inf")
            return self.horizon + (target - self.cum[-1]) / self.tail_rate
        k = int(np.searchsorted(self.cum, target, side="left")) - 1  # slot holding the target
        return k * self.slot_s + (target - self.cum[k]) / self.rates[k]

    def mean_gbps(self) -> float:
        return float(self.rates.mean() / GB)


@dataclass(frozen=True)
class Source:
    """One storage source: a per-I/O latency and a bandwidth trace."""

    name: str
    latency_s: float
    bandwidth: BandwidthTrace

    def finish(self, start: float, nbytes: float) -> float:
        """End time of a read of ``nbytes`` issued at ``start`` (inf if the source is down)."""
        t = start + self.latency_s
        return self.bandwidth.time_of_bytes(self.bandwidth.bytes_until(t) + nbytes)


def longest_read_seconds(src: Source, nbytes: float, t_lo: float, t_hi: float) -> float:
    """The longest a read of ``nbytes`` can take on ``src`` if issued in ``[t_lo, t_hi]``.

    A read's duration is piecewise linear in its start time, with kinks where its data start
    (start + latency) or its end crosses a slot boundary, so checking those starts and the two
    ends of the interval is exact.
    """
    bw = src.bandwidth
    edges = np.arange(bw.rates.size + 1) * bw.slot_s
    starts = [t_lo, t_hi, *(edges - src.latency_s)]
    starts += [bw.time_of_bytes(c - nbytes) - src.latency_s for c in bw.cum if c > nbytes]
    cand = [t for t in starts if t_lo <= t <= t_hi]
    return max(src.finish(t, nbytes) - t for t in cand)


def contention_rates(
    rng: np.random.Generator, p: PFSParams, contended_fraction: float | None = None
) -> np.ndarray:
    """PFS bandwidth per slot: alternating uncontended and contended stretches.

    ``contended_fraction`` rescales the mean episode length so that the expected share of
    contended time is that fraction, keeping the mean cycle length fixed.
    """
    n = int(round(p.horizon_s / p.slot_s))
    mean_on, mean_off = p.mean_normal_s, p.mean_contended_s
    if contended_fraction is not None:
        cycle = mean_on + mean_off
        mean_on, mean_off = cycle * (1 - contended_fraction), cycle * contended_fraction
    contended = np.zeros(n, bool)
    t, state = 0.0, rng.random() < (mean_off / (mean_on + mean_off))
    while t < p.horizon_s:
        mean = mean_off if state else mean_on
        dur = rng.exponential(mean) if mean > 0 else 0.0
        a, b = int(t / p.slot_s), int(min(t + dur, p.horizon_s) / p.slot_s)
        contended[a:b] = state
        t += dur
        state = not state
        if mean_on == 0 or mean_off == 0:  # one state only
            contended[:] = mean_on == 0
            break
    normal = rng.uniform(*p.normal_gbps, n)
    slow = rng.uniform(*p.contended_gbps, n)
    return np.where(contended, slow, normal) * GB


def make_sources(
    rng: np.random.Generator,
    contended_fraction: float | None = None,
    nvme: NVMeParams = NVME,
    pfs: PFSParams = PFS,
) -> tuple[Source, Source]:
    nvme_src = Source("nvme", nvme.latency_s, BandwidthTrace.constant(nvme.read_gbps))
    pfs_bw = BandwidthTrace(contention_rates(rng, pfs, contended_fraction), pfs.slot_s)
    return nvme_src, Source("pfs", pfs.latency_s, pfs_bw)


# --------------------------------------------------------------------------------------------
# The tiered store (write path)
# --------------------------------------------------------------------------------------------


class TieredStore:
    """Every block goes to NVMe (LRU, limited) and to the PFS (durable, shared)."""

    def __init__(self, nvme_capacity_blocks: int) -> None:
        self.capacity = nvme_capacity_blocks
        self.nvme: OrderedDict[int, None] = OrderedDict()
        self.pfs: set[int] = set()

    def write(self, blocks: Iterable[int]) -> None:
        for b in blocks:
            self.pfs.add(b)
            self.nvme[b] = None
            self.nvme.move_to_end(b)
            while len(self.nvme) > self.capacity:
                self.nvme.popitem(last=False)  # the PFS copy stays

    def touch(self, blocks: Iterable[int]) -> None:
        """A read refreshes the blocks' place in the NVMe LRU."""
        for b in blocks:
            if b in self.nvme:
                self.nvme.move_to_end(b)

    def locations(self, block: int) -> set[str]:
        out = set()
        if block in self.nvme:
            out.add("nvme")
        if block in self.pfs:
            out.add("pfs")
        return out

    def nvme_mask(self, blocks: Sequence[int]) -> np.ndarray:
        return np.fromiter((b in self.nvme for b in blocks), bool, len(blocks))


def write_ack_seconds(
    nbytes: float, policy: str, nvme: NVMeParams = NVME, pfs: PFSParams = PFS
) -> float:
    """Time to acknowledge a write: after both copies ("strong") or the first ("fast")."""
    t_nvme = nvme.latency_s + nbytes / (nvme.write_gbps * GB)
    t_pfs = pfs.latency_s + nbytes / (pfs.write_gbps * GB)
    if policy == "strong":
        return max(t_nvme, t_pfs)
    if policy == "fast":
        return min(t_nvme, t_pfs)
    raise ValueError(f"unknown ack policy {policy!r}")


# --------------------------------------------------------------------------------------------
# Reads
# --------------------------------------------------------------------------------------------


def batch_blocks_for(n_blocks: int) -> int:
    """Blocks per batch for a request of ``n_blocks``: n/16, between 1 and 32."""
    return int(np.clip(n_blocks // TARGET_BATCHES, 1, MAX_BATCH_BLOCKS))


def make_batches(n_blocks: int, batch_blocks: int) -> list[np.ndarray]:
    """Block indices cut into batches in prefix order (the last batch may be short)."""
    if batch_blocks < 1:
        raise ValueError("batch_blocks must be positive")
    idx = np.arange(n_blocks)
    return [idx[i : i + batch_blocks] for i in range(0, n_blocks, batch_blocks)]


@dataclass
class ReadResult:
    makespan: float  # seconds from the start of the read to the last delivery (inf: stuck)
    delivered: list[int]  # block indices in delivery order
    batches_by_source: dict[str, int]
    bytes_by_source: dict[str, float]
    wasted_bytes: float = 0.0  # bytes of cancelled hedge copies
    hedges: int = 0
    batch_times: dict[str, list[float]] = field(default_factory=dict)  # per delivered batch


def shared_queue_read(
    sources: Sequence[Source],
    can_serve: Sequence[np.ndarray],
    batches: Sequence[np.ndarray],
    block_bytes: float,
    t0: float = 0.0,
    hedge: bool = HEDGE,
) -> ReadResult:
    """KVStream's read: readers pull batches from one FIFO queue until it is empty.

    ``can_serve[i][j]`` says whether source ``i`` can read batch ``j``. Each reader takes the
    first queued batch it can serve; with ``hedge``, an idle reader duplicates the oldest
    in-flight batch of another reader, and the first copy to finish wins.
    """
    n_src, n_batch = len(sources), len(batches)
    taken = np.zeros(n_batch, bool)
    done = np.zeros(n_batch, bool)
    cursor = [0] * n_src  # every batch before the cursor is taken or unservable for source i
    nbytes = [b.size * block_bytes for b in batches]
    # in_flight[i] = (batch, start, finish) of reader i's current I/O, or None when idle
    in_flight: list[tuple[int, float, float] | None] = [None] * n_src
    res = ReadResult(
        0.0,
        [],
        {s.name: 0 for s in sources},
        {s.name: 0.0 for s in sources},
        batch_times={s.name: [] for s in sources},
    )

    def start_next(i: int, now: float) -> None:
        c = cursor[i]
        while c < n_batch and (taken[c] or not can_serve[i][c]):
            c += 1
        cursor[i] = c
        if c < n_batch:
            taken[c] = True
            in_flight[i] = (c, now, sources[i].finish(now, nbytes[c]))
            return
        if hedge:  # queue empty for this reader: duplicate the oldest batch still in flight
            copies = np.bincount([f[0] for f in in_flight if f is not None], minlength=n_batch)
            cands = [
                (f[1], f[0])
                for j, f in enumerate(in_flight)
                if j != i and f is not None and copies[f[0]] == 1 and can_serve[i][f[0]]
            ]
            if cands:
                b = min(cands)[1]
                in_flight[i] = (b, now, sources[i].finish(now, nbytes[b]))
                res.hedges += 1
                return
        in_flight[i] = None

    for i in range(n_src):
        start_next(i, t0)
    while True:
        live = [(f[2], i) for i, f in enumerate(in_flight) if f is not None]
        if not live:
            break
        now, i = min(live)
        if now == float("inf"):  # every remaining copy sits on a dead source
            res.makespan = float("inf")
            return res
        b, start, _ = in_flight[i] or (0, 0.0, 0.0)
        in_flight[i] = None
        done[b] = True
        res.delivered.extend(batches[b].tolist())
        name = sources[i].name
        res.batches_by_source[name] += 1
        res.bytes_by_source[name] += nbytes[b]
        res.batch_times[name].append(now - start)
        res.makespan = now - t0
        for j, f in enumerate(in_flight):  # cancel the losing copy, free its reader
            if f is not None and f[0] == b:
                bw = sources[j].bandwidth
                moved = bw.bytes_until(now) - bw.bytes_until(f[1] + sources[j].latency_s)
                res.wasted_bytes += float(np.clip(moved, 0.0, nbytes[b]))
                in_flight[j] = None
                start_next(j, now)
        start_next(i, now)
    if not done.all():
        res.makespan = float("inf")
    return res


def sequential_read(
    plan: Sequence[tuple[Source, np.ndarray]], block_bytes: float, t0: float = 0.0
) -> ReadResult:
    """One reader working through (source, batch) pairs in order, one I/O at a time."""
    t = t0
    res = ReadResult(0.0, [], {}, {}, batch_times={})
    for src, batch in plan:
        t_end = src.finish(t, batch.size * block_bytes)
        res.delivered.extend(batch.tolist())
        res.batches_by_source[src.name] = res.batches_by_source.get(src.name, 0) + 1
        res.bytes_by_source[src.name] = (
            res.bytes_by_source.get(src.name, 0.0) + batch.size * block_bytes
        )
        res.batch_times.setdefault(src.name, []).append(t_end - t)
        t = t_end
    res.makespan = t - t0
    return res


def ideal_makespan(
    nvme: Source, pfs: Source, total_bytes: float, nvme_bytes: float, t0: float = 0.0
) -> float:
    """Fluid bound: both bandwidths combined, no latency, NVMe limited to what it holds."""

    def moved(dt: float) -> float:
        from_nvme = min(
            nvme.bandwidth.bytes_until(t0 + dt) - nvme.bandwidth.bytes_until(t0), nvme_bytes
        )
        return from_nvme + pfs.bandwidth.bytes_until(t0 + dt) - pfs.bandwidth.bytes_until(t0)

    lo, hi = 0.0, 1e-3
    while moved(hi) < total_bytes:
        hi *= 2.0
        if hi > 1e6:
            return float("inf")
    for _ in range(60):  # bisection to well below a microsecond
        mid = 0.5 * (lo + hi)
        if moved(mid) >= total_bytes:
            hi = mid
        else:
            lo = mid
    return hi


def read_all_strategies(
    nvme: Source,
    pfs: Source,
    n_blocks: int,
    resident: np.ndarray,
    t0: float,
    batch_blocks: int | None = None,
    block_bytes: float = MODEL.block_bytes,
    hedge: bool = HEDGE,
    nominal_pfs_gbps: float | None = None,
) -> tuple[dict[str, ReadResult], float]:
    """Every strategy on the same request, residency and start time, plus the ideal makespan."""
    batches = make_batches(n_blocks, batch_blocks or batch_blocks_for(n_blocks))
    on_nvme = np.array([bool(resident[b].all()) for b in batches])
    everywhere = np.ones(len(batches), bool)
    out: dict[str, ReadResult] = {}
    out["nvme_only"] = sequential_read(
        [(nvme if ok else pfs, b) for ok, b in zip(on_nvme, batches, strict=True)],
        block_bytes,
        t0,
    )
    out["pfs_only"] = sequential_read([(pfs, b) for b in batches], block_bytes, t0)
    out["static_split"] = static_split_read(
        nvme, pfs, batches, on_nvme, block_bytes, t0, nominal_pfs_gbps
    )
    out["kvstream"] = shared_queue_read(
        [nvme, pfs], [on_nvme, everywhere], batches, block_bytes, t0, hedge
    )
    nvme_bytes = float(sum(b.size for ok, b in zip(on_nvme, batches, strict=True) if ok))
    ideal = ideal_makespan(nvme, pfs, n_blocks * block_bytes, nvme_bytes * block_bytes, t0)
    return out, ideal


def static_split_read(
    nvme: Source,
    pfs: Source,
    batches: Sequence[np.ndarray],
    on_nvme: np.ndarray,
    block_bytes: float,
    t0: float,
    nominal_pfs_gbps: float | None = None,
) -> ReadResult:
    """Split the batches up front in proportion to nominal bandwidths; no rebalancing."""
    pfs_gbps = pfs.bandwidth.mean_gbps() if nominal_pfs_gbps is None else nominal_pfs_gbps
    nvme_gbps = nvme.bandwidth.mean_gbps()
    share = nvme_gbps / (nvme_gbps + pfs_gbps)
    servable = np.flatnonzero(on_nvme)
    k = min(len(servable), int(round(share * len(batches))))
    # NVMe takes the last k batches it holds (the front of the prefix is the likeliest to have
    # been evicted); the PFS reads everything else in prefix order.
    mine = set(servable[len(servable) - k :].tolist())
    a = sequential_read([(nvme, batches[j]) for j in sorted(mine)], block_bytes, t0)
    b = sequential_read(
        [(pfs, batches[j]) for j in range(len(batches)) if j not in mine], block_bytes, t0
    )
    return ReadResult(
        max(a.makespan, b.makespan),
        a.delivered + b.delivered,
        {**a.batches_by_source, **b.batches_by_source},
        {**a.bytes_by_source, **b.bytes_by_source},
        batch_times={**a.batch_times, **b.batch_times},
    )


def prefix_residency(n_blocks: int, fraction: float) -> np.ndarray:
    """NVMe residency of a prefix after LRU eviction: the oldest-written (first) blocks go."""
    keep = int(round(fraction * n_blocks))
    mask = np.zeros(n_blocks, bool)
    mask[n_blocks - keep :] = True
    return mask


# --------------------------------------------------------------------------------------------
# Experiments
# --------------------------------------------------------------------------------------------


def _stats(values: Sequence[float]) -> dict[str, float]:
    v = np.asarray(values, np.float64)
    return {"mean": float(v.mean()), "p95": float(np.percentile(v, 95)), "max": float(v.max())}


def compare_trials(
    nvme: Source,
    pfs: Source,
    n_blocks: int,
    resident: np.ndarray,
    starts: Sequence[float],
    batch_blocks: int | None = None,
) -> dict[str, dict[str, float]]:
    """Makespan statistics (seconds) and ratios to the ideal for every strategy."""
    times: dict[str, list[float]] = {k: [] for k in (*STRATEGIES, "ideal")}
    nvme_share: list[float] = []
    for t0 in starts:
        out, ideal_t = read_all_strategies(
            nvme, pfs, n_blocks, resident, t0, batch_blocks, nominal_pfs_gbps=NOMINAL_PFS_GBPS
        )
        for k in STRATEGIES:
            times[k].append(out[k].makespan)
        times["ideal"].append(ideal_t)
        nvme_share.append(out["kvstream"].bytes_by_source["nvme"] / (n_blocks * MODEL.block_bytes))
    ideal = np.asarray(times["ideal"])
    res: dict[str, dict[str, float]] = {}
    for k, v in times.items():
        res[k] = _stats(v)
        res[k]["mean_over_ideal"] = float(np.mean(np.asarray(v) / ideal))
    res["kvstream"]["nvme_byte_share"] = float(np.mean(nvme_share))
    return res


def _starts(rng: np.random.Generator, n: int = TRIALS) -> list[float]:
    return rng.uniform(0.0, START_WINDOW_S, n).tolist()


def sweep_prefix(seed: int) -> dict[str, list]:
    rng = np.random.default_rng([seed, 1])
    nvme, pfs = make_sources(rng)
    starts = _starts(rng)
    out: dict[str, list] = {"tokens": [], "gib": []}
    for tokens in PREFIX_TOKENS:
        n = tokens // MODEL.block_tokens
        res = compare_trials(nvme, pfs, n, np.ones(n, bool), starts)
        out["tokens"].append(tokens)
        out["gib"].append(n * MODEL.block_bytes / 2**30)
        for k, v in res.items():
            out.setdefault(f"{k}_ms", []).append(1e3 * v["mean"])
            out.setdefault(f"{k}_over_ideal", []).append(v["mean_over_ideal"])
    return out


def sweep_contention(seed: int) -> dict[str, list]:
    out: dict[str, list] = {"contended_fraction": [], "pfs_mean_gbps": []}
    n = HEADLINE_TOKENS // MODEL.block_tokens
    for i, frac in enumerate(CONTENDED_FRACTIONS):
        rng = np.random.default_rng([seed, 2, i])
        nvme, pfs = make_sources(rng, contended_fraction=frac)
        res = compare_trials(nvme, pfs, n, np.ones(n, bool), _starts(rng))
        out["contended_fraction"].append(frac)
        out["pfs_mean_gbps"].append(pfs.bandwidth.mean_gbps())
        for k, v in res.items():
            out.setdefault(f"{k}_ms", []).append(1e3 * v["mean"])
            out.setdefault(f"{k}_p95_ms", []).append(1e3 * v["p95"])
            out.setdefault(f"{k}_over_ideal", []).append(v["mean_over_ideal"])
    return out


def sweep_residency(seed: int) -> dict[str, list]:
    rng = np.random.default_rng([seed, 3])
    nvme, pfs = make_sources(rng)
    starts = _starts(rng)
    n = HEADLINE_TOKENS // MODEL.block_tokens
    out: dict[str, list] = {"nvme_resident_fraction": []}
    for frac in RESIDENCY:
        res = compare_trials(nvme, pfs, n, prefix_residency(n, frac), starts)
        out["nvme_resident_fraction"].append(frac)
        for k, v in res.items():
            out.setdefault(f"{k}_ms", []).append(1e3 * v["mean"])
            out.setdefault(f"{k}_over_ideal", []).append(v["mean_over_ideal"])
    return out


def sweep_batch(seed: int) -> dict[str, list]:
    rng = np.random.default_rng([seed, 4])
    nvme, pfs = make_sources(rng)
    starts = _starts(rng, TRIALS // 2)
    n = HEADLINE_TOKENS // MODEL.block_tokens
    out: dict[str, list] = {
        "batch_blocks": [],
        "batch_mib": [],
        "hedged_ms": [],
        "unhedged_ms": [],
        "ideal_ms": [],
        "wasted_mib": [],
    }
    for s in BATCH_SWEEP:
        batches = make_batches(n, s)
        serve = [np.ones(len(batches), bool)] * 2
        hedged, plain, ideal, waste = [], [], [], []
        for t0 in starts:
            h = shared_queue_read([nvme, pfs], serve, batches, MODEL.block_bytes, t0, True)
            p = shared_queue_read([nvme, pfs], serve, batches, MODEL.block_bytes, t0, False)
            hedged.append(h.makespan)
            plain.append(p.makespan)
            waste.append(h.wasted_bytes)
            ideal.append(
                ideal_makespan(nvme, pfs, n * MODEL.block_bytes, n * MODEL.block_bytes, t0)
            )
        out["batch_blocks"].append(s)
        out["batch_mib"].append(s * MODEL.block_bytes / 2**20)
        out["hedged_ms"].append(1e3 * float(np.mean(hedged)))
        out["unhedged_ms"].append(1e3 * float(np.mean(plain)))
        out["ideal_ms"].append(1e3 * float(np.mean(ideal)))
        out["wasted_mib"].append(float(np.mean(waste)) / 2**20)
    return out


def failure_cases(seed: int) -> dict[str, dict[str, float | int | bool]]:
    """One source down (bandwidth zero): KVStream with and without hedging vs the other alone."""
    rng = np.random.default_rng([seed, 5])
    nvme, pfs = make_sources(rng)
    dead = BandwidthTrace(np.zeros(1), 1.0)
    n = HEADLINE_TOKENS // MODEL.block_tokens
    batches = make_batches(n, batch_blocks_for(n))
    serve = [np.ones(len(batches), bool)] * 2
    t0 = float(_starts(rng, 1)[0])
    out: dict[str, dict[str, float | int | bool]] = {}
    for down, (a, b) in {"nvme_down": (nvme, pfs), "pfs_down": (pfs, nvme)}.items():
        broken = Source(a.name, a.latency_s, dead)
        pair = [broken, b] if a is nvme else [b, broken]
        alone = sequential_read([(b, x) for x in batches], MODEL.block_bytes, t0)
        hedged = shared_queue_read(pair, serve, batches, MODEL.block_bytes, t0, True)
        plain = shared_queue_read(pair, serve, batches, MODEL.block_bytes, t0, False)
        out[down] = {
            "survivor_alone_ms": 1e3 * alone.makespan,
            "kvstream_hedged_ms": 1e3 * hedged.makespan,
            "survivor_max_batch_ms": 1e3 * max(alone.batch_times[b.name]),
            "unhedged_stuck": bool(np.isinf(plain.makespan)),
            "hedges": hedged.hedges,
        }
    return out


def equal_sources_split(n_blocks: int = 2048, batch_blocks: int = 8) -> dict:
    """Two identical sources: the shared queue should split the batches evenly."""
    a = Source("a", 1e-3, BandwidthTrace.constant(8.0))
    b = Source("b", 1e-3, BandwidthTrace.constant(8.0))
    batches = make_batches(n_blocks, batch_blocks)
    serve = [np.ones(len(batches), bool)] * 2
    res = shared_queue_read([a, b], serve, batches, MODEL.block_bytes, 0.0, HEDGE)
    return {
        "batches": len(batches),
        "a": res.batches_by_source["a"],
        "b": res.batches_by_source["b"],
    }


def run(seed: int = 0) -> dict[str, object]:
    """Run every measurement; the result is plain JSON-serialisable data."""
    rng = np.random.default_rng([seed, 0])
    nvme, pfs = make_sources(rng)
    n = HEADLINE_TOKENS // MODEL.block_tokens
    head = compare_trials(nvme, pfs, n, np.ones(n, bool), _starts(rng))
    headline = {
        "tokens": HEADLINE_TOKENS,
        "gib": n * MODEL.block_bytes / 2**30,
        "pfs_mean_gbps": pfs.bandwidth.mean_gbps(),
        "pfs_contended_time_fraction": float(
            np.mean(pfs.bandwidth.rates < PFS.normal_gbps[0] * GB)
        ),
        "makespan_ms": {k: 1e3 * v["mean"] for k, v in head.items()},
        "p95_ms": {k: 1e3 * v["p95"] for k, v in head.items()},
        "mean_over_ideal": {k: v["mean_over_ideal"] for k, v in head.items()},
        "kvstream_nvme_byte_share": head["kvstream"]["nvme_byte_share"],
        "speedup_vs": {
            k: head[k]["mean"] / head["kvstream"]["mean"] for k in STRATEGIES if k != "kvstream"
        },
    }
    return {
        "system": "KVStream",
        "mechanism": "as described (derived; no public code)",
        "seed": seed,
        "config": {
            "model": asdict(MODEL),
            "block_mib": MODEL.block_bytes / 2**20,
            "nvme": asdict(NVME),
            "pfs": asdict(PFS),
            "target_batches_per_request": TARGET_BATCHES,
            "max_batch_blocks": MAX_BATCH_BLOCKS,
            "headline_batch_blocks": batch_blocks_for(n),
            "hedge": HEDGE,
            "trials": TRIALS,
            "static_split_nominal_pfs_gbps": NOMINAL_PFS_GBPS,
        },
        "headline": headline,
        "by_prefix": sweep_prefix(seed),
        "by_contention": sweep_contention(seed),
        "by_residency": sweep_residency(seed),
        "by_batch": sweep_batch(seed),
        "failures": failure_cases(seed),
        "equal_sources": equal_sources_split(),
        "write_ack_ms_per_16mib": {
            p: 1e3 * write_ack_seconds(16 * 2**20, p) for p in ("fast", "strong")
        },
    }


NAMES = {
    "nvme_only": "NVMe only",
    "pfs_only": "PFS only",
    "static_split": "static split",
    "kvstream": "KVStream",
    "ideal": "ideal",
}


def report(res: dict) -> str:
    """A short human-readable summary of ``run()``'s output."""
    hd, cfg = res["headline"], res["config"]
    lines = [
        f"KVStream reference (mechanism as described), seed {res['seed']}",
        f"read of a {hd['tokens']:,}-token prefix ({hd['gib']:.1f} GiB, "
        f"{cfg['block_mib']:.0f} MiB blocks, batches of {cfg['headline_batch_blocks']}), "
        f"{cfg['trials']} start times; NVMe {cfg['nvme']['read_gbps']:g} GB/s, PFS mean "
        f"{hd['pfs_mean_gbps']:.1f} GB/s ({100 * hd['pfs_contended_time_fraction']:.0f}% of "
        "the time contended):",
    ]
    for k in (*STRATEGIES, "ideal"):
        lines.append(
            f"  {NAMES[k]:13s} mean {hd['makespan_ms'][k]:7.1f} ms  p95 {hd['p95_ms'][k]:7.1f} ms"
            f"  x{hd['mean_over_ideal'][k]:.2f} of ideal"
        )
    lines.append(
        f"  KVStream read {100 * hd['kvstream_nvme_byte_share']:.0f}% of the bytes from NVMe; "
        + ", ".join(f"{v:.2f}x faster than {NAMES[k]}" for k, v in hd["speedup_vs"].items())
    )
    bc = res["by_contention"]
    lines.append(
        "by contended share of time (mean ms: PFS only / static split / KVStream / ideal):"
    )
    for i, f in enumerate(bc["contended_fraction"]):
        lines.append(
            f"  {100 * f:3.0f}%: {bc['pfs_only_ms'][i]:7.1f} / {bc['static_split_ms'][i]:7.1f} / "
            f"{bc['kvstream_ms'][i]:7.1f} / {bc['ideal_ms'][i]:7.1f}"
        )
    br = res["by_residency"]
    lines.append("by NVMe residency (mean ms: NVMe only / KVStream / ideal):")
    for i, f in enumerate(br["nvme_resident_fraction"]):
        lines.append(
            f"  {100 * f:3.0f}%: {br['nvme_only_ms'][i]:7.1f} / {br['kvstream_ms'][i]:7.1f} / "
            f"{br['ideal_ms'][i]:7.1f}"
        )
    bp = res["by_prefix"]
    lines.append(
        "KVStream / ideal by prefix length: "
        + ", ".join(
            f"{t // 1024}K {r:.2f}"
            for t, r in zip(bp["tokens"], bp["kvstream_over_ideal"], strict=True)
        )
    )
    bb = res["by_batch"]
    lines.append(
        "by batch size (blocks: hedged / unhedged ms): "
        + ", ".join(
            f"{s}: {h:.0f}/{u:.0f}"
            for s, h, u in zip(bb["batch_blocks"], bb["hedged_ms"], bb["unhedged_ms"], strict=True)
        )
    )
    for name, f in res["failures"].items():
        lines.append(
            f"{name}: survivor alone {f['survivor_alone_ms']:.1f} ms, KVStream with hedging "
            f"{f['kvstream_hedged_ms']:.1f} ms, without hedging stuck = {f['unhedged_stuck']}"
        )
    eq = res["equal_sources"]
    lines.append(f"two equal sources: {eq['a']} / {eq['b']} of {eq['batches']} batches")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n", 1)[0])
    parser.add_argument("--seed", type=int, default=0, help="seed for the bandwidth traces")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    res = run(args.seed)
    print(report(res))
    print(f"(ran in {time.perf_counter() - start:.2f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
