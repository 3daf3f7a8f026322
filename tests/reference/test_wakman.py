"""Tests for the WAKMan reference program (mechanism as described, spec sections 13 and B1)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from deepdives.reference import wakman as wk


def _check_invariants(cache: wk.S3FIFOCache) -> None:
    s, m, g = set(cache.S), set(cache.M), set(cache.G)
    assert len(cache.S) + len(cache.M) <= cache.capacity
    assert len(cache.G) <= cache.ghost_cap
    assert not (s & m) and not (s & g) and not (m & g)
    assert all(0 <= f <= 3 for f in (*cache.S.values(), *cache.M.values()))


# --- B1 property 1: invariants after every operation ----------------------------------------


@pytest.mark.parametrize("threshold", [1, 2])
def test_it_keeps_the_s3fifo_invariants_after_every_access(threshold: int) -> None:
    rng = np.random.default_rng(7)
    cache = wk.S3FIFOCache(50, wk.S3Params(move_to_main_threshold=threshold))
    # A mix of a hot Zipf set, a recurring medium set and fresh keys exercises every path.
    keys = np.where(
        rng.random(20_000) < 0.5,
        rng.zipf(1.3, 20_000) % 200,
        rng.integers(1_000, 1_000_000, 20_000),
    )
    for k in keys.tolist():
        cache.access(k)
        _check_invariants(cache)
    assert len(cache) == 50 and len(cache.G) == cache.ghost_cap


# --- B1 property 2: scans never reach the main queue ----------------------------------------


def test_it_sends_every_scan_key_from_small_to_ghost_once_main_holds_the_hot_set() -> None:
    cache = wk.S3FIFOCache(100)
    hot = list(range(90))  # as many as M holds
    for _ in range(3):
        for k in hot:
            cache.access(k)
    scan = list(range(10_000, 12_000))  # 20 x the capacity, never reused
    for k in scan[:200]:  # the first evictions promote the hot keys (freq 2) into M
        cache.access(k)
    assert set(cache.M) == set(hot)
    for k in scan[200:]:
        cache.access(k)
        assert k not in cache.M
    assert set(cache.M) == set(hot)
    assert set(cache.G) <= set(scan) and len(cache.G) == cache.ghost_cap
    assert all(k in cache.S for k in scan[-10:])


# --- B1 properties 3 and 4: promotion threshold and ghost hits ------------------------------


def _small_tail_with_freq(freq: int, threshold: int = 2) -> wk.S3FIFOCache:
    """A 10-block cache whose small-queue tail is key 0 with the given frequency."""
    cache = wk.S3FIFOCache(10, wk.S3Params(move_to_main_threshold=threshold))
    for _ in range(freq + 1):
        cache.access(0)
    for k in range(1, 10):  # fill the cache: S holds all ten, M is empty
        cache.access(k)
    assert list(cache.S)[0] == 0 and cache.S[0] == freq and not cache.M
    cache.access(100)  # the first eviction
    return cache


def test_it_promotes_a_small_tail_key_with_freq_two_to_main() -> None:
    cache = _small_tail_with_freq(2)
    assert 0 in cache.M and cache.M[0] == 0  # promoted, counter cleared
    assert 1 in cache.G  # the next tail (freq 0) was the real eviction
    assert 100 in cache.S


def test_it_sends_a_small_tail_key_with_freq_one_to_the_ghost_queue() -> None:
    cache = _small_tail_with_freq(1)
    assert 0 in cache.G and 0 not in cache
    assert 1 in cache.S


def test_it_promotes_freq_one_when_the_threshold_is_one() -> None:
    cache = _small_tail_with_freq(1, threshold=1)
    assert 0 in cache.M


def test_it_inserts_a_ghost_hit_into_main_not_small() -> None:
    cache = _small_tail_with_freq(1)
    assert cache.access(0) is False  # a ghost hit is still a miss
    assert 0 in cache.M and 0 not in cache.S and 0 not in cache.G
    assert cache.M[0] == 0


# --- B1 property 5: 2-bit CLOCK in the main queue -------------------------------------------


def test_it_reinserts_a_main_tail_with_its_counter_minus_one() -> None:
    cache = wk.S3FIFOCache.from_residents(10, [1, 2, 3])
    cache.access(1)
    cache.access(1)  # freq 2
    cache._evict_main()
    assert list(cache.M) == [3, 1] and cache.M[1] == 1  # 1 went round once, 2 was evicted


def test_it_evicts_a_main_key_after_at_most_three_passes_unless_hit_again() -> None:
    cache = wk.S3FIFOCache.from_residents(10, [1, 2, 3])
    for k in (1, 2, 3):
        for _ in range(5):  # the counter saturates at 3
            cache.access(k)
    assert list(cache.M.values()) == [3, 3, 3]
    cache._evict_main()  # three passes over all three, then the first to reach 0 leaves
    assert list(cache.M.items()) == [(2, 0), (3, 0)]
    cache.access(2)  # a hit gives the tail key one more round; 3 goes instead
    cache._evict_main()
    assert list(cache.M.items()) == [(2, 0)]


# --- The spec's checked numbers ---------------------------------------------------------------


def test_it_reproduces_the_spec_checked_s3fifo_and_lru_hit_ratios(result: dict) -> None:
    ck = result["s3fifo_checks"]
    # Zipf(1.2) mod 5000 with 60 % one-shot keys interleaved: LRU 0.420, S3-FIFO 0.489.
    assert ck["zipf_scan"]["LRU"] == pytest.approx(0.420, abs=0.005)
    assert ck["zipf_scan"]["S3FIFO"] == pytest.approx(0.489, abs=0.005)
    # 900 hot keys at 50 % plus pairs reused 300 requests later: LRU 0.477, S3-FIFO 0.187.
    assert ck["hot_pairs"]["LRU"] == pytest.approx(0.477, abs=0.005)
    assert ck["hot_pairs"]["S3FIFO"] == pytest.approx(0.187, abs=0.01)
    # Every key used exactly twice: T=2 0.494, T=1 0.108 (T=1 fills M with dead keys).
    assert ck["used_twice"]["S3FIFO_T2"] == pytest.approx(0.494, abs=0.01)
    assert ck["used_twice"]["S3FIFO_T1"] == pytest.approx(0.108, abs=0.01)


# --- WAKMan property 6: prefix hit semantics ----------------------------------------------


@pytest.mark.parametrize("policy", wk.POLICIES)
def test_it_counts_no_hits_when_the_first_block_is_missing(policy: str) -> None:
    cache = wk.make_cache(policy, 100, [2, 3, 4])
    assert wk.serve(cache, (1, 2, 3)) == 0  # 2 and 3 are cached, but the prefix breaks at 1
    assert wk.serve(cache, (1, 2, 3)) == 3  # 1 was computed and inserted
    assert wk.serve(cache, (1, 9, 3)) == 1
    assert wk.serve_all(cache, [(1, 2), (7,), (4, 1)]) == (4, 5)


# --- Switching keeps the contents ------------------------------------------------------------


def test_it_keeps_cached_blocks_and_recency_order_when_switching_policy() -> None:
    lru = wk.LRUCache(10)
    for k in (1, 2, 3, 4, 5, 2):
        lru.access(k)
    s3 = wk.convert(lru, "S3FIFO")
    assert isinstance(s3, wk.S3FIFOCache)
    assert list(s3.M) == [1, 3, 4, 5, 2] and set(s3.M.values()) == {0}
    assert not s3.S and not s3.G
    s3.access(3)
    back = wk.convert(s3, "LRU")
    assert back.residents_by_recency() == [1, 4, 5, 2, 3]
    assert wk.convert(back, "LRU") is back


# --- WAKMan properties 1 and 4: stationary phases -------------------------------------------


def test_it_picks_s3fifo_from_the_second_epoch_on_a_stationary_phase_b() -> None:
    trace = wk.phased_trace(np.random.default_rng(3), [4], first="B")
    run = wk.run_wakman(trace.epochs)
    lru = wk.run_fixed(trace.epochs, "LRU")
    s3 = wk.run_fixed(trace.epochs, "S3FIFO")
    assert all(b > a for a, b in zip(lru, s3, strict=True))  # S3-FIFO dominates phase B
    assert run.policy == ["LRU", "S3FIFO", "S3FIFO", "S3FIFO"]


def test_it_picks_lru_on_phase_a_once_a_warm_window_is_replayed() -> None:
    # Phase A after phase B: S3-FIFO sits in its collapsed regime and LRU dominates.
    trace = wk.phased_trace(np.random.default_rng(4), [2, 4], first="B")
    run = wk.run_wakman(trace.epochs)
    lru = wk.run_fixed(trace.epochs, "LRU")
    s3 = wk.run_fixed(trace.epochs, "S3FIFO")
    assert all(lru[e] > s3[e] for e in range(2, 6))
    assert run.policy[:2] == ["LRU", "S3FIFO"]
    assert run.policy[3:] == ["LRU", "LRU", "LRU"]  # one epoch of lag after the shift


# --- WAKMan property 2: the choice is the replay's argmax -----------------------------------


def test_it_chooses_the_argmax_of_replaying_the_previous_window() -> None:
    trace = wk.phased_trace(np.random.default_rng(5), [2, 2, 2], first="B")
    residents: list[list[int]] = []  # the resident list each epoch starts from
    run = wk.run_wakman(
        trace.epochs, on_epoch=lambda e, c: residents.append(c.residents_by_recency())
    )
    for e in range(1, len(trace.epochs)):
        window = trace.epochs[e - 1]
        scores = {q: wk.replay(q, wk.CAPACITY, residents[e - 1], window) for q in wk.POLICIES}
        assert scores == run.replay_scores[e]
        best = max(wk.POLICIES, key=scores.__getitem__)
        margin = wk.SWITCH_MARGIN * len(window)
        expected = best if scores[best] - scores[run.policy[e - 1]] > margin else run.policy[e - 1]
        assert run.policy[e] == expected
    assert run.switches == sum(a != b for a, b in zip(run.policy[:-1], run.policy[1:], strict=True))


def test_it_keeps_the_current_policy_on_ties_and_small_margins() -> None:
    assert wk.decide({"LRU": 10, "S3FIFO": 10}, "S3FIFO", 100, 0.0) == "S3FIFO"
    assert wk.decide({"LRU": 10, "S3FIFO": 10}, "LRU", 100, 0.0) == "LRU"
    assert wk.decide({"LRU": 10, "S3FIFO": 11}, "LRU", 1000, 0.002) == "LRU"
    assert wk.decide({"LRU": 10, "S3FIFO": 13}, "LRU", 1000, 0.002) == "S3FIFO"


# --- WAKMan property 3: replays are pure ----------------------------------------------------


def test_it_never_changes_the_live_cache_while_replaying(monkeypatch: pytest.MonkeyPatch) -> None:
    trace = wk.phased_trace(np.random.default_rng(6), [2, 2], first="B")
    live: dict[str, wk.Cache] = {}
    real_replay = wk.replay
    checked = []

    def spy(policy, capacity, residents, window):  # type: ignore[no-untyped-def]
        before = live["cache"].state()
        frozen = list(residents)
        score = real_replay(policy, capacity, residents, window)
        assert live["cache"].state() == before
        assert list(residents) == frozen
        checked.append(policy)
        return score

    monkeypatch.setattr(wk, "replay", spy)
    wk.run_wakman(trace.epochs, on_epoch=lambda e, c: live.__setitem__("cache", c))
    assert len(checked) == 2 * (len(trace.epochs) - 1)


def test_it_groups_requests_into_fifteen_minute_epochs_by_virtual_time() -> None:
    reqs = [(i,) for i in range(6)]
    epochs = wk.split_epochs(reqs, [0.0, 14.9, 15.0, 29.99, 45.0, 46.0])
    assert epochs == [[(0,), (1,)], [(2,), (3,)], [], [(4,), (5,)]]


# --- The claim's direction, from run() -------------------------------------------------------


def test_it_beats_both_fixed_policies_and_approaches_the_oracle(result: dict) -> None:
    ov = result["main"]["overall_hit_ratio"]
    assert ov["WAKMan"] > max(ov["LRU"], ov["S3FIFO"]) + 0.02
    assert ov["oracle"] >= ov["WAKMan"]
    # Closer to the per-epoch oracle than either fixed policy.
    assert ov["oracle"] - ov["WAKMan"] < 0.5 * (ov["oracle"] - max(ov["LRU"], ov["S3FIFO"]))
    assert result["gain_vs_lru_points"] == pytest.approx(100 * (ov["WAKMan"] - ov["LRU"]))
    saved = result["main"]["prefill_tokens_saved"]
    assert saved["WAKMan"] > max(saved["LRU"], saved["S3FIFO"])


def test_it_tracks_each_phase_with_one_epoch_of_lag(result: dict) -> None:
    pe = result["main"]["per_epoch"]
    best = {"A": "LRU", "B": "S3FIFO"}
    for e in range(1, len(pe["phase"])):
        if pe["phase"][e] == pe["phase"][e - 1]:  # not the first epoch of a phase
            assert pe["wakman_policy"][e] == best[pe["phase"][e]]
    assert result["main"]["switches"]["WAKMan"] == 4


def test_it_needs_phases_longer_than_the_lag_to_pay_off(result: dict) -> None:
    sw = result["by_phase_length"]
    gain = [w - max(a, b) for w, a, b in zip(sw["WAKMan"], sw["LRU"], sw["S3FIFO"], strict=True)]
    assert sw["phase_epochs"] == [1, 2, 3, 6]
    assert gain == sorted(gain)  # the longer the phases, the more switching pays
    assert gain[-1] > 0 > gain[0]
    # Never below the worse fixed policy once phases last two epochs or more.
    for i, n in enumerate(sw["phase_epochs"]):
        if n >= 2:
            assert sw["WAKMan"][i] >= min(sw["LRU"][i], sw["S3FIFO"][i])
        assert sw["oracle"][i] >= max(sw["WAKMan"][i], sw["LRU"][i], sw["S3FIFO"][i])


def test_it_shows_s3fifo_phase_a_result_depends_on_its_start_state(result: dict) -> None:
    st = result["phase_a_start_state"]
    assert st["cold"]["S3FIFO"] > st["cold"]["LRU"]
    assert st["after_phase_b"]["S3FIFO"] < 0.5 * st["after_phase_b"]["LRU"]


def test_it_returns_json_serialisable_output(result: dict) -> None:
    assert json.loads(json.dumps(result))["seed"] == 0
    a = wk.phased_trace(np.random.default_rng(9), [1, 1])
    b = wk.phased_trace(np.random.default_rng(9), [1, 1])
    assert a == b


def test_it_prints_a_report_and_returns_zero(
    result: dict, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    calls = []
    monkeypatch.setattr(wk, "run", lambda seed=0: calls.append(seed) or result)
    assert wk.main(["--seed", "0"]) == 0
    assert calls == [0]
    out = capsys.readouterr().out
    assert "mechanism as described" in out
    assert "promote at freq >= 2" in out
