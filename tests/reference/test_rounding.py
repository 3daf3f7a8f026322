"""Tests for the rounding-location alignment reference (mechanism as described, spec section 14)."""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pytest

from deepdives.reference import rounding as rl

TINY = rl.ModelConfig(layers=3, d_model=64, heads=2, ffn=128, vocab=96)
TINY_DATA = rl.DataConfig(batch=2, seq_len=16)


def _bench(seed: int = 0, cfg: rl.ModelConfig = TINY) -> rl.Bench:
    return rl.make_bench(cfg, TINY_DATA, seed)


def _bits_equal(a: np.ndarray, b: np.ndarray) -> bool:
    return np.array_equal(a.view(np.uint32), b.view(np.uint32))


# --- Property 3: rnd is round-to-nearest-even and idempotent -------------------------------


def test_it_rounds_to_bf16_to_nearest_even() -> None:
    x = np.array([1 + 2**-8, 1 + 3 * 2**-8, -2.5, 0.0], np.float32)
    assert rl.rnd(x).tolist() == [1.0, 1 + 2**-6, -2.5, 0.0]


def test_it_rounds_like_the_shared_bf16_helper_on_awkward_values() -> None:
    rng = np.random.default_rng(0)
    u = rng.integers(0, 1 << 32, 100_000, dtype=np.uint64).astype(np.uint32)
    special = np.array([0x7F7FFFFF, 0xFF7FFFFF, 0x7F800000, 0x00008000, 0x3F808000], np.uint32)
    x = np.concatenate([u, special]).view(np.float32)
    ref = rl.bf16_bits_to_f32(rl.f32_to_bf16_bits(x))
    out = rl.rnd(x)
    assert np.array_equal(np.isnan(out), np.isnan(ref))
    ok = ~np.isnan(ref)
    assert _bits_equal(out[ok], ref[ok])


@pytest.mark.parametrize("fmt", ["bf16", "fp16", "fp32"])
def test_it_rounds_idempotently_in_every_format(fmt: str) -> None:
    x = np.random.default_rng(1).standard_normal(10_000).astype(np.float32) * 30
    once = rl.rnd(x, fmt)
    assert _bits_equal(rl.rnd(once, fmt), once)
    if fmt != "fp32":
        assert not np.array_equal(once, x)  # it really rounds


def test_it_keeps_nans_and_rejects_unknown_formats() -> None:
    assert np.isnan(rl.rnd(np.array([np.nan], np.float32))).all()
    with pytest.raises(ValueError):
        rl.rnd(np.ones(2, np.float32), "fp8")


# --- The three operators really differ in where they round --------------------------------


def test_it_rounds_each_fused_operator_once_and_the_unfused_one_more_often() -> None:
    rng = np.random.default_rng(2)
    x = rl.rnd(rng.standard_normal((1, 2, 16, 32)).astype(np.float32))
    cos, sin = rl.rope_tables(rl.ModelConfig(d_model=64, heads=2), 16)
    fused, unfused = rl.Engine(rl.FUSED), rl.Engine(rl.UNFUSED)
    # Fused RoPE is the FP32 rotation rounded once.
    assert _bits_equal(rl.apply_rope(x, cos, sin, fused), rl.rnd(x * cos + rl.rotate_half(x) * sin))
    assert not np.array_equal(
        rl.apply_rope(x, cos, sin, unfused), rl.apply_rope(x, cos, sin, fused)
    )
    g, u = (rl.rnd(rng.standard_normal((64, 128)).astype(np.float32)) for _ in range(2))
    assert not np.array_equal(rl.swiglu(g, u, unfused), rl.swiglu(g, u, fused))
    h = rl.rnd(3 * rng.standard_normal((64, 64)).astype(np.float32))
    gain = rl.rnd(1 + 0.1 * rng.standard_normal(64).astype(np.float32))
    assert not np.array_equal(
        rl.rms_norm(h, gain, 1e-6, unfused), rl.rms_norm(h, gain, 1e-6, fused)
    )
    # The fused residual stream stays FP32; the unfused one is rounded after every add.
    y = rl.rnd(rng.standard_normal((64, 64)).astype(np.float32) * 1e-2)
    assert _bits_equal(rl.add_residual(h, y, fused), h + y)
    assert _bits_equal(rl.add_residual(h, y, unfused), rl.rnd(h + y))


# --- Property 1: aligned engines are bit-identical -----------------------------------------


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("fmt", ["bf16", "fp16"])
def test_it_gives_bit_identical_logits_when_rounding_locations_are_aligned(
    seed: int, fmt: str
) -> None:
    bench = _bench(seed)
    # Two separate engine objects, two separate forward passes, the same rounding plan.
    a = rl.forward(bench.weights.rounded(fmt), bench.tokens, rl.Engine(rl.FUSED, fmt), TINY)[0]
    b = rl.forward(
        bench.weights.rounded(fmt), bench.tokens, rl.Engine(rl.RoundingPlan(), fmt), TINY
    )[0]
    assert _bits_equal(a, b)
    r = rl.compare(a[-1], b[-1], bench.gumbel)
    assert r["logits_bit_identical"] and r["mean_kl"] == 0.0
    assert r["token_ratio_min"] == r["token_ratio_max"] == 1.0


