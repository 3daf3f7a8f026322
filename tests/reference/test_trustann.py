"""Tests for the TrustANN reference program (spec section 3, and B6 for RBO / Kendall tau)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from deepdives.reference import trustann
from deepdives.reference.trustann import (
    GAMMA,
    POISON_ID,
    Reply,
    jaccard,
    kendall_tau,
    pair_consistency,
    per_shard_trust,
    query_with_recovery,
    rank_agreement,
    rbo_ext,
    sample_quorums,
    trust_decision,
)

HONEST = (1, 2, 3, 4, 5, 6, 7, 8, 9)
BAD = (POISON_ID, 2, 3, 4, 5, 6, 7, 8, 9)


def resp(replica: int, ids: tuple[int, ...], domain: str | None, poisoned: bool = False) -> Reply:
    return Reply(replica, domain, tuple(ids), poisoned=poisoned)


# --- the artifact's nine TrustBind tests, ported (spec property 1) ------------------------------


def test_it_trusts_three_identical_honest_replicas():
    d = trust_decision([resp(0, HONEST, "a"), resp(1, HONEST, "b"), resp(2, HONEST, "c")], 2, 1.0)
    assert d.trusted
    assert d.count == 2
    assert d.consistency == 1.0
    assert d.diversity == 1.0
    assert not any(d.selected_poisoned)


def test_it_excludes_a_byzantine_minority():
    rs = [resp(0, BAD, "a", True), resp(1, HONEST, "b"), resp(2, HONEST, "c")]
    d = trust_decision(rs, 2, 1.0)
    assert d.trusted
    assert d.count == 2
    assert not any(d.selected_poisoned)


def test_it_lets_a_lone_byzantine_reply_pass_theta_one():
    d = trust_decision([resp(0, BAD, "a", True)], 1, 1.0)
    assert d.trusted
    assert any(d.selected_poisoned)


def test_it_rejects_a_lone_byzantine_reply_at_theta_two():
    d = trust_decision([resp(0, BAD, "a", True)], 2, 1.0)
    assert not d.trusted
    assert d.count < 2


def test_it_trusts_two_honest_replies_at_theta_two():
    assert trust_decision([resp(0, HONEST, "a"), resp(1, HONEST, "b")], 2, 1.0).trusted


def test_it_rejects_two_honest_replies_at_theta_three():
    assert not trust_decision([resp(0, HONEST, "a"), resp(1, HONEST, "b")], 3, 1.0).trusted


def test_it_picks_replies_from_distinct_failure_domains():
    rs = [resp(0, HONEST, "a"), resp(1, HONEST, "a"), resp(2, HONEST, "b")]
    d = trust_decision(rs, 2, 1.0)
    assert d.trusted
    assert set(d.selected_domains) == {"a", "b"}


def test_it_rejects_an_honest_and_byzantine_pair_at_gamma_one():
    assert not trust_decision([resp(0, HONEST, "a"), resp(1, BAD, "b", True)], 2, 1.0).trusted


def test_it_judges_every_shard_on_its_own_evidence():
    by = {0: [resp(0, HONEST, "a"), resp(1, HONEST, "b")], 1: [resp(0, HONEST, "a")]}
    trusted, decisions = per_shard_trust(by, 2, 1.0)
    assert not trusted
    assert decisions[0].trusted
    assert not decisions[1].trusted


# --- exact consistency values (spec property 2) ---------------------------------------------


def test_it_scores_a_poisoned_top1_at_exactly_point_nine():
    assert jaccard(HONEST, BAD) == pytest.approx(0.8)
    assert rank_agreement(HONEST, BAD) == pytest.approx(1.0)
    assert pair_consistency(HONEST, BAD) == pytest.approx(0.9)


def test_it_scores_a_reversed_list_at_point_seven_two_two():
    reversed_ = HONEST[::-1]
    assert rank_agreement(HONEST, reversed_) == pytest.approx(4 / 9)  # 0.4444
    assert pair_consistency(HONEST, reversed_) == pytest.approx(0.7222, abs=1e-4)


def test_it_gives_no_rank_credit_without_common_ids():
    assert rank_agreement((1, 2, 3), (4, 5, 6)) == 0.0
    assert pair_consistency((1, 2, 3), (4, 5, 6)) == 0.0


# --- pair_consistency is symmetric, bounded, and 1 only for identical lists (property 3) ------


def test_it_has_a_symmetric_bounded_pair_score():
    rng = np.random.default_rng(11)
    for _ in range(300):
        a = tuple(rng.choice(20, size=rng.integers(1, 10), replace=False).tolist())
        b = tuple(rng.choice(20, size=rng.integers(1, 10), replace=False).tolist())
        s = pair_consistency(a, b)
        assert s == pytest.approx(pair_consistency(b, a))
        assert 0.0 <= s <= 1.0
        assert (s == pytest.approx(1.0)) == (a == b)


def test_it_scores_one_only_for_identical_lists():
    assert pair_consistency(HONEST, HONEST) == 1.0
    swapped = (2, 1, *HONEST[2:])
    assert pair_consistency(HONEST, swapped) < 1.0
    assert pair_consistency(HONEST, HONEST[:8]) < 1.0


# --- per-shard isolation (property 4) ---------------------------------------------------------


def test_it_never_lets_other_shards_evidence_rescue_an_untrusted_shard():
    rng = np.random.default_rng(5)
    domains = ["a", "b", "c"]
    for _ in range(200):
        by = {}
        for s in range(3):
            n = int(rng.integers(0, 4))
            by[s] = [
                resp(r, HONEST if rng.random() < 0.7 else BAD, domains[r], poisoned=False)
                for r in range(n)
            ]
        trusted, decisions = per_shard_trust(by, 2, GAMMA)
        alone = [trust_decision(v, 2, GAMMA).trusted for v in by.values()]
        assert trusted == all(alone)
        assert [d.trusted for d in decisions.values()] == alone


# --- AvailGuard (property 5) ------------------------------------------------------------------


def test_it_keeps_an_under_replicated_shard_unverified_without_recovery():
    asked = {0: [resp(0, HONEST, "a"), resp(1, HONEST, "b")], 1: [resp(3, HONEST, "a")]}
    fresh = {1: [resp(4, HONEST, "b")]}
    out = query_with_recovery(asked, fresh, theta=2, gamma=1.0, kmax=0)
    assert not out.trusted
    assert out.rounds == 0


def test_it_recovers_in_exactly_one_round_with_a_fresh_replica_in_a_new_domain():
    asked = {0: [resp(0, HONEST, "a"), resp(1, HONEST, "b")], 1: [resp(3, HONEST, "a")]}
    fresh = {1: [resp(5, HONEST, "a"), resp(4, HONEST, "b")]}  # same-domain one is skipped
    for kmax in (1, 2):
        out = query_with_recovery(asked, fresh, theta=2, gamma=1.0, kmax=kmax)
        assert out.trusted
        assert out.rounds == 1
        assert set(out.decisions[1].selected_domains) == {"a", "b"}


def test_it_returns_unverified_when_no_fresh_replica_fits():
    asked = {0: [resp(0, HONEST, "a")]}
    fresh = {0: [resp(1, HONEST, "a")]}  # only the domain already represented
    out = query_with_recovery(asked, fresh, theta=2, gamma=1.0, kmax=3)
    assert not out.trusted
    assert out.rounds == 0


# --- CoordShift (property 6) -----------------------------------------------------------------


def test_it_covers_every_domain_with_diversity_aware_quorums():
    rng = np.random.default_rng(2)
    domain = np.arange(60) // 5  # 12 domains of 5 nodes, as in the artifact
    for k in (12, 15, 21):
        qs = sample_quorums(rng, domain, k, 1500, "diversity_aware")
        assert qs.shape == (1500, k)
        assert all(len(set(row)) == k for row in qs.tolist())  # distinct nodes
        cov = np.array([len(np.unique(domain[r])) for r in qs])
        assert (cov == 12).all()
        uni = sample_quorums(rng, domain, k, 1500, "uniform")
        assert np.mean([len(np.unique(domain[r])) for r in uni]) < 12


def test_it_reports_higher_coverage_for_diversity_aware_sampling(result):
    rows = result["coordshift"]
    for div in (r for r in rows if r["sampling"] == "diversity_aware"):
        uni = next(
            r
            for r in rows
            if r["sampling"] == "uniform"
            and (r["p"], r["clustered"], r["k"]) == (div["p"], div["clustered"], div["k"])
        )
        assert div["domain_coverage"] >= uni["domain_coverage"]
        assert div["domain_coverage"] == min(div["k"], 12)


# --- RBO and Kendall tau (spec B6) -------------------------------------------------------------


def test_it_matches_the_published_rbo_values():
    assert rbo_ext("abcdefg", "bacdefg", 0.9) == pytest.approx(0.900, abs=5e-4)
    assert rbo_ext("abcdefghi", "abcdefghi", 0.9) == pytest.approx(1.0)
    assert rbo_ext(list(range(9)), list(range(9))[::-1], 0.9) == pytest.approx(0.553, abs=5e-4)
    assert rbo_ext("abc", "xyz", 0.9) == 0.0


def test_it_matches_the_published_kendall_values():
    assert kendall_tau("abcdefg", "gfedcba") == pytest.approx(-1.0)
    assert kendall_tau("abcdefg", "abdcefg") == pytest.approx(19 / 21)


# --- attacks ----------------------------------------------------------------------------------


def test_it_tampers_the_way_the_artifact_does():
    ids, dists = list(range(10, 20)), [float(i) for i in range(10)]
    assert trustann.tamper("poison", ids, dists, 9)[0] == (POISON_ID, *range(11, 19))
    assert trustann.tamper("suppress", ids, dists, 9)[0] == tuple(range(11, 20))
    assert trustann.tamper("ranking", ids, dists, 9)[0] == tuple(range(18, 9, -1))
    with pytest.raises(ValueError):
        trustann.tamper("nope", ids, dists, 9)


# --- the direction of the claim -------------------------------------------------------------


def test_it_accepts_every_tampered_first_reply_in_the_baseline(result):
    for mode, r in result["attacks"].items():
        assert r["first_reply_tampered_rate"] == 1.0, mode
        assert r["theta1_tampered_rate"] == 1.0, mode


def test_it_accepts_no_tampered_result_under_a_byzantine_minority(result):
    attacks = result["attacks"]
    assert attacks["poison"]["tampered_accepted_rate"] == 0.0
    assert attacks["ranking"]["tampered_accepted_rate"] == 0.0
    # A suppressed list can coincide with an honest replica's own approximate answer.
    assert attacks["suppress"]["tampered_accepted_rate"] <= 0.01


def test_it_still_accepts_clean_and_attacked_queries(result):
    assert result["clean"]["trusted_rate"] >= 0.95
    assert result["clean"]["recall_trusted"] >= 0.98
    for mode, r in result["attacks"].items():
        assert r["trusted_rate"] >= 0.9, mode


def test_it_shows_the_exact_match_threshold_rejecting_clean_queries(result):
    assert result["clean_artifact_gamma"]["trusted_rate"] < result["clean"]["trusted_rate"]


def test_it_shows_that_a_threshold_at_or_below_point_nine_admits_poison(result):
    by_gamma = {row["gamma"]: row for row in result["gamma_sweep"]}
    assert by_gamma[0.8]["pair_tampered_accepted"] > 0.5
    assert by_gamma[0.8]["minority_tampered_accepted"] > 0.0
    assert by_gamma[GAMMA]["pair_tampered_accepted"] == 0.0
    assert by_gamma[GAMMA]["minority_tampered_accepted"] == 0.0
    clean = [row["clean_trusted_rate"] for row in result["gamma_sweep"]]
    assert all(a >= b for a, b in zip(clean, clean[1:], strict=False))  # stricter, fewer trusted


def test_it_recovers_under_failures_without_accepting_tampered_results(result):
    rows = result["failure_sweep"]
    for row in rows:
        assert row["trusted_kmax2"] >= row["trusted_kmax1"] >= row["trusted_kmax0"]
        assert row["tampered_accepted_with_byzantine"] == 0.0
    assert rows[-1]["unverified_kmax1"] > 0.0  # explicit "unverified" rather than a guess


def test_it_returns_json_serialisable_data(result):
    assert json.loads(json.dumps(result, allow_nan=False))["system"] == "TrustANN"


def test_it_prints_a_report_and_returns_zero(result, monkeypatch, capsys):
    monkeypatch.setattr(trustann, "run", lambda seed=0: result)
    assert trustann.main(["--seed", "0"]) == 0
    out = capsys.readouterr().out
    assert "TrustANN" in out and "first reply" in out
