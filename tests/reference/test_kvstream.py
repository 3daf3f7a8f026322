"""Tests for the KVStream reference program (mechanism as described, spec section 15)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from deepdives.reference import kvstream as ks

MIB = 2**20
EPS = 1e-9


@pytest.fixture(scope="module")
def sources() -> tuple[ks.Source, ks.Source]:
    return ks.make_sources(np.random.default_rng(42))


def _const(name: str, gbps: float, latency: float) -> ks.Source:
    return ks.Source(name, latency, ks.BandwidthTrace.constant(gbps))


def _solo(src: ks.Source, batches: list[np.ndarray], t0: float = 0.0) -> float:
    return ks.sequential_read([(src, b) for b in batches], MIB, t0).makespan


def _dual(a: ks.Source, b: ks.Source, batches: list[np.ndarray], t0: float, hedge: bool):
    serve = [np.ones(len(batches), bool)] * 2
    return ks.shared_queue_read([a, b], serve, batches, MIB, t0, hedge)


# --- Bandwidth traces ------------------------------------------------------------------------


def test_it_inverts_cumulative_bytes_into_time() -> None:
    bw = ks.BandwidthTrace(np.array([1.0, 0.0, 3.0, 2.0]) * ks.GB, 0.5)
    for t in (0.0, 0.2, 0.5, 0.9, 1.2, 1.7, 1.99, 2.5, 10.0):
        b = bw.bytes_until(t)
        assert bw.bytes_until(bw.time_of_bytes(b)) == pytest.approx(b)
    assert bw.time_of_bytes(0.6 * ks.GB) == pytest.approx(1.0 + 0.1 / 3)  # skips the dead slot
    assert bw.bytes_until(3.0) == pytest.approx((0.5 + 1.5 + 1.0) * ks.GB + 1.5 * ks.GB)


def test_it_times_a_read_as_latency_plus_bytes_over_bandwidth() -> None:
    src = _const("x", 6.0, 80e-6)
    assert src.finish(1.0, 6e9) == pytest.approx(1.0 + 80e-6 + 1.0)
    dead = ks.Source("d", 1e-3, ks.BandwidthTrace(np.zeros(3), 0.1))
    assert dead.finish(0.0, 1.0) == float("inf")


def test_it_finds_the_longest_read_exactly(sources: tuple[ks.Source, ks.Source]) -> None:
    _, pfs = sources
    nbytes = 64 * MIB
    exact = ks.longest_read_seconds(pfs, nbytes, 3.0, 5.0)
    grid = np.linspace(3.0, 5.0, 20_001)
    brute = max(pfs.finish(t, nbytes) - t for t in grid)
    assert exact >= brute - EPS
    assert exact == pytest.approx(brute, rel=1e-3)


def test_it_spends_about_the_configured_share_of_time_contended() -> None:
    rng = np.random.default_rng(1)
    for frac in (0.0, 0.33, 0.7):
        rates = ks.contention_rates(rng, ks.PFS, frac)
        share = np.mean(rates < ks.PFS.normal_gbps[0] * ks.GB)
        assert share == pytest.approx(frac, abs=0.08)


# --- Property 5: the write path keeps both copies -----------------------------------------


def test_it_makes_every_written_block_readable_from_both_sources() -> None:
    store = ks.TieredStore(nvme_capacity_blocks=4)
    store.write([1, 2, 3])
    assert all(store.locations(b) == {"nvme", "pfs"} for b in (1, 2, 3))
    store.touch([1])  # 2 is now the least recently used
    store.write([4, 5])
    assert store.locations(2) == {"pfs"}  # evicted from NVMe, the PFS copy remains
    assert store.locations(1) == {"nvme", "pfs"}
    assert store.nvme_mask([1, 2, 3, 4, 5]).tolist() == [True, False, True, True, True]
    assert store.locations(99) == set()


def test_it_acknowledges_strong_writes_after_both_copies() -> None:
    fast = ks.write_ack_seconds(64 * MIB, "fast")
    strong = ks.write_ack_seconds(64 * MIB, "strong")
    assert strong > fast > 0
    with pytest.raises(ValueError):
        ks.write_ack_seconds(1.0, "eventual")


def test_it_evicts_the_front_of_a_prefix_first() -> None:
    assert ks.prefix_residency(8, 0.25).tolist() == [False] * 6 + [True] * 2
    store = ks.TieredStore(nvme_capacity_blocks=3)
    store.write(range(8))  # written in prefix order: only the last three stay on NVMe
    assert store.nvme_mask(list(range(8))).tolist() == ks.prefix_residency(8, 3 / 8).tolist()


# --- Property 1: exactly-once delivery -----------------------------------------------------


@pytest.mark.parametrize("hedge", [True, False])
def test_it_delivers_every_block_exactly_once(
    sources: tuple[ks.Source, ks.Source], hedge: bool
) -> None:
    nvme, pfs = sources
    rng = np.random.default_rng(2)
    for n, s in ((1, 1), (37, 4), (500, 32), (2048, 7)):
        batches = ks.make_batches(n, s)
        resident = rng.random(n) < rng.uniform(0.0, 1.0)
        on_nvme = np.array([bool(resident[b].all()) for b in batches])
        for t0 in rng.uniform(0, 50, 5):
            res = ks.shared_queue_read(
                [nvme, pfs], [on_nvme, np.ones(len(batches), bool)], batches, MIB, t0, hedge
            )
            assert sorted(res.delivered) == list(range(n))  # no gaps, no duplicates
            assert sum(res.batches_by_source.values()) == len(batches)
            # NVMe only ever delivers batches it holds.
            nvme_blocks = res.bytes_by_source["nvme"] / MIB
            assert nvme_blocks <= sum(b.size for b, ok in zip(batches, on_nvme, strict=True) if ok)


def test_it_cancels_the_losing_copy_of_a_hedged_batch() -> None:
    fast, slow = _const("fast", 10.0, 1e-4), _const("slow", 1.0, 1e-4)
    batches = ks.make_batches(10, 5)  # two batches: each source takes one, fast then hedges
    res = _dual(fast, slow, batches, 0.0, hedge=True)
    assert res.hedges == 1
    assert res.batches_by_source == {"fast": 2, "slow": 0}
    assert sorted(res.delivered) == list(range(10))
    assert 0 < res.wasted_bytes < 5 * MIB


# --- Property 2: the work-stealing bound ---------------------------------------------------


@pytest.mark.parametrize(
    ("gbps_a", "gbps_b", "lat_a", "lat_b"),
    [(6.0, 10.0, 80e-6, 1e-3), (6.0, 2.0, 80e-6, 1e-3), (1.0, 20.0, 1e-4, 1e-4), (3.0, 3.1, 0, 0)],
)
def test_it_stays_within_one_batch_of_the_faster_source_alone(
    gbps_a: float, gbps_b: float, lat_a: float, lat_b: float
) -> None:
    a, b = _const("a", gbps_a, lat_a), _const("b", gbps_b, lat_b)
    for n, s in ((100, 8), (1000, 32), (257, 16)):
        batches = ks.make_batches(n, s)
        t_a, t_b = _solo(a, batches), _solo(b, batches)
        fast, slow = (a, b) if t_a <= t_b else (b, a)
        t_batch = {src.name: src.finish(0.0, s * MIB) for src in (a, b)}  # constant rates
        plain = _dual(a, b, batches, 0.0, hedge=False).makespan
        hedged = _dual(a, b, batches, 0.0, hedge=True).makespan
        assert plain <= min(t_a, t_b) + t_batch[slow.name] + EPS
        assert hedged <= min(t_a, t_b) + t_batch[fast.name] + EPS
        assert hedged <= plain + EPS


def test_it_keeps_the_bound_under_a_time_varying_pfs(
    sources: tuple[ks.Source, ks.Source],
) -> None:
    nvme, pfs = sources
    batches = ks.make_batches(2048, 32)
    for t0 in np.random.default_rng(3).uniform(0, 50, 10):
        t_n, t_p = _solo(nvme, batches, t0), _solo(pfs, batches, t0)
        fast, slow = (nvme, pfs) if t_n <= t_p else (pfs, nvme)
        t_min = min(t_n, t_p)
        nbytes = 32 * MIB
        plain = _dual(nvme, pfs, batches, t0, hedge=False).makespan
        hedged = _dual(nvme, pfs, batches, t0, hedge=True).makespan
        slow_max = ks.longest_read_seconds(slow, nbytes, t0, t0 + t_min)
        fast_max = ks.longest_read_seconds(fast, nbytes, t0, t0 + t_min)
        assert plain <= t_min + slow_max + EPS
        assert hedged <= t_min + fast_max + EPS


# --- Property 3: one source down -----------------------------------------------------------


@pytest.mark.parametrize("down", ["nvme", "pfs"])
def test_it_finishes_within_one_batch_of_the_survivor_when_a_source_is_down(
    sources: tuple[ks.Source, ks.Source], down: str
) -> None:
    nvme, pfs = sources
    dead = ks.BandwidthTrace(np.zeros(1), 1.0)
    batches = ks.make_batches(1024, 16)
    for t0 in (0.0, 12.3, 40.0):
        if down == "nvme":
            pair, survivor = [ks.Source("nvme", nvme.latency_s, dead), pfs], pfs
        else:
            pair, survivor = [nvme, ks.Source("pfs", pfs.latency_s, dead)], nvme
        alone = _solo(survivor, batches, t0)
        hedged = _dual(pair[0], pair[1], batches, t0, hedge=True)
        one_batch = ks.longest_read_seconds(survivor, 16 * MIB, t0, t0 + alone)
        assert hedged.makespan <= alone + one_batch + EPS
        assert sorted(hedged.delivered) == list(range(1024))
        assert _dual(pair[0], pair[1], batches, t0, hedge=False).makespan == float("inf")


def test_it_reports_the_failure_cases(result: dict) -> None:
    for case in result["failures"].values():
        assert case["unhedged_stuck"] is True
        assert case["kvstream_hedged_ms"] <= (
            case["survivor_alone_ms"] + case["survivor_max_batch_ms"] + 1e-6
        )


# --- Property 4: equal sources split evenly ------------------------------------------------


@pytest.mark.parametrize("n_batches", [256, 255, 7])
def test_it_splits_batches_evenly_between_equal_sources(n_batches: int) -> None:
    res = ks.equal_sources_split(n_blocks=8 * n_batches, batch_blocks=8)
    assert res["a"] + res["b"] == n_batches
    assert abs(res["a"] - res["b"]) <= 1


# --- Baselines and the ideal ---------------------------------------------------------------


def test_it_never_beats_the_fluid_ideal(sources: tuple[ks.Source, ks.Source]) -> None:
    nvme, pfs = sources
    n = 1024
    for frac in (1.0, 0.5, 0.0):
        resident = ks.prefix_residency(n, frac)
        for t0 in (1.0, 20.0, 45.5):
            out, ideal = ks.read_all_strategies(nvme, pfs, n, resident, t0)
            for k in ks.STRATEGIES:
                assert out[k].makespan >= ideal - EPS
            assert out["kvstream"].makespan <= out["static_split"].makespan + 0.05


def test_it_picks_batch_sizes_between_one_and_thirty_two_blocks() -> None:
    assert ks.batch_blocks_for(64) == 4  # 1K tokens: 16 batches
    assert ks.batch_blocks_for(2048) == 32  # 32K tokens: capped at 64 MiB
    assert ks.batch_blocks_for(3) == 1
    with pytest.raises(ValueError):
        ks.make_batches(10, 0)


# --- The claim's direction, from run() -----------------------------------------------------


def test_it_reads_close_to_the_combined_bandwidth_ideal(result: dict) -> None:
    hd = result["headline"]
    ms = hd["makespan_ms"]
    assert ms["kvstream"] < min(ms["nvme_only"], ms["pfs_only"], ms["static_split"])
    assert hd["mean_over_ideal"]["kvstream"] < 1.2
    assert min(hd["speedup_vs"].values()) > 1.15
    assert hd["speedup_vs"]["nvme_only"] > 2.0
    assert 0.3 < hd["kvstream_nvme_byte_share"] < 0.5  # NVMe is the slower of the two here


def test_it_is_robust_to_pfs_contention(result: dict) -> None:
    hd, bc = result["headline"], result["by_contention"]
    assert hd["p95_ms"]["kvstream"] < min(hd["p95_ms"]["pfs_only"], hd["p95_ms"]["static_split"])
    assert bc["pfs_only_ms"][-1] > 2.0 * bc["pfs_only_ms"][0]  # PFS alone suffers
    assert max(bc["kvstream_over_ideal"]) < 1.25  # KVStream tracks the ideal throughout
    for i in range(len(bc["contended_fraction"])):
        assert bc["kvstream_ms"][i] < bc["static_split_ms"][i] < bc["pfs_only_ms"][i]


def test_it_absorbs_nvme_misses(result: dict) -> None:
    br = result["by_residency"]
    assert br["nvme_resident_fraction"][0] == 1.0 and br["nvme_resident_fraction"][-1] == 0.0
    assert all(r < 1.25 for r in br["kvstream_over_ideal"])
    # With nothing on NVMe, KVStream degenerates to the PFS alone.
    assert br["kvstream_ms"][-1] == pytest.approx(br["pfs_only_ms"][-1])


def test_it_trades_per_io_latency_against_batch_count(result: dict) -> None:
    bb = result["by_batch"]
    assert bb["hedged_ms"] == sorted(bb["hedged_ms"], reverse=True)  # bigger batches amortise
    assert all(h <= u + 1e-6 for h, u in zip(bb["hedged_ms"], bb["unhedged_ms"], strict=True))
    assert bb["hedged_ms"][0] > 2.0 * bb["ideal_ms"][0]  # 2 MiB I/Os pay the 1 ms PFS latency


def test_it_gets_relatively_slower_on_short_prefixes(result: dict) -> None:
    bp = result["by_prefix"]
    assert bp["kvstream_over_ideal"][0] == max(bp["kvstream_over_ideal"])
    assert all(r < 1.2 for r in bp["kvstream_over_ideal"][2:])


def test_it_returns_json_serialisable_output(result: dict) -> None:
    text = json.dumps(result, allow_nan=False)
    assert json.loads(text)["seed"] == 0


def test_it_prints_a_report_and_returns_zero(
    result: dict, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    calls = []
    monkeypatch.setattr(ks, "run", lambda seed=0: calls.append(seed) or result)
    assert ks.main(["--seed", "0"]) == 0
    assert calls == [0]
    out = capsys.readouterr().out
    assert "mechanism as described" in out
    assert "KVStream" in out
