"""BellowsKV reference: one shared latent for a group of adjacent layers (mechanism as described).

No BellowsKV paper or code could be found, so this is OUR derivation of the design the daily
describes: concatenate a token's hidden states for n adjacent layers, multiply them by one
compression matrix to get a single shared vector (the only thing cached for those layers), and
give every layer its own restore matrix that maps the shared vector back to that layer's keys
and values. Both matrices are fitted once, offline, by least squares on calibration tokens, with
no training. Mechanism as described, not the authors' code.

What is modelled, on a synthetic residual stream:

* Hidden states with low-rank structure plus noise, updated layer by layer as
  ``x[l+1] = x[l] + drift * mlp_l(x[l])``, so adjacent layers see similar inputs.
* Per-layer random K and V projections of the RMS-normalised hidden state (keys before RoPE).
* The fit is a reduced-rank regression (the least-squares optimum at rank r):
  ``B = lstsq(X, Y)``, ``W_r`` = top right singular vectors of ``X B``, ``C = B W_r``,
  ``R = W_r^T``; the cache holds ``z = X C`` (r numbers per token per group).
* The baseline spends the same cache budget per layer: each layer keeps its own rank-(r/n)
  latent, fitted the same way.
* Errors are measured on held-out tokens, for K and V, and for the output of GQA attention with
  RoPE applied after restoring the keys.

Run ``python -m deepdives.reference.bellowskv --seed 0`` from the project root.
"""

from __future__ import annotations

import argparse
import time
from dataclasses import asdict, dataclass, replace

import numpy as np

# --------------------------------------------------------------------------------------------
# Parameters
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ModelConfig:
    """The synthetic transformer whose KV cache is compressed."""

    d_model: int = 256
    d_kv: int = 64  # one KV head per layer
    n_layers: int = 8
    q_per_kv: int = 4  # query heads sharing the KV head (GQA)
    hidden_rank: int = 48  # dimensions of the low-rank part of the residual stream
    spectrum_decay: float = 0.95  # singular value i of that part is decay**i
    noise: float = 0.05  # isotropic noise added to the residual stream, per dimension
    drift: float = 0.1  # epsilon: how much each layer's MLP moves the residual stream
    mlp_ratio: int = 2
    rope_base: float = 10000.0


@dataclass(frozen=True)
class FitConfig:
    """How the latents are fitted and evaluated."""

    group_size: int = 4  # n adjacent layers sharing one latent
    input_mode: str = "concat"  # "concat": all n layers' inputs (the daily); "first": layer l0
    n_calib: int = 2048  # calibration tokens (>= inputs per group, so the fit is determined)
    n_test: int = 512  # held-out tokens, read as one sequence for attention
    n_queries: int = 64  # last positions of the held-out sequence used as decode queries
    ridge: float = 1e-9  # relative ridge for the normal equations (numerical safety only)
    bytes_per_value: int = 2  # BF16 cache


BUDGETS = (8, 16, 24, 36, 48, 64, 96, 128)  # latent size r per group of 4 layers
HEADLINE_BUDGET = 36  # 2 * 4 * 64 / 36 = 14.2x, near the daily's "about 14x"
DRIFTS = (0.0, 0.1, 0.2, 0.4, 0.8)  # layer-to-layer drift sweep
GROUP_SIZES = (1, 2, 4, 8)  # group-size sweep, at a fixed compression ratio
SWEEP_RATIO = 16  # compression ratio held fixed in the group-size sweep

# --------------------------------------------------------------------------------------------
# Synthetic model
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SyntheticModel:
    cfg: ModelConfig
    basis: np.ndarray  # (hidden_rank, d_model) rows span the low-rank part of the stream
    mlp_in: np.ndarray  # (L, d_model, mlp_ratio * d_model)
    mlp_out: np.ndarray  # (L, mlp_ratio * d_model, d_model)
    w_k: np.ndarray  # (L, d_model, d_kv)
    w_v: np.ndarray  # (L, d_model, d_kv)
    w_q: np.ndarray  # (L, d_model, q_per_kv * d_kv)


