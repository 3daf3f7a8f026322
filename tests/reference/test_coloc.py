"""Tests for the CoLoc reference program (mechanism as described; spec section 2)."""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pytest

from deepdives.reference import coloc
from deepdives.reference.coloc import (
    NULL_EPSILON,
    PAGE_ITEMS,
    TIERS,
    Layout,
    QueryLog,
    Tier,
    Workload,
)

SMALL = replace(Workload(), n_train=4_000, n_test=4_000)


@pytest.fixture(scope="module")
def small_scenario() -> coloc.Scenario:
    return coloc.build_scenario(1, SMALL)


@pytest.fixture(scope="module")
def small_layouts(small_scenario: coloc.Scenario) -> tuple[list[Layout], QueryLog, QueryLog]:
    train, test = small_scenario.logs(0.5, 0.0)
    return coloc.build_layouts(small_scenario, train), train, test


# --- unit-test properties from the spec ---------------------------------------------------------


def test_it_respects_tier_capacities_and_places_every_item_once(small_layouts, small_scenario):
    layouts, _, _ = small_layouts
    n_items = small_scenario.corpus.n_items
    caps = coloc.tier_page_capacity(n_items, TIERS, PAGE_ITEMS)
    for lay in layouts:
        assert lay.tier.shape == lay.page.shape == (n_items,)
        assert (lay.tier >= 0).all() and (lay.page >= 0).all(), lay.name
        # Every page lives in exactly one tier ...
        pairs = np.unique(np.stack([lay.page, lay.tier]), axis=1)
        assert len(np.unique(pairs[0])) == pairs.shape[1], lay.name
        # ... and no tier holds more pages than it has room for.
        pages_in_tier = np.bincount(lay.page_tier(), minlength=len(TIERS))
        assert (pages_in_tier[:-1] <= caps[:-1]).all(), (lay.name, pages_in_tier, caps)


def test_it_never_puts_more_than_b_items_in_a_page(small_layouts):
    layouts, _, _ = small_layouts
    for lay in layouts:
        assert np.bincount(lay.page).max() <= PAGE_ITEMS, lay.name


def test_it_caps_groups_at_b_items_even_on_a_dense_graph():
    a, b = np.triu_indices(40, 1)
    edges = (a, b, np.full(len(a), 10.0))  # every pair heavily co-accessed
    labels = coloc.group_nodes(np.ones(40), edges, cap=16, min_weight=2)
    assert np.bincount(np.unique(labels, return_inverse=True)[1]).max() <= 16


def test_it_reads_no_slower_tier_for_hot_queries_when_results_are_whole_groups():
    rng = np.random.default_rng(7)
    n_items, size = 320, 8
    groups = rng.permutation(n_items).reshape(-1, size)  # ids shuffled: no id locality
    pop = 1.0 / np.arange(1, len(groups) + 1)
    pop /= pop.sum()
    train = QueryLog.from_lists([groups[g] for g in rng.choice(len(groups), 3000, p=pop)])
    test_g = rng.choice(len(groups), 3000, p=pop)
    test = QueryLog.from_lists([groups[g] for g in test_g])
    tiers = (Tier("fast", 1.0, 20.0, 0.10), Tier("slow", 80.0, 3.0, None))
    lay = coloc.coloc_layout(train, n_items, tiers, PAGE_ITEMS)
    fast_slots = int(0.10 * n_items) // PAGE_ITEMS * PAGE_ITEMS
    hot = test_g < fast_slots // size  # groups 0..3 are the hottest and fit the fast tier
    counts = coloc.pages_per_tier(lay, test, len(tiers))
    assert hot.sum() > 1000
    assert (counts[hot, 1] == 0).all()
    assert (counts[hot, 0] == 1).all()  # one group, one page


def test_it_touches_no_more_pages_than_a_random_packing_of_the_same_tiers(small_layouts):
    layouts, _, test = small_layouts
    co = next(lay for lay in layouts if lay.name == "CoLoc")
    rnd = coloc.random_pages_layout(co, PAGE_ITEMS, np.random.default_rng(3))
    assert (rnd.tier == co.tier).all()
    n = len(TIERS)
    co_pages = coloc.pages_per_tier(co, test, n).sum(1).mean()
    rnd_pages = coloc.pages_per_tier(rnd, test, n).sum(1).mean()
    assert co_pages <= rnd_pages
    assert co_pages < 0.5 * rnd_pages  # structured log: grouping should matter a lot


