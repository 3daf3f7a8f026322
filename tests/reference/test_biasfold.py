"""Tests for the bias-folding reference (mechanism as described, spec section 11 and B3)."""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pytest

from deepdives.reference import biasfold as bf

SMALL = bf.SceneConfig(context=512, head_dim=32, compaction=16, n_ref=256, n_test=128, n_live=64)
FOLD = bf.FoldConfig()


def _variants(
    seed: int = 0, cfg: bf.SceneConfig = SMALL, fold: bf.FoldConfig = FOLD
) -> bf.Variants:
    rng = np.random.default_rng(seed)
    scene = bf.make_scene(bf.make_generator(cfg, rng), rng)
    return bf.compact_and_fold(scene, cfg, fold)


# --- Attention Matching (B3) ---------------------------------------------------------------


def test_it_keeps_the_budgeted_keys_and_matches_attention_mass() -> None:
    v = _variants(1)
    am, sc = v.am, v.scene
    assert len(am.idx) == SMALL.context // SMALL.compaction
    assert np.array_equal(am.c1, sc.k[am.idx])
    # Mass matching: with beta, the kept keys carry far more of the original mass than without.
    s = sc.q_ref @ sc.k.T * sc.scale
    true_mass = np.exp(s).sum(axis=1)
    s_kept = sc.q_ref @ am.c1.T * sc.scale
    with_beta = np.exp(s_kept + am.beta).sum(axis=1)
    without = np.exp(s_kept).sum(axis=1)
    err_with = np.abs(np.log(with_beta / true_mass)).mean()
    err_without = np.abs(np.log(without / true_mass)).mean()
    assert err_with < 0.25 and err_with < err_without / 3


def test_it_makes_the_biased_cache_far_better_than_dropping_the_bias() -> None:
    v = _variants(2)
    sc = v.scene
    truth = bf.full_attention(sc, sc.q_test, with_live=True)
    biased = bf.rel_err(v.output("am_biased", sc.q_test), truth)
    dropped = bf.rel_err(v.output("drop_bias", sc.q_test), truth)
    assert biased < dropped / 2


# --- Property 1: (a) is exact --------------------------------------------------------------


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_it_reproduces_biased_attention_exactly_with_one_extra_dimension(seed: int) -> None:
    v = _variants(seed)
    q = np.random.default_rng(100 + seed).standard_normal((64, SMALL.head_dim))  # any queries
    for with_live in (True, False):
        aug = v.output("extra_dim", q, with_live)
        biased = v.output("am_biased", q, with_live)
        np.testing.assert_allclose(aug, biased, rtol=0, atol=1e-12)


def test_it_leaves_live_token_logits_unchanged_in_the_extra_dimension() -> None:
    v = _variants(3)
    q = v.scene.q_test
    live = v.scene.k_live
    aug_logits = bf.augment_queries(q) @ bf.augment_keys(live, np.zeros(len(live))).T
    assert np.array_equal(aug_logits, q @ live.T)


# --- Property 2: (b) is exact when every query has q . w = 1 -------------------------------


def test_it_folds_exactly_when_every_query_projects_to_one() -> None:
    v = _variants(4)
    rng = np.random.default_rng(5)
    d = SMALL.head_dim
    q_ref = rng.standard_normal((300, d))
    q_ref[:, 7] = 1.0  # a constant coordinate: w = e_7 satisfies q . w = 1 for every query
    w = bf.fold_direction(q_ref, ridge=0.0)
    np.testing.assert_allclose(w, np.eye(d)[7], atol=1e-10)
    q = rng.standard_normal((50, d))
    q[:, 7] = 1.0
    am = v.am
    folded = bf.standard_attention(q, bf.fold_keys(am.c1, am.beta, w), am.c2, v.scene.scale)
    biased = bf.biased_attention(q, am.c1, am.c2, am.beta, v.scene.scale)
    np.testing.assert_allclose(folded, biased, rtol=0, atol=1e-9)


# --- Property 3: the fold's logit error is beta * (q . w - 1), exactly ----------------------


def test_it_moves_each_logit_by_beta_times_the_projection() -> None:
    v = _variants(6)
    pr, sc = v.pruned, v.scene
    q = np.random.default_rng(7).standard_normal((40, SMALL.head_dim)) * 3
    moved = (q @ bf.fold_keys(pr.c1, pr.beta, v.w).T - q @ pr.c1.T) * sc.scale
    error = moved - pr.beta[None, :]
    np.testing.assert_allclose(error, pr.beta[None, :] * (q @ v.w - 1)[:, None], rtol=0, atol=1e-10)


# --- Property 4: the value refit never hurts on the reference queries ----------------------


@pytest.mark.parametrize("strength", [0.0, 0.5, 2.0])
def test_it_never_increases_reference_error_when_refitting_values(strength: float) -> None:
    # Plain least squares (no ridge): the refit minimises exactly the error measured here.
    fold = replace(FOLD, value_ridge=0.0)
    v = _variants(8, replace(SMALL, mean_strength=strength), fold)
    sc = v.scene
    truth = bf.full_attention(sc, sc.q_ref, with_live=False)
    refit = bf.rel_err(v.output("fold_refit", sc.q_ref, False), truth)
    plain = bf.rel_err(v.output("fold", sc.q_ref, False), truth)
    assert refit <= plain + 1e-12


# --- Property 5: with beta = 0 every variant is the original cache -------------------------


