"""Tests for the PSR reference program (mechanism as described, spec section 7)."""

from __future__ import annotations

import json
import math
from dataclasses import replace

import numpy as np
import pytest

from deepdives.reference import psr

SMALL_MODEL = psr.MoEConfig(n_layers=3)
SMALL_TRACE = psr.TraceConfig(n_seqs=6, n_tokens=16)
CFG = psr.PSRConfig()
HW = psr.Hardware()


@pytest.fixture(scope="module")
def small() -> tuple[psr.MoEModel, np.ndarray]:
    model = psr.make_model(SMALL_MODEL, np.random.default_rng(7))
    return model, psr.make_trace(SMALL_MODEL, SMALL_TRACE, np.random.default_rng(8))


def _sim(small, policy: psr.Policy, cfg: psr.PSRConfig = CFG, **kw) -> psr.SimResult:
    model, trace = small
    return psr.simulate(
        model, trace[kw.pop("order", slice(None))], policy, cfg, kw.pop("hw", HW), **kw
    )


def _random_router(seed: int, rows: int = 2000) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    logits = rng.standard_normal((rows, 64)) * 1.5
    cached = rng.random((rows, 64)) < 0.25
    return logits, cached


# --- Property 1: routes are a function of the sequence only ------------------------------


def test_it_routes_bit_identically_under_other_transfer_timings(small) -> None:
    base = _sim(small, "psr", timing_seed=1)
    slow = replace(HW, pcie_bytes_per_s=HW.pcie_bytes_per_s / 3, jitter=0.5)
    other = _sim(small, "psr", hw=slow, timing_seed=99)
    assert other.decode_s != base.decode_s  # the timing really did change
    assert np.array_equal(base.routes, other.routes)
    assert np.array_equal(base.outputs.view(np.uint64), other.outputs.view(np.uint64))


def test_it_routes_bit_identically_with_other_batch_mates_and_orders(small) -> None:
    order = np.array([4, 2, 0, 5, 3, 1])
    alone = _sim(small, "psr")
    batched = _sim(small, "psr", order=order, phys_slots=32, groups=[[0, 1, 2], [3, 4, 5]])
    pairs = _sim(small, "psr", phys_slots=24, groups=[[0, 5], [1, 4], [2, 3]])
    pos = np.argsort(order)
    assert np.array_equal(alone.routes, batched.routes[pos])
    assert np.array_equal(alone.routes, pairs.routes)
    assert np.array_equal(alone.outputs.view(np.uint64), batched.outputs[pos].view(np.uint64))


def test_it_routes_bit_identically_across_physical_cache_sizes(small) -> None:
    runs = [_sim(small, "psr", phys_slots=s) for s in psr.SLOT_SWEEP]
    assert len({r.copies for r in runs}) > 1  # the physical side did change
    for r in runs[1:]:
        assert np.array_equal(runs[0].routes, r.routes)


def test_it_lets_timing_and_batch_mates_change_physical_cache_aware_routes(small) -> None:
    # The falsification check: keying the bonus on the physical cache breaks determinism.
    base = _sim(small, "physical_aware", timing_seed=1)
    other = _sim(small, "physical_aware", hw=replace(HW, jitter=0.5), timing_seed=2)
    batched = _sim(small, "physical_aware", phys_slots=32, groups=[[0, 1, 2], [3, 4, 5]])
    assert not np.array_equal(base.routes, other.routes)
    assert not np.array_equal(base.routes, batched.routes)


def test_it_reports_determinism_for_psr_and_not_for_physical_aware(result: dict) -> None:
    d = result["determinism"]
    for key in ("same_under_other_timing", "same_under_other_batch", "same_batched_as_alone"):
        assert d["psr"][key] is True
        assert d["physical_aware"][key] is False
    assert d["psr"]["same_across_gpu_slots"] is True
    assert d["psr"]["timing_decisions_changed"] == 0.0
    assert d["physical_aware"]["timing_decisions_changed"] > 0.05


# --- Property 2: lambda = 0 is exact routing -----------------------------------------------


