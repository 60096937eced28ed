"""Seed 001's headline claims (Hoefler, Schneider and Lumsdaine), judged by
:mod:`netnoise.verdicts` from the noise benchmark's slowdowns
(``benchmark_slowdown``: one row per point, with its ratio-0 and CPU-only
controls) and the congestion simulator's summary (``simulation_summary``).

A benchmark slowdown is the perturbed time as a percentage of the unperturbed
(100 % is none), so the paper's "factor of 2" is 200 %."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from scipy import stats

from netnoise import verdicts as v

STUDY = "network_noise"
#: The paper's slowdown of a reduction on 246 nodes of an InfiniBand fat tree.
PAPER_FACTOR_PCT = 200.0
NONE_PCT = 100.0
HALF_FACTOR_PCT = NONE_PCT + (PAPER_FACTOR_PCT - NONE_PCT) / 2
#: Where each argument of :func:`headline_claims` is read, under a platform's
#: results; the benchmark's table exists only where the benchmark is enabled.
INPUTS = {
    "slowdown": "tables/network_noise/benchmark_slowdown.csv",
    "simulation": "tables/network_noise/simulation_summary.csv",
}
OPTIONAL = frozenset({"slowdown", "simulation"})


def _estimate(row: pd.Series) -> v.Estimate:
    return v.Estimate.from_row(row, "slowdown_pct", "splits", "slowdown_ci_low", "slowdown_ci_high")


def _difference(high: v.Estimate, low: v.Estimate) -> v.Estimate:
    """``high − low`` of two independent estimates, the interval's half-widths
    added in quadrature on each side."""
    below = math.hypot(high.value - high.low, low.high - low.value)
    above = math.hypot(high.high - high.value, low.value - low.low)
    value = high.value - low.value
    return v.Estimate(value, value - below, value + above, min(high.samples, low.samples))


def _controls(rows: pd.DataFrame) -> list[v.Control] | None:
    """The CPU-only and ratio-0 controls measured beside ``rows``; None when
    no CPU-only control was, and none needed in simulated time
    (:func:`netnoise.verdicts.simulated_clock`)."""
    cpu = rows.dropna(subset=["cpu_slowdown_pct", "p_vs_cpu"])
    if cpu.empty:
        return [] if v.simulated_clock(rows) else None
    controls = [
        v.Control("CPU-only control", r["slowdown_pct"], r["cpu_slowdown_pct"], r["p_vs_cpu"])
        for _, r in cpu.iterrows()
    ]
    ratio0 = rows.dropna(subset=["ratio0_slowdown_pct", "p_vs_ratio0"])
    controls += [
        v.Control("ratio-0 control", r["slowdown_pct"], r["ratio0_slowdown_pct"], r["p_vs_ratio0"])
        for _, r in ratio0.iterrows()
    ]
    return controls


def _size_growth(simulation: pd.DataFrame | None) -> tuple[v.Estimate, str]:
    """The simulated slowdown's rise from the smallest to the largest fat tree."""
    if simulation is None:
        return v.NOTHING, ""
    sizes = simulation[simulation["figure"] == "fat_tree_size"].sort_values("endpoints")
    if len(sizes) < 2:
        return v.NOTHING, ""
    small, large = sizes.iloc[0], sizes.iloc[-1]
    span = f"{int(small['endpoints'])} to {int(large['endpoints'])} endpoints"
    growth = _difference(
        v.Estimate.from_row(large, "slowdown_mean", "slowdown_runs"),
        v.Estimate.from_row(small, "slowdown_mean", "slowdown_runs"),
    )
    return growth, span


#: The paper's headline claims in words (resources/reference/, beside its published values).
CLAIMS = v.read_claims(STUDY)
FACTOR_2 = CLAIMS["collective_factor_2"]
RISES_WITH_RATIO = CLAIMS["rises_with_ratio"]
RISES_WITH_ALLOCATION = CLAIMS["rises_with_allocation"]
SIMULATED_GROWTH = CLAIMS["simulated_growth_with_size"]
BENCHMARK_CLAIMS = (FACTOR_2, RISES_WITH_RATIO, RISES_WITH_ALLOCATION)


def _benchmark_claims(slowdown: pd.DataFrame) -> list[dict]:
    """The noise benchmark's three claims, from its points and their controls."""
    network = slowdown[
        (slowdown["perturbation"] == "network") & (slowdown["collective"] == "allreduce")
    ]
    full = int(network["allocation"].max())
    sweep = network[network["allocation"] == full].sort_values("ratio")
    strongest = sweep.iloc[-1]
    magnitude = _estimate(strongest)
    perturbed = sweep[sweep["ratio"] > 0]
    rise = _difference(_estimate(perturbed.iloc[-1]), _estimate(sweep.iloc[0]))
    rho = stats.spearmanr(sweep["ratio"], sweep["slowdown_pct"])
    ratio = float(strongest["ratio"])
    allocations = network[np.isclose(network["ratio"], ratio)].sort_values("allocation")
    grow = (
        _difference(_estimate(allocations.iloc[-1]), _estimate(allocations.iloc[0]))
        if len(allocations) >= 2
        else v.NOTHING
    )
    return [
        FACTOR_2.row(
            magnitude,
            v.with_context(
                v.network_gate(
                    v.judge_bound(magnitude, ">=", HALF_FACTOR_PCT, unit="%", samples="splits"),
                    _controls(sweep.iloc[[-1]]),
                ),
                f"allreduce, ratio {ratio:g}, {full} nodes",
            ),
        ),
        RISES_WITH_RATIO.row(
            rise,
            v.with_context(
                v.network_gate(
                    v.judge_bound(rise, ">", 0, unit="points", samples="splits"),
                    _controls(perturbed),
                ),
                f"Spearman ρ {rho.statistic:.2f} over {len(sweep)} ratios",
            ),
        ),
        RISES_WITH_ALLOCATION.row(
            grow,
            v.with_context(
                v.network_gate(
                    v.judge_bound(grow, ">", 0, unit="points", samples="splits"),
                    _controls(allocations),
                ),
                f"allreduce at ratio {ratio:g}, {len(allocations)} allocations"
                f" from {int(allocations['allocation'].min())} to {full} nodes",
            ),
        ),
    ]


def headline_claims(
    slowdown: pd.DataFrame | None = None, simulation: pd.DataFrame | None = None
) -> pd.DataFrame:
    """The paper's four headline claims as rows of the claims schema; a part
    of the study that did not run leaves its claims not measurable."""
    rows = (
        _benchmark_claims(slowdown)
        if slowdown is not None
        else [c.unmeasured("the noise benchmark is disabled") for c in BENCHMARK_CLAIMS]
    )
    growth, span = _size_growth(simulation)
    rows.append(
        SIMULATED_GROWTH.row(
            growth,
            v.with_context(
                v.judge_bound(growth, ">", 0, unit="×", samples="runs"),
                f"congestion simulator, {span}" if span else "",
            ),
        )
    )
    return v.table(rows)
