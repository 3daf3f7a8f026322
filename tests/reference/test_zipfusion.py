"""Tests for the ZipFusion reference program (mechanism as described, spec section 5)."""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pytest

from deepdives.reference import zipfusion as zf

ALL_PATTERNS = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16)
SMALL = zf.CacheConfig(context=1000, kv_heads=2, q_per_kv=4, tile_tokens=64)


def _roundtrip(bits: np.ndarray, base: int | None) -> np.ndarray:
    seg = zf.encode(bits, base=base)
    return zf.decode(zf.EncodedSegment.from_bytes(seg.to_bytes(), bits.size))


# --- BF16 helpers --------------------------------------------------------------------------


def test_it_rounds_float32_to_bf16_to_nearest_even() -> None:
    x = np.array([1 + 2**-8, 1 + 3 * 2**-8, -2.5, 0.0], np.float32)
    back = zf.bf16_bits_to_f32(zf.f32_to_bf16_bits(x))
    assert back.tolist() == [1.0, 1 + 2**-6, -2.5, 0.0]


def test_it_keeps_nans_as_nans_when_rounding() -> None:
    bits = zf.f32_to_bf16_bits(np.array([np.nan, -np.nan, np.inf], np.float32))
    back = zf.bf16_bits_to_f32(bits)
    assert np.isnan(back[:2]).all()
    assert back[2] == np.inf


# --- Property 1: lossless over every BF16 bit pattern --------------------------------------


def test_it_round_trips_all_65536_bf16_patterns_bit_exactly_for_every_base() -> None:
    # Segments of 8192 values (one 64 x 128 tile); every base the 3-bit window allows.
    chunks = ALL_PATTERNS.reshape(-1, 8192)
    for base in [None, *range(0, 256 - zf.WINDOW + 1)]:
        back = np.concatenate([_roundtrip(c, base) for c in chunks])
        assert np.array_equal(back, ALL_PATTERNS), f"base {base}"


def test_it_round_trips_a_shuffled_mix_including_every_nan_payload() -> None:
    rng = np.random.default_rng(3)
    mixed = rng.permutation(ALL_PATTERNS)[:8192]
    nans = ALL_PATTERNS[np.isnan(zf.bf16_bits_to_f32(ALL_PATTERNS))]
    assert nans.size == 2 * 127  # every NaN payload, both signs
    for bits in (
        mixed,
        nans,
        np.zeros(5, np.uint16),
        np.array([0x8000, 0x7F80, 0xFF80], np.uint16),
    ):
        assert np.array_equal(_roundtrip(bits, None), bits)


def test_it_rejects_a_base_outside_the_window_range() -> None:
    with pytest.raises(ValueError):
        zf.encode(ALL_PATTERNS[:16], base=250)


def test_it_picks_the_seven_exponent_window_covering_most_values() -> None:
    exps = np.array([10] * 3 + [100, 101, 102, 103, 104, 105, 106] + [107] * 2)
    # Window 100..106 covers 7 values, 101..107 covers 8: the latter wins.
    assert zf.best_window_base(exps) == 101
    assert zf.best_window_base(np.array([5, 200])) == 0  # ties go to the lowest base


# --- Property 2: fused attention is bit-identical ------------------------------------------