def test_it_gives_exactly_vanilla_top_k_when_lambda_is_zero() -> None:
    logits, cached = _random_router(1)
    chosen, w, p = psr.route(logits, cached, 8, 0.0)
    assert np.array_equal(chosen, psr.topk_ids(logits, 8))
    assert np.array_equal(w, np.take_along_axis(p, chosen, -1))  # no renormalisation (OLMoE)
    assert np.allclose(p.sum(axis=1), 1.0)


def test_it_decodes_like_exact_routing_when_lambda_is_zero(small) -> None:
    exact = _sim(small, "exact_lru")
    zero = _sim(small, "psr", replace(CFG, lam=0.0))
    assert np.array_equal(exact.routes, zero.routes)
    assert np.array_equal(exact.outputs.view(np.uint64), zero.outputs.view(np.uint64))
    assert float(zero.mass_lost.max()) == 0.0


def test_it_breaks_ties_toward_the_lower_expert_id() -> None:
    logits = np.zeros((1, 64))
    assert psr.topk_ids(logits, 8).tolist() == [list(range(8))]


# --- Property 3: exactly k distinct experts per token --------------------------------------


@pytest.mark.parametrize("lam", [0.0, 0.5, math.inf])
def test_it_picks_exactly_k_distinct_experts_per_token(lam: float) -> None:
    logits, cached = _random_router(2)
    chosen, _, _ = psr.route(logits, cached, 8, lam)
    s = np.sort(chosen, axis=1)
    assert s.shape == (2000, 8)
    assert (np.diff(s, axis=1) > 0).all()


def test_it_picks_k_distinct_experts_in_every_decode_step(small) -> None:
    for cfg in (CFG, replace(CFG, lam=math.inf), replace(CFG, tau=0.05)):
        routes = np.sort(_sim(small, "psr", cfg).routes, axis=-1)
        assert (np.diff(routes, axis=-1) > 0).all()


def test_it_ranks_every_cached_expert_first_when_lambda_is_infinite() -> None:
    logits, cached = _random_router(3)
    chosen, _, _ = psr.route(logits, cached, 8, math.inf)
    n_cached = cached.sum(axis=1)
    in_cache = np.take_along_axis(cached, chosen, 1).sum(axis=1)
    assert np.array_equal(in_cache, np.minimum(n_cached, 8))


# --- Property 4: the swap rule loses at most k * tau ---------------------------------------


@pytest.mark.parametrize("tau", [0.0, 0.005, 0.02, 0.1])
def test_it_bounds_the_mass_lost_by_the_swap_rule_by_k_tau(tau: float) -> None:
    logits, cached = _random_router(4)
    chosen, _, p = psr.route(logits, cached, 8, 0.0, tau=tau)
    lost = psr.mass_lost(p, chosen, 8)
    assert (lost >= -1e-12).all()
    assert lost.max() <= 8 * tau + 1e-12
    assert (np.diff(np.sort(chosen, axis=1), axis=1) > 0).all()
    if tau > 0:  # the rule really swaps something
        assert (lost > 0).any()


def test_it_swaps_only_toward_cached_experts() -> None:
    logits, cached = _random_router(5)
    vanilla = psr.topk_ids(logits, 8)
    chosen, _, _ = psr.route(logits, cached, 8, 0.0, tau=0.05)
    for v, c, m in zip(vanilla, chosen, cached, strict=True):
        added = set(c.tolist()) - set(v.tolist())
        dropped = set(v.tolist()) - set(c.tolist())
        assert len(added) == len(dropped)
        assert all(m[e] for e in added) and not any(m[e] for e in dropped)


def test_it_reports_the_swap_rule_within_its_bound(result: dict) -> None:
    sr = result["swap_rule"]
    assert sr["mass_lost_max"] <= sr["bound_k_tau"]


# --- Property 5: the physical miss rate falls as lambda grows ------------------------------


def test_it_never_raises_the_physical_miss_rate_as_lambda_grows(small) -> None:
    rates = []
    for lam in (0.0, 0.5, math.inf):
        r = _sim(small, "psr", replace(CFG, lam=lam))
        rates.append(r.demand_copies / r.needed)
    assert rates[0] > rates[1] >= rates[2]


def test_it_reports_miss_rates_that_fall_with_lambda(result: dict) -> None:
    miss = result["lambda_sweep"]["demand_miss_rate"]
    assert miss[0] > miss[-1]
    assert all(a >= b - 1e-3 for a, b in zip(miss, miss[1:], strict=False))


