"""Tests for the Minerva reference program (mechanism as described, spec section 10)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from deepdives.reference import minerva as mv

TOPO = mv.build_topology()
SPEC = mv.TelemetrySpec()


def alert(start: int, name: str, kind: str = "x", cause: str = "test") -> mv.Alert:
    return mv.Alert(start, TOPO.id(name), kind, mv.alert_weight(kind), cause)


def port_fault_alerts(start: int = 20, host: int = 5) -> list[mv.Alert]:
    """What a flapping leaf port raises: the port, its NIC, the ranks behind it, the job."""
    ranks = TOPO.ranks_of_host(host)
    return [
        alert(start, f"port{host}", "port_flap"),
        alert(start, f"port{host}", "crc_errors"),
        alert(start + 1, f"nic{host}", "nic_retx_peer"),
        *[alert(start + 2, f"rank{r}", "nccl_bw_peer") for r in ranks],
        alert(start + 2, "job", "job_step_slow"),
    ]


def gray_gpu_alerts(start: int = 20, gpu: int = 163) -> list[mv.Alert]:
    host, i = divmod(gpu, 8)
    return [
        alert(start, f"gpu{host}.{i}", "sm_clock_peer"),
        alert(start, f"gpu{host}.{i}", "gpu_temp_peer"),
        alert(start, f"rank{gpu}", "compute_ms_peer"),
    ]


def roots(incidents: list[mv.Incident]) -> list[str]:
    return [TOPO.names[inc.root] for inc in incidents]


# --- The graph -----------------------------------------------------------------------------


def test_it_builds_the_cluster_graph_of_the_spec() -> None:
    sizes = {k: len(v) for k, v in TOPO.groups.items()}
    assert sizes == {
        "job": 1,
        "spine": 2,
        "leaf": 4,
        "port": 32,
        "nic": 32,
        "pdu": 4,
        "host": 32,
        "gpu": 256,
        "rank": 256,
    }
    # A DAG: nothing but the entity itself is both above and below it.
    both = TOPO.descendants & TOPO.descendants.T
    assert np.array_equal(both, np.eye(TOPO.n, dtype=bool))


def test_it_puts_eight_hosts_and_their_gpus_below_each_pdu() -> None:
    below = TOPO.descendants[TOPO.id("pdu3")]
    kinds = [TOPO.kinds[i] for i in np.flatnonzero(below)]
    assert {k: kinds.count(k) for k in set(kinds)} == {
        "pdu": 1,
        "host": 8,
        "nic": 8,
        "gpu": 64,
        "rank": 64,
        "job": 1,
    }
    assert below[TOPO.id("host24")] and not below[TOPO.id("host23")]


def test_it_spreads_each_leaf_over_two_pdus() -> None:
    hosts = [h for h in range(32) if TOPO.descendants[TOPO.id("leaf1"), TOPO.id(f"host{h}")]]
    assert hosts == []  # hosts do not depend on the network, only their NICs do
    nics = [h for h in range(32) if TOPO.descendants[TOPO.id("leaf1"), TOPO.id(f"nic{h}")]]
    assert nics == [4, 5, 6, 7, 20, 21, 22, 23]
    assert {TOPO.hosts_of_pdu(p)[0] // 8 for p in range(4)} == {0, 1, 2, 3}


def test_it_extends_impact_to_the_ring_neighbours_of_downstream_ranks() -> None:
    imp = TOPO.impact[TOPO.id("port5")]
    assert imp[TOPO.id("rank39")] and imp[TOPO.id("rank48")]  # neighbours of ranks 40..47
    assert not imp[TOPO.id("rank38")]
    assert not TOPO.descendants[TOPO.id("port5"), TOPO.id("rank39")]
    assert list(TOPO.ring_peers(np.array([0, 1]))) == [2, 255]


def test_it_finds_ancestors_within_a_hop_limit() -> None:
    anc = TOPO.ancestors_within(2)
    assert anc[TOPO.id("nic5"), TOPO.id("rank40")]  # one hop
    assert anc[TOPO.id("port5"), TOPO.id("rank40")]  # two hops
    assert not anc[TOPO.id("leaf1"), TOPO.id("rank40")]  # three hops
    assert TOPO.ancestors_within(3)[TOPO.id("leaf1"), TOPO.id("rank40")]


# --- Detection primitives ------------------------------------------------------------------


def test_it_computes_a_robust_z_score_against_the_peers() -> None:
    x = np.array([[10.0, 11.0, 9.0, 10.0, 50.0]])
    z = mv.robust_z(x)
    # median 10, MAD 1 -> sigma 1.4826; the outlier does not inflate the spread.
    np.testing.assert_allclose(z, (x - 10.0) / 1.4826)


def test_it_reports_each_run_once_when_it_reaches_the_continuity_length() -> None:
    flags = np.array([0, 1, 1, 1, 0, 1, 1, 0, 1, 1, 1, 1], bool)
    assert mv.run_starts(flags, 1) == [(1, 0), (5, 0), (8, 0)]
    assert mv.run_starts(flags, 2) == [(2, 0), (6, 0), (9, 0)]
    assert mv.run_starts(flags, 3) == [(3, 0), (10, 0)]


# --- Property 3: a 15% gray GPU ------------------------------------------------------------


def slow_rank_compute(slowdown: float, seed: int = 0, spikes: bool = False) -> np.ndarray:
    rng = np.random.default_rng(seed)
    x = SPEC.compute_ms * (1 + SPEC.jitter * rng.standard_normal((SPEC.windows, 256)))
    if spikes:
        x[30, 7] *= 1 + SPEC.spike_size
    x[20:, 0] *= 1 + slowdown
    return x


def test_it_flags_a_gray_gpu_15_percent_slower_by_peer_z_score() -> None:
    x = slow_rank_compute(0.15)
    flags = mv.peer_flags(x, +1, mv.PeerSpec())
    starts = mv.run_starts(flags, mv.PeerSpec().min_windows)
    assert (22, 0) in starts  # confirmed on the third slow window
    assert all(col == 0 for _, col in starts)


def test_it_misses_the_same_gray_gpu_with_an_absolute_30_percent_threshold() -> None:
    x = slow_rank_compute(0.15)
    limit = mv.absolute_limit("compute_ms", SPEC, mv.Thresholds())
    assert limit == pytest.approx(130.0)
    assert not mv.threshold_flags(x, +1, limit).any()


def test_it_finds_the_gray_gpu_in_a_full_scenario_only_with_peer_detection() -> None:
    faults = (mv.Fault("gray_gpu", 163, 25),)
    tel = mv.simulate(TOPO, faults, SPEC, np.random.default_rng(3))
    base = mv.baseline_alerts(TOPO, faults, tel, SPEC, mv.Thresholds())
    peer = mv.minerva_alerts(TOPO, faults, tel, SPEC, mv.Thresholds(), mv.PeerSpec())
    gpu = TOPO.id("gpu20.3")
    assert not any(a.entity == gpu for a in base)
    assert {a.kind for a in peer if a.entity == gpu} == {"sm_clock_peer", "gpu_temp_peer"}
    assert "gpu20.3" in roots(mv.correlate(peer, TOPO))


# --- Property 4: continuity ----------------------------------------------------------------


@pytest.mark.parametrize("w", [2, 3])
def test_it_does_not_flag_a_one_window_spike(w: int) -> None:
    x = slow_rank_compute(0.0, spikes=True)
    flags = mv.peer_flags(x, +1, mv.PeerSpec())
    assert flags[30, 7]  # the spike is an outlier in its window ...
    assert mv.run_starts(flags, w) == []  # ... but never for W windows in a row
    assert (30, 7) in mv.run_starts(flags, 1)


# --- Property 1: one leaf-port fault, one incident -----------------------------------------


def test_it_groups_a_leaf_port_fault_into_exactly_one_incident() -> None:
    incidents = mv.correlate(port_fault_alerts(), TOPO)
    assert len(incidents) == 1
    assert roots(incidents)[0] in {"port5", "leaf1"}
    assert len(incidents[0].alerts) == 12


def test_it_roots_a_fault_on_every_host_under_a_leaf_at_the_leaf() -> None:
    hosts = [4, 5, 6, 7, 20, 21, 22, 23]
    alerts = [alert(20, f"nic{h}", "link_down") for h in hosts]
    alerts += [alert(21, f"rank{r}", "nccl_timeout") for h in hosts for r in TOPO.ranks_of_host(h)]
    incidents = mv.correlate(alerts, TOPO)
    assert roots(incidents) == ["leaf1"]
    assert incidents[0].confidence > 0.8


def test_it_reports_runner_up_roots_for_top3() -> None:
    inc = mv.correlate(port_fault_alerts(), TOPO)[0]
    # The NIC explains all but the port's own alerts; the host adds its silent GPUs.
    assert [TOPO.names[c] for c in inc.candidates] == ["port5", "nic5", "host5"]


# --- Property 2: two faults in disjoint subtrees -------------------------------------------


def test_it_keeps_two_faults_in_disjoint_subtrees_apart() -> None:
    incidents = mv.correlate(port_fault_alerts() + gray_gpu_alerts(), TOPO)
    assert sorted(roots(incidents)) == ["gpu20.3", "port5"]
    assert sorted(len(inc.alerts) for inc in incidents) == [3, 12]


def test_it_splits_the_same_root_into_two_incidents_far_apart_in_time() -> None:
    incidents = mv.correlate(port_fault_alerts(10) + port_fault_alerts(40), TOPO)
    assert roots(incidents) == ["port5", "port5"]


# --- Property 5: unrelated noise stays alone -----------------------------------------------


@pytest.mark.parametrize("host", [17, 4])  # another leaf, and the same leaf as the fault
def test_it_does_not_merge_a_noise_alert_on_an_unrelated_host(host: int) -> None:
    alerts = port_fault_alerts() + [alert(21, f"host{host}", "ecc_corrected", "noise")]
    incidents = mv.correlate(alerts, TOPO)
    assert len(incidents) == 2
    noise = [inc for inc in incidents if any(alerts[i].cause == "noise" for i in inc.alerts)]
    assert len(noise) == 1 and len(noise[0].alerts) == 1
    assert TOPO.names[noise[0].root] == f"host{host}"


def test_it_keeps_simulated_noise_out_of_the_fault_incident() -> None:
    faults = (mv.Fault("port_flap", 5, 20),)
    tel = mv.simulate(TOPO, faults, SPEC, np.random.default_rng(0))
    alerts = mv.minerva_alerts(TOPO, faults, tel, SPEC, mv.Thresholds(), mv.PeerSpec())
    main = max(mv.correlate(alerts, TOPO), key=lambda inc: len(inc.alerts))
    assert TOPO.names[main.root] == "port5"
    assert {alerts[i].kind for i in main.alerts}.isdisjoint({"xid_benign", "ecc_corrected"})


# --- Evaluation helpers --------------------------------------------------------------------


def test_it_scores_threshold_triage_as_a_random_pick_among_the_first_alerts() -> None:
    alerts = port_fault_alerts()  # 2 of the 12 alerts name the port (both at t = 20)
    caused = list(range(len(alerts)))
    ok = {TOPO.id("port5")}
    assert mv.triage_accuracy(alerts, caused, ok, 1) == 1.0  # only port alerts come first
    late = [alert(19, "rank40", "nccl_bw_peer"), *alerts]
    assert mv.triage_accuracy(late, list(range(13)), ok, 1) == 0.0
    # First 3 by time: rank40 (t=19), then both port alerts (t=20): the port is among them.
    assert mv.triage_accuracy(late, list(range(13)), ok, 3) == 1.0


# --- The claim's direction, from run() -----------------------------------------------------


def test_it_collapses_many_alerts_into_one_incident_per_fault(result: dict) -> None:
    for name, sc in result["scenarios"].items():
        for f in sc["minerva"]["faults"].values():
            assert f["incidents"] == 1, name
            assert f["top1"] == 1.0, name
        base = sc["threshold"]
        assert base["incidents"] == base["alerts"]  # one incident per alert
    port = result["scenarios"]["port_flap"]
    assert port["threshold"]["faults"]["port_flap:5"]["alerts"] > 50
    assert port["minerva"]["incidents"] < port["threshold"]["incidents"] / 10


def test_it_finds_the_right_roots_that_thresholds_miss(result: dict) -> None:
    s = result["summary"]
    assert s["minerva"]["top1_accuracy"] == 1.0
    assert s["minerva"]["top3_accuracy"] == 1.0
    assert s["threshold"]["top1_accuracy"] < 0.3
    assert s["threshold+topology"]["top1_accuracy"] < 1.0  # grouping alone misses the gray GPU
    assert s["minerva"]["faults_detected"] == s["minerva"]["faults"] == 5
    assert s["threshold"]["faults_detected"] < 5
    assert s["minerva"]["alerts_per_fault_incident"] > 20
    gray = result["scenarios"]["gray_gpu"]
    assert gray["minerva"]["faults"]["gray_gpu:163"]["root"] == "gpu20.3"
    assert gray["minerva"]["faults"]["gray_gpu:163"]["delay_windows"] == 2  # W - 1
    assert gray["threshold"]["faults"]["gray_gpu:163"]["delay_windows"] is None


def test_it_separates_the_two_concurrent_faults(result: dict) -> None:
    both = result["scenarios"]["port_flap+gray_gpu"]["minerva"]["faults"]
    assert [f["root"] for f in both.values()] == ["port5", "gpu20.3"]


def test_it_raises_fewer_noise_incidents_than_thresholds(result: dict) -> None:
    s = result["summary"]
    assert s["minerva"]["noise_incidents"] < s["threshold"]["noise_incidents"] / 2
    gs = result["gray_sweep"]
    assert max(gs["peer_false_alerts_per_1k_rank_windows"]) < min(
        gs["threshold_false_alerts_per_1k_rank_windows"]
    )


def test_it_detects_smaller_slowdowns_with_peers_than_with_a_fixed_threshold(
    result: dict,
) -> None:
    gs = result["gray_sweep"]
    i15 = gs["slowdown_pct"].index(15.0)
    assert gs["peer_detect_rate"][i15] == 1.0
    assert gs["threshold_detect_rate"][i15] == 0.0
    assert gs["peer_detect_rate"][0] == 0.0
    pairs = zip(gs["peer_detect_rate"][1:], gs["threshold_detect_rate"][1:], strict=True)
    assert all(p >= t for p, t in pairs)


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
    monkeypatch.setattr(mv, "run", fake_run)
    assert mv.main(["--seed", "1"]) == 0
    assert calls == [1]
    out = capsys.readouterr().out
    assert "mechanism as described" in out
    assert "minerva" in out
