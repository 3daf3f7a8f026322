"""Tests for the BellowsKV reference program (mechanism as described, spec section 4)."""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pytest

from deepdives.reference import bellowskv as bk

TINY_MODEL = bk.ModelConfig(d_model=32, d_kv=16, n_layers=4, q_per_kv=2, hidden_rank=12)
TINY_FIT = bk.FitConfig(group_size=2, n_calib=512, n_test=96, n_queries=16)


def _dataset(drift: float, seed: int = 0, **model_changes: int) -> bk.Dataset:
    return bk.make_dataset(replace(TINY_MODEL, drift=drift, **model_changes), TINY_FIT, seed)


# --- Property 1: exact when the layers' inputs are identical and r >= rank(Y) --------------


@pytest.mark.parametrize("mode", ["concat", "first"])
def test_it_reconstructs_exactly_with_zero_drift_and_full_rank(mode: str) -> None:
    ds = _dataset(drift=0.0)
    fit = replace(TINY_FIT, input_mode=mode)
    methods = bk.fit_methods(ds, fit, baseline=False)
    # With no drift every layer sees the same d_model-dim input, so each group's targets
    # have rank <= d_model (32) although they have 2 * 2 * 16 = 64 columns.
    y = bk.group_targets(ds.calib_ys, [0, 1])
    assert np.linalg.matrix_rank(y) == TINY_MODEL.d_model < y.shape[1]
    rank = TINY_MODEL.d_model
    assert bk.calibration_error(ds, methods, rank) < 1e-6
    held_out = bk.shared_reconstruction(methods, ds.ev.xs, rank)
    assert bk.rel_error(held_out, ds.ev.ys) < 1e-6


def test_it_is_not_exact_once_layers_drift_apart_at_a_small_rank() -> None:
    ds = _dataset(drift=0.5)
    methods = bk.fit_methods(ds, TINY_FIT, baseline=False)
    assert bk.calibration_error(ds, methods, 8) > 1e-2


# --- Property 2: calibration error never rises with r --------------------------------------


@pytest.mark.parametrize("mode", ["concat", "first"])
def test_it_never_increases_calibration_error_as_rank_grows(mode: str) -> None:
    ds = _dataset(drift=0.3)
    methods = bk.fit_methods(ds, replace(TINY_FIT, input_mode=mode), baseline=False)
    errors = [bk.calibration_error(ds, methods, r) for r in range(1, 65)]
    assert all(b <= a + 1e-12 for a, b in zip(errors, errors[1:], strict=False))
    assert errors[0] > errors[-1]


# --- Property 3: reduced-rank regression beats other rank-r factorisations -----------------


@pytest.mark.parametrize("mode", ["concat", "first"])
def test_it_fits_at_least_as_well_as_pca_or_random_factorisations(mode: str) -> None:
    ds = _dataset(drift=0.3)
    layers = [0, 1]
    x = bk.group_inputs(ds.calib_xs, layers, mode)
    y = bk.group_targets(ds.calib_ys, layers)
    path = bk.fit_rrr(x, y, ridge=0.0)
    rng = np.random.default_rng(0)
    for r in (2, 6, 12, 24):
        rrr = bk.rel_error(bk.reconstruct(x, path, r), y)
        pca = bk.rel_error(bk.pca_then_lstsq(x, y, r), y)
        compress = rng.standard_normal((x.shape[1], r))
        z = x @ compress
        rand = bk.rel_error(z @ np.linalg.lstsq(z, y, rcond=None)[0], y)
        assert rrr <= pca * (1 + 1e-9), (r, rrr, pca)
        assert rrr <= rand * (1 + 1e-9), (r, rrr, rand)


def test_it_strictly_beats_pca_when_targets_leave_the_input_span() -> None:
    # In "first" mode the later layers' keys are nonlinear in the first layer's input, so the
    # best subspace for Y itself is not the best one reachable from X.
    ds = _dataset(drift=0.8)
    x = bk.group_inputs(ds.calib_xs, [0, 1], "first")
    y = bk.group_targets(ds.calib_ys, [0, 1])
    path = bk.fit_rrr(x, y, ridge=0.0)
    rrr = bk.rel_error(bk.reconstruct(x, path, 8), y)
    assert rrr < bk.rel_error(bk.pca_then_lstsq(x, y, 8), y)


# --- Property 4: cache arithmetic ----------------------------------------------------------


def test_it_counts_cache_bytes_as_r_values_per_group() -> None:
    assert bk.cache_bytes_per_token(rank=36, n_groups=2, bytes_per_value=2) == 144
    assert bk.cache_bytes_per_token(rank=8, n_groups=1, bytes_per_value=1) == 8
    assert bk.compression_ratio(rank=36, group_size=4, d_kv=64) == pytest.approx(512 / 36)
    assert bk.compression_ratio(rank=16, group_size=1, d_kv=64) == 8.0


def test_it_reports_budgets_consistent_with_the_arithmetic(result: dict) -> None:
    h = result["headline"]
    assert h["uncompressed_bytes_per_token"] / h["cache_bytes_per_token"] == pytest.approx(
        h["compression_ratio"]
    )
    assert 13.0 < h["compression_ratio"] < 15.0  # the daily's "about 14x"
    b = result["by_budget"]
    group = result["fit"]["group_size"]
    assert [p * group for p in b["per_layer_rank"]] == b["latent_size"]


# --- Property 5: RoPE after restore ---------------------------------------------------------


