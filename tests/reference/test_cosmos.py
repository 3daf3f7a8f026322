"""Properties of the Cosmos-style gateway reference program and the direction of its claims."""

from __future__ import annotations

import json

import numpy as np
import pytest

from deepdives.reference import cosmos
from deepdives.reference.cosmos import (
    MAX_REQUEST_COST,
    BudgetConfig,
    CacheConfig,
    CircuitBreaker,
    ExactCache,
    FallbackConfig,
    Ledger,
    Provider,
    SemanticCache,
    forward_delays,
    simulate_budget,
    simulate_cache,
    simulate_fallback,
)


def unit_vector(rng: np.random.Generator, dim: int = 64) -> np.ndarray:
    v = rng.normal(size=dim)
    return v / np.linalg.norm(v)


# --- property 1: 429 iff used >= limit; bounded overshoot ---------------------------------------


def test_it_rejects_with_429_exactly_when_the_budget_is_used_up() -> None:
    ledger = Ledger(limit=1000)
    assert ledger.admit()
    ledger.charge(999)
    assert ledger.admit()  # one token left: admitted, whatever the request will cost
    ledger.charge(1)
    assert not ledger.admit()
    ledger.charge(500)
    assert not ledger.admit()


def test_it_overshoots_by_at_most_one_request_when_requests_are_sequential() -> None:
    out = simulate_budget(
        BudgetConfig(concurrency=1, report_delay_s=0.0), np.random.default_rng(11)
    )
    assert out.max_unreported_at_admission == 0
    assert 0 < out.max_overshoot <= out.max_request_cost
    assert out.rejections > 0


def test_it_overshoots_by_at_most_concurrency_times_the_largest_request() -> None:
    concurrency = 4
    out = simulate_budget(
        BudgetConfig(concurrency=concurrency, report_delay_s=0.0), np.random.default_rng(12)
    )
    assert out.max_unreported_at_admission <= concurrency - 1
    assert out.max_overshoot <= concurrency * MAX_REQUEST_COST
    assert out.max_overshoot <= concurrency * out.max_request_cost


def test_it_keeps_the_stated_bound_when_usage_reports_arrive_late(result: dict) -> None:
    for row in result["budgets"].values():
        assert row["within_bound"]
        assert row["max_overshoot_tokens"] <= row["bound_tokens"]
        assert row["rejections_429"] > 0
    budgets = result["budgets"]
    # Post-charging really does overshoot, and more so with more requests in flight.
    assert (
        budgets["concurrent-16-async-report"]["max_overshoot_tokens"]
        > (budgets["sequential"]["max_overshoot_tokens"])
    )


# --- property 2: fallback during an outage, billed once -----------------------------------------


def test_it_serves_every_request_in_an_outage_through_a_healthy_secondary() -> None:
    providers = (
        Provider("primary", float("inf"), outage=(50.0, 110.0)),
        Provider("secondary", float("inf")),
    )
    cfg = FallbackConfig(duration_s=200.0)
    with_fallback = simulate_fallback(cfg, providers, np.random.default_rng(21))
    assert with_fallback["requests_in_outage"] > 500
    assert with_fallback["availability_in_outage"] == 1.0
    assert with_fallback["availability"] == 1.0
    assert with_fallback["double_billed"] == 0
    assert with_fallback["billed_unserved"] == 0
    without = simulate_fallback(cfg, providers, np.random.default_rng(21), fallback=False)
    assert without["availability_in_outage"] == 0.0


def test_it_keeps_availability_through_the_outage_in_the_full_run(result: dict) -> None:
    fallback = result["fallback"]
    assert fallback["primary-only"]["availability_in_outage"] == 0.0
    assert fallback["fallback+breaker"]["availability_in_outage"] == 1.0
    assert fallback["fallback+breaker"]["double_billed"] == 0
    # The breaker stops most requests from paying the dead provider's timeout.
    paid = fallback["fallback+breaker"]["requests_paying_a_timeout"]
    assert paid < 0.05 * fallback["fallback-no-breaker"]["requests_paying_a_timeout"]
    # The chain really is used: the rate-limited secondary overflows to the third provider.
    assert fallback["fallback+breaker"]["served_by"].get("provider-c", 0) > 0


# --- property 3: caches stay inside tenant and model ---------------------------------------------


def test_it_never_crosses_tenant_or_model_boundaries_in_either_cache() -> None:
    vec = unit_vector(np.random.default_rng(31))
    exact, semantic = ExactCache(), SemanticCache(dim=64, threshold=0.95)
    exact.put("risk", "model-x", "What is our refund policy?", 0.0, answer=7)
    semantic.insert("risk", "model-x", vec, answer=7)
    assert exact.get("risk", "model-x", "  what is our REFUND policy? ", 0.0) is not None
    assert semantic.lookup("risk", "model-x", vec, 0.0) is not None
    for tenant, model in (("support", "model-x"), ("risk", "model-y"), ("support", "model-y")):
        assert exact.get(tenant, model, "What is our refund policy?", 0.0) is None
        assert semantic.lookup(tenant, model, vec, 0.0) is None


def test_it_reports_no_cross_partition_hits_in_the_simulation(result: dict) -> None:
    assert all(row["cross_partition_hits"] == 0 for row in result["caches"])
    assert all(row["semantic_hits"] > 0 for row in result["caches"])


