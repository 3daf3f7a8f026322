"""Properties of the HiLO reference program (mechanism as described) and its headline claim."""

from __future__ import annotations

import json

import numpy as np
import pytest

from deepdives.reference import hilo
from deepdives.reference.hilo import (
    PRODUCTS,
    ControlConfig,
    Controller,
    PoolConfig,
    Product,
    fifo_waits,
    offered_load,
    plan_hilo,
)

BUDGET = ControlConfig().rho_down * PoolConfig().capacity
BASE_RATES = [p.base_rate for p in PRODUCTS]


def weighted_quality(products, rates, plan) -> float:
    """Σ w·λ·admitted·q / Σ w·λ: the per-request weighted quality of a plan."""
    num = sum(
        p.weight * r * a * p.quality[lv]
        for p, r, lv, a in zip(products, rates, plan.levels, plan.admit, strict=True)
    )
    return num / sum(p.weight * r for p, r in zip(products, rates, strict=True))


def is_convex(product: Product) -> bool:
    ratios = [product.step_ratio(lv) for lv in range(len(product.quality) - 1)]
    return all(a <= b for a, b in zip(ratios, ratios[1:], strict=False))


def random_rates(rng: np.random.Generator, top: float) -> list[float]:
    return [float(r) for r in rng.uniform(0.0, top, len(PRODUCTS)) * BASE_RATES]


# --- property 1 -------------------------------------------------------------------------------


def test_it_keeps_every_product_at_full_quality_when_load_fits() -> None:
    rng = np.random.default_rng(1)
    checked = 0
    for _ in range(300):
        rates = random_rates(rng, 1.5)
        if offered_load(PRODUCTS, rates, [0] * len(PRODUCTS)) > BUDGET:
            continue
        plan = plan_hilo(PRODUCTS, rates, BUDGET)
        assert plan.levels == (0,) * len(PRODUCTS)
        assert plan.admit == (1.0,) * len(PRODUCTS)
        checked += 1
    assert checked > 50
    controller = Controller(PRODUCTS, plan_hilo, PoolConfig().capacity)
    assert controller.step(BASE_RATES).levels == (0,) * len(PRODUCTS)


# --- property 2 -------------------------------------------------------------------------------


def test_it_meets_the_capacity_budget_whenever_the_floors_fit() -> None:
    rng = np.random.default_rng(2)
    floors = [p.floor for p in PRODUCTS]
    degraded = 0
    for _ in range(500):
        rates = random_rates(rng, 6.0)
        if offered_load(PRODUCTS, rates, floors) > BUDGET:
            continue
        plan = plan_hilo(PRODUCTS, rates, BUDGET)
        assert offered_load(PRODUCTS, rates, plan.levels) <= BUDGET + 1e-9
        assert plan.admit == (1.0,) * len(PRODUCTS)
        degraded += any(plan.levels)
    assert degraded > 100  # the property was exercised where it matters


# --- property 3 -------------------------------------------------------------------------------


def test_it_degrades_the_lower_weight_product_first_with_identical_ladders() -> None:
    ladder = {"quality": (1.0, 0.9, 0.75, 0.55), "cost": (1.0, 0.7, 0.5, 0.4), "floor": 3}
    low = Product("low", 1.0, 50.0, **ladder)
    high = Product("high", 3.0, 50.0, **ladder)
    rng = np.random.default_rng(3)
    strictly = 0
    for _ in range(400):
        rates = [float(x) for x in rng.uniform(10, 100, 2)]
        budget = float(rng.uniform(20, 150))
        levels = plan_hilo([low, high], rates, budget).levels
        assert levels[0] >= levels[1]
        strictly += levels[0] > levels[1]
    assert strictly > 0


# --- property 4 -------------------------------------------------------------------------------


def test_it_lowers_aggregate_quality_monotonically_as_load_rises() -> None:
    assert all(is_convex(p) for p in PRODUCTS)
    qualities, level_rows = [], []
    for factor in np.arange(0.5, 8.0, 0.05):
        rates = [factor * r for r in BASE_RATES]
        plan = plan_hilo(PRODUCTS, rates, BUDGET)
        qualities.append(weighted_quality(PRODUCTS, rates, plan))
        level_rows.append(plan.levels)
    assert all(b <= a + 1e-12 for a, b in zip(qualities, qualities[1:], strict=False))
    assert np.all(np.diff(np.array(level_rows), axis=0) >= 0)
    assert qualities[0] == 1.0 and qualities[-1] < 0.5


# --- property 5 -------------------------------------------------------------------------------


def converged_controller(factor: float, config: ControlConfig | None = None) -> Controller:
    controller = Controller(PRODUCTS, plan_hilo, PoolConfig().capacity, config or ControlConfig())
    for _ in range(5):
        controller.step([factor * r for r in BASE_RATES])
    return controller


def test_it_makes_no_level_changes_under_constant_load_after_convergence() -> None:
    controller = converged_controller(2.38)
    settled = tuple(controller.levels)
    assert any(settled)
    for _ in range(200):
        assert controller.step([2.38 * r for r in BASE_RATES]).levels == settled


