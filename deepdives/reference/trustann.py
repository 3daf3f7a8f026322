"""TrustANN reference program: verified replica quorums for sharded nearest-neighbour search.

What is modelled
    A 20K x 32-d Gaussian-mixture corpus split into 3 shards. Each shard has 3 primary replicas,
    one per availability zone (az-a, az-b, az-c), plus one standby in az-d. Every replica is an
    approximate IVF index with its own k-means seed and a tiny per-vector distance error (as
    from its own quantised copy), so honest top-k lists sometimes differ in rank or membership.
    A Byzantine replica can poison (top-1 id replaced by a fabricated id), suppress (drop the
    best hit) or reorder (valid ids, reversed) its reply, and it answers first.

    TrustBind, per shard: greedily pick replies that agree (consistency = 0.5 x Jaccard overlap
    + 0.5 x rank agreement), come from distinct failure domains, and number at least theta; the
    query is trusted only if every shard is. AvailGuard: while untrusted and rounds < Kmax, ask
    one fresh healthy replica from a domain not yet in the evidence. Otherwise the answer is an
    explicit "unverified". CoordShift's quorum sampling (uniform vs diversity-aware) is measured
    on its own. Baselines: accept the first reply; TrustBind with theta = 1.

Provenance
    The TrustBind selection and decision rules, AvailGuard's recovery rule, the attack modes and
    CoordShift's samplers follow the public anonymous artifact (github aalmamuncse/trustann,
    trustann_harness/trust_logic.py and experiments.py), re-implemented here, not copied. The data,
    IVF replicas, arrival order and gamma = 0.95 are ours. The artifact uses gamma = 1.0, and its
    committed results show a clean trusted rate of 0.0, so it never demonstrates that clean
    queries are accepted; this program reports the clean trusted rate at both settings and
    sweeps gamma to show the trade-off.
    RBO (Webber et al. 2010, eq. 32) and Kendall tau are provided for an ablation only.

Run from the project root:  python -m deepdives.reference.trustann --seed 0
"""

from __future__ import annotations

import argparse
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import combinations

import numpy as np

# ---------------------------------------------------------------------------------------------
# Parameters
# ---------------------------------------------------------------------------------------------

POISON_ID = 999_999_999  # the artifact's fabricated id
K = 9  # neighbours per query (artifact default)
THETA = 2  # minimum number of agreeing replies per shard (artifact default)
# A fabricated top-1 on an otherwise identical list scores exactly 0.9 (0.5 x 8/10 + 0.5 x 1),
# and so does an honest reply that differs in one candidate: a threshold <= 0.9 cannot tell
# them apart. 0.95 rejects any one-candidate forgery yet tolerates rank jitter within a set.
GAMMA = 0.95
ARTIFACT_GAMMA = 1.0  # the artifact's threshold: demands identical ordered lists
DMIN = 1.0  # distinct failure domains / distinct replicas in the evidence
KMAX = 1  # AvailGuard recovery rounds (artifact default)
ATTACKS = ("poison", "suppress", "ranking")
GAMMA_SWEEP = (0.6, 0.7, 0.8, 0.85, 0.9, 0.92, 0.95, 0.98, 1.0)
CRASH_SWEEP_PCT = (0, 10, 20, 33, 49)  # share of the 9 primaries crashed (artifact's sweep)
RBO_P = 0.9
LATENCY_SIGMA = 0.3  # honest reply delay ~ lognormal(0, sigma); only the order matters here


@dataclass(frozen=True)
class Cluster:
    n_points: int = 20_000
    dim: int = 32
    n_blobs: int = 40
    blob_spread: float = 3.0  # as wide as the centres' scale: blobs overlap, search is hard
    n_shards: int = 3
    primary_domains: tuple[str, ...] = ("az-a", "az-b", "az-c")
    standby_domains: tuple[str, ...] = ("az-d",)
    ivf_lists: int = 32
    ivf_probe: int = 10
    kmeans_iters: int = 6
    distance_noise: float = 0.001  # relative error of a replica's distances (quantised copy)
    n_queries: int = 300


@dataclass(frozen=True)
class CoordShiftSetup:
    """The artifact's CoordShift experiment: 60 nodes, 5 per domain, 1500 rounds."""

    nodes: int = 60
    per_domain: int = 5
    rounds: int = 1500
    ks: tuple[int, ...] = (5, 9, 15, 21)
    adversary_fractions: tuple[float, ...] = (0.1, 0.3)


