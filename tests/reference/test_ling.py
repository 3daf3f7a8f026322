"""Tests for the Ling-3.0-flash on DGX Spark reference (mechanism as described, spec section 9)."""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pytest

from deepdives.reference import ling

CFG, HW, PREC = ling.ModelConfig(), ling.Hardware(), ling.Precision()


# --- The assumed architecture --------------------------------------------------------------


def test_it_reconstructs_the_published_ling_flash_2_parameter_counts() -> None:
    assert CFG.total_params() == 102_889_697_280  # BF16 count in the checkpoint metadata
    assert 4.8e9 < CFG.active_non_embedding_params() < 4.9e9  # "4.8B non-embedding"
    active = CFG.active_non_embedding_params() + 2 * CFG.lm_head_params
    assert active == pytest.approx(6.1e9, rel=0.01)  # "6.1B activated"
    assert CFG.experts // CFG.top_k == 32  # the 1/32 activation ratio


# --- Property 1: E[A] closed form vs Monte Carlo -------------------------------------------


@pytest.mark.parametrize("alpha", [0.3, 0.6, 0.8, 0.95])
@pytest.mark.parametrize("d", [1, 2, 3, 5])
def test_it_matches_the_acceptance_formula_with_a_monte_carlo(alpha: float, d: int) -> None:
    rng = np.random.default_rng(7)
    closed = ling.expected_accepted(alpha, d)
    assert closed == pytest.approx(sum(alpha**i for i in range(d + 1)))
    assert ling.simulate_accepted(alpha, d, 200_000, rng) == pytest.approx(closed, rel=0.01)


def test_it_yields_d_plus_one_tokens_when_every_draft_is_accepted() -> None:
    assert ling.expected_accepted(1.0, 3) == 4.0
    assert ling.simulate_accepted(1.0, 3, 1000, np.random.default_rng(0)) == 4.0
    assert ling.expected_accepted(0.7, 0) == 1.0


# --- Property 2: distinct experts U(n) -----------------------------------------------------


def test_it_matches_u_of_n_under_uniform_independent_routing() -> None:
    rng = np.random.default_rng(1)
    sim = ling.simulate_uniform_routing(9, 256, 8, rng, tokens=8192)
    formula = [ling.distinct_experts_independent(n, 256, 8) for n in range(1, 10)]
    np.testing.assert_allclose(sim, formula, rtol=0.01)


@pytest.mark.parametrize(("experts", "k"), [(256, 8), (64, 8), (16, 4), (8, 8)])
def test_it_bounds_u_of_n_by_k_n_times_k_and_e(experts: int, k: int) -> None:
    assert ling.distinct_experts_independent(1, experts, k) == pytest.approx(k)
    for n in range(1, 12):
        u = ling.distinct_experts_independent(n, experts, k)
        assert u <= min(experts, n * k) + 1e-9
    sim = ling.simulate_uniform_routing(6, experts, k, np.random.default_rng(2), tokens=512)
    assert sim[0] == k
    assert all(u <= min(experts, n * k) for n, u in enumerate(sim, start=1))


def test_it_touches_every_expert_when_k_equals_e() -> None:
    assert ling.distinct_experts_independent(5, 8, 8) == 8.0
    sim = ling.simulate_uniform_routing(5, 8, 8, np.random.default_rng(3), tokens=256)
    assert sim == [8.0] * 5


def test_it_shares_experts_between_consecutive_tokens_on_the_drifting_router() -> None:
    rng = np.random.default_rng(4)
    corr = ling.simulate_correlated_routing(5, 256, 8, ling.ROUTER, rng)
    indep = [ling.distinct_experts_independent(n, 256, 8) for n in range(1, 6)]
    assert corr["u"][0] == 8.0
    assert all(c < i for c, i in zip(corr["u"][1:], indep[1:], strict=True))
    assert 0.1 < corr["consecutive_overlap"] < 0.6


# --- Property 3: per-channel 8-bit quantization --------------------------------------------


def test_it_keeps_every_int8_weight_within_half_a_step() -> None:
    rng = np.random.default_rng(5)
    w = rng.standard_normal((512, 1024)) * rng.uniform(0.01, 1.0, (512, 1))
    w_hat, scale = ling.quantize_per_channel(w, "int8")
    assert np.all(np.abs(w - w_hat) <= scale[:, None] / 2 + 1e-12)
    assert np.allclose(scale, np.abs(w).max(axis=1) / 127)
    assert np.allclose(np.round(w_hat / scale[:, None]), w_hat / scale[:, None])


def test_it_gives_int8_output_error_between_0_3_and_1_percent_for_gaussians() -> None:
    rng = np.random.default_rng(6)
    w = rng.standard_normal((2048, 2048))
    x = rng.standard_normal((64, 2048))
    w_hat, _ = ling.quantize_per_channel(w, "int8")
    err = ling.relative_error(x @ w.T, x @ w_hat.T)
    assert 0.003 < err < 0.01