@pytest.mark.parametrize("hold", [ControlConfig().hold_up, 3, 7])
def test_it_restores_full_quality_exactly_h_intervals_after_load_drops(hold: int) -> None:
    assert ControlConfig().hold_up > 1  # slow up is part of the design, not an option
    controller = converged_controller(2.38, ControlConfig(hold_up=hold))
    steps = 0
    while any(controller.levels):
        controller.step(BASE_RATES)
        steps += 1
        assert steps <= hold
    assert steps == hold  # slow up: it waits the full H intervals, then restores at once


# --- property 6 -------------------------------------------------------------------------------


def test_it_never_goes_below_a_floor_and_sheds_the_lowest_weight_first() -> None:
    rng = np.random.default_rng(6)
    by_weight = sorted(range(len(PRODUCTS)), key=lambda i: PRODUCTS[i].weight)
    shed_cases = 0
    for _ in range(500):
        rates = random_rates(rng, 10.0)
        plan = plan_hilo(PRODUCTS, rates, BUDGET)
        assert all(lv <= p.floor for lv, p in zip(plan.levels, PRODUCTS, strict=True))
        assert offered_load(PRODUCTS, rates, plan.levels, plan.admit) <= BUDGET + 1e-9
        for rank, i in enumerate(by_weight):
            if plan.admit[i] < 1.0:
                assert plan.levels == tuple(p.floor for p in PRODUCTS)
                assert all(plan.admit[j] == 0.0 for j in by_weight[:rank])
                shed_cases += 1
    assert shed_cases > 50


# --- the queue model --------------------------------------------------------------------------


def test_it_computes_queueing_delay_like_a_step_by_step_lindley_recursion() -> None:
    rng = np.random.default_rng(7)
    offsets = np.sort(rng.uniform(0, 1, 400))
    work = rng.exponential(1.0, 400)
    capacity, start = 350.0, 3.0
    waits, end = fifo_waits(offsets, work, start, capacity, 1.0)
    backlog, last = start, 0.0
    for k in range(400):
        backlog = max(0.0, backlog - capacity * (offsets[k] - last))
        assert waits[k] == pytest.approx(backlog / capacity, abs=1e-9)
        backlog += work[k]
        last = offsets[k]
    assert end == pytest.approx(max(0.0, backlog - capacity * (1.0 - last)), abs=1e-9)


# --- the headline, on synthetic data ------------------------------------------------------------


def test_it_holds_the_slo_only_when_it_degrades(result: dict) -> None:
    policies = result["policies"]
    assert not policies["none"]["holds_slo"]
    assert policies["none"]["slo_attainment_surge"] < 0.5
    assert policies["uniform"]["holds_slo"]
    assert policies["hilo"]["holds_slo"]
    assert policies["hilo"]["slo_attainment_surge"] == 1.0


def test_it_gives_hilo_the_highest_weighted_quality_among_slo_holding_policies(
    result: dict,
) -> None:
    policies = result["policies"]
    assert result["best_slo_holding_policy"] == "hilo"
    assert policies["hilo"]["mean_quality_surge"] > policies["uniform"]["mean_quality_surge"] + 0.05
    assert policies["hilo"]["served_fraction"] == 1.0
    # The most important product is spared at least as much as under uniform degradation.
    assert (
        policies["hilo"]["surge_levels"]["web-answer"]
        < policies["uniform"]["surge_levels"]["web-answer"]
    )


def test_it_recovers_after_the_surge_without_oscillating(result: dict) -> None:
    hilo_result = result["policies"]["hilo"]
    assert hilo_result["redegradations"] == 0
    assert hilo_result["recovery_s"] is not None and hilo_result["recovery_s"] <= 60
    # Each product goes down and comes back up once, one level at a time at most.
    assert hilo_result["level_changes"] <= 2 * sum(p.floor for p in PRODUCTS)
    ablation = result["policies"]["hilo-no-hysteresis"]
    assert ablation["redegradations"] > 0
    assert ablation["level_changes"] > 3 * hilo_result["level_changes"]


def test_it_keeps_the_direction_on_another_seed() -> None:
    other = hilo.run(seed=1)["policies"]
    assert other["hilo"]["holds_slo"] and not other["none"]["holds_slo"]
    assert other["hilo"]["mean_quality_surge"] > other["uniform"]["mean_quality_surge"]
    assert other["hilo"]["redegradations"] == 0


# --- the program's interface ------------------------------------------------------------------


def test_it_returns_json_serialisable_results_with_plot_series(result: dict) -> None:
    decoded = json.loads(json.dumps(result))
    series = decoded["series"]
    n = len(series["load_multiplier"])
    assert n > 50
    assert len(series["hilo"]["quality"]) == n
    assert max(series["load_multiplier"]) == pytest.approx(2.38)
    assert set(series["hilo_levels"]) == {p.name for p in PRODUCTS}


def test_it_prints_a_report_and_exits_zero(
    result: dict, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    seeds: list[int] = []
    # main() goes through the module-level run() once; its result is the module's run's.
    monkeypatch.setattr(hilo, "run", lambda seed=0: seeds.append(seed) or result)
    assert hilo.main(["--seed", "0"]) == 0
    assert seeds == [0]
    out = capsys.readouterr().out
    assert "mechanism as described" in out
    assert "best SLO-holding policy by weighted quality: hilo" in out