def make_model(cfg: ModelConfig, rng: np.random.Generator) -> SyntheticModel:
    d, h = cfg.d_model, cfg.mlp_ratio * cfg.d_model
    spectrum = cfg.spectrum_decay ** np.arange(cfg.hidden_rank)
    basis = np.linalg.qr(rng.standard_normal((d, cfg.hidden_rank)))[0].T * spectrum[:, None]
    # Scale the low-rank part so its RMS per dimension is about 1 before the noise is added.
    basis *= np.sqrt(d / np.sum(spectrum**2))
    # Draw layer by layer, so a model with fewer layers is exactly a prefix of a deeper one.
    shapes = ((d, h), (h, d), (d, cfg.d_kv), (d, cfg.d_kv), (d, cfg.q_per_kv * cfg.d_kv))
    per_layer = [
        [rng.standard_normal(shape) / np.sqrt(shape[0]) for shape in shapes]
        for _ in range(cfg.n_layers)
    ]
    mlp_in, mlp_out, w_k, w_v, w_q = (np.stack(ws) for ws in zip(*per_layer, strict=True))
    return SyntheticModel(cfg, basis, mlp_in, mlp_out, w_k, w_v, w_q)


def rms_norm(x: np.ndarray) -> np.ndarray:
    return x / np.sqrt(np.mean(x**2, axis=-1, keepdims=True) + 1e-6)


def layer_inputs(model: SyntheticModel, n_tokens: int, rng: np.random.Generator) -> np.ndarray:
    """Normalised attention inputs of every layer, shape (L, n_tokens, d_model).

    Tokens are independent draws: the stream has no sequence dynamics, only the layer-to-layer
    structure that BellowsKV exploits.
    """
    cfg = model.cfg
    x = rng.standard_normal((n_tokens, cfg.hidden_rank)) @ model.basis
    x += cfg.noise * rng.standard_normal((n_tokens, cfg.d_model))
    # The forward pass runs in float32 (it only has to define the data, and is the slow part);
    # the inputs are widened to float64 afterwards so all fitting is done in double precision.
    x = x.astype(np.float32)
    out = np.empty((cfg.n_layers, n_tokens, cfg.d_model), np.float32)
    for layer in range(cfg.n_layers):
        out[layer] = rms_norm(x)
        # tanh keeps the update zero-mean; a ReLU's positive mean would add one shared bias
        # direction to every token and make the cache artificially easy to compress.
        hidden = np.tanh(out[layer] @ model.mlp_in[layer].astype(np.float32))
        x = x + np.float32(cfg.drift) * (hidden @ model.mlp_out[layer].astype(np.float32))
    return out.astype(np.float64)


def kv_targets(model: SyntheticModel, xs: np.ndarray) -> np.ndarray:
    """Per-layer ``[K | V]`` (keys before RoPE), shape (L, n_tokens, 2 * d_kv)."""
    return np.concatenate([xs @ model.w_k, xs @ model.w_v], axis=-1)


# --------------------------------------------------------------------------------------------
# Reduced-rank regression
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RRRPath:
    """One least-squares fit from which every rank-r (compress, restore) pair is read off."""

    coef: np.ndarray  # B, (p, q): full-rank least-squares map from inputs to targets
    directions: np.ndarray  # (q, q): right singular vectors of X B, strongest first

    def compress(self, rank: int) -> np.ndarray:
        return self.coef @ self.directions[:, :rank]  # C, (p, r)

    def restore(self, rank: int) -> np.ndarray:
        return self.directions[:, :rank].T  # R, (r, q)


def fit_rrr(x: np.ndarray, y: np.ndarray, ridge: float) -> RRRPath:
    """Least squares then an SVD of the fitted values: the optimal rank-r map for every r.

    Everything goes through the Gram matrix X^T X, so the cost is one (p x p) solve and one
    (q x q) eigendecomposition however many tokens are used.
    """
    gram = x.T @ x
    xty = x.T @ y
    lam = ridge * np.trace(gram) / gram.shape[0]
    coef = np.linalg.solve(gram + lam * np.eye(gram.shape[0]), xty)
    # Right singular vectors of X B are the eigenvectors of (X B)^T (X B) = B^T G B, which
    # equals B^T X^T Y - lam B^T B because (G + lam I) B = X^T Y: one q x p x q product.
    fitted_gram = coef.T @ xty - lam * (coef.T @ coef)
    evals, evecs = np.linalg.eigh((fitted_gram + fitted_gram.T) / 2)
    return RRRPath(coef, evecs[:, np.argsort(evals)[::-1]])