# ---------------------------------------------------------------------------------------------
# Replies and TrustBind (artifact: trustann_harness/trust_logic.py)
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Reply:
    replica_id: int
    failure_domain: str | None
    ids: tuple[int, ...]  # neighbour ids in rank order
    dists: tuple[float, ...] = ()
    available: bool = True
    poisoned: bool = False  # ground truth for scoring only; TrustBind never reads it


@lru_cache(maxsize=200_000)
def rank_agreement(a: tuple[int, ...], b: tuple[int, ...]) -> float:
    """Mean of 1 - |pos_a - pos_b| / (max(len) - 1) over common ids; 0 if none in common."""
    pa = {x: i for i, x in enumerate(a)}
    pb = {x: i for i, x in enumerate(b)}
    common = pa.keys() & pb.keys()
    if not common:
        return 0.0
    denom = max(1, max(len(a), len(b)) - 1)
    mean = sum(1.0 - abs(pa[x] - pb[x]) / denom for x in common) / len(common)
    return min(1.0, max(0.0, mean))


def jaccard(a: Sequence[int], b: Sequence[int]) -> float:
    sa, sb = set(a), set(b)
    union = sa | sb
    return len(sa & sb) / len(union) if union else 1.0


@lru_cache(maxsize=200_000)
def pair_consistency(a: tuple[int, ...], b: tuple[int, ...]) -> float:
    """Candidate overlap plus rank agreement, equally weighted (the artifact's formula)."""
    return 0.5 * jaccard(a, b) + 0.5 * rank_agreement(a, b)


def consistency(replies: Sequence[Reply]) -> float:
    """Mean pairwise consistency of the available replies (1 for one reply, 0 for none)."""
    avail = [r for r in replies if r.available]
    if len(avail) < 2:
        return 1.0 if avail else 0.0
    pairs = [pair_consistency(a.ids, b.ids) for a, b in combinations(avail, 2)]
    return sum(pairs) / len(pairs)


def independence(replies: Sequence[Reply]) -> float:
    """Distinct failure domains per distinct replica; without domains, 1 iff replicas distinct."""
    avail = [r for r in replies if r.available]
    if not avail:
        return 0.0
    replicas = {r.replica_id for r in avail}
    domains = {r.failure_domain for r in avail if r.failure_domain is not None}
    if domains:
        return min(1.0, len(domains) / max(1, len(replicas)))
    return 1.0 if len(replicas) == len(avail) else 0.0


def _mean_agreement(candidate: Reply, others: Sequence[Reply]) -> float:
    if not others:
        return 1.0
    return sum(pair_consistency(candidate.ids, o.ids) for o in others) / len(others)


def _new_domain(selected: Sequence[Reply], candidate: Reply) -> bool:
    d = candidate.failure_domain
    return d is None or all(s.failure_domain != d for s in selected)


def select_evidence(replies: Sequence[Reply], theta: int, gamma: float) -> list[Reply]:
    """Greedy quorum: start from the reply that agrees most with the rest, then keep adding
    the most agreeing reply from a new failure domain while the set stays >= gamma."""
    avail = [r for r in replies if r.available]
    if not avail:
        return []
    if theta <= 1:  # no cross-check at all: the first available reply wins
        return [avail[0]]
    # Highest mean agreement first; ties go to the earlier reply (stable sort).
    scored = sorted(
        range(len(avail)),
        key=lambda i: -_mean_agreement(avail[i], avail[:i] + avail[i + 1 :]),
    )
    selected = [avail[scored[0]]]
    remaining = [r for r in avail if r is not selected[0]]
    while len(selected) < theta and remaining:
        fits = [
            (-_mean_agreement(c, selected), i, c)
            for i, c in enumerate(remaining)
            if _new_domain(selected, c) and consistency([*selected, c]) >= gamma
        ]
        if not fits:
            break
        best = min(fits, key=lambda t: (t[0], t[1]))[2]
        selected.append(best)
        remaining = [r for r in remaining if r is not best]
    return selected


@dataclass(frozen=True)
class Decision:
    trusted: bool
    available_count: int
    selected: tuple[Reply, ...]
    consistency: float
    diversity: float

    @property
    def count(self) -> int:
        return len(self.selected)

    @property
    def selected_domains(self) -> list[str | None]:
        return [r.failure_domain for r in self.selected]

    @property
    def selected_poisoned(self) -> list[bool]:
        return [r.poisoned for r in self.selected]


def trust_decision(
    replies: Sequence[Reply], theta: int = THETA, gamma: float = GAMMA, dmin: float = DMIN
) -> Decision:
    """Trusted iff the evidence has >= theta replies, consistency >= gamma and diversity >= dmin."""
    avail = [r for r in replies if r.available]
    sel = select_evidence(avail, theta, gamma)
    c, d = consistency(sel), independence(sel)
    ok = len(sel) >= theta and c >= gamma and d >= dmin
    return Decision(ok, len(avail), tuple(sel), c, d)


