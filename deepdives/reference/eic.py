"""EIC reference: a shared, distributed prefix KV cache behind many inference instances.

EIC (Elastic Instant Cache) is Volcano Engine's distributed KV cache service. Its SGLang
integration is public (``python/sglang/srt/mem_cache/storage/eic/eic_storage.py`` and the
HiCache design), so the cache mechanics modelled here follow that source: page-granular prefix
matching, chained page hashes, namespaced storage keys, and an existence check that counts only
the *consecutive* pages present from the start of the query (K and V stored as separate keys in
the zero-copy MHA layout, hence a count halved). The cluster, workload and cost model around it
are ours, on synthetic data.

What is modelled:

* N inference instances, each with a private local prefix cache (HBM + host DRAM, i.e. HiCache
  L1 + L2) of a fixed number of pages, evicted LRU deepest-page-first as a radix tree would.
* Optionally one EIC pool shared by every instance (HiCache L3), written through after every
  request and consulted for whatever the local match did not cover.
* Multi-turn chat sessions that share a few system prompts. A request carries the whole
  conversation so far; a router that is *not* session-sticky (uniform random) picks an
  instance, with sticky routing as a reference.
* Per request: pages served locally, pages served from EIC, tokens recomputed, and a TTFT model
  (prefill per computed token, plus transfer per reused token; local faster than EIC, EIC far
  faster than recomputing). The cost constants are our assumptions, not vendor figures.

Run ``python -m deepdives.reference.eic --seed 0`` from the project root.
"""

from __future__ import annotations

import argparse
import hashlib
import time
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, replace
from fractions import Fraction
from typing import Literal

import numpy as np

Routing = Literal["random", "sticky"]

# --------------------------------------------------------------------------------------------
# Parameters
# --------------------------------------------------------------------------------------------

EXIST_BATCH = 1024  # keys per mexist call, as in eic_storage.py


@dataclass(frozen=True)
class WorkloadConfig:
    """Multi-turn chat sessions; token counts are drawn uniformly from the given ranges."""

    n_sessions: int = 48
    turns: int = 6
    n_system_prompts: int = 4  # system prompts shared across sessions
    system_tokens: int = 1024
    user_tokens: tuple[int, int] = (512, 1536)
    reply_tokens: tuple[int, int] = (256, 768)
    page_tokens: int = 64
    vocab: int = 50_000


@dataclass(frozen=True)
class ClusterConfig:
    n_instances: int = 8
    local_pages: int | None = 1024  # per instance (64K tokens at 64 tokens/page); None = unbounded
    eic_pages: int | None = 200_000  # the shared pool; 0 disables EIC, None = unbounded
    routing: Routing = "random"
    model: str = "llama-70b"
    tp_rank: int = 0
    tp_size: int = 1
    layout: str = "page_first"  # page_first enables zero-copy: K and V become separate keys


@dataclass(frozen=True)
class CostModel:
    """Llama-70B-like KV size; prefill and transfer rates are our round assumptions."""

    kv_bytes_per_token: int = 80 * 8 * 128 * 2 * 2  # layers x KV heads x dim x (K, V) x bf16
    prefill_tokens_per_s: float = 4000.0  # one instance, long prompts
    local_bytes_per_s: float = 20e9  # host DRAM -> GPU
    eic_bytes_per_s: float = 8e9  # RDMA from the shared pool

    def ttft_s(self, computed: int, local: int, remote: int) -> float:
        return (
            computed / self.prefill_tokens_per_s
            + local * self.kv_bytes_per_token / self.local_bytes_per_s
            + remote * self.kv_bytes_per_token / self.eic_bytes_per_s
        )


INSTANCE_SWEEP = (1, 2, 4, 8, 16)
LOCAL_SWEEP = (256, 512, 1024, 2048, 4096)

# --------------------------------------------------------------------------------------------
# Keys and the existence check (after eic_storage.py)
# --------------------------------------------------------------------------------------------