def reconstruct(x: np.ndarray, path: RRRPath, rank: int) -> np.ndarray:
    """What the decoder sees: cache z = x C, then expand with R."""
    return (x @ path.compress(rank)) @ path.restore(rank)


def rel_error(approx: np.ndarray, exact: np.ndarray) -> float:
    return float(np.linalg.norm(approx - exact) / np.linalg.norm(exact))


def pca_then_lstsq(x: np.ndarray, y: np.ndarray, rank: int) -> np.ndarray:
    """A rival rank-r factorisation: PCA of the targets, then least squares for the compressor."""
    directions = np.linalg.svd(y, full_matrices=False)[2][:rank].T  # (q, r)
    compress = np.linalg.lstsq(x, y @ directions, rcond=None)[0]
    return (x @ compress) @ directions.T


# --------------------------------------------------------------------------------------------
# Grouping layers
# --------------------------------------------------------------------------------------------


def groups(n_layers: int, group_size: int) -> list[list[int]]:
    if n_layers % group_size:
        raise ValueError("group_size must divide n_layers")
    return [list(range(s, s + group_size)) for s in range(0, n_layers, group_size)]


def group_inputs(xs: np.ndarray, layers: list[int], mode: str) -> np.ndarray:
    """The compressor's input for one group: all layers' inputs side by side, or the first."""
    if mode == "concat":
        return np.concatenate([xs[layer] for layer in layers], axis=-1)
    if mode == "first":
        return xs[layers[0]]
    raise ValueError(f"unknown input_mode {mode!r}")


def group_targets(ys: np.ndarray, layers: list[int]) -> np.ndarray:
    return np.concatenate([ys[layer] for layer in layers], axis=-1)


def split_targets(y: np.ndarray, n_layers: int) -> np.ndarray:
    """(n, G * 2 d_kv) -> (G, n, 2 d_kv)."""
    return np.stack(np.split(y, n_layers, axis=-1))


def cache_bytes_per_token(rank: int, n_groups: int, bytes_per_value: int) -> int:
    """Bytes the compressed cache stores per token: r values per group."""
    return rank * n_groups * bytes_per_value


def compression_ratio(rank: int, group_size: int, d_kv: int) -> float:
    """Full K and V for the group's layers versus one r-value latent."""
    return 2 * group_size * d_kv / rank


# --------------------------------------------------------------------------------------------
# Attention
# --------------------------------------------------------------------------------------------


def rope(x: np.ndarray, positions: np.ndarray, base: float) -> np.ndarray:
    """Rotary embedding, half-split layout: channel i pairs with channel i + d/2."""
    half = x.shape[-1] // 2
    freqs = base ** (-np.arange(half) / half)
    ang = positions[:, None] * freqs[None, :]
    cos, sin = np.cos(ang), np.sin(ang)
    x1, x2 = x[..., :half], x[..., half:]
    return np.concatenate([x1 * cos - x2 * sin, x1 * sin + x2 * cos], axis=-1)


def causal_attention(
    q: np.ndarray, k: np.ndarray, v: np.ndarray, q_pos: np.ndarray, base: float
) -> np.ndarray:
    """GQA attention for every layer at once, with RoPE applied to queries and restored keys.

    Shapes: q (L, heads, m, d) at positions ``q_pos``; k and v (L, T, d) at positions 0..T-1.
    RoPE goes on after the keys are restored, as it must when the latent is cached pre-RoPE.
    """
    k_pos = np.arange(k.shape[-2])
    qr = rope(q, q_pos, base)
    kr = rope(k, k_pos, base)
    s = qr @ kr[:, None].swapaxes(-1, -2) / np.sqrt(k.shape[-1])  # (L, heads, m, T)
    s = np.where(k_pos[None, :] <= q_pos[:, None], s, -np.inf)
    p = np.exp(s - s.max(axis=-1, keepdims=True))
    return (p / p.sum(axis=-1, keepdims=True)) @ v[:, None]


