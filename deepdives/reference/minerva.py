"""Minerva-style gray-failure detection and topology-based alert grouping (mechanism as described).

No Minerva paper or code could be found, so this is OUR derivation of the design the daily
describes (telemetry joined into a knowledge graph of what depends on what, machine-learning
models that flag devices deviating from their peers, alerts on a shared dependency path merged
into one incident), built on the peer-similarity and continuity ideas of Minder (ByteDance,
arXiv 2411.01791). Mechanism as described, not NVIDIA's code.

What is modelled, on a synthetic training cluster
* A dependency graph: 32 hosts x 8 GPUs in 8 racks; 4 PDUs feed 2 racks each; 4 leaf
  switches take one rack from each half of the room, uplinked to 2 spines; one NIC and leaf
  port per host; a 256-rank job, rank r on GPU r, with ring neighbours r +- 1.
  Edge u -> v means v depends on u: spine -> leaf -> port -> NIC -> ranks on that host,
  PDU -> host -> {GPUs, NIC}, GPU -> rank -> job. A candidate root's impact is everything
  downstream of it plus the ring neighbours of the ranks downstream.
* Telemetry per one-minute window: per-rank compute time and NCCL bandwidth, per-GPU SM clock
  and temperature, per-NIC retransmits, per-port link flaps and CRC errors, job step time;
  jitter, static per-GPU temperature offsets, one-window compute spikes and a few unrelated
  discrete alerts (benign XIDs, corrected ECC) as noise.
* Injected faults: a flapping leaf port, a thermally throttled GPU that is 15% slower (gray:
  nothing crosses a fixed limit) and a PDU outage that takes down 8 hosts.
* Alerting: discrete events (flaps, CRC bursts, link/host/GPU loss, NCCL timeouts, job step
  over its SLO, job crash) are shared by every method. Continuous metrics are judged either
  by fixed absolute thresholds (the baseline) or by a peer-relative robust z-score,
  z = (x - median) / (1.4826 MAD) over the same role, that must hold for W consecutive
  windows (Minerva).
* Grouping: alerts close in time (chained gaps <= dt) are explained greedily: the candidate
  roots are the alerted entities and their ancestors within h hops;
  score(c) = sum of weights of unexplained alerts inside impact(c)
             - mu * |impact(c) entities with no alert|;
  the best root becomes an incident and takes the alerts it explains, until no candidate
  that explains at least two alerts scores above zero. Leftover alerts stay singletons.
* Methods compared: per-alert thresholds (every alert is an incident), thresholds + the same
  grouping, and Minerva (peer detection + grouping). Metrics: alerts, incidents, top-1/top-3
  root cause, detection delay and incidents made only of noise.

The daily reports one production case in which 81 alerts became 1 incident and an estimated
54 hours of cluster availability were recovered. Every number this program prints comes from
its own synthetic cluster, not from NVIDIA.

Run ``python -m deepdives.reference.minerva --seed 0`` from the project root.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from math import comb
from typing import Any

import numpy as np

# --------------------------------------------------------------------------------------------
# Parameters
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ClusterSpec:
    """Physical layout and the job on it."""

    hosts: int = 32
    gpus_per_host: int = 8
    hosts_per_rack: int = 4
    racks_per_pdu: int = 2
    leaves: int = 4
    spines: int = 2


@dataclass(frozen=True)
class TelemetrySpec:
    """Nominal values, jitter and noise of the synthetic telemetry."""

    windows: int = 60  # one-minute windows per scenario
    warmup: int = 10  # fault-free windows used to calibrate the job's step-time SLO
    compute_ms: float = 100.0
    comm_ms: float = 40.0  # at nominal bandwidth
    bw_gbps: float = 40.0
    clock_mhz: float = 1980.0
    temp_c: float = 65.0
    retx: float = 20.0  # NIC retransmits per window (Poisson mean)
    jitter: float = 0.015  # relative per-window noise of compute time and bandwidth
    clock_jitter_mhz: float = 10.0
    temp_jitter_c: float = 0.5
    temp_offset_c: float = 1.5  # static per-GPU spread (airflow, position in the chassis)
    spike_prob: float = 0.0005  # one-window compute spikes per rank and window
    spike_size: float = 0.4
    noise_events: int = 3  # unrelated discrete alerts per scenario


@dataclass(frozen=True)
class Thresholds:
    """Fixed absolute limits of the baseline (relative to nominal where marked)."""

    compute: float = 1.30  # x nominal compute time
    bw: float = 0.70  # x nominal bandwidth
    clock: float = 0.80  # x nominal clock
    temp_c: float = 85.0
    retx: float = 100.0
    crc: int = 10
    job_slo: float = 1.05  # x the step time calibrated during warm-up
    job_slo_windows: int = 2  # the SLO alert waits for two slow windows ("for: 2m")


@dataclass(frozen=True)
class PeerSpec:
    """Peer-relative detector: robust z-score within a role, with continuity."""

    tau: float = 4.0
    min_windows: int = 3  # W: consecutive flagged windows before an alert


@dataclass(frozen=True)
class CorrelatorSpec:
    window: int = 10  # dt: alerts whose starts chain within this many windows are grouped
    hops: int = 4  # h: how far up the graph a candidate root may lie
    mu: float = 0.2  # penalty per impacted entity that raised no alert
    min_score: float = 0.0


# Alert weights by kind: job-level symptoms count half, everything else one.
JOB_KINDS = ("job_step_slow", "job_crash")
GRAY_SLOWDOWNS = (0.0, 0.05, 0.10, 0.15, 0.20, 0.25, 0.30, 0.35, 0.40)
SWEEP_TRIALS = 40

# --------------------------------------------------------------------------------------------
# The dependency graph
# --------------------------------------------------------------------------------------------


@dataclass
class Topology:
    """Entities, dependency edges and the derived reachability matrices."""

    names: list[str]
    kinds: list[str]
    groups: dict[str, np.ndarray]  # kind -> entity ids, in order
    edges: np.ndarray  # (N, N) bool, edges[u, v]: v depends on u
    peers: np.ndarray  # (N, N) bool, NCCL ring neighbours (ranks only)
    spec: ClusterSpec
    descendants: np.ndarray = field(init=False)  # includes the entity itself
    impact: np.ndarray = field(init=False)
    hop_ancestors: dict[int, np.ndarray] = field(init=False, default_factory=dict)

    def __post_init__(self) -> None:
        self.descendants = reach_within(self.edges, len(self.names))
        self.impact = self.descendants | (self.descendants.astype(np.int32) @ self.peers > 0)

    @property
    def n(self) -> int:
        return len(self.names)

    def ancestors_within(self, hops: int) -> np.ndarray:
        """(N, N) bool: [c, e] is True when c reaches e in at most `hops` edges (c == e too)."""
        if hops not in self.hop_ancestors:
            self.hop_ancestors[hops] = reach_within(self.edges, hops)
        return self.hop_ancestors[hops]

    def id(self, name: str) -> int:
        return self.names.index(name)

    # Layout helpers (host h sits in rack h // hosts_per_rack).
    def host_of_gpu(self, g: int) -> int:
        return g // self.spec.gpus_per_host

    def ranks_of_host(self, h: int) -> np.ndarray:
        k = self.spec.gpus_per_host
        return np.arange(h * k, (h + 1) * k)

    def hosts_of_pdu(self, p: int) -> np.ndarray:
        per = self.spec.hosts_per_rack * self.spec.racks_per_pdu
        return np.arange(p * per, (p + 1) * per)

    def leaf_of_host(self, h: int) -> int:
        return (h // self.spec.hosts_per_rack) % self.spec.leaves

    def ring_peers(self, ranks: np.ndarray) -> np.ndarray:
        """Ring neighbours of a set of ranks that are not themselves in the set."""
        n = len(self.groups["rank"])
        near = np.union1d((ranks - 1) % n, (ranks + 1) % n)
        return np.setdiff1d(near, ranks)


def reach_within(edges: np.ndarray, hops: int) -> np.ndarray:
    """Reflexive reachability in at most `hops` steps, by repeated boolean products."""
    reach = np.eye(edges.shape[0], dtype=bool)
    step = edges.astype(np.float32)
    for _ in range(hops):
        nxt = reach | ((reach.astype(np.float32) @ step) > 0)
        if np.array_equal(nxt, reach):
            break
        reach = nxt
    return reach


def build_topology(spec: ClusterSpec = ClusterSpec()) -> Topology:
    """The synthetic cluster's knowledge graph."""
    n_racks = spec.hosts // spec.hosts_per_rack
    n_pdus = n_racks // spec.racks_per_pdu
    n_gpus = spec.hosts * spec.gpus_per_host
    layout = [
        ("job", ["job"]),
        ("spine", [f"spine{i}" for i in range(spec.spines)]),
        ("leaf", [f"leaf{i}" for i in range(spec.leaves)]),
        ("port", [f"port{h}" for h in range(spec.hosts)]),
        ("nic", [f"nic{h}" for h in range(spec.hosts)]),
        ("pdu", [f"pdu{i}" for i in range(n_pdus)]),
        ("host", [f"host{h}" for h in range(spec.hosts)]),
        ("gpu", [f"gpu{h}.{i}" for h in range(spec.hosts) for i in range(spec.gpus_per_host)]),
        ("rank", [f"rank{r}" for r in range(n_gpus)]),
    ]
    names: list[str] = []
    kinds: list[str] = []
    groups: dict[str, np.ndarray] = {}
    for kind, members in layout:
        groups[kind] = np.arange(len(names), len(names) + len(members))
        names += members
        kinds += [kind] * len(members)
    g = groups
    edges = np.zeros((len(names), len(names)), bool)
    edges[np.ix_(g["spine"], g["leaf"])] = True  # every leaf uplinks to every spine
    edges[g["rank"], g["job"][0]] = True
    for h in range(spec.hosts):
        rack = h // spec.hosts_per_rack
        ranks = g["rank"][h * spec.gpus_per_host : (h + 1) * spec.gpus_per_host]
        gpus = g["gpu"][h * spec.gpus_per_host : (h + 1) * spec.gpus_per_host]
        edges[g["leaf"][rack % spec.leaves], g["port"][h]] = True
        edges[g["port"][h], g["nic"][h]] = True
        edges[g["nic"][h], ranks] = True  # the ranks' collectives go through this NIC
        edges[g["pdu"][rack // spec.racks_per_pdu], g["host"][h]] = True
        edges[g["host"][h], gpus] = True
        edges[g["host"][h], g["nic"][h]] = True
        edges[gpus, ranks] = True
    peers = np.zeros_like(edges)
    r = g["rank"]
    peers[r, np.roll(r, 1)] = peers[r, np.roll(r, -1)] = True
    return Topology(names, kinds, groups, edges, peers, spec)


# --------------------------------------------------------------------------------------------
# Faults and synthetic telemetry
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Fault:
    kind: str  # "port_flap", "gray_gpu" or "pdu"
    target: int  # host index for a port, GPU index for a GPU, PDU index
    onset: int
    slowdown: float = 0.15  # gray GPU only

    @property
    def label(self) -> str:
        return f"{self.kind}:{self.target}"


def affected_entities(topo: Topology, fault: Fault) -> np.ndarray:
    """Entities whose signals the fault perturbs (ground truth for labelling alerts)."""
    g = topo.groups
    if fault.kind == "port_flap":
        ranks = topo.ranks_of_host(fault.target)
        ids = [g["port"][fault.target], g["nic"][fault.target], *g["rank"][ranks]]
        ids += list(g["rank"][topo.ring_peers(ranks)])
    elif fault.kind == "gray_gpu":
        ids = [g["gpu"][fault.target], g["rank"][fault.target]]
    elif fault.kind == "pdu":
        hosts = topo.hosts_of_pdu(fault.target)
        ranks = np.concatenate([topo.ranks_of_host(h) for h in hosts])
        ids = [*g["host"][hosts], *g["nic"][hosts], *g["gpu"][ranks], *g["rank"][ranks]]
        ids += list(g["rank"][topo.ring_peers(ranks)])
    else:
        raise ValueError(f"unknown fault {fault.kind!r}")
    return np.array(sorted({*ids, int(g["job"][0])}))


def acceptable_roots(topo: Topology, fault: Fault) -> set[int]:
    """Roots an operator would accept: the failed component (or, for a port, its leaf)."""
    g = topo.groups
    if fault.kind == "port_flap":
        return {int(g["port"][fault.target]), int(g["leaf"][topo.leaf_of_host(fault.target)])}
    if fault.kind == "gray_gpu":
        return {int(g["gpu"][fault.target])}
    return {int(g["pdu"][fault.target])}


@dataclass
class Telemetry:
    """Continuous metrics (windows x entities of one kind; NaN when the entity is down)."""

    metrics: dict[str, np.ndarray]
    events: dict[str, tuple[str, np.ndarray]]  # alert kind -> (entity kind, bool matrix)
    job_step: np.ndarray  # (windows,) ms, NaN once the job has crashed
    port_crc: np.ndarray  # (windows, hosts) CRC errors counted by each host's leaf port


def simulate(
    topo: Topology, faults: Sequence[Fault], spec: TelemetrySpec, rng: np.random.Generator
) -> Telemetry:
    """Telemetry of one scenario with the given faults, plus jitter and noise."""
    t_n, n_h = spec.windows, topo.spec.hosts
    n_r = n_h * topo.spec.gpus_per_host
    t = np.arange(t_n)[:, None]
    compute = spec.compute_ms * (1 + spec.jitter * rng.standard_normal((t_n, n_r)))
    compute *= 1 + spec.spike_size * (rng.random((t_n, n_r)) < spec.spike_prob)
    bw = spec.bw_gbps * (1 + spec.jitter * rng.standard_normal((t_n, n_r)))
    clock = spec.clock_mhz + spec.clock_jitter_mhz * rng.standard_normal((t_n, n_r))
    temp = (
        spec.temp_c
        + spec.temp_offset_c * rng.standard_normal(n_r)
        + spec.temp_jitter_c * rng.standard_normal((t_n, n_r))
    )
    retx = rng.poisson(spec.retx, (t_n, n_h)).astype(float)
    flaps = np.zeros((t_n, n_h), int)
    crc = rng.poisson(0.3, (t_n, n_h))
    down = np.zeros((t_n, n_h), bool)  # host lost power
    timeout = np.zeros((t_n, n_r), bool)

    for f in faults:
        after = t >= f.onset
        if f.kind == "port_flap":
            h = f.target
            ranks = topo.ranks_of_host(h)
            active = (rng.random(t_n) < 0.6) & after[:, 0]  # windows with flapping
            flaps[:, h] = rng.poisson(2.0, t_n) * active + active
            crc[:, h] += rng.poisson(40.0, t_n) * active
            retx[:, h] += (rng.poisson(30.0, t_n) + rng.poisson(200.0, t_n) * active) * after[:, 0]
            # Ranks behind the port lose bandwidth (more while it flaps); ring peers a little.
            bw[:, ranks] *= 1 - (0.1 + 0.4 * active[:, None]) * after
            peers = topo.ring_peers(ranks)
            bw[:, peers] *= 1 - (0.05 + 0.2 * active[:, None]) * after
        elif f.kind == "gray_gpu":
            g = f.target
            compute[:, g] *= 1 + f.slowdown * after[:, 0]
            clock[:, g] *= 1 - 0.87 * f.slowdown * after[:, 0]  # throttling explains it
            temp[:, g] += 12.0 * after[:, 0]
        elif f.kind == "pdu":
            hosts = topo.hosts_of_pdu(f.target)
            down[:, hosts] = after
            ranks = np.concatenate([topo.ranks_of_host(h) for h in hosts])
            timeout[f.onset, topo.ring_peers(ranks)] = True
        else:
            raise ValueError(f"unknown fault {f.kind!r}")

    rank_down = np.repeat(down, topo.spec.gpus_per_host, axis=1)
    for m in (compute, bw, clock, temp):
        m[rank_down] = np.nan
    retx[down] = np.nan
    # A synchronous step waits for the slowest compute and the slowest link.
    job_down = rank_down.any(axis=1)
    with np.errstate(all="ignore"):
        step = np.nanmax(compute, axis=1) + spec.comm_ms * spec.bw_gbps / np.nanmin(bw, axis=1)
    step[job_down] = np.nan

    events: dict[str, tuple[str, np.ndarray]] = {
        "port_flap": ("port", flaps > 0),
        "host_down": ("host", down),
        "link_down": ("nic", down),
        "gpu_lost": ("gpu", rank_down),
        "rank_lost": ("rank", rank_down),
        "nccl_timeout": ("rank", timeout),
        "job_crash": ("job", job_down[:, None]),
    }
    # Unrelated discrete alerts: benign XIDs on random GPUs, corrected ECC on random hosts.
    xid = np.zeros((t_n, n_r), bool)
    ecc = np.zeros((t_n, n_h), bool)
    for _ in range(spec.noise_events):
        if rng.random() < 0.5:
            xid[rng.integers(t_n), rng.integers(n_r)] = True
        else:
            ecc[rng.integers(t_n), rng.integers(n_h)] = True
    events["xid_benign"] = ("gpu", xid)
    events["ecc_corrected"] = ("host", ecc)
    metrics = {"compute_ms": compute, "nccl_bw": bw, "sm_clock": clock, "gpu_temp": temp}
    metrics["nic_retx"] = retx
    return Telemetry(metrics, events, step, crc)


# Continuous metrics: entity kind and bad direction (+1: high is bad, -1: low is bad).
METRICS: dict[str, tuple[str, int]] = {
    "compute_ms": ("rank", +1),
    "nccl_bw": ("rank", -1),
    "sm_clock": ("gpu", -1),
    "gpu_temp": ("gpu", +1),
    "nic_retx": ("nic", +1),
}


def absolute_limit(metric: str, spec: TelemetrySpec, th: Thresholds) -> float:
    return {
        "compute_ms": th.compute * spec.compute_ms,
        "nccl_bw": th.bw * spec.bw_gbps,
        "sm_clock": th.clock * spec.clock_mhz,
        "gpu_temp": th.temp_c,
        "nic_retx": th.retx,
    }[metric]


# --------------------------------------------------------------------------------------------
# Detection: absolute thresholds vs peer-relative z-scores with continuity
# --------------------------------------------------------------------------------------------


def robust_z(x: np.ndarray) -> np.ndarray:
    """Per window (row), z = (x - median) / (1.4826 MAD) across the peers (columns)."""
    with np.errstate(all="ignore"):
        med = np.nanmedian(x, axis=1, keepdims=True)
        mad = np.nanmedian(np.abs(x - med), axis=1, keepdims=True)
        return (x - med) / np.maximum(1.4826 * mad, 1e-9)


def run_lengths(flags: np.ndarray) -> np.ndarray:
    """Length of the run of True values ending at each index along axis 0 (any shape)."""
    f = np.asarray(flags, bool)
    run = np.zeros(f.shape, np.int32)
    run[0] = f[0]
    for i in range(1, f.shape[0]):
        run[i] = (run[i - 1] + 1) * f[i]
    return run


def run_starts(flags: np.ndarray, min_len: int = 1) -> list[tuple[int, int]]:
    """(window, column) at which each run of >= min_len consecutive True values is confirmed.

    A run is reported once, at its min_len-th window: that is when a detector with
    continuity W = min_len can first raise the alert.
    """
    f = np.asarray(flags, bool)
    f = f[:, None] if f.ndim == 1 else f
    t, col = np.nonzero(run_lengths(f) == min_len)
    return sorted(zip(t.tolist(), col.tolist(), strict=True))


def peer_flags(x: np.ndarray, direction: int, peer: PeerSpec) -> np.ndarray:
    """Windows where an entity deviates from its peers by more than tau robust sigmas."""
    with np.errstate(invalid="ignore"):
        return np.nan_to_num(direction * robust_z(x), nan=0.0) > peer.tau


def threshold_flags(x: np.ndarray, direction: int, limit: float) -> np.ndarray:
    with np.errstate(invalid="ignore"):
        return np.nan_to_num(direction * (x - limit), nan=0.0) > 0


# --------------------------------------------------------------------------------------------
# Alerts
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Alert:
    start: int
    entity: int
    kind: str
    weight: float
    cause: str  # ground truth ("noise" or a fault label); the correlator never reads it


def alert_weight(kind: str) -> float:
    return 0.5 if kind in JOB_KINDS else 1.0


def label_cause(affected: dict[Fault, set[int]], start: int, entity: int) -> str:
    """The first fault that was active and perturbs this entity, else noise."""
    for f, ents in affected.items():
        if start >= f.onset and entity in ents:
            return f.label
    return "noise"


def make_alerts(
    topo: Topology,
    faults: Sequence[Fault],
    flags_by_kind: dict[str, tuple[str, np.ndarray, int]],
) -> list[Alert]:
    """Turn flag matrices into alerts: kind -> (entity kind, flags, continuity W)."""
    affected = {f: set(affected_entities(topo, f).tolist()) for f in faults}
    alerts = []
    for kind, (ekind, flags, w) in flags_by_kind.items():
        ids = topo.groups[ekind]
        for start, col in run_starts(flags, w):
            ent = int(ids[col])
            cause = label_cause(affected, start, ent)
            alerts.append(Alert(start, ent, kind, alert_weight(kind), cause))
    return sorted(alerts, key=lambda a: (a.start, a.entity, a.kind))


def discrete_flags(
    tel: Telemetry, spec: TelemetrySpec, th: Thresholds
) -> dict[str, tuple[str, np.ndarray, int]]:
    """Alerts every method shares: hardware events and the job's step-time SLO."""
    out = {k: (ekind, m, 1) for k, (ekind, m) in tel.events.items()}
    out["crc_errors"] = ("port", tel.port_crc > th.crc, 1)
    slo = th.job_slo * float(np.nanmedian(tel.job_step[: spec.warmup]))
    slow = threshold_flags(tel.job_step, +1, slo)[:, None]
    out["job_step_slow"] = ("job", slow, th.job_slo_windows)
    return out


def baseline_alerts(
    topo: Topology, faults: Sequence[Fault], tel: Telemetry, spec: TelemetrySpec, th: Thresholds
) -> list[Alert]:
    """Discrete events plus fixed absolute thresholds on every continuous metric."""
    flags = discrete_flags(tel, spec, th)
    for m, (ekind, direction) in METRICS.items():
        limit = absolute_limit(m, spec, th)
        flags[f"{m}_threshold"] = (ekind, threshold_flags(tel.metrics[m], direction, limit), 1)
    return make_alerts(topo, faults, flags)


def minerva_alerts(
    topo: Topology,
    faults: Sequence[Fault],
    tel: Telemetry,
    spec: TelemetrySpec,
    th: Thresholds,
    peer: PeerSpec,
) -> list[Alert]:
    """Discrete events plus peer-relative anomalies that persist for W windows."""
    flags = discrete_flags(tel, spec, th)
    for m, (ekind, direction) in METRICS.items():
        flags[f"{m}_peer"] = (ekind, peer_flags(tel.metrics[m], direction, peer), peer.min_windows)
    return make_alerts(topo, faults, flags)


# --------------------------------------------------------------------------------------------
# Grouping alerts into incidents on the graph
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Incident:
    root: int
    alerts: tuple[int, ...]  # indices into the alert list
    confidence: float  # share of the root's impact that raised an alert
    candidates: tuple[int, ...]  # best roots in score order (top 3)
    start: int


def time_clusters(alerts: Sequence[Alert], window: int) -> list[list[int]]:
    """Split alert indices (sorted by start) where the gap between starts exceeds `window`."""
    order = sorted(range(len(alerts)), key=lambda i: alerts[i].start)
    clusters: list[list[int]] = []
    last = None
    for i in order:
        if last is None or alerts[i].start - last > window:
            clusters.append([])
        clusters[-1].append(i)
        last = alerts[i].start
    return clusters


def singleton(i: int, alerts: Sequence[Alert]) -> Incident:
    return Incident(alerts[i].entity, (i,), 1.0, (alerts[i].entity,), alerts[i].start)


def explain_cluster(
    idx: list[int], alerts: Sequence[Alert], topo: Topology, spec: CorrelatorSpec
) -> list[Incident]:
    """Greedy weighted set cover of one time cluster: explain most alerts with fewest roots."""
    ent = np.array([alerts[i].entity for i in idx])
    w = np.array([alerts[i].weight for i in idx])
    alerted = np.zeros(topo.n, bool)
    alerted[ent] = True
    cand = np.flatnonzero(topo.ancestors_within(spec.hops)[:, alerted].any(axis=1))
    imp = topo.impact[cand]
    imp_f = imp.astype(np.float64)
    silent = (imp & ~alerted).sum(axis=1)  # impacted entities that raised nothing
    size = imp.sum(axis=1)
    residual = np.ones(len(idx), bool)
    incidents = []
    while residual.any():
        weights = np.bincount(ent[residual], weights=w[residual], minlength=topo.n)
        counts = imp_f @ np.bincount(ent[residual], minlength=topo.n)
        score = imp_f @ weights - spec.mu * silent
        # A root that explains a single alert groups nothing; leave that alert on its own.
        valid = (counts >= 2) & (score > spec.min_score)
        if not valid.any():
            break
        # Best score first; on ties the more specific root (smaller impact), then lower id.
        order = np.lexsort((cand, size, -np.round(score, 9)))
        best = order[valid[order]][0]
        covered = residual & imp[best][ent]
        members = tuple(idx[j] for j in np.flatnonzero(covered))
        incidents.append(
            Incident(
                int(cand[best]),
                members,
                float((imp[best] & alerted).sum() / size[best]),
                tuple(int(cand[o]) for o in order[:3]),
                min(alerts[i].start for i in members),
            )
        )
        residual &= ~covered
    incidents += [singleton(idx[j], alerts) for j in np.flatnonzero(residual)]
    return incidents


def correlate(
    alerts: Sequence[Alert], topo: Topology, spec: CorrelatorSpec = CorrelatorSpec()
) -> list[Incident]:
    """Group alerts into incidents: time clusters, then greedy root selection on the graph."""
    out: list[Incident] = []
    for idx in time_clusters(alerts, spec.window):
        out += explain_cluster(idx, alerts, topo, spec)
    return sorted(out, key=lambda inc: (inc.start, inc.root))


def no_grouping(alerts: Sequence[Alert], topo: Topology) -> list[Incident]:
    """The baseline: every alert is its own incident, rooted where it fired."""
    return [singleton(i, alerts) for i in range(len(alerts))]


# --------------------------------------------------------------------------------------------
# Scenarios and evaluation
# --------------------------------------------------------------------------------------------

PORT_HOST = 5  # the flapping port serves host 5 (rack 1, leaf 1, PDU 0)
GRAY_GPU = 163  # GPU 3 of host 20 (rack 5, leaf 1, PDU 2)
PDU = 3  # feeds hosts 24..31

SCENARIOS: dict[str, tuple[Fault, ...]] = {
    "port_flap": (Fault("port_flap", PORT_HOST, 20),),
    "gray_gpu": (Fault("gray_gpu", GRAY_GPU, 25),),
    "pdu_outage": (Fault("pdu", PDU, 30),),
    "port_flap+gray_gpu": (Fault("port_flap", PORT_HOST, 20), Fault("gray_gpu", GRAY_GPU, 30)),
}

Grouper = Callable[[Sequence[Alert], Topology], list[Incident]]
METHODS: tuple[tuple[str, str, Grouper], ...] = (
    # (name, alert source, grouping)
    ("threshold", "baseline", no_grouping),
    ("threshold+topology", "baseline", correlate),
    ("minerva", "minerva", correlate),
)


def triage_accuracy(alerts: Sequence[Alert], caused: list[int], ok: set[int], k: int) -> float:
    """Chance that an operator reading a fault's alerts in time order (ties in random order)
    meets an acceptable root among the first k: 1 - C(n - g, k) / C(n, k) over the alerts
    up to the k-th one's window."""
    if not caused:
        return 0.0
    starts = sorted(alerts[i].start for i in caused)
    cutoff = starts[min(k, len(starts)) - 1]
    pool = [i for i in caused if alerts[i].start <= cutoff]
    n, g = len(pool), sum(alerts[i].entity in ok for i in pool)
    k = min(k, n)
    return 1.0 - comb(n - g, k) / comb(n, k)


def detection_delay(
    alerts: Sequence[Alert], group: Grouper, topo: Topology, fault: Fault, windows: int
) -> int | None:
    """Windows from onset until some incident has an acceptable root and one of the
    fault's alerts, grouping only the alerts raised so far (a streaming replay)."""
    ok = acceptable_roots(topo, fault)
    for t in sorted({a.start for a in alerts if fault.onset <= a.start < windows}):
        sub = [a for a in alerts if a.start <= t]
        for inc in group(sub, topo):
            if inc.root in ok and any(sub[i].cause == fault.label for i in inc.alerts):
                return t - fault.onset
    return None


def evaluate(
    alerts: list[Alert],
    group: Grouper,
    grouped: bool,
    topo: Topology,
    faults: Sequence[Fault],
    windows: int,
) -> dict[str, Any]:
    """Incident counts, root-cause accuracy and detection delay of one method on one run."""
    incidents = group(alerts, topo)
    per_fault = {}
    for f in faults:
        ok = acceptable_roots(topo, f)
        caused = [i for i, a in enumerate(alerts) if a.cause == f.label]
        touched = [inc for inc in incidents if set(inc.alerts) & set(caused)]
        if grouped and touched:
            main = max(touched, key=lambda inc: (len(set(inc.alerts) & set(caused)), -inc.start))
            top1 = float(main.root in ok)
            top3 = float(any(c in ok for c in main.candidates[:3]))
            root = topo.names[main.root]
            confidence = main.confidence
        else:
            top1 = triage_accuracy(alerts, caused, ok, 1) if not grouped else 0.0
            top3 = triage_accuracy(alerts, caused, ok, 3) if not grouped else 0.0
            root, confidence = "", 0.0
        per_fault[f.label] = {
            "alerts": len(caused),
            "incidents": len(touched),
            "top1": top1,
            "top3": top3,
            "root": root,
            "confidence": confidence,
            "delay_windows": detection_delay(alerts, group, topo, f, windows),
        }
    noise = [inc for inc in incidents if all(alerts[i].cause == "noise" for i in inc.alerts)]
    return {
        "alerts": len(alerts),
        "incidents": len(incidents),
        "noise_alerts": sum(a.cause == "noise" for a in alerts),
        "noise_incidents": len(noise),
        "largest_incident": max((len(inc.alerts) for inc in incidents), default=0),
        "faults": per_fault,
    }


def run_scenarios(
    topo: Topology, rng: np.random.Generator, spec: TelemetrySpec = TelemetrySpec()
) -> dict[str, dict[str, Any]]:
    th, peer = Thresholds(), PeerSpec()
    out: dict[str, dict[str, Any]] = {}
    for name, faults in SCENARIOS.items():
        tel = simulate(topo, faults, spec, rng)
        sources = {
            "baseline": baseline_alerts(topo, faults, tel, spec, th),
            "minerva": minerva_alerts(topo, faults, tel, spec, th, peer),
        }
        out[name] = {
            method: evaluate(sources[src], group, method != "threshold", topo, faults, spec.windows)
            for method, src, group in METHODS
        }
    return out


def summarize(scenarios: dict[str, dict[str, Any]]) -> dict[str, dict[str, float]]:
    """Totals and means over every scenario and fault, per method."""
    out = {}
    for method, _, _ in METHODS:
        rows = [sc[method] for sc in scenarios.values()]
        faults = [f for r in rows for f in r["faults"].values()]
        delays = [f["delay_windows"] for f in faults if f["delay_windows"] is not None]
        fault_alerts = sum(f["alerts"] for f in faults)
        fault_incidents = sum(f["incidents"] for f in faults)
        out[method] = {
            "alerts": sum(r["alerts"] for r in rows),
            "incidents": sum(r["incidents"] for r in rows),
            "fault_alerts": fault_alerts,
            "fault_incidents": fault_incidents,
            "alerts_per_fault_incident": fault_alerts / max(fault_incidents, 1),
            "noise_incidents": sum(r["noise_incidents"] for r in rows),
            "top1_accuracy": float(np.mean([f["top1"] for f in faults])),
            "top3_accuracy": float(np.mean([f["top3"] for f in faults])),
            "faults_detected": len(delays),
            "faults": len(faults),
            "mean_delay_windows": float(np.mean(delays)) if delays else float("nan"),
        }
    return out


def gray_sweep(
    rng: np.random.Generator,
    spec: TelemetrySpec = TelemetrySpec(),
    th: Thresholds = Thresholds(),
    peer: PeerSpec = PeerSpec(),
    trials: int = SWEEP_TRIALS,
    ranks: int = 256,
    onset: int = 20,
) -> dict[str, list[float]]:
    """Detection of one slow rank (compute time) by peer z-score vs the absolute threshold.

    Also counts false alerts on the healthy ranks, which see only jitter and the occasional
    one-window spike.
    """
    limit = absolute_limit("compute_ms", spec, th)
    out: dict[str, list[float]] = {
        "slowdown_pct": [],
        "peer_detect_rate": [],
        "threshold_detect_rate": [],
        "peer_false_alerts_per_1k_rank_windows": [],
        "threshold_false_alerts_per_1k_rank_windows": [],
    }
    for s in GRAY_SLOWDOWNS:
        x = spec.compute_ms * (1 + spec.jitter * rng.standard_normal((spec.windows, trials, ranks)))
        x *= 1 + spec.spike_size * (rng.random(x.shape) < spec.spike_prob)
        x[onset:, :, 0] *= 1 + s
        z = robust_z(x.reshape(spec.windows * trials, ranks)).reshape(x.shape)
        peer_alert = run_lengths(z > peer.tau) == peer.min_windows
        thr_alert = run_lengths(x > limit) == 1
        healthy_windows = spec.windows * trials * (ranks - 1) / 1000.0
        out["slowdown_pct"].append(100.0 * s)
        out["peer_detect_rate"].append(float(peer_alert[onset:, :, 0].any(axis=0).mean()))
        out["threshold_detect_rate"].append(float(thr_alert[onset:, :, 0].any(axis=0).mean()))
        out["peer_false_alerts_per_1k_rank_windows"].append(
            float(peer_alert[:, :, 1:].sum() / healthy_windows)
        )
        out["threshold_false_alerts_per_1k_rank_windows"].append(
            float(thr_alert[:, :, 1:].sum() / healthy_windows)
        )
    return out


def run(seed: int = 0) -> dict[str, object]:
    """Run every measurement; the result is plain JSON-serialisable data."""
    rng = np.random.default_rng(seed)
    topo = build_topology()
    scenarios = run_scenarios(topo, rng)
    return {
        "system": "Minerva",
        "mechanism": "as described (derived; no public paper or code)",
        "seed": seed,
        "config": {
            "cluster": asdict(ClusterSpec()),
            "telemetry": asdict(TelemetrySpec()),
            "thresholds": asdict(Thresholds()),
            "peer": asdict(PeerSpec()),
            "correlator": asdict(CorrelatorSpec()),
            "entities": topo.n,
        },
        "scenarios": scenarios,
        "summary": summarize(scenarios),
        "gray_sweep": gray_sweep(rng),
    }


def report(res: dict) -> str:
    """A short human-readable summary of ``run()``'s output."""
    lines = [
        f"Minerva reference (mechanism as described), seed {res['seed']}: "
        f"{res['config']['entities']} entities, {res['config']['telemetry']['windows']} windows",
        "scenario             method               alerts incidents  per fault: alerts->"
        "incidents root (top-1) delay",
    ]
    for name, sc in res["scenarios"].items():
        for method, r in sc.items():
            fs = "; ".join(
                f"{f['alerts']}->{f['incidents']} {f['root'] or '-'} ({f['top1']:.2f}) "
                f"{'-' if f['delay_windows'] is None else f['delay_windows']}"
                for f in r["faults"].values()
            )
            lines.append(f"  {name:18s} {method:20s} {r['alerts']:5d} {r['incidents']:6d}     {fs}")
    lines.append("summary over all scenarios:")
    for method, s in res["summary"].items():
        lines.append(
            f"  {method:20s} {s['fault_alerts']:4d} fault alerts -> {s['fault_incidents']:3d} "
            f"incidents ({s['alerts_per_fault_incident']:.1f} per incident), top-1 "
            f"{s['top1_accuracy']:.2f}, top-3 {s['top3_accuracy']:.2f}, detected "
            f"{s['faults_detected']}/{s['faults']}, mean delay {s['mean_delay_windows']:.1f}, "
            f"noise incidents {s['noise_incidents']}"
        )
    gs = res["gray_sweep"]
    lines.append(
        "slow-rank detection rate by slowdown (peer z / +30% threshold): "
        + ", ".join(
            f"{s:.0f}%: {p:.2f}/{t:.2f}"
            for s, p, t in zip(
                gs["slowdown_pct"], gs["peer_detect_rate"], gs["threshold_detect_rate"], strict=True
            )
        )
    )
    lines.append(
        "false alerts per 1,000 healthy rank-windows: peer "
        f"{np.mean(gs['peer_false_alerts_per_1k_rank_windows']):.3f}, threshold "
        f"{np.mean(gs['threshold_false_alerts_per_1k_rank_windows']):.3f}"
    )
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
