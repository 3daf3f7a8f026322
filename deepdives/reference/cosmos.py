"""PayPal Cosmos-style LLM gateway: a reference program, partly sourced, partly "as described".

Sourced: PayPal's gateway is built on the Envoy proxy; slow decisions (authentication,
budgets, policy) that need external services run outside the proxy, while format translation
and token counting run inside it, so no streamed chunk waits on an external call. PayPal's
Cosmos.AI platform offers semantic caching. From the Envoy AI Gateway docs: one
OpenAI-compatible API translated per provider, provider fallback, and token-based limits that
reject a request (429) when the limit is already used up and count usage after the response.
Mechanism as described (ours, not PayPal's): every latency, size, threshold and the exact
ordering below, the circuit breaker, and the shape of both caches.

Four experiments on synthetic data:
1. Streaming path: per-chunk latency the gateway adds, off-path decisions (one admission call
   per request, in-proxy translation and counting) vs an inline design that calls the budget
   and policy service for every chunk; includes a window in which that service is 10x slower.
2. Budgets: post-charged token budgets with asynchronous usage reports; the overshoot is
   bounded by (unreported requests at admission + 1) x the largest request cost.
3. Fallback: the primary provider times out for two minutes; a priority chain with a circuit
   breaker keeps serving, billing each request once.
4. Caches: exact and semantic caches partitioned by tenant and model, semantic lookups only at
   low temperature; upstream tokens saved and false hits across similarity thresholds.

Run: python -m deepdives.reference.cosmos [--seed N]
"""

from __future__ import annotations

import argparse
import hashlib
import heapq
from collections import Counter, deque
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]

# Requests: heavy-tailed prompt and output lengths, capped as a gateway caps max_tokens.
PROMPT_MEDIAN, PROMPT_SIGMA, MAX_PROMPT_TOKENS = 400.0, 0.8, 4096
OUTPUT_MEDIAN, OUTPUT_SIGMA, MAX_OUTPUT_TOKENS = 200.0, 0.9, 2048
MAX_REQUEST_COST = MAX_PROMPT_TOKENS + MAX_OUTPUT_TOKENS  # tokens; bounds any one request