def _attention_pair(cfg: zf.CacheConfig, corrupt: bool = False) -> tuple[np.ndarray, np.ndarray]:
    k_bits, v_bits, queries = zf.make_cache(cfg, np.random.default_rng(11))
    head = zf.compress_head(k_bits[0], v_bits[0], cfg)
    if corrupt:  # flip a mantissa bit in the first coded value of the first key tile
        blob = bytearray(head.k_tiles[0][0])
        blob[zf.HEADER_BYTES + zf.N_PLANES * (cfg.tile_tokens * cfg.channel_group // 8)] ^= 1
        head.k_tiles[0][0] = bytes(blob)
    scale = 1.0 / np.sqrt(cfg.head_dim)
    fused = zf.online_softmax_attention(queries[0], zf.fused_tiles(head), scale)
    tiles = zf.bf16_tiles(k_bits[0], v_bits[0], cfg.tile_tokens)
    ref = zf.online_softmax_attention(queries[0], tiles, scale)
    return fused, ref


@pytest.mark.parametrize("channel_group", [128, 16, 1])
def test_it_gives_attention_bit_identical_to_uncompressed_bf16(channel_group: int) -> None:
    fused, ref = _attention_pair(replace(SMALL, channel_group=channel_group))
    assert np.array_equal(fused.view(np.uint32), ref.view(np.uint32))


def test_it_detects_a_single_flipped_bit_in_the_compressed_cache() -> None:
    fused, ref = _attention_pair(SMALL, corrupt=True)
    assert not np.array_equal(fused, ref)


def test_it_decodes_tiles_with_a_short_last_tile() -> None:
    k_bits, v_bits, _ = zf.make_cache(SMALL, np.random.default_rng(5))
    head = zf.compress_head(k_bits[1], v_bits[1], SMALL)
    assert head.tile_lengths[-1] == SMALL.context % SMALL.tile_tokens
    decoded = np.concatenate([k for k, _ in zf.fused_tiles(head)])
    assert np.array_equal(decoded.view(np.uint32), zf.bf16_bits_to_f32(k_bits[1]).view(np.uint32))


# --- Property 3: size bound ----------------------------------------------------------------


def test_it_never_exceeds_the_all_escape_size_bound() -> None:
    rng = np.random.default_rng(1)
    for n in (1, 7, 8, 1000, 8192):
        bits = rng.integers(0, 1 << 16, n, dtype=np.uint32).astype(np.uint16)
        seg = zf.encode(bits)
        assert seg.nbytes == len(seg.to_bytes())
        assert seg.nbytes <= zf.worst_case_nbytes(n)
        assert zf.worst_case_nbytes(n) <= 3 + 3 * ((n + 7) // 8) + 2 * n


def test_it_reaches_the_bound_exactly_when_every_value_escapes() -> None:
    ones = zf.f32_to_bf16_bits(np.ones(4096, np.float32))  # exponent 127
    seg = zf.encode(ones, base=0)  # window 0..6 misses every value
    assert seg.escapes.size == 4096
    assert seg.nbytes == zf.worst_case_nbytes(4096)


def test_it_sizes_batches_exactly_as_the_real_encoder_does() -> None:
    rng = np.random.default_rng(2)
    rows = zf.f32_to_bf16_bits(rng.standard_t(2, (20, 512)).astype(np.float32))
    rows[0] = ALL_PATTERNS[:512]
    expected = [len(zf.encode(r).to_bytes()) for r in rows]
    assert zf.encoded_nbytes_batch(rows).tolist() == expected


# --- Property 4: Gaussian data costs 11-12 bits per value ----------------------------------


def test_it_codes_iid_gaussian_bf16_at_11_to_12_bits_per_value() -> None:
    rng = np.random.default_rng(0)
    bits = zf.f32_to_bf16_bits(rng.standard_normal((1, 8192, 128)).astype(np.float32))
    bpv = zf.bits_per_value(bits, 64, 128)
    assert 11.0 < bpv < 12.0
    assert zf.window_coverage(bits, 64, 128) == pytest.approx(0.975, abs=0.005)


def test_it_finds_gaussian_exponent_entropy_independent_of_scale() -> None:
    rng = np.random.default_rng(0)
    x = rng.standard_normal(1 << 18).astype(np.float32)
    h1 = zf.exponent_entropy(zf.f32_to_bf16_bits(x))
    h2 = zf.exponent_entropy(zf.f32_to_bf16_bits(np.float32(0.02) * x))
    assert h1 == pytest.approx(2.55, abs=0.05)
    assert h1 == pytest.approx(h2, abs=0.05)


# --- Property 5: online softmax does not depend on the tile size ---------------------------


def test_it_gives_the_same_attention_for_any_tile_size_within_fp32_tolerance() -> None:
    k_bits, v_bits, queries = zf.make_cache(SMALL, np.random.default_rng(4))
    scale = 1.0 / np.sqrt(SMALL.head_dim)
    k32, v32 = zf.bf16_bits_to_f32(k_bits[0]), zf.bf16_bits_to_f32(v_bits[0])
    exact = zf.exact_attention(queries[0], k32, v32, scale)
    for tile in (1, 16, 64, 333, SMALL.context):
        out = zf.online_softmax_attention(
            queries[0], zf.bf16_tiles(k_bits[0], v_bits[0], tile), scale
        )
        np.testing.assert_allclose(out, exact, rtol=0, atol=zf.ATTN_TOLERANCE)


# --- The claim's direction, from run() -----------------------------------------------------


def test_it_reports_bit_identical_attention_and_lossless_round_trip(result: dict) -> None:
    assert result["attention"]["bit_identical_to_bf16_attention"] is True
    assert all(result["roundtrip"]["bit_exact_by_base"].values())
    assert result["roundtrip"]["patterns"] == 65536


def test_it_cuts_kv_bytes_by_roughly_thirty_percent(result: dict) -> None:
    co = result["compression"]
    assert 0.25 < co["bytes_saved_fraction"] < 0.32
    assert co["compression_ratio"] == pytest.approx(16.0 / co["kv_bits_per_value"])
    assert co["kv_bytes_per_value"] == pytest.approx(co["kv_bits_per_value"] / 8)
    assert co["kv_entropy_bound_bits_per_value"] < co["kv_bits_per_value"]
    at = result["attention"]
    assert at["compression_ratio"] == pytest.approx(at["raw_bytes"] / at["compressed_bytes"])
    assert at["compression_ratio"] > 1.3


def test_it_makes_fused_decoding_faster_and_decompress_first_slower(result: dict) -> None:
    speed = result["decode_cost"]["speedup_vs_uncompressed"]
    assert speed["fused"] > 1.3
    assert speed["decompress_to_scratch"] < 1.0 < speed["fused"]
    assert speed["fused"] == pytest.approx(result["compression"]["compression_ratio"])


def test_it_pays_more_bits_for_keys_with_larger_outliers(result: dict) -> None:
    series = result["sweeps"]["by_outlier_scale"]["key_bits_per_value_group128"]
    assert series == sorted(series)
    assert series[-1] - series[0] > 0.2


def test_it_returns_json_serialisable_output(result: dict) -> None:
    # Two runs of one seed agree: tests/reference/test_eic.py checks it on a small program.
    text = json.dumps(result)
    assert json.loads(text)["seed"] == 0


def test_it_prints_a_report_and_returns_zero(
    result: dict, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    calls: list[int] = []

    def fake_run(seed: int = 0) -> dict:
        calls.append(seed)
        return result

    # main() goes through the module-level run() once; its result is the module's run's.
    monkeypatch.setattr(zf, "run", fake_run)
    assert zf.main(["--seed", "1"]) == 0
    assert calls == [1]
    out = capsys.readouterr().out
    assert "mechanism as described" in out
    assert "bit-identical to BF16 attention = True" in out