def test_it_reduces_every_variant_to_the_original_keys_when_beta_is_zero() -> None:
    v = _variants(9)
    am0 = replace(v.am, beta=np.zeros_like(v.am.beta))
    v0 = bf.build_variants(v.scene, am0, FOLD)
    assert v0.n_dropped == 0
    assert np.array_equal(bf.fold_keys(am0.c1, am0.beta, v0.w), am0.c1)
    assert np.array_equal(bf.fold_keys(am0.c1, am0.beta, v0.w_mean_one), am0.c1)
    q = v.scene.q_test
    base = v0.output("drop_bias", q)
    for name in ("am_biased", "extra_dim", "fold", "fold_mean_one"):
        np.testing.assert_allclose(v0.output(name, q), base, rtol=0, atol=1e-14, err_msg=name)
    assert np.array_equal(v0.c2_refit, v0.c2_drop_refit)
    assert np.array_equal(v0.output("fold_refit", q), v0.output("drop_bias_refit", q))


# --- The fold direction and the dropping rule ----------------------------------------------


def test_it_finds_the_least_squares_direction_parallel_to_whitened_mean() -> None:
    rng = np.random.default_rng(10)
    q = rng.standard_normal((2000, 16)) @ rng.standard_normal((16, 16)) + 0.7
    w = bf.fold_direction(q, ridge=0.0)
    mu, cov = q.mean(axis=0), np.cov(q.T, bias=True)
    white = np.linalg.solve(cov, mu)
    s = mu @ white
    np.testing.assert_allclose(w, white / (1 + s), rtol=1e-8)
    assert np.mean(q @ w) == pytest.approx(s / (1 + s))
    assert np.mean(q @ bf.fold_direction(q, ridge=0.0, mean_one=True)) == pytest.approx(1.0)


def test_it_drops_keys_with_negligible_mass_before_folding() -> None:
    v = _variants(11)
    beta = v.am.beta.copy()
    beta[:3] = np.log(1e-12)
    pruned, n = bf.drop_negligible(replace(v.am, beta=beta), 1e-3)
    assert n == int((beta < np.log(1e-3)).sum()) >= 3
    assert len(pruned.beta) == len(beta) - n
    assert (pruned.beta >= np.log(1e-3)).all()


# --- The claim's direction, from run() -----------------------------------------------------


def test_it_orders_the_variants_as_the_spec_says(result: dict) -> None:
    h = result["headline"]
    e = h["test_rel_err"]
    assert e["extra_dim"] == pytest.approx(e["am_biased"], abs=1e-12)
    assert h["extra_dim_max_abs_diff_vs_biased"] < 1e-12
    assert h["max_logit_identity_residual"] < 1e-10
    assert e["am_biased"] < e["fold_refit"] <= e["fold"] < e["drop_bias_refit"] < e["drop_bias"]
    assert e["drop_bias"] > 3 * e["fold"]
    assert h["gap_closed"]["fold"] > 0.9 and h["gap_closed"]["fold_refit"] > 0.9
    assert h["kernel_needs"]["fold_refit"].startswith("none")
    assert h["test_qw_mean"] == pytest.approx(1.0, abs=0.02)


def test_it_loses_the_folds_benefit_as_the_shared_query_component_fades(result: dict) -> None:
    sw = result["by_mean_strength"]
    strengths = sw["mean_strength"]
    i0, i2 = strengths.index(0.0), strengths.index(2.0)
    # With a strong shared component the fold closes almost all of the gap ...
    for i, r in enumerate(strengths):
        if r >= 1.0:
            assert sw["fold_refit_gap_closed"][i] > 0.85
    # ... without one, the plain fold is no better than dropping the bias, and the refit
    # is what rescues it.
    assert sw["fold"][i0] > 0.95 * sw["drop_bias"][i0]
    assert sw["fold_refit"][i0] < 0.9 * sw["fold"][i0]
    assert sw["fold_refit_gap_closed"][-1] > sw["fold_refit_gap_closed"][i0] + 0.2
    assert sw["test_qw_std"][i2] < sw["test_qw_std"][i0] / 4


def test_it_serves_a_whole_gqa_group_with_one_fold(result: dict) -> None:
    gq = result["by_gqa_group"]
    for i in range(len(gq["group_size"])):
        gap = gq["drop_bias"][i] - gq["am_biased"][i]
        assert (gq["drop_bias"][i] - gq["fold_refit"][i]) / gap > 0.85
    assert gq["test_qw_std"][-1] > gq["test_qw_std"][0]


def test_it_returns_json_serialisable_deterministic_output(result: dict) -> None:
    assert json.loads(json.dumps(result))["seed"] == 0
    # Same seed, same numbers: recompute the last sweep point from its heads, twice.
    cfg = replace(bf.SceneConfig(), mean_strength=bf.MEAN_STRENGTHS[-1])
    for _ in range(2):
        errors = [
            bf.one_head(cfg, bf.FoldConfig(), 0, head)[1]["test_rel_err"]["fold"]
            for head in range(bf.SWEEP_HEADS)
        ]
        assert result["by_mean_strength"]["fold"][-1] == float(np.mean(errors))


def test_it_prints_a_report_and_returns_zero(
    result: dict, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    calls = []
    monkeypatch.setattr(bf, "run", lambda seed=0: calls.append(seed) or result)
    assert bf.main(["--seed", "1"]) == 0
    assert calls == [1]
    out = capsys.readouterr().out
    assert "mechanism as described" in out
    assert "fold_refit" in out