def test_it_rounds_to_fp8_e4m3_values() -> None:
    x = np.array([1.0, 1.0625, 1.1875, 300.0, 1000.0, -(2**-9), 2**-10, 0.0, 17.0])
    # 1.0625 is halfway between 1 and 1.125 (ties to even: 1.0); 1.1875 -> 1.25;
    # 300 -> 288 (spacing 32 above 256); 1000 saturates at 448; 2^-9 is the smallest
    # subnormal, 2^-10 ties to 0; 17 -> 16 (spacing 2 above 16, tie to even).
    expected = [1.0, 1.0, 1.25, 288.0, 448.0, -(2**-9), 0.0, 0.0, 16.0]
    assert ling.round_fp8_e4m3(x).tolist() == expected


def test_it_keeps_greedy_tokens_with_an_8bit_lm_head(result: dict) -> None:
    acc = result["quantization"]["accuracy"]
    assert acc["int8_weight_only_greedy_agreement"] >= 0.99
    assert acc["fp8_weight_only_greedy_agreement"] >= 0.99
    assert 0.003 < acc["int8_weight_only_rel_logit_error"] < 0.01
    assert acc["int8_weight_only_rel_logit_error"] < acc["fp8_weight_only_rel_logit_error"]


# --- Property 4: alpha = 0 never pays ------------------------------------------------------


def test_it_never_speeds_up_with_mtp_when_no_draft_is_accepted(result: dict) -> None:
    u = result["routing"]["correlated_sim"]
    mtp = ling.STAGES[-1]
    base = ling.decode_rate(CFG, HW, PREC, mtp, u, 0.0, 0)
    for d in range(1, 9):
        assert ling.expected_accepted(0.0, d) == 1.0
        assert ling.decode_rate(CFG, HW, PREC, mtp, u, 0.0, d) < base
    assert result["mtp_sweep"]["best_d_by_alpha"]["alpha0"] == 0


# --- Property 5: bytes saved by (B) --------------------------------------------------------


@pytest.mark.parametrize("target", ling.TARGETS)
def test_it_saves_exactly_half_of_the_output_projection_bytes(target: str) -> None:
    before = ling.step_bytes(CFG, PREC, 8.0, target, eight_bit=False)
    after = ling.step_bytes(CFG, PREC, 8.0, target, eight_bit=True)
    key = "lm_head" if target == "lm_head" else "o_proj"
    assert before[key] - after[key] == before[key] / 2
    assert after["scales"] == ling.scale_count(CFG, target) * 4
    total_saved = sum(before.values()) - sum(after.values())
    assert total_saved == before[key] / 2 - after["scales"]
    others = [k for k in before if k not in (key, "scales")]
    assert all(before[k] == after[k] for k in others)


def test_it_rejects_an_unknown_output_projection() -> None:
    with pytest.raises(ValueError):
        ling.step_bytes(CFG, PREC, 8.0, "embedding")


# --- The bandwidth model -------------------------------------------------------------------


def test_it_reads_only_more_expert_bytes_when_verifying_more_tokens() -> None:
    one = ling.step_bytes(CFG, PREC, 8.0)
    four = ling.step_bytes(CFG, PREC, 23.0)
    assert four["routed_experts"] == pytest.approx(one["routed_experts"] * 23 / 8)
    assert all(one[k] == four[k] for k in one if k != "routed_experts")


def test_it_launches_one_grouped_kernel_pair_per_layer_with_fused_experts() -> None:
    loop, fused = ling.STAGES[0], ling.STAGES[1]
    t_loop = [ling.component_times(CFG, HW, PREC, loop, u)["launch_overhead"] for u in (8, 23)]
    t_fused = [ling.component_times(CFG, HW, PREC, fused, u)["launch_overhead"] for u in (8, 23)]
    assert t_fused[0] == t_fused[1]  # one launch per layer whatever the experts touched
    assert t_loop[1] > t_loop[0] > t_fused[0]
    other = CFG.layers * HW.other_kernels_per_layer * HW.launch_s
    assert t_loop[0] - other == pytest.approx(CFG.moe_layers * 2 * 8 * HW.launch_s)


def test_it_charges_every_draft_an_mtp_block_and_an_lm_head_read() -> None:
    stage, u = ling.STAGES[-1], [8.0, 13.0, 18.0, 23.0]
    block = ling.mtp_block(CFG)
    assert (block.layers, block.dense_layers, block.moe_layers) == (1, 0, 1)
    draft_bytes = ling.step_bytes(block, PREC, 8.0, eight_bit=True)
    assert draft_bytes["lm_head"] == CFG.lm_head_params  # the shared LM head, now 8-bit
    draft = ling.step_time(block, HW, PREC, stage, 1, 8.0)
    verify = ling.step_time(CFG, HW, PREC, stage, 4, 23.0)
    expected = ling.expected_accepted(0.8, 3) / (verify + 3 * draft)
    assert ling.decode_rate(CFG, HW, PREC, stage, u, 0.8, 3) == pytest.approx(expected)
    assert 0.05 < draft / verify < 0.3  # a draft is cheap, but not free