@dataclass(frozen=True)
class Evaluation:
    """Held-out tokens plus the exact per-layer K, V and attention outputs."""

    xs: np.ndarray  # (L, n, d_model)
    ys: np.ndarray  # (L, n, 2 d_kv)
    queries: np.ndarray  # (L, heads, m, d_kv), before RoPE
    q_pos: np.ndarray  # (m,)
    outputs: np.ndarray  # (L, heads, m, d_kv): exact attention outputs


def kv_attention(
    model: SyntheticModel, queries: np.ndarray, kv: np.ndarray, q_pos: np.ndarray
) -> np.ndarray:
    """Attention outputs when every layer reads the given ``[K | V]`` (L, T, 2 d_kv)."""
    d = model.cfg.d_kv
    return causal_attention(queries, kv[..., :d], kv[..., d:], q_pos, model.cfg.rope_base)


def make_evaluation(model: SyntheticModel, fit: FitConfig, rng: np.random.Generator) -> Evaluation:
    cfg = model.cfg
    xs = layer_inputs(model, fit.n_test, rng)
    ys = kv_targets(model, xs)
    q_pos = np.arange(fit.n_test - fit.n_queries, fit.n_test)
    q = (xs[:, q_pos] @ model.w_q).reshape(cfg.n_layers, fit.n_queries, cfg.q_per_kv, cfg.d_kv)
    queries = q.transpose(0, 2, 1, 3)
    return Evaluation(xs, ys, queries, q_pos, kv_attention(model, queries, ys, q_pos))


def score(model: SyntheticModel, ev: Evaluation, recon: np.ndarray) -> dict[str, float]:
    """Held-out K, V and attention-output errors of reconstructed per-layer ``[K | V]``."""
    d = model.cfg.d_kv
    outs = kv_attention(model, ev.queries, recon, ev.q_pos)
    a, b = outs.reshape(-1, d), ev.outputs.reshape(-1, d)
    cos = np.sum(a * b, axis=1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))
    return {
        "key_rel_error": rel_error(recon[..., :d], ev.ys[..., :d]),
        "value_rel_error": rel_error(recon[..., d:], ev.ys[..., d:]),
        "attention_rel_error": rel_error(outs, ev.outputs),
        "attention_cosine": float(cos.mean()),
    }


# --------------------------------------------------------------------------------------------
# The two methods at equal cache budget
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Dataset:
    """A model with its calibration tokens and held-out evaluation set."""

    model: SyntheticModel
    calib_xs: np.ndarray  # (L, n_calib, d_model)
    calib_ys: np.ndarray  # (L, n_calib, 2 d_kv)
    ev: Evaluation


def make_dataset(model_cfg: ModelConfig, fit: FitConfig, seed: int) -> Dataset:
    # Separate generators for weights and tokens: a drift sweep then changes only the drift,
    # with the same weights and the same token draws (common random numbers).
    model = make_model(model_cfg, np.random.default_rng(seed))
    data_rng = np.random.default_rng(seed + 1)
    calib_xs = layer_inputs(model, fit.n_calib, data_rng)
    ev = make_evaluation(model, fit, data_rng)
    return Dataset(model, calib_xs, kv_targets(model, calib_xs), ev)


@dataclass(frozen=True)
class FittedMethods:
    """Fits on calibration tokens: one path per group (shared) and one per layer (baseline)."""

    shared: list[RRRPath]
    per_layer: list[RRRPath]  # empty when the baseline is not needed
    layer_groups: list[list[int]]
    mode: str


def fit_methods(ds: Dataset, fit: FitConfig, baseline: bool = True) -> FittedMethods:
    layer_groups = groups(ds.model.cfg.n_layers, fit.group_size)
    shared = [
        fit_rrr(
            group_inputs(ds.calib_xs, g, fit.input_mode),
            group_targets(ds.calib_ys, g),
            fit.ridge,
        )
        for g in layer_groups
    ]
    per_layer = (
        [fit_rrr(x, y, fit.ridge) for x, y in zip(ds.calib_xs, ds.calib_ys, strict=True)]
        if baseline
        else []
    )
    return FittedMethods(shared, per_layer, layer_groups, fit.input_mode)