# --- The logical cache ---------------------------------------------------------------------


def test_it_evicts_the_lowest_moving_average_member_with_ties_to_the_lower_id() -> None:
    cfg = replace(CFG, slots=3, n_admit=1)
    members = np.zeros((2, 8), bool)
    members[:, [1, 4, 6]] = True
    score = np.array([[0, 0.5, 0, 0, 0.1, 0, 0.9, 0], [0, 0.2, 0, 0, 0.2, 0, 0.9, 0]])
    admitted = psr.admit(members, score, np.array([[3, 1], [3, 1]]), cfg, step=0)
    assert np.flatnonzero(members[0]).tolist() == [1, 3, 6]  # 4 had the lowest average
    assert np.flatnonzero(members[1]).tolist() == [3, 4, 6]  # 1 and 4 tie: 1 goes
    assert admitted[:, 3].all() and admitted.sum() == 2


def test_it_admits_nothing_when_the_predicted_experts_are_cached() -> None:
    members = np.zeros((1, 8), bool)
    members[0, [2, 5]] = True
    before = members.copy()
    admitted = psr.admit(members, np.zeros((1, 8)), np.array([[5, 2]]), CFG, step=0)
    assert not admitted.any() and np.array_equal(members, before)


def test_it_never_holds_more_experts_than_slots() -> None:
    rng = np.random.default_rng(6)
    cfg = replace(CFG, slots=10)
    members, score = np.zeros((5, 64), bool), np.zeros((5, 64))
    for step in range(200):
        predicted = psr.topk_ids(rng.standard_normal((5, 64)), cfg.n_admit)
        psr.admit(members, score, predicted, cfg, step)
        psr.update_scores(score, psr.topk_ids(rng.standard_normal((5, 64)), 8), cfg, step)
        assert (members.sum(axis=1) <= cfg.slots).all()
    assert (members.sum(axis=1) == cfg.slots).all()


def test_it_keeps_router_rows_independent_of_the_batch(small) -> None:
    model, trace = small
    h = trace[:, 3]
    full = psr.router_logits(model, 1, h)
    rows = np.concatenate([psr.router_logits(model, 1, h[i : i + 1]) for i in range(len(h))])
    assert np.array_equal(full.view(np.uint64), rows.view(np.uint64))


# --- The claim's direction, from run() -----------------------------------------------------


def test_it_copies_fewer_experts_than_exact_routing_with_lru(result: dict) -> None:
    pol = result["policies"]
    assert pol["psr"]["copies_per_token"] < 0.7 * pol["exact_lru"]["copies_per_token"]
    assert pol["psr"]["demand_miss_rate"] < pol["exact_lru"]["demand_miss_rate"]
    assert pol["psr"]["speedup_vs_exact_lru"] > 1.3
    assert 0.0 < pol["psr"]["mass_lost_mean"] < 0.1
    assert pol["exact_lru"]["mass_lost_mean"] == 0.0
    assert result["share_of_physical_aware_savings"] > 0.5


def test_it_copies_fewer_experts_than_exact_routing_at_every_slot_count(result: dict) -> None:
    sw = result["slot_sweep"]
    for exact, psr_copies in zip(
        sw["exact_lru_copies_per_token"], sw["psr_copies_per_token"], strict=True
    ):
        assert psr_copies < exact
    assert sw["exact_lru_copies_per_token"] == sorted(sw["exact_lru_copies_per_token"])[::-1]


def test_it_is_deterministic_and_json_serialisable(result: dict, small) -> None:
    assert json.loads(json.dumps(result))["seed"] == 0
    a, b = _sim(small, "psr", timing_seed=3), _sim(small, "psr", timing_seed=3)
    assert a.decode_s == b.decode_s and a.copies == b.copies


def test_it_prints_a_report_and_returns_zero(
    result: dict, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    calls: list[int] = []
    monkeypatch.setattr(psr, "run", lambda seed=0: calls.append(seed) or result)
    assert psr.main(["--seed", "0"]) == 0
    out = capsys.readouterr().out
    assert calls == [0]
    assert "mechanism as described" in out
    assert "psr: bit-identical under other timing = True" in out