def test_it_is_memory_bound_at_decode_batch_sizes() -> None:
    stage = ling.STAGES[0]
    t = ling.component_times(CFG, HW, PREC, stage, 8.0)
    flops = 2 * 9 * (CFG.active_non_embedding_params() + CFG.lm_head_params)
    assert flops / HW.peak_flops < 0.1 * (sum(t.values()) - t["launch_overhead"])
    # Doubling the bandwidth nearly halves the step time.
    fast = ling.step_time(CFG, replace(HW, bandwidth=2 * HW.bandwidth), PREC, stage, 1, 8.0)
    slow = ling.step_time(CFG, HW, PREC, stage, 1, 8.0)
    assert 0.5 < fast / slow < 0.56


def test_it_spends_most_baseline_time_on_experts_and_the_lm_head(result: dict) -> None:
    prof = result["profile"]
    assert prof["experts_plus_output_projection_share"] > 0.6
    shares = prof["time_share"]
    top_two = sorted(shares, key=shares.get, reverse=True)[:2]
    assert set(top_two) == {"routed_experts", "lm_head"}


# --- The claim's direction, from run() -----------------------------------------------------


def test_it_speeds_up_decoding_at_every_step(result: dict) -> None:
    stages = result["stages"]
    assert [s["stage"] for s in stages] == [s.name for s in ling.STAGES]
    for s in stages[1:]:
        assert s["speedup_vs_previous"] > 1.05
    rates = [s["tokens_per_s"] for s in stages]
    assert rates == sorted(rates)
    last = stages[-1]
    assert last["speedup_vs_baseline"] == pytest.approx(rates[-1] / rates[0])
    assert last["latency_reduction_vs_baseline"] == pytest.approx(1 - rates[0] / rates[-1])
    assert last["draft_length"] >= 1
    for reading in result["output_projection_readings"].values():
        assert reading["speedup_of_B"] > 1.0


def test_it_finds_an_interior_best_draft_length(result: dict) -> None:
    sw = result["mtp_sweep"]
    rates = sw["alpha80"]
    d_star = sw["best_d_by_alpha"]["alpha80"]
    assert 0 < d_star < len(rates) - 1  # gains first, then verification cost wins
    assert rates[-1] < rates[d_star]
    best_by_alpha = [sw["best_d_by_alpha"][ling.alpha_key(a)] for a in ling.ALPHAS]
    assert best_by_alpha == sorted(best_by_alpha)  # longer drafts pay as alpha rises


def test_it_gains_more_from_mtp_as_alpha_rises(result: dict) -> None:
    sw = result["mtp_sweep"]
    best = [max(sw[ling.alpha_key(a)]) for a in ling.ALPHAS]
    assert best == sorted(best)
    assert best[-1] > 1.3 * sw["tokens_per_s_without_mtp"]


def test_it_gains_less_from_mtp_when_tokens_share_fewer_experts(result: dict) -> None:
    sw = result["mtp_sweep"]
    assert max(sw["alpha80_independent_routing"]) < max(sw["alpha80"])


def test_it_gains_less_from_mtp_the_sparser_the_moe(result: dict) -> None:
    sp = result["sparsity"]
    gains = sp["mtp_gain_best_d"]
    assert sp["experts"] == sorted(sp["experts"])
    assert gains == sorted(gains, reverse=True)
    assert gains[0] > gains[-1] + 0.5  # dense (E = k) gains clearly more
    assert sp["activation_ratio"][0] == 1.0


def test_it_returns_json_serialisable_output(result: dict) -> None:
    # Two runs of one seed agree: tests/reference/test_eic.py checks it on a small program.
    text = json.dumps(result)
    assert json.loads(text)["seed"] == 0
    assert result["acceptance"]["max_rel_error"] < 0.01


def test_it_prints_a_report_and_returns_zero(
    result: dict, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    calls: list[int] = []

    def fake_run(seed: int = 0) -> dict:
        calls.append(seed)
        return result

    # main() goes through the module-level run() once; its result is the module's run's.
    monkeypatch.setattr(ling, "run", fake_run)
    assert ling.main(["--seed", "1"]) == 0
    assert calls == [1]
    out = capsys.readouterr().out
    assert "mechanism as described" in out
    assert "unverified" in out
    assert "+A+B+C MTP speculation" in out