def page_hashes(tokens: np.ndarray, page_tokens: int, prior: str = "") -> list[str]:
    """Chained page hashes: h_i = H(h_{i-1}, tokens of page i); a partial last page is dropped.

    A page's key therefore names its whole prefix, so equal keys mean equal prefixes.
    """
    toks = np.asarray(tokens, np.int64)
    out = []
    for i in range(len(toks) // page_tokens):
        page = toks[i * page_tokens : (i + 1) * page_tokens]
        prior = hashlib.sha256(prior.encode() + page.tobytes()).hexdigest()
        out.append(prior)
    return out


def eic_prefix(
    model: str, tp_rank: int = 0, tp_size: int = 1, layout: str = "page_first", mla: bool = False
) -> str:
    """Key namespace: MHA keys carry the TP rank and size, MLA keys (replicated KV) do not."""
    if mla:
        return f"{model}_mla_att_{layout}@sglang"
    return f"{model}_mha_attn_{layout}_{tp_rank}_{tp_size}_@sglang"


def eic_keys(hashes: Iterable[str], prefix: str) -> list[str]:
    return [f"{prefix}_{h}" for h in hashes]


def zero_copy_keys(keys: Iterable[str]) -> list[str]:
    """Zero-copy MHA stores K and V of a page under two keys."""
    return [f"{k}_{part}" for k in keys for part in ("k", "v")]


def batch_exists(store: EICStore, keys: Sequence[str], zero_copy_mha: bool) -> int:
    """Pages present from the start of ``keys``, stopping at the first miss (prefix semantics).

    Mirrors ``EICStorage.batch_exists``: existence is asked in batches of 1024 keys, the
    consecutive successes are counted, and with zero-copy MHA the count is halved.
    """
    physical = zero_copy_keys(keys) if zero_copy_mha else list(keys)
    mask: list[bool] = []
    for i in range(0, len(physical), EXIST_BATCH):
        mask.extend(store.mexist(physical[i : i + EXIST_BATCH]))
    run = 0
    for hit in mask:
        if not hit:
            break
        run += 1
    return run // 2 if zero_copy_mha else run


# --------------------------------------------------------------------------------------------
# Caches
# --------------------------------------------------------------------------------------------


class LRUPages:
    """A page store with LRU eviction; ``None`` capacity means unbounded."""

    def __init__(self, capacity: int | None) -> None:
        self.capacity = capacity
        self.pages: OrderedDict[str, None] = OrderedDict()

    def __contains__(self, key: str) -> bool:
        return key in self.pages

    def __len__(self) -> int:
        return len(self.pages)

    def put(self, keys: Sequence[str]) -> None:
        """Insert or refresh a prefix's pages, deepest first, so the shallow pages end up most
        recent and eviction removes leaves before the prefixes they hang from (radix-tree-like).
        """
        for key in reversed(keys):
            self.pages[key] = None
            self.pages.move_to_end(key)
        if self.capacity is not None:
            while len(self.pages) > self.capacity:
                self.pages.popitem(last=False)

    def prefix_match(self, keys: Sequence[str]) -> int:
        n = 0
        for key in keys:
            if key not in self.pages:
                break
            n += 1
        return n


class EICStore(LRUPages):
    """The shared pool, addressed by namespaced keys; ``mexist`` answers key by key."""

    def mexist(self, keys: Sequence[str]) -> list[bool]:
        return [k in self.pages for k in keys]


# --------------------------------------------------------------------------------------------
# Workload
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Request:
    session: int
    turn: int  # 1-based
    prompt_tokens: int
    history_tokens: int  # tokens before this turn's new user message
    prompt_pages: tuple[str, ...]  # chained hashes of the prompt's full pages
    done_pages: tuple[str, ...]  # ... of prompt + reply, cached once the request finishes


def make_workload(cfg: WorkloadConfig, rng: np.random.Generator) -> list[Request]:
    """Sessions' turns interleaved at random, each session's turns in order."""
    systems = [rng.integers(0, cfg.vocab, cfg.system_tokens) for _ in range(cfg.n_system_prompts)]
    per_session: list[list[Request]] = []
    for s in range(cfg.n_sessions):
        parts = [systems[int(rng.integers(cfg.n_system_prompts))]]
        bounds = []  # (history end, prompt end, end after reply) per turn
        length = cfg.system_tokens
        for _ in range(cfg.turns):
            user = rng.integers(0, cfg.vocab, int(rng.integers(*cfg.user_tokens, endpoint=True)))
            reply = rng.integers(0, cfg.vocab, int(rng.integers(*cfg.reply_tokens, endpoint=True)))
            parts += [user, reply]
            bounds.append((length, length + user.size, length + user.size + reply.size))
            length += user.size + reply.size
        hashes = page_hashes(np.concatenate(parts), cfg.page_tokens)
        p = cfg.page_tokens
        per_session.append(
            [
                Request(s, n + 1, pe, he, tuple(hashes[: pe // p]), tuple(hashes[: de // p]))
                for n, (he, pe, de) in enumerate(bounds)
            ]
        )
    order = rng.permutation(np.repeat(np.arange(cfg.n_sessions), cfg.turns))
    nxt = [0] * cfg.n_sessions
    requests = []
    for s in order.tolist():
        requests.append(per_session[s][nxt[s]])
        nxt[s] += 1
    return requests


def history_fraction(turn: int, turn_tokens: int = 8192) -> Fraction:
    """Share of turn ``turn``'s prefill that is history when nothing is cached and every turn
    adds ``turn_tokens``: (n - 1) / n, independent of the turn length."""
    if turn < 1:
        raise ValueError("turns are numbered from 1")
    return Fraction((turn - 1) * turn_tokens, turn * turn_tokens)


# --------------------------------------------------------------------------------------------
# Cluster simulation
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RequestStats:
    turn: int
    prompt: int
    history: int
    local: int  # tokens served from the instance's own cache
    remote: int  # tokens served from EIC
    computed: int
    recomputed_history: int
    ttft_s: float


def simulate(
    requests: Sequence[Request],
    cluster: ClusterConfig,
    page_tokens: int,
    cost: CostModel,
    rng: np.random.Generator,
    *,
    use_cache: bool = True,
) -> list[RequestStats]:
    """Serve the requests one after another; every instance and the pool start empty."""
    local = [LRUPages(cluster.local_pages) for _ in range(cluster.n_instances)]
    prefix = eic_prefix(cluster.model, cluster.tp_rank, cluster.tp_size, cluster.layout)
    zero_copy = cluster.layout == "page_first"
    # The pool counts keys; with zero-copy MHA each page is two of them (K and V).
    keys_per_page = 2 if zero_copy else 1
    pool = None if cluster.eic_pages is None else keys_per_page * cluster.eic_pages
    eic = EICStore(pool) if cluster.eic_pages != 0 else None
    # One draw per request whatever the policy, so every policy sees the same random routes.
    draws = rng.integers(0, cluster.n_instances, len(requests))
    out = []
    for req, draw in zip(requests, draws.tolist(), strict=True):
        inst = req.session % cluster.n_instances if cluster.routing == "sticky" else draw
        cache = local[inst]
        hit_local = cache.prefix_match(req.prompt_pages) if use_cache else 0
        hit_remote = 0
        if use_cache and eic is not None:
            rest = eic_keys(req.prompt_pages[hit_local:], prefix)
            hit_remote = batch_exists(eic, rest, zero_copy)
            if hit_remote:  # a read refreshes the pages in the pool's LRU
                eic.put(zero_copy_keys(rest[:hit_remote]) if zero_copy else rest[:hit_remote])
        served_local, served_remote = hit_local * page_tokens, hit_remote * page_tokens
        computed = req.prompt_tokens - served_local - served_remote
        out.append(
            RequestStats(
                req.turn,
                req.prompt_tokens,
                req.history_tokens,
                served_local,
                served_remote,
                computed,
                max(0, req.history_tokens - served_local - served_remote),
                cost.ttft_s(computed, served_local, served_remote),
            )
        )
        if use_cache:
            # The finished sequence (prompt and reply) lands in the instance's cache, and with
            # write-through in the shared pool too.
            cache.put(req.done_pages)
            if eic is not None:
                keys = eic_keys(req.done_pages, prefix)
                eic.put(zero_copy_keys(keys) if zero_copy else keys)
    return out


def summarise(stats: Sequence[RequestStats]) -> dict[str, float]:
    prompt = sum(s.prompt for s in stats)
    computed = sum(s.computed for s in stats)
    history = sum(s.history for s in stats)
    recomputed = sum(s.recomputed_history for s in stats)
    ttft = np.array([s.ttft_s for s in stats])
    return {
        "prompt_tokens": prompt,
        "computed_tokens": computed,
        "local_tokens": sum(s.local for s in stats),
        "eic_tokens": sum(s.remote for s in stats),
        "hit_rate": 1.0 - computed / prompt,
        "recomputed_history_tokens": recomputed,
        "recomputed_history_share_of_computed": recomputed / computed,
        "history_recomputed_fraction": recomputed / history,
        "ttft_mean_s": float(ttft.mean()),
        "ttft_p90_s": float(np.quantile(ttft, 0.9)),
    }


def by_turn(stats: Sequence[RequestStats], turns: int) -> list[float]:
    """Recomputed history as a share of the tokens computed, per turn number."""
    out = []
    for n in range(1, turns + 1):
        rows = [s for s in stats if s.turn == n]
        computed = sum(s.computed for s in rows)
        out.append(sum(s.recomputed_history for s in rows) / computed if computed else 0.0)
    return out


# --------------------------------------------------------------------------------------------
# Measurements
# --------------------------------------------------------------------------------------------

SCENARIOS: dict[str, tuple[dict[str, object], bool]] = {
    "no_cache": ({}, False),
    "local_only": ({"eic_pages": 0}, True),
    "local_plus_eic": ({}, True),
    "local_only_sticky": ({"eic_pages": 0, "routing": "sticky"}, True),
}


def run(seed: int = 0) -> dict[str, object]:
    """Run every measurement; the result is plain JSON-serialisable data."""
    wl, cluster, cost = WorkloadConfig(), ClusterConfig(), CostModel()
    requests = make_workload(wl, np.random.default_rng(seed))

    def serve(cfg: ClusterConfig, use_cache: bool = True) -> list[RequestStats]:
        # The router's rng depends on the seed only, so scenarios share their random routes.
        rng = np.random.default_rng(seed + 1)
        return simulate(requests, cfg, wl.page_tokens, cost, rng, use_cache=use_cache)

    scenario_stats = {
        name: serve(replace(cluster, **kw), use_cache)
        for name, (kw, use_cache) in SCENARIOS.items()
    }
    scenarios = {name: summarise(st) for name, st in scenario_stats.items()}
    local_only, with_eic = scenarios["local_only"], scenarios["local_plus_eic"]

    instance_sweep: dict[str, list[float]] = {"instances": list(INSTANCE_SWEEP)}
    for name in ("local_only", "local_plus_eic", "local_only_sticky"):
        kw, _ = SCENARIOS[name]
        rows = [summarise(serve(replace(cluster, n_instances=n, **kw))) for n in INSTANCE_SWEEP]
        instance_sweep[f"{name}_history_recomputed"] = [
            r["history_recomputed_fraction"] for r in rows
        ]
        instance_sweep[f"{name}_hit_rate"] = [r["hit_rate"] for r in rows]

    local_sweep: dict[str, list[float]] = {"local_pages": list(LOCAL_SWEEP)}
    for name in ("local_only", "local_plus_eic"):
        kw, _ = SCENARIOS[name]
        rows = [summarise(serve(replace(cluster, local_pages=c, **kw))) for c in LOCAL_SWEEP]
        local_sweep[f"{name}_hit_rate"] = [r["hit_rate"] for r in rows]
        local_sweep[f"{name}_ttft_mean_s"] = [r["ttft_mean_s"] for r in rows]

    # Sanity: one instance that never forgets leaves nothing for the shared pool to add.
    solo = summarise(serve(replace(cluster, n_instances=1, local_pages=None)))

    return {
        "system": "EIC",
        "mechanism": "cache mechanics sourced (SGLang EIC backend); cluster and costs ours",
        "seed": seed,
        "config": {"workload": asdict(wl), "cluster": asdict(cluster), "cost": asdict(cost)},
        "requests": len(requests),
        "history_formula": {
            "turn": list(range(1, 9)),
            "fraction": [float(history_fraction(n)) for n in range(1, 9)],
            "turn6": str(history_fraction(6)),
        },
        "scenarios": scenarios,
        "recomputed_history_cut_vs_local_only": 1.0
        - with_eic["recomputed_history_tokens"] / local_only["recomputed_history_tokens"],
        "computed_tokens_cut_vs_local_only": 1.0
        - with_eic["computed_tokens"] / local_only["computed_tokens"],
        "ttft_speedup_vs_local_only": local_only["ttft_mean_s"] / with_eic["ttft_mean_s"],
        "by_turn": {
            "turn": list(range(1, wl.turns + 1)),
            **{name: by_turn(scenario_stats[name], wl.turns) for name in SCENARIOS},
        },
        "instance_sweep": instance_sweep,
        "local_sweep": local_sweep,
        "solo_unbounded": {"eic_tokens": solo["eic_tokens"], "hit_rate": solo["hit_rate"]},
    }


def report(res: dict) -> str:
    """A short human-readable summary of ``run()``'s output."""
    cl = res["config"]["cluster"]
    hf = res["history_formula"]
    lines = [
        f"EIC reference (cache mechanics sourced; cluster and costs ours), seed {res['seed']}",
        f"no caching, equal turns: history share of prefill at turn 6 = {hf['turn6']} "
        f"= {100 * hf['fraction'][5]:.1f}%",
        f"{res['requests']} requests, {cl['n_instances']} instances, "
        f"{cl['local_pages']} local pages each, {cl['routing']} routing:",
        f"  {'scenario':18s} {'hit rate':>8s} {'computed':>9s} {'history recomputed':>19s} "
        f"{'TTFT mean':>9s}",
    ]
    for name, s in res["scenarios"].items():
        lines.append(
            f"  {name:18s} {100 * s['hit_rate']:7.1f}% {s['computed_tokens']:9d} "
            f"{100 * s['history_recomputed_fraction']:18.1f}% {s['ttft_mean_s']:8.3f}s"
        )
    lines.append(
        f"EIC vs local-only: {100 * res['recomputed_history_cut_vs_local_only']:.1f}% less "
        f"history recomputed, {100 * res['computed_tokens_cut_vs_local_only']:.1f}% fewer "
        f"tokens computed, TTFT {res['ttft_speedup_vs_local_only']:.2f}x faster"
    )
    bt = res["by_turn"]
    lines.append("recomputed history / computed, by turn (no cache / local only / +EIC):")
    lines.append(
        "  "
        + ", ".join(
            f"{t}: {100 * a:.0f}/{100 * b:.0f}/{100 * c:.0f}%"
            for t, a, b, c in zip(
                bt["turn"], bt["no_cache"], bt["local_only"], bt["local_plus_eic"], strict=True
            )
        )
    )
    sw = res["instance_sweep"]
    lines.append("history recomputed by instances (local only / +EIC / sticky local only):")
    for i, n in enumerate(sw["instances"]):
        lines.append(
            f"  {n:3d}: {100 * sw['local_only_history_recomputed'][i]:5.1f}% / "
            f"{100 * sw['local_plus_eic_history_recomputed'][i]:5.1f}% / "
            f"{100 * sw['local_only_sticky_history_recomputed'][i]:5.1f}%"
        )
    ls = res["local_sweep"]
    lines.append(
        "hit rate by local pages (local only / +EIC): "
        + ", ".join(
            f"{c}: {100 * a:.0f}/{100 * b:.0f}%"
            for c, a, b in zip(
                ls["local_pages"],
                ls["local_only_hit_rate"],
                ls["local_plus_eic_hit_rate"],
                strict=True,
            )
        )
    )
    solo = res["solo_unbounded"]
    lines.append(
        f"one instance, unbounded local cache: EIC serves {solo['eic_tokens']} tokens "
        f"(hit rate {100 * solo['hit_rate']:.1f}%)"
    )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n", 1)[0])
    parser.add_argument("--seed", type=int, default=0, help="seed for the synthetic workload")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    res = run(args.seed)
    print(report(res))
    print(f"(ran in {time.perf_counter() - start:.2f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