# --- Property 2: misaligned engines disagree -----------------------------------------------


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_it_gives_strictly_positive_mismatch_when_misaligned(seed: int) -> None:
    r = _bench(seed).compare(rl.Engine(rl.UNFUSED, "bf16"), TINY.layers)
    assert not r["logits_bit_identical"]
    assert r["mean_abs_delta_logprob"] > 0 and r["mean_kl"] > 0
    assert r["mean_grad_bias_l2"] > 0


# --- Property 4: all-FP32 engines agree whatever their plan --------------------------------


def test_it_gives_zero_mismatch_when_both_engines_compute_in_fp32() -> None:
    bench = _bench(3)
    r = bench.compare(rl.Engine(rl.UNFUSED, "fp32"), TINY.layers)
    assert r["logits_bit_identical"]
    assert r["max_abs_delta_logprob"] == 0.0


# --- Property 5: each operator alone breaks bit-identity -----------------------------------


@pytest.mark.parametrize("field", ["rope_fp32", "swiglu_fp32", "residual_norm_fp32"])
def test_it_breaks_bit_identity_when_one_operator_is_misaligned(field: str) -> None:
    plan = replace(rl.FUSED, **{field: False})
    r = _bench(4).compare(rl.Engine(plan, "bf16"), TINY.layers)
    assert not r["logits_bit_identical"]
    assert r["mean_abs_delta_logprob"] > 0


def test_it_needs_the_same_gemm_reduction_order_too() -> None:
    r = _bench(5).compare(rl.Engine(rl.FUSED, "bf16", split_k=2), TINY.layers)
    assert not r["logits_bit_identical"]


def test_it_reuses_deeper_runs_exactly_for_shallower_models() -> None:
    bench = _bench(6)
    engine = rl.Engine(rl.UNFUSED)
    deep = bench.outputs(engine)[0]
    fresh = rl.forward(bench.weights.rounded("bf16").truncated(2), bench.tokens, engine, TINY)[0]
    assert _bits_equal(deep[:2], fresh)


# --- The claim's direction, from run() -----------------------------------------------------


def test_it_reports_exact_agreement_for_aligned_and_fp32_pairs(result: dict) -> None:
    p = result["pairs"]
    for name in ("aligned_bf16", "aligned_fp16", "misaligned_fp32"):
        assert p[name]["logits_bit_identical"], name
        assert p[name]["frac_tokens_logprob_identical"] == 1.0
        assert p[name]["mean_kl"] == 0.0 and p[name]["frac_seq_ratio_outside_band"] == 0.0


def test_it_reports_a_measurable_mismatch_for_every_misaligned_pair(result: dict) -> None:
    p = result["pairs"]
    full = p["misaligned_bf16"]["mean_abs_delta_logprob"]
    assert full > 1e-2  # about a hundredth of a nat per token at 4 layers
    for name in ("only_rope_bf16", "only_swiglu_bf16", "only_residual_norm_bf16"):
        assert 0 < p[name]["mean_abs_delta_logprob"] < full, name
    # FP16's 10-bit mantissa shrinks the mismatch but does not remove it.
    fp16 = p["misaligned_fp16"]["mean_abs_delta_logprob"]
    assert 0 < fp16 < full / 4
    assert (
        p["misaligned_bf16"]["token_ratio_p99"]
        > 1.02
        > 0.98
        > p["misaligned_bf16"]["token_ratio_p01"]
    )


def test_it_shows_the_mismatch_growing_with_depth(result: dict) -> None:
    dp = result["depth"]
    hidden = dp["misaligned_bf16_hidden_rel_err"]
    assert hidden == sorted(hidden)
    logp = dp["misaligned_bf16_mean_abs_delta"]
    assert result["depth_growth_ratio"] == pytest.approx(logp[-1] / logp[0])
    assert result["depth_growth_ratio"] > 2.0
    assert np.corrcoef(dp["depth"], logp)[0, 1] > 0.9
    assert dp["aligned_bf16_mean_abs_delta"] == [0.0] * len(dp["depth"])
    # The reduction-order mismatch starts tiny and cascades through later roundings.
    split = dp["aligned_bf16_split_k_mean_abs_delta"]
    assert split[0] < logp[0] / 50 and split[-1] > 10 * split[0]


def test_it_shows_the_sequence_ratio_drifting_further_for_longer_sequences(result: dict) -> None:
    by_len = result["sequence"]["by_length"]
    assert by_len["rms_log_seq_ratio"][-1] > 1.5 * by_len["rms_log_seq_ratio"][0]


def test_it_returns_json_serialisable_deterministic_output(result: dict) -> None:
    assert json.loads(json.dumps(result))["seed"] == 0
    # Same seed, same bits: rebuild the bench from scratch and recompute one table row.
    bench = rl.make_bench(rl.ModelConfig(), rl.DataConfig(), 0)
    row = bench.compare(rl.TRAINERS["misaligned_bf16"], rl.HEADLINE_DEPTH)
    assert row == result["pairs"]["misaligned_bf16"]


def test_it_prints_a_report_and_returns_zero(
    result: dict, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    calls = []
    monkeypatch.setattr(rl, "run", lambda seed=0: calls.append(seed) or result)
    assert rl.main(["--seed", "1"]) == 0
    assert calls == [1]
    out = capsys.readouterr().out
    assert "mechanism as described" in out
    assert "misaligned_bf16" in out
