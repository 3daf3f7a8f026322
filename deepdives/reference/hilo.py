"""HiLO-style product-level graceful degradation: a reference program, mechanism as described.

No HiLO paper or code was available when this was written, so the mechanism here is derived
from a short description (degrade whole products through validated levels, chosen by one
controller that sees load and quality) plus well-known building blocks. Treat it as our
design, not Microsoft's.

What is modelled
- Four products share one GPU pool (a fluid FIFO queue of fixed capacity, in GPU-seconds
  per second). Each product has a degradation ladder: level 0 is full quality, deeper levels
  cost fewer GPU-seconds per request and give lower quality; each product has a floor level
  it may never go below.
- Every control interval the controller measures arrival rates (EWMA) and the last p95
  latency, then solves a multiple-choice knapsack greedily: start everyone at full quality
  and, while the load exceeds the budget, step down the product that loses the least
  weighted quality per GPU-second saved. It steps down at once and steps up only after H
  intervals of headroom at a stricter budget (fast-down, slow-up). If even the floors do
  not fit, it sheds requests of the lowest-weight product first (admission control).
- Policies compared on the same synthetic arrivals: no degradation, uniform degradation
  (one shared level for every product, same controller otherwise), HiLO, and HiLO without
  hysteresis (an ablation).
- The load surges to 2.38x the baseline peak, holds, and returns to baseline.

Run: python -m deepdives.reference.hilo [--seed N]
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]


@dataclass(frozen=True)
class Product:
    """One product and its validated degradation ladder (index = level, 0 = full)."""

    name: str
    weight: float  # business priority w_p
    base_rate: float  # requests per second at the baseline peak
    quality: tuple[float, ...]  # q_p(level), non-increasing
    cost: tuple[float, ...]  # GPU-seconds per request at each level, decreasing
    floor: int  # deepest level this product may ever run at

    def step_ratio(self, level: int) -> float:
        """Weighted quality lost per GPU-second saved by stepping from `level` to `level + 1`.

        The arrival rate multiplies both the quality lost and the GPU time saved, so it
        cancels: the greedy order depends on the ladders and weights only.
        """
        dq = self.quality[level] - self.quality[level + 1]
        dc = self.cost[level] - self.cost[level + 1]
        return self.weight * dq / dc


# Synthetic ladders. The high-weight answer product saves little by degrading and loses a lot;
# chat and summarisation can shorten outputs or switch models cheaply. All ladders are convex
# (each deeper step costs more quality per GPU-second saved), so the greedy is optimal enough.
PRODUCTS: tuple[Product, ...] = (
    Product("web-answer", 4.0, 120.0, (1.00, 0.90, 0.80, 0.68), (0.50, 0.40, 0.33, 0.28), 3),
    Product("chat", 2.0, 60.0, (1.00, 0.96, 0.90, 0.80), (1.40, 0.80, 0.50, 0.36), 3),
    Product("summarize", 1.5, 40.0, (1.00, 0.95, 0.88, 0.76), (1.00, 0.55, 0.35, 0.25), 3),
    Product("code-complete", 1.0, 100.0, (1.00, 0.93, 0.85, 0.70), (0.30, 0.18, 0.12, 0.09), 2),
)


@dataclass(frozen=True)
class PoolConfig:
    capacity: float = 300.0  # GPU-seconds per second (300 GPUs)
    slo_p95_s: float = 3.0  # latency SLO on the per-interval p95
    timeout_s: float = 10.0  # clients give up after this; the work is still spent
    service_sigma: float = 0.3  # lognormal spread of service time around the level's cost


@dataclass(frozen=True)
class ControlConfig:
    rho_down: float = 0.85  # target utilisation: degrade when the load exceeds this
    rho_up: float = 0.80  # stricter budget a step up must fit (hysteresis band)
    hold_up: int = 10  # H: intervals of headroom before stepping up
    feedback_gain: float = 0.25  # shrink the capacity estimate when p95 exceeds the SLO
    feedback_relax: float = 0.01  # ...and relax it back by this much per good interval
    min_capacity_factor: float = 0.6


NO_HYSTERESIS = ControlConfig(rho_up=0.85, hold_up=1)


@dataclass(frozen=True)
class Scenario:
    interval_s: float = 1.0  # control interval Δ
    baseline_s: int = 300
    ramp_s: int = 60
    surge_s: int = 420
    after_s: int = 360
    surge_factor: float = 2.38  # peak load relative to the baseline peak

    @property
    def n_intervals(self) -> int:
        return self.baseline_s + 2 * self.ramp_s + self.surge_s + self.after_s

    @property
    def surge_end(self) -> int:
        """First interval after the surge has fully ramped down."""
        return self.baseline_s + 2 * self.ramp_s + self.surge_s

    def load_multiplier(self) -> FloatArray:
        up = np.linspace(1.0, self.surge_factor, self.ramp_s, endpoint=False)
        down = np.linspace(self.surge_factor, 1.0, self.ramp_s, endpoint=False)
        return np.concatenate(
            [
                np.ones(self.baseline_s),
                up,
                np.full(self.surge_s, self.surge_factor),
                down,
                np.ones(self.after_s),
            ]
        )


# Rates are measured as an EWMA of per-interval counts. A light filter keeps Poisson noise from
# reaching the planner; with a 60 s ramp its few seconds of lag fit inside the 15% headroom.
RATE_EWMA_ALPHA = 0.2
SLO_HOLD_TARGET = 0.99  # a policy "holds the SLO" if p95 <= SLO in at least 99% of intervals
SERIES_BUCKET_S = 10  # downsample per-interval series to this many seconds for plotting


# --- planning: one control decision, given rates and a budget --------------------------------


@dataclass(frozen=True)
class Plan:
    levels: tuple[int, ...]
    admit: tuple[float, ...]  # fraction of each product's requests admitted


Planner = Callable[[Sequence[Product], Sequence[float], float], Plan]


def offered_load(
    products: Sequence[Product],
    rates: Sequence[float],
    levels: Sequence[int],
    admit: Sequence[float] | None = None,
) -> float:
    """GPU-seconds per second the products would ask for at these levels."""
    admit = admit if admit is not None else [1.0] * len(products)
    return float(
        sum(a * r * p.cost[lv] for p, r, lv, a in zip(products, rates, levels, admit, strict=True))
    )


def shed_lowest_weight_first(
    products: Sequence[Product], rates: Sequence[float], levels: Sequence[int], budget: float
) -> tuple[float, ...]:
    """Admission control: drop whole shares of the least important products until load fits."""
    admit = [1.0] * len(products)
    excess = offered_load(products, rates, levels) - budget
    for i in sorted(range(len(products)), key=lambda j: (products[j].weight, j)):
        if excess <= 0:
            break
        load_i = rates[i] * products[i].cost[levels[i]]
        if load_i <= 0:
            continue
        dropped = min(load_i, excess)
        admit[i] = 1.0 - dropped / load_i
        excess -= dropped
    return tuple(admit)


def plan_hilo(products: Sequence[Product], rates: Sequence[float], budget: float) -> Plan:
    """Greedy multiple-choice knapsack: least weighted quality lost per GPU-second saved."""
    levels = [0] * len(products)
    while offered_load(products, rates, levels) > budget:
        movable = [i for i, p in enumerate(products) if levels[i] < p.floor]
        if not movable:
            break
        # Ties go to the lower-weight product so that it is never spared at a higher one's cost.
        best = min(
            movable, key=lambda i: (products[i].step_ratio(levels[i]), products[i].weight, i)
        )
        levels[best] += 1
    return Plan(tuple(levels), shed_lowest_weight_first(products, rates, levels, budget))


def plan_uniform(products: Sequence[Product], rates: Sequence[float], budget: float) -> Plan:
    """Baseline: one shared level for every product (clipped at each floor)."""
    deepest = max(p.floor for p in products)
    levels = [0] * len(products)
    for shared in range(deepest + 1):
        levels = [min(shared, p.floor) for p in products]
        if offered_load(products, rates, levels) <= budget:
            break
    return Plan(tuple(levels), shed_lowest_weight_first(products, rates, levels, budget))


# --- control: hysteresis and capacity feedback around a planner -----------------------------


@dataclass
class Controller:
    """Turns per-interval plans into level changes with fast-down / slow-up hysteresis."""

    products: Sequence[Product]
    planner: Planner
    nominal_capacity: float
    config: ControlConfig = field(default_factory=ControlConfig)
    levels: list[int] = field(init=False)
    capacity_factor: float = field(init=False, default=1.0)
    _headroom_streak: list[int] = field(init=False)

    def __post_init__(self) -> None:
        self.levels = [0] * len(self.products)
        self._headroom_streak = [0] * len(self.products)

    def observe_p95(self, p95_s: float, slo_s: float) -> None:
        """Feedback: when the model of capacity proves optimistic, trust it less for a while."""
        error = (slo_s - p95_s) / slo_s
        cfg = self.config
        if error < 0:
            shrink = max(0.5, 1.0 + cfg.feedback_gain * error)
            self.capacity_factor = max(cfg.min_capacity_factor, self.capacity_factor * shrink)
        else:
            self.capacity_factor = min(1.0, self.capacity_factor + cfg.feedback_relax)

    def step(self, rates: Sequence[float]) -> Plan:
        capacity = self.nominal_capacity * self.capacity_factor
        down = self.planner(self.products, rates, self.config.rho_down * capacity)
        up = self.planner(self.products, rates, self.config.rho_up * capacity)
        for i in range(len(self.products)):
            if down.levels[i] > self.levels[i]:
                # Fast down: an overload hurts every request, so act in this interval.
                self.levels[i] = down.levels[i]
                self._headroom_streak[i] = 0
            elif up.levels[i] < self.levels[i]:
                # Slow up: only after H intervals in which even the stricter budget had room.
                self._headroom_streak[i] += 1
                if self._headroom_streak[i] >= self.config.hold_up:
                    self.levels[i] = up.levels[i]
                    self._headroom_streak[i] = 0
            else:
                self._headroom_streak[i] = 0
        admit = shed_lowest_weight_first(
            self.products, rates, self.levels, self.config.rho_down * capacity
        )
        return Plan(tuple(self.levels), admit)


@dataclass
class NoDegradation:
    """Baseline: never degrade and never shed, whatever the load."""

    products: Sequence[Product]

    def observe_p95(self, p95_s: float, slo_s: float) -> None:
        del p95_s, slo_s

    def step(self, rates: Sequence[float]) -> Plan:
        del rates
        return Plan((0,) * len(self.products), (1.0,) * len(self.products))


Policy = Controller | NoDegradation


# --- workload and the GPU pool ---------------------------------------------------------------


@dataclass(frozen=True)
class Workload:
    """All arrivals of a run, sorted by time; every policy replays the same requests."""

    times: FloatArray  # seconds since start
    product: IntArray
    noise: FloatArray  # service-time multiplier, mean 1
    ticket: FloatArray  # uniform draw used for admission (same request, same fate)
    bounds: IntArray  # arrivals of interval t are [bounds[t], bounds[t + 1])


def make_workload(
    products: Sequence[Product],
    scenario: Scenario,
    pool: PoolConfig,
    rng: np.random.Generator,
) -> Workload:
    mult = scenario.load_multiplier()
    dt = scenario.interval_s
    base = np.array([p.base_rate for p in products])
    counts = rng.poisson(np.outer(mult, base) * dt)  # (intervals, products)
    per_interval = counts.sum(axis=1)
    interval = np.repeat(np.arange(len(mult)), per_interval)
    product = np.concatenate([np.repeat(np.arange(len(products)), row) for row in counts])
    times = (interval + rng.random(interval.size)) * dt
    order = np.argsort(times, kind="stable")
    sigma = pool.service_sigma
    noise = np.exp(rng.normal(-0.5 * sigma**2, sigma, interval.size))
    bounds = np.concatenate([[0], np.cumsum(per_interval)])
    return Workload(
        times=times[order],
        product=product[order].astype(np.int64),
        noise=noise,
        ticket=rng.random(interval.size),
        bounds=bounds.astype(np.int64),
    )


def fifo_waits(
    offsets: FloatArray, work: FloatArray, backlog: float, capacity: float, dt: float
) -> tuple[FloatArray, float]:
    """Queueing delay of each arrival in a fluid FIFO pool, and the backlog left at the end.

    Lindley's recursion in closed form: the backlog seen by arrival i is the net input so far
    minus its running minimum (the reflection at an empty queue), started from `backlog`.
    """
    if offsets.size == 0:
        return offsets, max(0.0, backlog - capacity * dt)
    before = np.concatenate([[0.0], np.cumsum(work)[:-1]])
    net = before - capacity * offsets
    floor = np.minimum(np.minimum.accumulate(net), -backlog)
    waits = (net - floor) / capacity
    net_end = float(work.sum()) - capacity * dt
    return waits, net_end - min(float(floor[-1]), net_end)


# --- one policy over the whole scenario ------------------------------------------------------


@dataclass
class Trace:
    p95: FloatArray
    quality: FloatArray  # Σ w·q over requests served in time / Σ w over all arrivals
    served: FloatArray  # fraction of arrivals served within the client timeout
    shed: FloatArray  # fraction of arrivals refused by admission control
    levels: IntArray  # (intervals, products)


def simulate(
    products: Sequence[Product],
    policy: Policy,
    workload: Workload,
    scenario: Scenario,
    pool: PoolConfig,
    ewma_alpha: float = RATE_EWMA_ALPHA,
) -> Trace:
    n_t, n_p = scenario.n_intervals, len(products)
    dt = scenario.interval_s
    cost = np.array([p.cost for p in products])
    quality = np.array([p.quality for p in products])
    weight = np.array([p.weight for p in products])
    rates = np.array([p.base_rate for p in products])  # the controller starts warmed up
    trace = Trace(
        np.zeros(n_t), np.zeros(n_t), np.zeros(n_t), np.zeros(n_t), np.zeros((n_t, n_p), np.int64)
    )
    backlog, last_p95 = 0.0, 0.0
    for t in range(n_t):
        policy.observe_p95(last_p95, pool.slo_p95_s)
        plan = policy.step(rates.tolist())
        lo, hi = workload.bounds[t], workload.bounds[t + 1]
        prod = workload.product[lo:hi]
        lv = np.asarray(plan.levels)[prod]
        admitted = workload.ticket[lo:hi] < np.asarray(plan.admit)[prod]
        work = cost[prod, lv][admitted] * workload.noise[lo:hi][admitted]
        offsets = workload.times[lo:hi][admitted] - t * dt
        waits, backlog = fifo_waits(offsets, work, backlog, pool.capacity, dt)
        latency = waits + work
        in_time = latency <= pool.timeout_s
        served_prod = prod[admitted][in_time]
        arrived_w = weight[prod].sum()
        served_wq = (weight[served_prod] * quality[served_prod, lv[admitted][in_time]]).sum()
        last_p95 = float(np.percentile(latency, 95)) if latency.size else 0.0
        trace.p95[t] = last_p95
        trace.quality[t] = served_wq / arrived_w if arrived_w > 0 else 1.0
        trace.served[t] = served_prod.size / max(prod.size, 1)
        trace.shed[t] = 1.0 - admitted.mean() if prod.size else 0.0
        trace.levels[t] = plan.levels
        counts = np.bincount(prod, minlength=n_p) / dt
        rates = ewma_alpha * counts + (1 - ewma_alpha) * rates
    return trace


# --- metrics ---------------------------------------------------------------------------------


def level_changes(levels: IntArray) -> int:
    return int(np.count_nonzero(np.diff(levels, axis=0)))


def redegradations(levels: IntArray) -> int:
    """Times a product was degraded again after having started to recover: oscillation."""
    count = 0
    for column in levels.T:
        moves = np.sign(np.diff(column))
        moves = moves[moves != 0]
        count += int(np.count_nonzero((moves[:-1] < 0) & (moves[1:] > 0)))
    return count


def recovery_seconds(trace: Trace, start: int, slo_s: float, dt: float) -> float | None:
    """Seconds after `start` until every product is at full quality within the SLO for good."""
    unhealthy = trace.levels[start:].any(axis=1) | (trace.p95[start:] > slo_s)
    bad = np.flatnonzero(unhealthy)
    if bad.size == 0:
        return 0.0
    last = int(bad[-1]) + 1
    return None if start + last >= len(trace.levels) else last * dt


def summarize(
    trace: Trace, scenario: Scenario, pool: PoolConfig, products: Sequence[Product] = PRODUCTS
) -> dict[str, object]:
    surge = slice(scenario.baseline_s, scenario.surge_end)
    ok = trace.p95 <= pool.slo_p95_s
    recovery = recovery_seconds(trace, scenario.surge_end, pool.slo_p95_s, scenario.interval_s)
    return {
        "slo_attainment": round(float(ok.mean()), 4),
        "slo_attainment_surge": round(float(ok[surge].mean()), 4),
        "max_p95_s": round(float(trace.p95.max()), 3),
        "mean_quality": round(float(trace.quality.mean()), 4),
        "mean_quality_surge": round(float(trace.quality[surge].mean()), 4),
        "min_quality": round(float(trace.quality.min()), 4),
        "served_fraction": round(float(trace.served.mean()), 4),
        "shed_fraction": round(float(trace.shed.mean()), 4),
        "level_changes": level_changes(trace.levels),
        "redegradations": redegradations(trace.levels),
        "recovery_s": recovery,
        "surge_levels": {
            p.name: int(trace.levels[scenario.surge_end - scenario.ramp_s - 1, i])
            for i, p in enumerate(products)
        },
        "holds_slo": bool(ok.mean() >= SLO_HOLD_TARGET),
    }


def bucket(series: FloatArray, size: int, reducer: Callable[..., FloatArray] = np.mean) -> list:
    usable = len(series) - len(series) % size
    return [round(float(v), 4) for v in reducer(series[:usable].reshape(-1, size), axis=1)]


def shedding_table(
    products: Sequence[Product], pool: PoolConfig, control: ControlConfig, factors: Sequence[float]
) -> list[dict[str, object]]:
    """Steady-state HiLO plans for surges beyond what the floors can absorb."""
    rows = []
    for factor in factors:
        rates = [factor * p.base_rate for p in products]
        plan = plan_hilo(products, rates, control.rho_down * pool.capacity)
        rows.append(
            {
                "surge_factor": factor,
                "levels": dict(zip([p.name for p in products], plan.levels, strict=True)),
                "admit": {p.name: round(a, 3) for p, a in zip(products, plan.admit, strict=True)},
            }
        )
    return rows


def _controller(planner: Planner, control: ControlConfig) -> Callable[[], Policy]:
    return lambda: Controller(PRODUCTS, planner, PoolConfig().capacity, control)


# The headline compares the first three; the ablation shows what hysteresis buys and costs.
POLICIES: dict[str, Callable[[], Policy]] = {
    "none": lambda: NoDegradation(PRODUCTS),
    "uniform": _controller(plan_uniform, ControlConfig()),
    "hilo": _controller(plan_hilo, ControlConfig()),
}
ABLATIONS: dict[str, Callable[[], Policy]] = {
    "hilo-no-hysteresis": _controller(plan_hilo, NO_HYSTERESIS),
}


def run(seed: int = 0) -> dict:
    scenario, pool = Scenario(), PoolConfig()
    rng = np.random.default_rng(seed)
    workload = make_workload(PRODUCTS, scenario, pool, rng)
    results: dict[str, dict[str, object]] = {}
    series: dict[str, object] = {
        "bucket_s": SERIES_BUCKET_S,
        "load_multiplier": bucket(scenario.load_multiplier(), SERIES_BUCKET_S),
    }
    for name, make_policy in (POLICIES | ABLATIONS).items():
        trace = simulate(PRODUCTS, make_policy(), workload, scenario, pool)
        results[name] = summarize(trace, scenario, pool, PRODUCTS)
        series[name] = {
            "p95_s": bucket(trace.p95, SERIES_BUCKET_S, np.max),
            "quality": bucket(trace.quality, SERIES_BUCKET_S),
        }
        if name == "hilo":
            series["hilo_levels"] = {
                p.name: bucket(trace.levels[:, i].astype(float), SERIES_BUCKET_S, np.max)
                for i, p in enumerate(PRODUCTS)
            }
    holding = [n for n in POLICIES if results[n]["holds_slo"]]
    return {
        "system": "HiLO (mechanism as described)",
        "seed": seed,
        "requests": int(workload.times.size),
        "config": {
            "capacity_gpu_s_per_s": pool.capacity,
            "slo_p95_s": pool.slo_p95_s,
            "surge_factor": scenario.surge_factor,
            "baseline_utilisation": round(
                offered_load(PRODUCTS, [p.base_rate for p in PRODUCTS], [0] * len(PRODUCTS))
                / pool.capacity,
                3,
            ),
            "rho_down": ControlConfig().rho_down,
            "rho_up": ControlConfig().rho_up,
            "hold_up_intervals": ControlConfig().hold_up,
            "interval_s": scenario.interval_s,
            "slo_hold_target": SLO_HOLD_TARGET,
        },
        "policies": results,
        "best_slo_holding_policy": max(holding, key=lambda n: results[n]["mean_quality"])
        if holding
        else None,
        "shedding": shedding_table(PRODUCTS, pool, ControlConfig(), (2.38, 4.0, 6.0)),
        "series": series,
    }


def _format_report(result: dict) -> str:
    cfg = result["config"]
    lines = [
        f"HiLO reference (mechanism as described), seed {result['seed']}, "
        f"{result['requests']} synthetic requests",
        f"pool {cfg['capacity_gpu_s_per_s']:.0f} GPU-s/s, baseline utilisation "
        f"{cfg['baseline_utilisation']:.2f}, surge {cfg['surge_factor']}x, "
        f"SLO p95 <= {cfg['slo_p95_s']} s",
        "",
        f"{'policy':<20}{'SLO ok':>8}{'surge':>8}{'max p95':>9}{'quality':>9}"
        f"{'surge q':>9}{'served':>8}{'changes':>9}{'re-deg':>8}{'recover':>9}",
    ]
    for name, r in result["policies"].items():
        recover = "-" if r["recovery_s"] is None else f"{r['recovery_s']:.0f} s"
        lines.append(
            f"{name:<20}{r['slo_attainment']:>8.3f}{r['slo_attainment_surge']:>8.3f}"
            f"{r['max_p95_s']:>8.2f}s{r['mean_quality']:>9.3f}{r['mean_quality_surge']:>9.3f}"
            f"{r['served_fraction']:>8.3f}{r['level_changes']:>9d}{r['redegradations']:>8d}"
            f"{recover:>9}"
        )
    lines += ["", "levels at the surge plateau (0 = full):"]
    for name in ("uniform", "hilo"):
        levels = "  ".join(f"{k}={v}" for k, v in result["policies"][name]["surge_levels"].items())
        lines.append(f"  {name:<10}{levels}")
    lines += ["", "admission control (steady-state HiLO plan, admitted share):"]
    for row in result["shedding"]:
        admit = "  ".join(f"{k}={v:.2f}" for k, v in row["admit"].items())
        lines.append(f"  {row['surge_factor']:>4}x  {admit}")
    lines.append("")
    lines.append(
        f"best SLO-holding policy by weighted quality: {result['best_slo_holding_policy']}"
    )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0, help="seed for the synthetic workload")
    args = parser.parse_args(argv)
    print(_format_report(run(args.seed)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