def draw_tokens(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    prompt = np.minimum(rng.lognormal(np.log(PROMPT_MEDIAN), PROMPT_SIGMA, n), MAX_PROMPT_TOKENS)
    output = np.minimum(rng.lognormal(np.log(OUTPUT_MEDIAN), OUTPUT_SIGMA, n), MAX_OUTPUT_TOKENS)
    return np.ceil(prompt).astype(np.int64), np.maximum(1, np.ceil(output)).astype(np.int64)


def pct(values: FloatArray, q: float) -> float:
    return round(float(np.percentile(values, q)), 4) if values.size else 0.0


# --- 1. streaming path ----------------------------------------------------------------------


@dataclass(frozen=True)
class StreamConfig:
    n_requests: int = 2000
    duration_s: float = 120.0
    tokens_per_chunk: int = 8
    provider_ttft_ms: float = 300.0
    chunk_gap_ms: float = 25.0  # mean gap between upstream chunks
    translate_ms: float = 0.02  # in-proxy re-encoding of one chunk
    count_ms_per_token: float = 0.0002  # in-proxy token counting
    call_median_ms: float = 3.0  # budget/policy/auth service round trip
    call_sigma: float = 0.6
    slow_window_s: tuple[float, float] = (40.0, 60.0)  # the service is slow here...
    slow_factor: float = 10.0  # ...by this much


def external_call_ms(rng: np.random.Generator, at_s: FloatArray, cfg: StreamConfig) -> FloatArray:
    """Latency of one call to the external decision service, issued at times `at_s`."""
    base = rng.lognormal(np.log(cfg.call_median_ms), cfg.call_sigma, at_s.size)
    lo, hi = cfg.slow_window_s
    return np.where((at_s >= lo) & (at_s < hi), base * cfg.slow_factor, base)


def forward_delays(arrivals_ms: FloatArray, service_ms: FloatArray) -> FloatArray:
    """Added latency of each chunk through a proxy that keeps chunk order.

    Chunk k leaves at done_k = max(arrival_k, done_{k-1}) + service_k, so a slow step on one
    chunk also delays every chunk queued behind it. Closed form via a running maximum.
    """
    served = np.cumsum(service_ms)
    start_slack = arrivals_ms - np.concatenate([[0.0], served[:-1]])
    done = np.maximum.accumulate(start_slack) + served
    return done - arrivals_ms


@dataclass
class StreamTrace:
    chunk_added_ms: list[FloatArray] = field(default_factory=list)
    chunk_at_s: list[FloatArray] = field(default_factory=list)
    ttft_added_ms: list[float] = field(default_factory=list)
    stream_added_ms: list[float] = field(default_factory=list)
    calls_on_stream_path: int = 0


def simulate_streaming(cfg: StreamConfig, rng: np.random.Generator) -> dict[str, object]:
    arrivals = np.sort(rng.uniform(0.0, cfg.duration_s, cfg.n_requests))
    _, output = draw_tokens(rng, cfg.n_requests)
    traces = {"off_path": StreamTrace(), "inline": StreamTrace()}
    for t0, out_tokens in zip(arrivals, output, strict=True):
        n_chunks = int(np.ceil(out_tokens / cfg.tokens_per_chunk))
        tokens = np.full(n_chunks, cfg.tokens_per_chunk, dtype=float)
        tokens[-1] = out_tokens - cfg.tokens_per_chunk * (n_chunks - 1)
        # Both designs make one admission decision (auth + budget + policy) before going
        # upstream; it delays the first byte, never a chunk of a stream already flowing.
        admission_ms = float(external_call_ms(rng, np.array([t0]), cfg)[0])
        upstream_start_s = t0 + admission_ms / 1000
        gaps = rng.exponential(cfg.chunk_gap_ms, n_chunks)
        gaps[0] = cfg.provider_ttft_ms
        chunk_ms = np.cumsum(gaps)
        chunk_at_s = upstream_start_s + chunk_ms / 1000
        local_ms = cfg.translate_ms + cfg.count_ms_per_token * tokens
        per_chunk_call = external_call_ms(rng, chunk_at_s, cfg)
        designs = {"off_path": local_ms, "inline": local_ms + per_chunk_call}
        for name, service in designs.items():
            added = forward_delays(chunk_ms, service)
            trace = traces[name]
            trace.chunk_added_ms.append(added)
            trace.chunk_at_s.append(chunk_at_s)
            trace.ttft_added_ms.append(admission_ms + float(added[0]))
            trace.stream_added_ms.append(admission_ms + float(added[-1]))
        traces["inline"].calls_on_stream_path += n_chunks
    return {name: _stream_summary(trace, cfg) for name, trace in traces.items()} | {
        "series": _stream_series(traces, cfg)
    }


def _stream_summary(trace: StreamTrace, cfg: StreamConfig) -> dict[str, object]:
    added = np.concatenate(trace.chunk_added_ms)
    at = np.concatenate(trace.chunk_at_s)
    lo, hi = cfg.slow_window_s
    in_slow = (at >= lo) & (at < hi)
    normal, slow = added[~in_slow], added[in_slow]
    ttft, stream = np.array(trace.ttft_added_ms), np.array(trace.stream_added_ms)
    return {
        "chunks": int(added.size),
        "calls_on_stream_path": trace.calls_on_stream_path,
        "chunk_added_ms_p50": pct(normal, 50),
        "chunk_added_ms_p99": pct(normal, 99),
        "chunk_added_ms_p99_slow_window": pct(slow, 99),
        "chunk_added_ms_max": round(float(added.max()), 4),
        "chunks_delayed_over_1ms": int(np.count_nonzero(added > 1.0)),
        "ttft_added_ms_p50": pct(ttft, 50),
        "ttft_added_ms_p99": pct(ttft, 99),
        "stream_added_ms_p50": pct(stream, 50),
        "stream_added_ms_p99": pct(stream, 99),
    }


def _stream_series(traces: dict[str, StreamTrace], cfg: StreamConfig) -> dict[str, object]:
    """Per-5-second p99 of per-chunk added latency, for plotting the slow window."""
    edges = np.arange(0.0, cfg.duration_s + 5.0, 5.0)
    series: dict[str, object] = {"bucket_start_s": edges[:-1].tolist()}
    for name, trace in traces.items():
        added = np.concatenate(trace.chunk_added_ms)
        idx = np.digitize(np.concatenate(trace.chunk_at_s), edges) - 1
        series[f"{name}_chunk_p99_ms"] = [pct(added[idx == b], 99) for b in range(len(edges) - 1)]
    return series


# --- 2. budgets -----------------------------------------------------------------------------


@dataclass
class Ledger:
    """Authoritative token budget of one tenant, held by the external budget service."""

    limit: int
    used: int = 0

    def admit(self) -> bool:
        # Envoy AI Gateway semantics: reject only if the limit is already used up; the cost of
        # the request being admitted is unknown until its response has been counted.
        return self.used < self.limit

    def charge(self, tokens: int) -> None:
        self.used += tokens


@dataclass(frozen=True)
class BudgetConfig:
    n_tenants: int = 20
    budget_tokens: int = 100_000
    concurrency: int = 4  # requests a tenant keeps in flight
    report_delay_s: float = 0.5  # usage counted in-proxy reaches the ledger this much later
    decode_tokens_per_s: float = 50.0
    ttft_s: float = 0.3
    think_s: float = 0.5  # mean pause before a worker's next request


@dataclass(frozen=True)
class BudgetOutcome:
    max_overshoot: int  # worst tenant, tokens above its budget
    max_unreported_at_admission: int  # K: other requests not yet on the ledger
    max_request_cost: int
    bound: int  # (K + 1) * MAX_REQUEST_COST
    admissions: int
    rejections: int


def simulate_budget(cfg: BudgetConfig, rng: np.random.Generator) -> BudgetOutcome:
    ledgers = [Ledger(cfg.budget_tokens) for _ in range(cfg.n_tenants)]
    admitted_cost = [0] * cfg.n_tenants
    unreported = [0] * cfg.n_tenants
    events: list[tuple[float, int, int, str, int, int]] = []  # time, order, seq, kind, tenant, cost
    seq = 0

    def push(time: float, kind: str, tenant: int, cost: int = 0) -> None:
        nonlocal seq
        # Reports sort before issues at equal times: a finished request is never hidden.
        heapq.heappush(events, (time, 0 if kind == "report" else 1, seq, kind, tenant, cost))
        seq += 1

    for tenant in range(cfg.n_tenants):
        for _ in range(cfg.concurrency):
            push(float(rng.exponential(cfg.think_s)), "issue", tenant)
    k_max = max_cost = admissions = rejections = 0
    while events:
        now, _, _, kind, tenant, cost = heapq.heappop(events)
        ledger = ledgers[tenant]
        if kind == "report":
            ledger.charge(cost)
            unreported[tenant] -= 1
            continue
        if not ledger.admit():
            rejections += 1  # 429: this worker stops for the rest of the window
            continue
        admissions += 1
        k_max = max(k_max, unreported[tenant])
        prompt, output = draw_tokens(rng, 1)
        cost = int(prompt[0] + output[0])
        max_cost = max(max_cost, cost)
        admitted_cost[tenant] += cost
        unreported[tenant] += 1
        finish = now + cfg.ttft_s + int(output[0]) / cfg.decode_tokens_per_s
        push(finish + cfg.report_delay_s, "report", tenant, cost)
        push(finish + float(rng.exponential(cfg.think_s)), "issue", tenant)
    overshoot = max(max(0, c - cfg.budget_tokens) for c in admitted_cost)
    return BudgetOutcome(
        max_overshoot=overshoot,
        max_unreported_at_admission=k_max,
        max_request_cost=max_cost,
        bound=(k_max + 1) * MAX_REQUEST_COST,
        admissions=admissions,
        rejections=rejections,
    )


BUDGET_SCENARIOS: dict[str, BudgetConfig] = {
    "sequential": BudgetConfig(concurrency=1, report_delay_s=0.0),
    "concurrent-4": BudgetConfig(concurrency=4, report_delay_s=0.0),
    "concurrent-4-async-report": BudgetConfig(concurrency=4, report_delay_s=0.5),
    "concurrent-16-async-report": BudgetConfig(concurrency=16, report_delay_s=0.5),
}


def budget_experiment(rng: np.random.Generator) -> dict[str, object]:
    rows = {}
    for name, cfg in BUDGET_SCENARIOS.items():
        out = simulate_budget(cfg, rng)
        rows[name] = {
            "concurrency": cfg.concurrency,
            "report_delay_s": cfg.report_delay_s,
            "budget_tokens": cfg.budget_tokens,
            "max_overshoot_tokens": out.max_overshoot,
            "max_overshoot_pct_of_budget": round(100 * out.max_overshoot / cfg.budget_tokens, 2),
            "max_unreported_at_admission": out.max_unreported_at_admission,
            "bound_tokens": out.bound,
            "within_bound": out.max_overshoot <= out.bound,
            "max_request_cost": out.max_request_cost,
            "admissions": out.admissions,
            "rejections_429": out.rejections,
        }
    return rows


# --- 3. fallback across providers -----------------------------------------------------------


@dataclass
class CircuitBreaker:
    """Skip a backend after F consecutive failures; let one probe through after a cooldown."""

    failure_threshold: int = 5
    cooldown_s: float = 10.0
    state: str = "closed"  # closed | open | half_open
    failures: int = 0
    opened_at: float = 0.0

    def allow(self, now: float) -> bool:
        if self.state == "closed":
            return True
        if self.state == "open" and now >= self.opened_at + self.cooldown_s:
            self.state = "half_open"  # this caller is the single probe
            return True
        return False

    def record_success(self) -> None:
        self.state, self.failures = "closed", 0

    def record_failure(self, now: float) -> None:
        self.failures += 1
        if self.state == "half_open" or self.failures >= self.failure_threshold:
            self.state, self.opened_at = "open", now


@dataclass(frozen=True)
class Provider:
    name: str
    tokens_per_minute: float  # provider-side rate limit
    outage: tuple[float, float] | None = None  # requests sent inside time out


@dataclass(frozen=True)
class FallbackConfig:
    duration_s: float = 600.0
    rate_per_s: float = 20.0
    timeout_s: float = 1.0  # an unresponsive provider costs this much per attempt
    reject_ms: float = 20.0  # a 429 from a provider comes back quickly
    breaker_failures: int = 5
    breaker_cooldown_s: float = 10.0


PROVIDERS: tuple[Provider, ...] = (
    Provider("provider-a", float("inf"), outage=(200.0, 320.0)),
    Provider("provider-b", 600_000.0),  # takes about 60% of the load, then answers 429
    Provider("provider-c", float("inf")),
)


@dataclass
class ProviderState:
    provider: Provider
    breaker: CircuitBreaker
    window: deque[tuple[float, int]] = field(default_factory=deque)
    window_tokens: int = 0

    def over_limit(self, now: float, tokens: int) -> bool:
        while self.window and self.window[0][0] <= now - 60.0:
            self.window_tokens -= self.window.popleft()[1]
        return self.window_tokens + tokens > self.provider.tokens_per_minute

    def record_tokens(self, now: float, tokens: int) -> None:
        self.window.append((now, tokens))
        self.window_tokens += tokens

    def down(self, now: float) -> bool:
        out = self.provider.outage
        return out is not None and out[0] <= now < out[1]


def simulate_fallback(
    cfg: FallbackConfig,
    providers: Sequence[Provider],
    rng: np.random.Generator,
    *,
    fallback: bool = True,
    breaker: bool = True,
) -> dict[str, object]:
    n = int(rng.poisson(cfg.rate_per_s * cfg.duration_s))
    arrivals = np.sort(rng.uniform(0.0, cfg.duration_s, n))
    prompt, output = draw_tokens(rng, n)
    chain = list(providers) if fallback else list(providers[:1])
    states = [
        ProviderState(p, CircuitBreaker(cfg.breaker_failures, cfg.breaker_cooldown_s))
        for p in chain
    ]
    charges: Counter[int] = Counter()  # request index -> tokens billed
    served_by: Counter[str] = Counter()
    served = np.zeros(n, dtype=bool)
    finished_at = arrivals.copy()
    paid_timeout = np.zeros(n, dtype=bool)
    attempts_on_down = 0
    # Events in time order: (time, kind, seq, request, provider). A failure becomes known to
    # the breaker only when its timeout fires (kind 0 sorts it before attempts at that time).
    events = [(float(t), 1, i, i, 0) for i, t in enumerate(arrivals)]
    heapq.heapify(events)
    seq = n
    while events:
        now, kind, _, i, j = heapq.heappop(events)
        if kind == 0:
            states[j].breaker.record_failure(now)
            continue
        tokens = int(prompt[i] + output[i])
        while j < len(states) and breaker and not states[j].breaker.allow(now):
            j += 1  # open breaker: skip without waiting
        if j == len(states):
            finished_at[i] = now  # every backend failed or was skipped: the client gets a 5xx
            continue
        state = states[j]
        if state.down(now):
            attempts_on_down += 1
            paid_timeout[i] = True
            heapq.heappush(events, (now + cfg.timeout_s, 0, seq, i, j))
            heapq.heappush(events, (now + cfg.timeout_s, 1, seq + 1, i, j + 1))
            seq += 2
        elif state.over_limit(now, tokens):
            # A 429 means overloaded, not broken: the provider answered, so it also settles
            # a half-open probe instead of leaving the breaker stuck.
            state.breaker.record_success()
            heapq.heappush(events, (now + cfg.reject_ms / 1000, 1, seq, i, j + 1))
            seq += 1
        else:
            state.breaker.record_success()
            state.record_tokens(now, tokens)
            charges[i] += tokens  # usage of the one successful attempt, counted once
            served_by[state.provider.name] += 1
            served[i] = True
            finished_at[i] = now
    penalty_ms = (finished_at - arrivals) * 1000  # time lost to failed or rejected attempts
    lo, hi = providers[0].outage or (0.0, 0.0)
    in_outage = (arrivals >= lo) & (arrivals < hi)
    expected = prompt + output
    return {
        "requests": n,
        "availability": round(float(served.mean()), 4),
        "availability_in_outage": round(float(served[in_outage].mean()), 4),
        "requests_in_outage": int(in_outage.sum()),
        "attempts_on_down_provider": attempts_on_down,
        "requests_paying_a_timeout": int(paid_timeout.sum()),
        "failover_penalty_ms_mean_outage": _mean_or_none(penalty_ms[in_outage & served]),
        "failover_penalty_ms_p99_outage": pct(penalty_ms[in_outage & served], 99)
        if served[in_outage].any()
        else None,
        "double_billed": sum(1 for i, billed in charges.items() if billed != expected[i]),
        "billed_unserved": sum(1 for i in charges if not served[i]),
        "served_by": dict(served_by),
    }


def _mean_or_none(values: FloatArray) -> float | None:
    return round(float(values.mean()), 2) if values.size else None


FALLBACK_VARIANTS: dict[str, dict[str, bool]] = {
    "primary-only": {"fallback": False, "breaker": False},
    "fallback-no-breaker": {"fallback": True, "breaker": False},
    "fallback+breaker": {"fallback": True, "breaker": True},
}


def fallback_experiment(seed: int) -> dict[str, object]:
    # The same seed for every variant: all three see the very same requests.
    return {
        name: simulate_fallback(FallbackConfig(), PROVIDERS, np.random.default_rng(seed), **flags)
        for name, flags in FALLBACK_VARIANTS.items()
    }


# --- 4. exact and semantic caches -----------------------------------------------------------


def normalize_prompt(text: str) -> str:
    return " ".join(text.lower().split())


@dataclass(frozen=True)
class CacheEntry:
    tenant: str
    model: str
    answer: int  # stands in for the cached response (the prompt cluster it answered)


@dataclass
class ExactCache:
    max_temperature: float = 0.3
    _entries: dict[str, CacheEntry] = field(default_factory=dict)

    @staticmethod
    def key(tenant: str, model: str, prompt: str, temperature: float) -> str:
        # Tenant and model are part of the key, so one tenant can never read another's entry.
        raw = f"{tenant}\x1f{model}\x1f{temperature:.3f}\x1f{normalize_prompt(prompt)}"
        return hashlib.sha256(raw.encode()).hexdigest()

    def get(self, tenant: str, model: str, prompt: str, temperature: float) -> CacheEntry | None:
        if temperature > self.max_temperature:
            return None
        return self._entries.get(self.key(tenant, model, prompt, temperature))

    def put(self, tenant: str, model: str, prompt: str, temperature: float, answer: int) -> None:
        if temperature <= self.max_temperature:
            key = self.key(tenant, model, prompt, temperature)
            self._entries[key] = CacheEntry(tenant, model, answer)


@dataclass
class _Partition:
    vectors: FloatArray
    entries: list[CacheEntry]

    def add(self, vector: FloatArray, entry: CacheEntry) -> None:
        n = len(self.entries)
        if n == len(self.vectors):  # grow geometrically: amortised O(1) inserts
            self.vectors = np.vstack([self.vectors, np.zeros_like(self.vectors)])
        self.vectors[n] = vector
        self.entries.append(entry)


@dataclass
class SemanticCache:
    """Nearest cached prompt by cosine similarity, searched only inside (tenant, model)."""

    dim: int
    threshold: float = 0.95
    max_temperature: float = 0.3  # sampled answers are not meant to be replayed
    _parts: dict[tuple[str, str], _Partition] = field(default_factory=dict)

    def lookup(
        self, tenant: str, model: str, vector: FloatArray, temperature: float
    ) -> tuple[CacheEntry, float] | None:
        part = self._parts.get((tenant, model))
        if temperature > self.max_temperature or part is None or not part.entries:
            return None
        sims = part.vectors[: len(part.entries)] @ vector
        best = int(np.argmax(sims))
        return (part.entries[best], float(sims[best])) if sims[best] >= self.threshold else None

    def insert(self, tenant: str, model: str, vector: FloatArray, answer: int) -> None:
        part = self._parts.setdefault((tenant, model), _Partition(np.zeros((64, self.dim)), []))
        part.add(vector, CacheEntry(tenant, model, answer))


@dataclass(frozen=True)
class CacheConfig:
    n_requests: int = 4000
    tenants: tuple[str, ...] = ("risk", "support", "dev-tools", "marketing")
    models: tuple[str, ...] = ("model-x", "model-y")
    n_families: int = 150  # topics; siblings in a family look alike but need different answers
    siblings: int = 3
    sibling_spread: tuple[float, float] = (0.15, 0.6)
    paraphrases: int = 4  # wordings per prompt; a repeated wording is an exact duplicate
    paraphrase_noise: float = 0.15
    zipf_exponent: float = 1.1
    low_temperature_share: float = 0.7
    dim: int = 64
    thresholds: tuple[float, ...] = (0.85, 0.90, 0.95, 0.98)


def unit(rows: FloatArray) -> FloatArray:
    return rows / np.linalg.norm(rows, axis=-1, keepdims=True)


def prompt_embeddings(cfg: CacheConfig, rng: np.random.Generator) -> FloatArray:
    """(clusters, paraphrases, dim) unit vectors: cluster centre + noise per wording.

    Sibling clusters share a family direction, so they look alike but need different answers:
    they are where a low threshold produces false hits.
    """
    family = unit(rng.normal(size=(cfg.n_families, cfg.dim)))
    spread = rng.uniform(*cfg.sibling_spread, size=(cfg.n_families, 1, 1))
    offsets = rng.normal(size=(cfg.n_families, cfg.siblings, cfg.dim)) / np.sqrt(cfg.dim)
    centres = unit(family[:, None, :] + spread * offsets).reshape(-1, cfg.dim)
    noise = rng.normal(size=(centres.shape[0], cfg.paraphrases, cfg.dim)) / np.sqrt(cfg.dim)
    return unit(centres[:, None, :] + cfg.paraphrase_noise * noise)


def simulate_cache(
    cfg: CacheConfig, threshold: float, rng: np.random.Generator
) -> dict[str, object]:
    emb = prompt_embeddings(cfg, rng)
    n_clusters = emb.shape[0]
    popularity = 1.0 / np.arange(1, n_clusters + 1) ** cfg.zipf_exponent
    cluster = rng.choice(n_clusters, cfg.n_requests, p=popularity / popularity.sum())
    variant = rng.integers(0, cfg.paraphrases, cfg.n_requests)
    tenant = rng.integers(0, len(cfg.tenants), cfg.n_requests)
    model = rng.integers(0, len(cfg.models), cfg.n_requests)
    temperature = np.where(rng.random(cfg.n_requests) < cfg.low_temperature_share, 0.0, 0.7)
    prompt_tokens, output_tokens = draw_tokens(rng, cfg.n_requests)
    tokens = prompt_tokens + output_tokens
    exact, semantic = ExactCache(), SemanticCache(cfg.dim, threshold)
    seen: set[tuple[int, int, int]] = set()
    stats: Counter[str] = Counter()
    saved = saved_correct = ideal = 0
    for i in range(cfg.n_requests):
        ten, mod = cfg.tenants[tenant[i]], cfg.models[model[i]]
        temp, c, vec = float(temperature[i]), int(cluster[i]), emb[cluster[i], variant[i]]
        # Wording varies in case and spacing; normalisation makes these exact duplicates.
        text = f"Prompt {c} wording {variant[i]}"
        text = text.upper() if i % 2 else text
        text = text.replace(" ", "  ") if i % 3 else text
        cacheable = temp <= semantic.max_temperature
        if cacheable:
            prompt_key = (int(tenant[i]), int(model[i]), c)
            if prompt_key in seen:
                ideal += int(tokens[i])  # a perfect cache would have answered this one
            seen.add(prompt_key)
        hit = exact.get(ten, mod, text, temp)
        kind = "exact"
        if hit is None:
            found = semantic.lookup(ten, mod, vec, temp)
            hit, kind = (found[0], "semantic") if found else (None, "")
        if hit is not None:
            stats[f"{kind}_hits"] += 1
            stats["false_hits"] += hit.answer != c
            stats["cross_partition_hits"] += (hit.tenant, hit.model) != (ten, mod)
            stats["high_temperature_served"] += temp > semantic.max_temperature
            saved += int(tokens[i])
            saved_correct += int(tokens[i]) if hit.answer == c else 0
            continue
        stats["upstream_calls"] += 1
        if cacheable:
            exact.put(ten, mod, text, temp, c)
            semantic.insert(ten, mod, vec, c)
    hits = stats["exact_hits"] + stats["semantic_hits"]
    total = int(tokens.sum())
    return {
        "threshold": threshold,
        "hit_rate": round(hits / cfg.n_requests, 4),
        "exact_hits": stats["exact_hits"],
        "semantic_hits": stats["semantic_hits"],
        "false_hits": stats["false_hits"],
        "false_hit_rate_of_hits": round(stats["false_hits"] / max(hits, 1), 4),
        "upstream_tokens_saved_pct": round(100 * saved / total, 2),
        "correct_tokens_saved_pct": round(100 * saved_correct / total, 2),
        "duplicate_tokens_pct": round(100 * ideal / total, 2),
        "cross_partition_hits": stats["cross_partition_hits"],
        "high_temperature_served": stats["high_temperature_served"],
    }


def cache_experiment(seed: int) -> list[dict[str, object]]:
    cfg = CacheConfig()
    return [simulate_cache(cfg, th, np.random.default_rng(seed)) for th in cfg.thresholds]


# --- run and report -------------------------------------------------------------------------


def run(seed: int = 0) -> dict:
    stream = simulate_streaming(StreamConfig(), np.random.default_rng([seed, 1]))
    series = stream.pop("series")
    return {
        "system": "PayPal Cosmos LLM gateway (partly sourced; details as described)",
        "seed": seed,
        "config": {
            "call_median_ms": StreamConfig().call_median_ms,
            "slow_window_s": list(StreamConfig().slow_window_s),
            "slow_factor": StreamConfig().slow_factor,
            "max_request_cost_tokens": MAX_REQUEST_COST,
            "primary_outage_s": list(PROVIDERS[0].outage or ()),
            "breaker_failures": FallbackConfig().breaker_failures,
            "breaker_cooldown_s": FallbackConfig().breaker_cooldown_s,
        },
        "streaming": stream,
        "budgets": budget_experiment(np.random.default_rng([seed, 2])),
        "fallback": fallback_experiment(seed * 10 + 3),
        "caches": cache_experiment(seed * 10 + 4),
        "series": {"streaming": series},
    }


def _format_report(result: dict) -> str:
    cfg = result["config"]
    s = result["streaming"]
    lines = [
        f"Cosmos-style LLM gateway reference (partly as described), seed {result['seed']}",
        "",
        f"1. streaming path (decision service median {cfg['call_median_ms']} ms, "
        f"{cfg['slow_factor']:.0f}x slower during {cfg['slow_window_s'][0]:.0f}-"
        f"{cfg['slow_window_s'][1]:.0f} s)",
        f"   {'design':<10}{'calls on stream':>16}{'chunk+ p50':>12}{'chunk+ p99':>12}"
        f"{'p99 in slow':>13}{'TTFT+ p50':>11}{'stream+ p99':>13}",
    ]
    for name in ("off_path", "inline"):
        r = s[name]
        lines.append(
            f"   {name:<10}{r['calls_on_stream_path']:>16d}{r['chunk_added_ms_p50']:>10.3f}ms"
            f"{r['chunk_added_ms_p99']:>10.3f}ms{r['chunk_added_ms_p99_slow_window']:>11.2f}ms"
            f"{r['ttft_added_ms_p50']:>9.2f}ms{r['stream_added_ms_p99']:>11.1f}ms"
        )
    lines += [
        "",
        f"2. budgets (post-charged; bound = (K+1) x {cfg['max_request_cost_tokens']} tokens)",
        f"   {'scenario':<28}{'overshoot':>10}{'% budget':>10}{'K':>4}{'bound':>8}{'ok':>5}",
    ]
    for name, r in result["budgets"].items():
        lines.append(
            f"   {name:<28}{r['max_overshoot_tokens']:>10d}"
            f"{r['max_overshoot_pct_of_budget']:>10.2f}"
            f"{r['max_unreported_at_admission']:>4d}{r['bound_tokens']:>8d}"
            f"{'yes' if r['within_bound'] else 'NO':>5}"
        )
    lines += [
        "",
        f"3. fallback (primary times out during {cfg['primary_outage_s'][0]:.0f}-"
        f"{cfg['primary_outage_s'][1]:.0f} s)",
        f"   {'variant':<22}{'avail':>8}{'in outage':>11}{'timeouts paid':>15}"
        f"{'mean penalty':>14}{'double-billed':>15}",
    ]
    for name, r in result["fallback"].items():
        mean = r["failover_penalty_ms_mean_outage"]
        penalty = "-" if mean is None else f"{mean:.1f}ms"
        lines.append(
            f"   {name:<22}{r['availability']:>8.4f}{r['availability_in_outage']:>11.4f}"
            f"{r['requests_paying_a_timeout']:>15d}{penalty:>14}{r['double_billed']:>15d}"
        )
    lines += [
        "",
        "4. caches (partitioned by tenant and model; semantic only at temperature <= 0.3)",
        f"   {'threshold':>10}{'hit rate':>10}{'semantic':>10}{'false hits':>12}"
        f"{'saved':>9}{'saved ok':>10}{'duplicates':>12}{'cross-tenant':>14}",
    ]
    for r in result["caches"]:
        lines.append(
            f"   {r['threshold']:>10.2f}{r['hit_rate']:>10.3f}{r['semantic_hits']:>10d}"
            f"{r['false_hits']:>12d}{r['upstream_tokens_saved_pct']:>8.1f}%"
            f"{r['correct_tokens_saved_pct']:>9.1f}%{r['duplicate_tokens_pct']:>11.1f}%"
            f"{r['cross_partition_hits']:>14d}"
        )
    lines.append("   (saved: upstream tokens answered from cache; saved ok: by a correct answer;")
    lines.append("    duplicates: tokens of repeated low-temperature prompts, the ideal saving)")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0, help="seed for the synthetic workload")
    args = parser.parse_args(argv)
    print(_format_report(run(args.seed)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