def test_it_finds_no_gain_on_a_log_without_co_access_structure(result):
    null = result["null"]
    assert abs(null["latency_reduction_vs_hotness"]) < NULL_EPSILON
    rows = null["layouts"]
    assert abs(rows["CoLoc"]["cross_tier_rate"] - rows["hotness-only"]["cross_tier_rate"]) < 0.02


# --- building blocks ----------------------------------------------------------------------------


def test_it_counts_co_access_per_pair():
    log = QueryLog.from_lists([np.array([0, 1, 2]), np.array([2, 1]), np.array([3])])
    a, b, w = coloc.cooccurrence(log, 4)
    got = {(int(x), int(y)): float(v) for x, y, v in zip(a, b, w, strict=True)}
    assert got == {(0, 1): 1.0, (0, 2): 1.0, (1, 2): 2.0}


def test_it_costs_a_query_by_its_slowest_tier():
    tiers = (Tier("fast", 1.0, 20.0, 0.5), Tier("slow", 100.0, 1.0, None))
    counts = np.array([[2, 0], [1, 1]])
    lat = coloc.query_latency_us(counts, tiers, b=1)
    page_us = coloc.VECTOR_BYTES / 1e3  # one vector per page
    assert lat[0] == pytest.approx(coloc.SEARCH_US + 1.0 + 2 * page_us / 20.0)
    assert lat[1] == pytest.approx(coloc.SEARCH_US + 100.0 + page_us / 1.0)


def test_it_returns_bit_identical_vectors_through_every_layout(small_layouts, small_scenario):
    layouts, _, test = small_layouts
    vectors = small_scenario.corpus.vectors()
    assert coloc.results_identical(vectors, layouts, test)
    # The check can fail: a layout whose store is scrambled does not pass.
    store = coloc.materialise(layouts[-1], vectors)
    scrambled = coloc.TierStore(tuple(a[::-1] for a in store.arrays), store.tier, store.offset)
    assert not np.array_equal(coloc.fetch(scrambled, test.items), vectors[test.items])


# --- the direction of the claim -------------------------------------------------------------------


def test_it_cuts_cross_tier_queries_toward_zero(result):
    rows = result["main"]["layouts"]
    co, hot = rows["CoLoc"]["cross_tier_rate"], rows["hotness-only"]["cross_tier_rate"]
    assert hot > 0.3
    assert co < 0.1
    assert co < hot / 4
    assert co < rows["modality-siloed"]["cross_tier_rate"]


def test_it_lowers_modelled_latency_at_equal_capacity(result):
    main = result["main"]
    rows = main["layouts"]
    assert main["latency_reduction_vs_hotness"] > 0.1
    assert rows["CoLoc"]["mean_us"] < rows["modality-siloed"]["mean_us"]
    assert rows["CoLoc"]["p99_us"] <= rows["hotness-only"]["p99_us"]
    # Equal capacity: no layout holds more items in a bounded tier than the tier's slots.
    caps = coloc.tier_page_capacity(result["setup"]["items"], TIERS, PAGE_ITEMS)
    for name, per_tier in main["items_per_tier"].items():
        assert all(n <= c * PAGE_ITEMS for n, c in zip(per_tier[:-1], caps, strict=False)), name


def test_it_leaves_results_and_recall_unchanged(result):
    assert result["results_identical_across_layouts"] is True
    assert result["recall_at_k"] > 0.9


def test_it_gains_more_as_cross_modal_co_access_grows(result):
    gain = [p["latency_reduction"] for p in result["mix_sweep"]]
    assert gain[-1] > gain[0] + 0.1
    assert gain[2] > gain[0]


def test_it_gains_less_as_structure_disappears(result):
    gain = [p["latency_reduction"] for p in result["structure_sweep"]]
    assert gain[0] > gain[2] > abs(gain[-1])


def test_it_returns_json_serialisable_data(result):
    assert json.loads(json.dumps(result, allow_nan=False))["system"] == "CoLoc"


def test_it_prints_a_report_and_returns_zero(result, monkeypatch, capsys):
    monkeypatch.setattr(coloc, "run", lambda seed=0: result)
    assert coloc.main(["--seed", "0"]) == 0
    out = capsys.readouterr().out
    assert "mechanism as described" in out
    assert "CoLoc" in out and "hotness-only" in out