def shared_reconstruction(methods: FittedMethods, xs: np.ndarray, rank: int) -> np.ndarray:
    parts = [
        split_targets(reconstruct(group_inputs(xs, g, methods.mode), path, rank), len(g))
        for g, path in zip(methods.layer_groups, methods.shared, strict=True)
    ]
    return np.concatenate(parts)


def per_layer_reconstruction(methods: FittedMethods, xs: np.ndarray, rank: int) -> np.ndarray:
    return np.stack([reconstruct(xs[i], path, rank) for i, path in enumerate(methods.per_layer)])


def compare_at_budgets(
    ds: Dataset, fit: FitConfig, methods: FittedMethods, budgets: tuple[int, ...]
) -> dict[str, list[float]]:
    """Error-versus-budget series for the shared latent and (if fitted) the per-layer baseline."""
    g = fit.group_size
    series: dict[str, list[float]] = {
        "latent_size": list(budgets),
        "per_layer_rank": [r // g for r in budgets],
        "compression_ratio": [compression_ratio(r, g, ds.model.cfg.d_kv) for r in budgets],
    }
    for r in budgets:
        if r % g:
            raise ValueError("every budget must split evenly across the group's layers")
        recons = {"shared": shared_reconstruction(methods, ds.ev.xs, r)}
        if methods.per_layer:
            recons["per_layer"] = per_layer_reconstruction(methods, ds.ev.xs, r // g)
        for name, recon in recons.items():
            for metric, value in score(ds.model, ds.ev, recon).items():
                series.setdefault(f"{name}_{metric}", []).append(value)
    return series


def calibration_error(ds: Dataset, methods: FittedMethods, rank: int) -> float:
    """Relative error of the shared latent on the calibration tokens (what the fit minimises)."""
    return rel_error(shared_reconstruction(methods, ds.calib_xs, rank), ds.calib_ys)


# --------------------------------------------------------------------------------------------
# Experiments
# --------------------------------------------------------------------------------------------


def row_at(series: dict[str, list[float]], index: int) -> dict[str, float]:
    return {k: v[index] for k, v in series.items()}


def drift_sweep(model_cfg: ModelConfig, fit: FitConfig, seed: int) -> dict:
    """Both methods at the headline budget as layer-to-layer drift grows.

    Run on the first group only (a model of ``group_size`` layers, which is exactly the first
    group of the full model), which keeps the sweep cheap without changing what it measures.
    """
    out: dict[str, list[float]] = {"drift": list(DRIFTS)}
    for eps in DRIFTS:
        cfg = replace(model_cfg, drift=eps, n_layers=fit.group_size)
        ds = make_dataset(cfg, fit, seed)
        row = row_at(compare_at_budgets(ds, fit, fit_methods(ds, fit), (HEADLINE_BUDGET,)), 0)
        for key in (
            "shared_key_rel_error",
            "per_layer_key_rel_error",
            "shared_attention_rel_error",
            "per_layer_attention_rel_error",
        ):
            out.setdefault(key, []).append(row[key])
        out.setdefault("error_ratio_per_layer_over_shared", []).append(
            row["per_layer_attention_rel_error"] / row["shared_attention_rel_error"]
        )
    return out


def group_sweep(ds: Dataset, fit: FitConfig, fitted: dict[int, FittedMethods]) -> dict:
    """The shared latent for growing groups, at a fixed compression ratio.

    ``fitted`` holds fits already made for some group sizes, so they are not repeated.
    """
    out: dict[str, list[float]] = {"group_size": list(GROUP_SIZES), "latent_size": []}
    for g in GROUP_SIZES:
        r = 2 * g * ds.model.cfg.d_kv // SWEEP_RATIO
        fit_g = replace(fit, group_size=g)
        methods = fitted.get(g) or fit_methods(ds, fit_g, baseline=False)
        row = row_at(compare_at_budgets(ds, fit_g, methods, (r,)), 0)
        out["latent_size"].append(r)
        for key in ("shared_key_rel_error", "shared_value_rel_error", "shared_attention_rel_error"):
            out.setdefault(key, []).append(row[key])
    return out


def run(seed: int = 0) -> dict[str, object]:
    """Run every measurement; the result is plain JSON-serialisable data."""
    model_cfg, fit = ModelConfig(), FitConfig()
    ds = make_dataset(model_cfg, fit, seed)
    methods = fit_methods(ds, fit)
    by_budget = compare_at_budgets(ds, fit, methods, BUDGETS)
    fit_first = replace(fit, input_mode="first")
    first_input = compare_at_budgets(ds, fit_first, fit_methods(ds, fit_first, False), BUDGETS)
    at = BUDGETS.index(HEADLINE_BUDGET)
    headline = row_at(by_budget, at)
    n_groups = model_cfg.n_layers // fit.group_size
    return {
        "system": "BellowsKV",
        "mechanism": "as described (derived; no public code)",
        "seed": seed,
        "model": asdict(model_cfg),
        "fit": asdict(fit),
        "headline": {
            "latent_size": HEADLINE_BUDGET,
            "per_layer_rank": HEADLINE_BUDGET // fit.group_size,
            "compression_ratio": compression_ratio(HEADLINE_BUDGET, fit.group_size, model_cfg.d_kv),
            "cache_bytes_per_token": cache_bytes_per_token(
                HEADLINE_BUDGET, n_groups, fit.bytes_per_value
            ),
            "uncompressed_bytes_per_token": 2
            * model_cfg.n_layers
            * model_cfg.d_kv
            * fit.bytes_per_value,
            **{k: v for k, v in headline.items() if k.startswith(("shared_", "per_layer_"))},
            "first_layer_input_attention_rel_error": first_input["shared_attention_rel_error"][at],
        },
        "by_budget": by_budget,
        "by_budget_first_layer_input": first_input,
        "by_drift": drift_sweep(model_cfg, fit, seed),
        "by_group_size": group_sweep(ds, fit, {fit.group_size: methods}),
    }


def report(res: dict) -> str:
    """A short human-readable summary of ``run()``'s output."""
    h, m = res["headline"], res["model"]
    lines = [
        f"BellowsKV reference (mechanism as described), seed {res['seed']}",
        f"{m['n_layers']} layers, d_model {m['d_model']}, one {m['d_kv']}-dim KV head per layer, "
        f"groups of {res['fit']['group_size']} layers, drift {m['drift']}",
        f"headline budget: latent {h['latent_size']} per group vs rank {h['per_layer_rank']} "
        f"per layer = {h['compression_ratio']:.1f}x "
        f"({h['cache_bytes_per_token']} vs {h['uncompressed_bytes_per_token']} bytes/token)",
        "  held-out error          shared   per-layer",
    ]
    for label, key in (
        ("key (rel. Frobenius)", "key_rel_error"),
        ("value (rel. Frobenius)", "value_rel_error"),
        ("attention output", "attention_rel_error"),
        ("attention cosine", "attention_cosine"),
    ):
        lines.append(f"  {label:22s} {h['shared_' + key]:7.4f}   {h['per_layer_' + key]:7.4f}")
    lines.append(
        "  (latent from the first layer's input only: attention error "
        f"{h['first_layer_input_attention_rel_error']:.4f})"
    )
    b = res["by_budget"]
    lines.append("attention error by budget (ratio: shared / per-layer):")
    for ratio, s, p in zip(
        b["compression_ratio"],
        b["shared_attention_rel_error"],
        b["per_layer_attention_rel_error"],
        strict=True,
    ):
        lines.append(f"  {ratio:5.1f}x: {s:.4f} / {p:.4f}")
    d = res["by_drift"]
    lines.append(
        "attention error by drift at the headline budget, first group (shared / per-layer):"
    )
    for eps, s, p in zip(
        d["drift"], d["shared_attention_rel_error"], d["per_layer_attention_rel_error"], strict=True
    ):
        lines.append(f"  drift {eps:4.2f}: {s:.4f} / {p:.4f}  (per-layer {p / s:.1f}x worse)")
    g = res["by_group_size"]
    lines.append(
        f"shared attention error by group size at {SWEEP_RATIO}x: "
        + ", ".join(
            f"n={n}: {e:.4f}"
            for n, e in zip(g["group_size"], g["shared_attention_rel_error"], strict=True)
        )
    )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n", 1)[0])
    parser.add_argument("--seed", type=int, default=0, help="seed for the synthetic model and data")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    res = run(args.seed)
    print(report(res))
    print(f"(ran in {time.perf_counter() - start:.2f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