def per_shard_trust(
    by_shard: dict[int, list[Reply]], theta: int = THETA, gamma: float = GAMMA, dmin: float = DMIN
) -> tuple[bool, dict[int, Decision]]:
    """Every shard is judged on its own evidence; no pooling across shards."""
    decisions = {s: trust_decision(r, theta, gamma, dmin) for s, r in by_shard.items()}
    return (all(d.trusted for d in decisions.values()) if decisions else False), decisions


# ---------------------------------------------------------------------------------------------
# AvailGuard (artifact: experiments._query_with_recovery)
# ---------------------------------------------------------------------------------------------


@dataclass
class Outcome:
    trusted: bool
    decisions: dict[int, Decision]
    rounds: int


def query_with_recovery(
    asked: dict[int, list[Reply]],
    fresh: dict[int, list[Reply]],
    theta: int = THETA,
    gamma: float = GAMMA,
    dmin: float = DMIN,
    kmax: int = KMAX,
) -> Outcome:
    """Re-judge after adding, per round, one fresh reply to the first untrusted shard.

    `fresh` holds the replies of healthy replicas that were not asked at first (standbys);
    a candidate must come from a failure domain not yet in that shard's evidence.
    """
    asked = {s: list(r) for s, r in asked.items()}
    fresh = {s: list(r) for s, r in fresh.items()}
    rounds = 0
    while True:
        trusted, decisions = per_shard_trust(asked, theta, gamma, dmin)
        if trusted or rounds >= kmax:
            return Outcome(trusted, decisions, rounds)
        added = False
        for s, dec in decisions.items():
            if dec.trusted:
                continue
            seen = set(dec.selected_domains)
            pick = next((r for r in fresh.get(s, []) if r.failure_domain not in seen), None)
            if pick is not None:
                fresh[s].remove(pick)
                asked[s].append(pick)
                added = True
                break
        if not added:
            return Outcome(trusted, decisions, rounds)
        rounds += 1


# ---------------------------------------------------------------------------------------------
# Byzantine replies (artifact: trustann/fault.py)
# ---------------------------------------------------------------------------------------------


def tamper(mode: str, ids: Sequence[int], dists: Sequence[float], k: int) -> tuple[tuple, tuple]:
    """Apply one attack to an honest top-(k+1) list; returns (ids, dists) of length k."""
    if mode == "poison":  # fabricated top-1, distance kept so it still looks plausible
        return (POISON_ID, *ids[1:k]), tuple(dists[:k])
    if mode == "suppress":  # hide the best hit, fill from the next genuine candidate
        return tuple(ids[1 : k + 1]), tuple(dists[1 : k + 1])
    if mode == "ranking":  # valid ids, adversarial order
        return tuple(reversed(ids[:k])), tuple(reversed(dists[:k]))
    raise ValueError(f"unknown attack mode: {mode!r}")


# ---------------------------------------------------------------------------------------------
# Synthetic cluster: data, shards, approximate replicas
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Replica:
    replica_id: int
    shard: int
    domain: str
    standby: bool


@dataclass(frozen=True)
class World:
    """Every replica's top-(k+1) answer to every query, computed once."""

    replicas: tuple[Replica, ...]
    ids: np.ndarray  # (n_replicas, n_queries, k+1) global ids
    dists: np.ndarray  # (n_replicas, n_queries, k+1)
    truth: np.ndarray  # (n_queries, k) exact global top-k
    n_shards: int
    honest: tuple[tuple[Reply, ...], ...] = ()  # [replica][query], built once
    _tampered: dict[tuple[int, int, str], Reply] = field(default_factory=dict, compare=False)

    @property
    def n_queries(self) -> int:
        return int(self.ids.shape[1])

    @property
    def k(self) -> int:
        return int(self.truth.shape[1])

    @property
    def primaries(self) -> list[Replica]:
        return [r for r in self.replicas if not r.standby]

    def reply(self, replica: int, q: int, attack: str | None = None) -> Reply:
        """The replica's reply to query q, tampered if an attack is given (memoised)."""
        if attack is None:
            return self.honest[replica][q]
        key = (replica, q, attack)
        if key not in self._tampered:
            rep = self.replicas[replica]
            ids, dists = self.ids[replica, q].tolist(), self.dists[replica, q].tolist()
            t_ids, t_d = tamper(attack, ids, dists, self.k)
            self._tampered[key] = Reply(rep.replica_id, rep.domain, t_ids, t_d, poisoned=True)
        return self._tampered[key]