def test_it_matches_exact_rope_keys_and_attention_when_reconstruction_is_exact() -> None:
    ds = _dataset(drift=0.0)
    methods = bk.fit_methods(ds, TINY_FIT, baseline=False)
    recon = bk.shared_reconstruction(methods, ds.ev.xs, TINY_MODEL.d_model)
    d, pos = TINY_MODEL.d_kv, np.arange(TINY_FIT.n_test)
    rotated = bk.rope(recon[..., :d], pos, TINY_MODEL.rope_base)
    exact = bk.rope(ds.ev.ys[..., :d], pos, TINY_MODEL.rope_base)
    np.testing.assert_allclose(rotated, exact, atol=1e-6)
    scores = bk.score(ds.model, ds.ev, recon)
    assert scores["attention_rel_error"] < 1e-6
    assert scores["attention_cosine"] == pytest.approx(1.0, abs=1e-9)


def test_it_uses_a_rope_that_depends_only_on_relative_position() -> None:
    rng = np.random.default_rng(1)
    q, k = rng.standard_normal((2, 1, 64))
    base = 10000.0

    def dot(m: int, n: int) -> float:
        qm = bk.rope(q, np.array([m]), base)
        kn = bk.rope(k, np.array([n]), base)
        return float((qm @ kn.T)[0, 0])

    assert dot(7, 3) == pytest.approx(dot(104, 100), rel=1e-9)
    assert dot(7, 3) != pytest.approx(dot(7, 4), rel=1e-6)
    rotated = bk.rope(q, np.array([123]), base)
    assert np.linalg.norm(rotated) == pytest.approx(np.linalg.norm(q))


# --- Sanity of the comparison ---------------------------------------------------------------


def test_it_makes_a_group_of_one_identical_to_the_per_layer_baseline() -> None:
    ds = _dataset(drift=0.3)
    fit = replace(TINY_FIT, group_size=1)
    series = bk.compare_at_budgets(ds, fit, bk.fit_methods(ds, fit), (3, 7))
    for metric in ("key_rel_error", "value_rel_error", "attention_rel_error"):
        np.testing.assert_allclose(series[f"shared_{metric}"], series[f"per_layer_{metric}"])


def test_it_builds_a_shallow_model_as_a_prefix_of_a_deep_one() -> None:
    deep = bk.make_model(TINY_MODEL, np.random.default_rng(4))
    shallow = bk.make_model(replace(TINY_MODEL, n_layers=2), np.random.default_rng(4))
    assert np.array_equal(deep.w_k[:2], shallow.w_k)
    assert np.array_equal(deep.mlp_out[:2], shallow.mlp_out)


# --- The claim's direction, from run() -----------------------------------------------------


def test_it_beats_per_layer_low_rank_at_every_equal_budget(result: dict) -> None:
    b = result["by_budget"]
    for metric in ("key_rel_error", "value_rel_error", "attention_rel_error"):
        shared, per_layer = b[f"shared_{metric}"], b[f"per_layer_{metric}"]
        assert all(s < p for s, p in zip(shared, per_layer, strict=True)), metric
    assert all(
        s > p
        for s, p in zip(b["shared_attention_cosine"], b["per_layer_attention_cosine"], strict=True)
    )


def test_it_wins_clearly_at_the_headline_budget(result: dict) -> None:
    h = result["headline"]
    assert h["shared_attention_rel_error"] * 2 < h["per_layer_attention_rel_error"]
    assert h["shared_key_rel_error"] * 2 < h["per_layer_key_rel_error"]
    assert h["shared_attention_cosine"] > 0.98


def test_it_loses_accuracy_as_the_budget_shrinks(result: dict) -> None:
    b = result["by_budget"]
    for key in ("shared_attention_rel_error", "per_layer_attention_rel_error"):
        assert b[key] == sorted(b[key], reverse=True), key  # budgets ascend, errors descend


def test_it_shrinks_the_advantage_as_layers_drift_apart(result: dict) -> None:
    d = result["by_drift"]
    shared = d["shared_attention_rel_error"]
    assert shared == sorted(shared)
    ratio = d["error_ratio_per_layer_over_shared"]
    assert ratio[-1] < ratio[0]
    assert min(ratio) > 1.0  # still ahead at the largest drift tried


def test_it_gets_better_with_larger_groups_at_a_fixed_ratio(result: dict) -> None:
    g = result["by_group_size"]
    errors = g["shared_attention_rel_error"]
    assert errors == sorted(errors, reverse=True)
    assert errors[0] > 2 * errors[g["group_size"].index(4)]


def test_it_returns_json_serialisable_output(result: dict) -> None:
    assert json.loads(json.dumps(result))["system"] == "BellowsKV"
    assert result["mechanism"].startswith("as described")


def test_it_reproduces_the_same_data_and_fits_from_the_same_seed() -> None:
    a, b, c = _dataset(0.3, seed=5), _dataset(0.3, seed=5), _dataset(0.3, seed=6)
    assert np.array_equal(a.calib_ys, b.calib_ys)
    assert not np.array_equal(a.calib_ys, c.calib_ys)
    fa, fb = bk.fit_methods(a, TINY_FIT), bk.fit_methods(b, TINY_FIT)
    assert bk.calibration_error(a, fa, 5) == bk.calibration_error(b, fb, 5)


def test_it_prints_a_report_and_returns_zero(
    result: dict, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    seeds: list[int] = []
    monkeypatch.setattr(bk, "run", lambda seed=0: seeds.append(seed) or result)
    assert bk.main(["--seed", "3"]) == 0
    assert seeds == [3]
    out = capsys.readouterr().out
    assert "mechanism as described" in out
    assert f"{result['headline']['shared_attention_rel_error']:.4f}" in out