# --- property 4: no semantic hits above the temperature gate -------------------------------------


def test_it_never_serves_a_high_temperature_request_from_the_semantic_cache() -> None:
    vec = unit_vector(np.random.default_rng(41))
    semantic = SemanticCache(dim=64, threshold=0.95, max_temperature=0.3)
    semantic.insert("risk", "model-x", vec, answer=1)
    assert semantic.lookup("risk", "model-x", vec, 0.3) is not None
    assert semantic.lookup("risk", "model-x", vec, 0.31) is None
    assert semantic.lookup("risk", "model-x", vec, 1.0) is None
    cfg = CacheConfig(n_requests=1500)
    out = simulate_cache(cfg, 0.9, np.random.default_rng(42))
    assert out["high_temperature_served"] == 0


# --- property 5: circuit breaker -----------------------------------------------------------------


def test_it_skips_a_backend_after_f_failures_until_a_probe_succeeds() -> None:
    breaker = CircuitBreaker(failure_threshold=3, cooldown_s=10.0)
    for t in (0.0, 1.0):
        breaker.record_failure(t)
        assert breaker.allow(t)
    breaker.record_failure(2.0)
    assert not breaker.allow(2.0)
    assert not breaker.allow(11.9)
    assert breaker.allow(12.0)  # the single half-open probe
    assert not breaker.allow(12.1)  # nobody else while the probe is out
    breaker.record_failure(13.0)  # the probe failed: open again, new cooldown
    assert not breaker.allow(22.9)
    assert breaker.allow(23.0)
    breaker.record_success()
    assert breaker.allow(23.1) and breaker.allow(23.2)


def test_it_counts_only_consecutive_failures() -> None:
    breaker = CircuitBreaker(failure_threshold=3, cooldown_s=10.0)
    for t in range(10):
        breaker.record_failure(float(t))
        breaker.record_failure(float(t) + 0.5)
        breaker.record_success()
        assert breaker.allow(float(t) + 0.9)


# --- the streaming path -------------------------------------------------------------------------


def test_it_forwards_chunks_in_order_like_a_step_by_step_queue() -> None:
    rng = np.random.default_rng(51)
    arrivals = np.cumsum(rng.exponential(5.0, 300))
    service = rng.exponential(4.0, 300)
    added = forward_delays(arrivals, service)
    done = 0.0
    for k in range(300):
        done = max(arrivals[k], done) + service[k]
        assert added[k] == pytest.approx(done - arrivals[k], abs=1e-9)


def test_it_keeps_external_calls_off_the_streaming_path(result: dict) -> None:
    off, inline = result["streaming"]["off_path"], result["streaming"]["inline"]
    call_ms = result["config"]["call_median_ms"]
    assert off["calls_on_stream_path"] == 0
    assert inline["calls_on_stream_path"] == inline["chunks"]
    # Off the path, a chunk only pays in-proxy work, and a slow decision service changes nothing.
    assert off["chunk_added_ms_p99"] < 0.1
    assert off["chunk_added_ms_p99_slow_window"] < 0.1
    assert off["chunks_delayed_over_1ms"] == 0
    # Inline, every chunk pays a round trip, and the slow window stalls streams in flight.
    assert inline["chunk_added_ms_p50"] >= 0.8 * call_ms
    assert inline["chunk_added_ms_p99_slow_window"] > 100 * inline["chunk_added_ms_p50"]
    assert inline["stream_added_ms_p99"] > 5 * off["stream_added_ms_p99"]
    # Both designs pay the one admission decision before the first byte.
    assert off["ttft_added_ms_p50"] >= 0.8 * call_ms


# --- the semantic cache's trade-off ---------------------------------------------------------------


def test_it_saves_about_the_duplicate_share_at_a_low_false_hit_rate(result: dict) -> None:
    rows = {row["threshold"]: row for row in result["caches"]}
    at_95 = rows[0.95]
    assert at_95["correct_tokens_saved_pct"] >= 0.9 * at_95["duplicate_tokens_pct"]
    assert at_95["false_hit_rate_of_hits"] < 0.05
    false_hits = [rows[t]["false_hits"] for t in sorted(rows)]
    assert all(b <= a for a, b in zip(false_hits, false_hits[1:], strict=False))
    assert false_hits[0] > 5 * max(false_hits[-1], 1)


# --- the program's interface ----------------------------------------------------------------------


def test_it_returns_json_serialisable_results_with_plot_series(result: dict) -> None:
    decoded = json.loads(json.dumps(result))
    series = decoded["series"]["streaming"]
    assert len(series["bucket_start_s"]) == len(series["inline_chunk_p99_ms"]) > 10
    # Two runs of one seed agree: tests/reference/test_eic.py checks it on a small program.


def test_it_prints_a_report_and_exits_zero(
    result: dict, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    seeds: list[int] = []
    # main() goes through the module-level run() once; its result is the module's run's.
    monkeypatch.setattr(cosmos, "run", lambda seed=0: seeds.append(seed) or result)
    assert cosmos.main(["--seed", "1"]) == 0
    assert seeds == [1]
    out = capsys.readouterr().out
    assert "streaming path" in out and "fallback" in out and "caches" in out