def _sq_dists(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return (a * a).sum(1)[:, None] - 2.0 * a @ b.T + (b * b).sum(1)[None, :]


def _kmeans(rng: np.random.Generator, x: np.ndarray, n: int, iters: int) -> np.ndarray:
    cent = x[rng.choice(len(x), n, replace=False)].copy()
    for _ in range(iters):
        assign = _sq_dists(x, cent).argmin(1)
        for c in range(n):
            members = x[assign == c]
            if len(members):
                cent[c] = members.mean(0)
    return cent


def _ivf_topk(
    x: np.ndarray, cent: np.ndarray, q: np.ndarray, k: int, n_probe: int, noise: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Local top-k among vectors whose nearest centroid is one of the query's n_probe nearest.

    Distances carry a fixed per-vector relative error (`noise`), as a replica scoring with its
    own quantised copy of the vectors would; it makes honest replicas swap near-tied ranks.
    """
    list_of = _sq_dists(x, cent).argmin(1)
    probes = np.argsort(_sq_dists(q, cent), axis=1)[:, :n_probe]
    probed = np.zeros((len(q), len(cent)), dtype=bool)
    np.put_along_axis(probed, probes, True, axis=1)
    d = np.maximum(_sq_dists(q, x), 0.0) * (1.0 + noise)[None, :]
    d[~probed[:, list_of]] = np.inf
    top = np.argpartition(d, k - 1, axis=1)[:, :k]
    top = np.take_along_axis(top, np.argsort(np.take_along_axis(d, top, 1), 1), 1)
    return top, np.take_along_axis(d, top, 1)


def build_world(seed: int, cl: Cluster = Cluster(), k: int = K) -> World:
    rng = np.random.default_rng(seed)
    centres = 3.0 * rng.standard_normal((cl.n_blobs, cl.dim))
    blob = rng.integers(0, cl.n_blobs, cl.n_points)
    data = (centres[blob] + cl.blob_spread * rng.standard_normal((cl.n_points, cl.dim))).astype(
        np.float32
    )
    qb = rng.integers(0, cl.n_blobs, cl.n_queries)
    queries = (centres[qb] + cl.blob_spread * rng.standard_normal((cl.n_queries, cl.dim))).astype(
        np.float32
    )
    shard_of = rng.integers(0, cl.n_shards, cl.n_points)
    d_all = _sq_dists(queries, data)
    truth = np.argsort(d_all, axis=1)[:, :k]

    replicas: list[Replica] = []
    ids, dists = [], []
    for s in range(cl.n_shards):
        members = np.flatnonzero(shard_of == s)
        x = data[members]
        domains = [(d, False) for d in cl.primary_domains] + [(d, True) for d in cl.standby_domains]
        for domain, standby in domains:
            # Each replica builds its own index: a different k-means seed, so lists differ a bit.
            cent = _kmeans(rng, x, cl.ivf_lists, cl.kmeans_iters)
            noise = cl.distance_noise * rng.standard_normal(len(x))
            local, dist = _ivf_topk(x, cent, queries, k + 1, cl.ivf_probe, noise)
            replicas.append(Replica(len(replicas), s, domain, standby))
            ids.append(members[local])
            dists.append(dist)
    ids_a, dists_a = np.stack(ids), np.stack(dists)
    honest = tuple(
        tuple(
            Reply(rep.replica_id, rep.domain, tuple(i[:k].tolist()), tuple(d[:k].tolist()))
            for i, d in zip(ids_a[rep.replica_id], dists_a[rep.replica_id], strict=True)
        )
        for rep in replicas
    )
    return World(tuple(replicas), ids_a, dists_a, truth, cl.n_shards, honest)


# ---------------------------------------------------------------------------------------------
# Query simulation
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Scenario:
    attack: str | None = None  # one Byzantine primary per query, in a random shard
    attacker_first: bool = True  # the Byzantine reply arrives before honest ones
    n_crashed: int = 0  # primaries down per query, chosen at random
    crash_in_attacked_shard: bool = False  # force one crash next to the attacker (2-reply case)
    theta: int = THETA
    gamma: float = GAMMA
    dmin: float = DMIN
    kmax: int = KMAX


@dataclass
class Tally:
    n: int = 0
    first_reply_tampered: int = 0  # the first reply of some shard was tampered
    theta1_tampered: int = 0  # TrustBind with theta = 1 accepted tampered evidence
    trusted: int = 0
    tampered_trusted: int = 0  # trusted and some selected evidence was tampered
    rounds: int = 0
    recall_sum: float = 0.0  # recall@k of trusted answers
    first_recall_sum: float = 0.0  # recall@k of first-reply answers

    def rates(self) -> dict:
        n = max(1, self.n)
        return {
            "queries": self.n,
            "first_reply_tampered_rate": self.first_reply_tampered / n,
            "theta1_tampered_rate": self.theta1_tampered / n,
            "trusted_rate": self.trusted / n,
            "unverified_rate": 1.0 - self.trusted / n,
            "tampered_accepted_rate": self.tampered_trusted / n,
            "mean_recovery_rounds": self.rounds / n,
            "recall_trusted": self.recall_sum / self.trusted if self.trusted else None,
            "recall_first_reply": self.first_recall_sum / n,
        }


def _merge(lists: Sequence[Reply], k: int) -> list[int]:
    """Global top-k from one chosen reply per shard, by the distances the replicas reported."""
    pairs = sorted((d, i) for r in lists for i, d in zip(r.ids, r.dists, strict=True))
    return [i for _, i in pairs[:k]]


def _recall(answer: Sequence[int], truth: np.ndarray) -> float:
    return len(set(answer) & set(truth.tolist())) / len(truth)


def _replies_for_query(
    world: World, q: int, sc: Scenario, rng: np.random.Generator
) -> tuple[dict[int, list[Reply]], dict[int, list[Reply]]]:
    """Replies of the primaries (in arrival order) and of healthy standbys, per shard."""
    primaries = world.primaries
    byz = int(rng.choice([r.replica_id for r in primaries])) if sc.attack else -1
    down: set[int] = set()
    if sc.crash_in_attacked_shard and sc.attack:
        byz_shard = world.replicas[byz].shard
        peers = [r.replica_id for r in primaries if r.shard == byz_shard and r.replica_id != byz]
        down.add(int(rng.choice(peers)))
    others = [r.replica_id for r in primaries if r.replica_id != byz and r.replica_id not in down]
    extra = max(0, sc.n_crashed - len(down))
    down |= set(rng.choice(others, size=min(extra, len(others)), replace=False).tolist())

    # Honest replies arrive after a random (lognormal) delay; the attacker skips the search.
    arrival = rng.lognormal(0.0, LATENCY_SIGMA, size=len(world.replicas))
    if sc.attack and sc.attacker_first:
        arrival[byz] = 0.0
    asked: dict[int, list[tuple[float, Reply]]] = {s: [] for s in range(world.n_shards)}
    fresh: dict[int, list[Reply]] = {s: [] for s in range(world.n_shards)}
    for rep in world.replicas:
        reply = world.reply(rep.replica_id, q, sc.attack if rep.replica_id == byz else None)
        if rep.standby:
            fresh[rep.shard].append(reply)
        elif rep.replica_id not in down:
            asked[rep.shard].append((float(arrival[rep.replica_id]), reply))
    ordered = {s: [r for _, r in sorted(v, key=lambda t: t[0])] for s, v in asked.items()}
    return ordered, fresh


def _tally_baselines(t: Tally, asked: dict[int, list[Reply]], sc: Scenario, truth: np.ndarray):
    # Unverified baseline: accept the first reply of each shard.
    firsts = [v[0] for v in asked.values() if v]
    if any(r.poisoned for r in firsts):
        t.first_reply_tampered += 1
    t.first_recall_sum += _recall(_merge(firsts, len(truth)), truth)
    # TrustBind with theta = 1: a single reply suffices, so nothing is cross-checked.
    ok1, dec1 = per_shard_trust(asked, 1, sc.gamma, sc.dmin)
    if ok1 and any(any(d.selected_poisoned) for d in dec1.values()):
        t.theta1_tampered += 1


def simulate(world: World, sc: Scenario, seed: int, baselines: bool = True) -> dict:
    """Run every query once under the scenario; rates over queries."""
    rng = np.random.default_rng(seed)
    k = world.k
    t = Tally()
    for q in range(world.n_queries):
        asked, fresh = _replies_for_query(world, q, sc, rng)
        t.n += 1
        if baselines:
            _tally_baselines(t, asked, sc, world.truth[q])
        # TrustANN: TrustBind + AvailGuard.
        out = query_with_recovery(asked, fresh, sc.theta, sc.gamma, sc.dmin, sc.kmax)
        t.rounds += out.rounds
        if out.trusted:
            t.trusted += 1
            if any(any(d.selected_poisoned) for d in out.decisions.values()):
                t.tampered_trusted += 1
            chosen = [d.selected[0] for d in out.decisions.values()]
            t.recall_sum += _recall(_merge(chosen, k), world.truth[q])
    return t.rates()


# ---------------------------------------------------------------------------------------------
# CoordShift quorum sampling (artifact: experiments.coordshift_resilience)
# ---------------------------------------------------------------------------------------------


def sample_quorums(
    rng: np.random.Generator, domain: np.ndarray, k: int, rounds: int, mode: str
) -> np.ndarray:
    """(rounds, k) node ids. 'uniform': k random nodes. 'diversity_aware': one random node in
    each of min(k, #domains) random domains, then random other nodes up to k."""
    n = len(domain)
    if mode == "uniform":
        return np.argsort(rng.random((rounds, n)), axis=1)[:, :k]
    if mode != "diversity_aware":
        raise ValueError(f"unknown sampling mode: {mode!r}")
    doms = np.unique(domain)
    kd = min(k, len(doms))
    picked_doms = doms[np.argsort(rng.random((rounds, len(doms))), axis=1)[:, :kd]]
    per = np.bincount(domain)
    start = np.concatenate([[0], np.cumsum(per)[:-1]])  # nodes are numbered domain by domain
    first = start[picked_doms] + (rng.random((rounds, kd)) * per[picked_doms]).astype(int)
    if kd == k:
        return first
    # Fill with distinct random nodes not already chosen.
    keys = rng.random((rounds, n))
    np.put_along_axis(keys, first, np.inf, axis=1)
    rest = np.argsort(keys, axis=1)[:, : k - kd]
    return np.concatenate([first, rest], axis=1)


def coordshift(seed: int, cs: CoordShiftSetup = CoordShiftSetup()) -> list[dict]:
    rng = np.random.default_rng(seed)
    domain = np.arange(cs.nodes) // cs.per_domain
    n_domains = int(domain.max()) + 1
    rows = []
    for p in cs.adversary_fractions:
        for clustered in (False, True):
            bad = np.zeros(cs.nodes, dtype=bool)
            if clustered:  # whole domains compromised, as in the artifact
                bad[np.isin(domain, np.arange(max(1, math.ceil(p * n_domains))))] = True
            else:
                bad[rng.choice(cs.nodes, int(round(cs.nodes * p)), replace=False)] = True
            for k in cs.ks:
                for mode in ("uniform", "diversity_aware"):
                    qs = sample_quorums(rng, domain, k, cs.rounds, mode)
                    doms = np.sort(domain[qs], axis=1)
                    coverage = 1 + (doms[:, 1:] != doms[:, :-1]).sum(1)
                    rows.append(
                        {
                            "p": p,
                            "clustered": clustered,
                            "k": k,
                            "sampling": mode,
                            "domain_coverage": float(coverage.mean()),
                            "min_coverage": int(coverage.min()),
                            "adversary_in_quorum": float(bad[qs].any(1).mean()),
                        }
                    )
    return rows


# ---------------------------------------------------------------------------------------------
# Optional ranking measures (spec B6): RBO and Kendall tau
# ---------------------------------------------------------------------------------------------


def rbo_ext(s: Sequence, t: Sequence, p: float = RBO_P) -> float:
    """Extrapolated rank-biased overlap, Webber, Moffat & Zobel 2010, eq. 32 (uneven lengths)."""
    if not s and not t:
        return 1.0
    if not s or not t:
        return 0.0
    short, long_ = (s, t) if len(s) <= len(t) else (t, s)
    sl, ll = len(short), len(long_)
    short_set = set(short)
    seen_s: set = set()
    seen_l: set = set()
    x = [0] * (ll + 1)  # x[d] = |S[:d] ∩ L[:d]| (S stops growing after its end)
    for d in range(1, ll + 1):
        if d <= sl:
            seen_s.add(short[d - 1])
        seen_l.add(long_[d - 1])
        x[d] = len(seen_s & seen_l) if d <= sl else len(short_set & seen_l)
    head = sum(x[d] / d * p**d for d in range(1, ll + 1))
    tail = sum(x[sl] * (d - sl) / (sl * d) * p**d for d in range(sl + 1, ll + 1))
    return (1 - p) / p * (head + tail) + ((x[ll] - x[sl]) / ll + x[sl] / sl) * p**ll


def kendall_tau(a: Sequence, b: Sequence) -> float:
    """(concordant - discordant) / (n(n-1)/2) on the items both lists share; 1 if n < 2."""
    pb = {x: i for i, x in enumerate(b)}
    common = [x for x in a if x in pb]
    n = len(common)
    if n < 2:
        return 1.0
    score = sum(1 if pb[x] < pb[y] else -1 for x, y in combinations(common, 2))
    return score / (n * (n - 1) / 2)


def kendall_pair(a: Sequence[int], b: Sequence[int]) -> float:
    """Ablation variant: Jaccard plus Kendall tau on the intersection mapped to [0, 1]."""
    if not set(a) & set(b):
        return 0.5 * jaccard(a, b)
    return 0.5 * jaccard(a, b) + 0.5 * (kendall_tau(a, b) + 1.0) / 2.0


PAIR_MEASURES: dict[str, Callable[[Sequence[int], Sequence[int]], float]] = {
    "artifact (Jaccard + rank agreement)": lambda a, b: pair_consistency(tuple(a), tuple(b)),
    f"RBO_EXT p={RBO_P}": rbo_ext,
    "Jaccard + Kendall tau": kendall_pair,
}


def measure_ablation(world: World) -> list[dict]:
    """Mean pair score of honest-vs-honest and honest-vs-attacked lists, for each measure."""
    k = world.truth.shape[1]
    shard0 = [r.replica_id for r in world.replicas if r.shard == 0 and not r.standby]
    a_id, b_id = shard0[0], shard0[1]
    rows = []
    for name, fn in PAIR_MEASURES.items():
        row: dict = {"measure": name}
        for label in ("honest", *ATTACKS):
            vals = []
            for q in range(world.n_queries):
                a = world.ids[a_id, q, :k].tolist()
                b_full = world.ids[b_id, q].tolist()
                if label == "honest":
                    b = b_full[:k]
                else:
                    b = list(tamper(label, b_full, world.dists[b_id, q].tolist(), k)[0])
                vals.append(fn(a, b))
            row[label] = float(np.mean(vals))
        rows.append(row)
    return rows


# ---------------------------------------------------------------------------------------------
# Experiments
# ---------------------------------------------------------------------------------------------


def run(seed: int = 0) -> dict:
    started = time.perf_counter()
    world = build_world(seed)
    sim_seed = seed + 1  # the simulations draw attackers, crashes and arrival order

    clean = simulate(world, Scenario(), sim_seed)
    clean_artifact = simulate(world, Scenario(gamma=ARTIFACT_GAMMA), sim_seed)
    attacks = {}
    for mode in ATTACKS:
        fast = simulate(world, Scenario(attack=mode), sim_seed)
        shuffled = simulate(world, Scenario(attack=mode, attacker_first=False), sim_seed)
        fast["first_reply_tampered_rate_random_order"] = shuffled["first_reply_tampered_rate"]
        attacks[mode] = fast

    # Gamma trade-off, with poisoning: the attack whose list stays closest to an honest one.
    gamma_series = []
    for g in GAMMA_SWEEP:
        clean_g = simulate(world, Scenario(gamma=g), sim_seed, baselines=False)
        minority = simulate(world, Scenario(attack="poison", gamma=g), sim_seed, baselines=False)
        pair_sc = Scenario(attack="poison", gamma=g, crash_in_attacked_shard=True, kmax=0)
        pair = simulate(world, pair_sc, sim_seed, baselines=False)
        gamma_series.append(
            {
                "gamma": g,
                "clean_trusted_rate": clean_g["trusted_rate"],
                "minority_tampered_accepted": minority["tampered_accepted_rate"],
                "minority_trusted_rate": minority["trusted_rate"],
                "pair_tampered_accepted": pair["tampered_accepted_rate"],
            }
        )

    n_primaries = sum(1 for r in world.replicas if not r.standby)
    failure_series = []
    for pct in CRASH_SWEEP_PCT:
        n_down = round(n_primaries * pct / 100)
        by_kmax = {
            km: simulate(world, Scenario(n_crashed=n_down, kmax=km), sim_seed, baselines=False)
            for km in (0, 1, 2)
        }
        byz_sc = Scenario(attack="poison", n_crashed=n_down)
        with_byz = simulate(world, byz_sc, sim_seed, baselines=False)
        failure_series.append(
            {
                "crashed_pct": pct,
                "crashed": n_down,
                "trusted_kmax0": by_kmax[0]["trusted_rate"],
                "trusted_kmax1": by_kmax[1]["trusted_rate"],
                "trusted_kmax2": by_kmax[2]["trusted_rate"],
                "unverified_kmax1": by_kmax[1]["unverified_rate"],
                "mean_rounds_kmax1": by_kmax[1]["mean_recovery_rounds"],
                "tampered_accepted_with_byzantine": with_byz["tampered_accepted_rate"],
            }
        )

    return {
        "system": "TrustANN",
        "seed": seed,
        "mechanism": "TrustBind/AvailGuard/CoordShift logic from the public artifact "
        "(aalmamuncse/trustann); data, replicas and gamma=0.95 are ours",
        "setup": {
            "points": Cluster().n_points,
            "dim": Cluster().dim,
            "shards": world.n_shards,
            "primaries_per_shard": len(Cluster().primary_domains),
            "standbys_per_shard": len(Cluster().standby_domains),
            "k": K,
            "theta": THETA,
            "gamma": GAMMA,
            "artifact_gamma": ARTIFACT_GAMMA,
            "dmin": DMIN,
            "kmax": KMAX,
            "queries": world.n_queries,
        },
        "clean": clean,
        "clean_artifact_gamma": clean_artifact,
        "attacks": attacks,
        "gamma_sweep": gamma_series,
        "failure_sweep": failure_series,
        "coordshift": coordshift(seed),
        "ablation": measure_ablation(world),
        "runtime_s": round(time.perf_counter() - started, 3),
    }


# ---------------------------------------------------------------------------------------------
# Report
# ---------------------------------------------------------------------------------------------


def report(res: dict) -> str:
    s = res["setup"]
    c, ca = res["clean"], res["clean_artifact_gamma"]
    lines = [
        f"TrustANN reference program, seed {res['seed']} (logic from the public artifact)",
        f"{s['points']} x {s['dim']}-d points, {s['shards']} shards x {s['primaries_per_shard']} "
        f"IVF replicas (+{s['standbys_per_shard']} standby), k={s['k']}, theta={s['theta']}, "
        f"gamma={s['gamma']}, Kmax={s['kmax']}, {s['queries']} queries",
        "",
        "Clean queries (no attacker, no failures):",
        f"  trusted rate, gamma={s['gamma']}: {c['trusted_rate']:.3f}   "
        f"(artifact's gamma={s['artifact_gamma']}: {ca['trusted_rate']:.3f})",
        f"  recall@{s['k']}: first reply {c['recall_first_reply']:.3f}, "
        f"trusted answers {c['recall_trusted']:.3f}",
        "",
        "One Byzantine primary per query, replying first (tampered results accepted):",
        f"  {'attack':<10}{'first reply':>12}{'(random order)':>16}{'theta=1':>9}"
        f"{'TrustANN':>10}{'trusted':>9}",
    ]
    for mode, r in res["attacks"].items():
        lines.append(
            f"  {mode:<10}{r['first_reply_tampered_rate']:>12.1%}"
            f"{r['first_reply_tampered_rate_random_order']:>16.1%}{r['theta1_tampered_rate']:>9.1%}"
            f"{r['tampered_accepted_rate']:>10.1%}{r['trusted_rate']:>9.1%}"
        )
    lines += [
        "",
        "Gamma trade-off, poisoning (minority = 2 honest + 1 Byzantine reply, pair = 1 + 1):",
    ]
    for g in res["gamma_sweep"]:
        lines.append(
            f"  gamma {g['gamma']:.2f}: clean trusted {g['clean_trusted_rate']:6.1%}, "
            f"tampered accepted: minority {g['minority_tampered_accepted']:5.1%}, "
            f"pair {g['pair_tampered_accepted']:6.1%}"
        )
    lines += ["", "Crashed primaries (trusted rate by Kmax; last column adds a poisoning replica):"]
    for f in res["failure_sweep"]:
        lines.append(
            f"  {f['crashed_pct']:>2}% ({f['crashed']} of 9): Kmax0 {f['trusted_kmax0']:6.1%}  "
            f"Kmax1 {f['trusted_kmax1']:6.1%}  Kmax2 {f['trusted_kmax2']:6.1%}  "
            f"rounds {f['mean_rounds_kmax1']:.2f}  "
            f"tampered {f['tampered_accepted_with_byzantine']:.1%}"
        )
    lines += ["", "CoordShift, p=0.1 random adversaries (domain coverage, adversary in quorum):"]
    for row in res["coordshift"]:
        if row["p"] == 0.1 and not row["clustered"]:
            lines.append(
                f"  k={row['k']:>2} {row['sampling']:<16} coverage {row['domain_coverage']:5.2f}"
                f"  adversary {row['adversary_in_quorum']:.1%}"
            )
    lines += ["", "Pair-score ablation (mean over queries; honest vs honest / vs attacked):"]
    for row in res["ablation"]:
        attacked = "  ".join(f"{m} {row[m]:.3f}" for m in ATTACKS)
        lines.append(f"  {row['measure']:<38} honest {row['honest']:.3f}  {attacked}")
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
