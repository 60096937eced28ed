"""Seed 001's headline claims (Hoefler, Schneider and Lumsdaine), judged by
:mod:`netnoise.verdicts` against the spec in ``resources/reference`` from the
noise benchmark's slowdowns (``slowdown``: one row per point, with its ratio-0
and CPU-only controls) and the congestion simulator's summary (``simulation``).

A benchmark slowdown is the perturbed time as a percentage of the unperturbed
(100 % is none), so the paper's "factor of 2" is 200 %; a simulated slowdown is
the same as a ratio (1× is none). Trends are slopes over every level measured,
the unperturbed ratio 0 included."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from netnoise import verdicts as v
from netnoise.estimates import Estimate, difference, slope_estimate

STUDY = "network_noise"
#: Where each argument of :func:`headline_claims` is read, under a platform's
#: results; each table exists only where its part of the study is enabled.
INPUTS = {
    "slowdown": "tables/network_noise/benchmark_slowdown.csv",
    "simulation": "tables/network_noise/simulation_summary.csv",
}
OPTIONAL = frozenset({"slowdown", "simulation"})
#: The topology family a torus claim of the benchmark needs (its table's
#: ``topology`` column, where the platform names one).
TORUS = "torus"

CLAIMS = v.read_claims(STUDY)
BENCHMARK = ("collective_factor_2", "rises_with_ratio", "rises_with_allocation")
SIMULATION = ("simulated_growth_with_size", "torus_tree_up_to_12", "torus_3d_less_than_2d")


def _estimate(row: pd.Series) -> Estimate:
    return Estimate.from_row(row, "slowdown_pct", "splits", "slowdown_ci_low", "slowdown_ci_high")


def _simulated(row: pd.Series) -> Estimate:
    return Estimate.from_row(row, "slowdown_mean", "slowdown_runs")


def _controls(rows: pd.DataFrame) -> list[v.Control] | None:
    """The ratio-0 and CPU-only controls measured beside ``rows``: the ratio-0
    control wherever it was measured, in simulated time too; None when no
    CPU-only control was on real cores, where the cores may explain a slowdown
    (:func:`netnoise.verdicts.simulated_clock`)."""
    ratio0 = rows.dropna(subset=["ratio0_slowdown_pct", "p_vs_ratio0"])
    controls = [
        v.Control("ratio-0 control", r["slowdown_pct"], r["ratio0_slowdown_pct"], r["p_vs_ratio0"])
        for _, r in ratio0.iterrows()
    ]
    cpu = rows.dropna(subset=["cpu_slowdown_pct", "p_vs_cpu"])
    if cpu.empty and not v.simulated_clock(rows):
        return None
    return controls + [
        v.Control("CPU-only control", r["slowdown_pct"], r["cpu_slowdown_pct"], r["p_vs_cpu"])
        for _, r in cpu.iterrows()
    ]


def _trend(rows: pd.DataFrame, level: str, transform=lambda x: x):
    levels = [transform(float(x)) for x in rows[level]]
    return slope_estimate(levels, [_estimate(r) for _, r in rows.iterrows()])


def _benchmark_claims(slowdown: pd.DataFrame) -> list[dict]:
    """The noise benchmark's claims, from its points and their controls."""
    network = slowdown[
        (slowdown["perturbation"] == "network") & (slowdown["collective"] == "allreduce")
    ]
    full = int(network["allocation"].max())
    sweep = network[network["allocation"] == full].sort_values("ratio")
    strongest = sweep.iloc[-1]
    ratio = float(strongest["ratio"])
    perturbed = sweep[sweep["ratio"] > 0]
    # The ratio measured on every allocation: the allocation trend's level.
    common = network.groupby("ratio")["allocation"].nunique()
    shared = float(common[common == common.max()].index.max())
    allocations = network[np.isclose(network["ratio"], shared)].sort_values("allocation")
    without_zero = "" if (sweep["ratio"] == 0).any() else "; no ratio-0 level was measured"
    return [
        CLAIMS["collective_factor_2"].judged(
            _estimate(strongest),
            v.network_gate(_controls(sweep.iloc[[-1]])),
            context=f"allreduce, ratio {ratio:g}, {full} nodes",
        ),
        CLAIMS["rises_with_ratio"].judged_trend(
            _trend(sweep, "ratio"),
            v.network_gate(_controls(perturbed)),
            context=f"allreduce, {full} nodes, ratios"
            f" {', '.join(f'{r:g}' for r in sweep['ratio'])}{without_zero}",
        ),
        CLAIMS["rises_with_allocation"].judged_trend(
            _trend(allocations, "allocation", math.log2),
            v.network_gate(_controls(allocations)),
            context=f"allreduce at ratio {shared:g}, allocations of"
            f" {', '.join(str(int(a)) for a in allocations['allocation'])} nodes",
        ),
    ]


def _on_torus(slowdown: pd.DataFrame | None) -> dict:
    claim = CLAIMS["torus_orders_of_magnitude"]
    if slowdown is None or "topology" not in slowdown.columns:
        return claim.unmeasured("the benchmark ran on no platform that names a torus")
    torus = slowdown[
        slowdown["topology"].astype(str).str.startswith(TORUS)
        & (slowdown["perturbation"] == "network")
    ]
    if torus.empty:
        return claim.unmeasured("the benchmark ran on no torus")
    strongest = torus.sort_values(["allocation", "ratio"]).iloc[-1]
    return claim.judged(
        _estimate(strongest),
        v.network_gate(_controls(torus[torus.index == strongest.name])),
        context=f"{strongest['collective']} on {strongest['topology']}, ratio"
        f" {strongest['ratio']:g}, {int(strongest['allocation'])} nodes",
    )


def _simulation_claims(simulation: pd.DataFrame) -> list[dict]:
    sizes = simulation[simulation["figure"] == "fat_tree_size"].sort_values("endpoints")
    growth = slope_estimate(
        [math.log2(e) for e in sizes["endpoints"]], [_simulated(r) for _, r in sizes.iterrows()]
    )
    tori = simulation[simulation["figure"] == "torus_ratio"]
    rows = [
        CLAIMS["simulated_growth_with_size"].judged_trend(
            growth,
            context=f"fat trees of {', '.join(str(int(e)) for e in sizes['endpoints'])} endpoints",
        )
    ]
    if tori.empty:
        return rows + [CLAIMS[c].unmeasured("no torus was simulated") for c in SIMULATION[1:]]
    worst = tori.loc[tori["slowdown_mean"].idxmax()]
    rows.append(
        CLAIMS["torus_tree_up_to_12"].judged(
            _simulated(worst),
            context=f"{worst['collective']} on {worst['topology']} ({int(worst['endpoints'])}"
            f" endpoints; the paper's 10000), ratio {worst['ratio']:g}",
        )
    )
    by_dimensions = {d: rows_d.set_index("ratio") for d, rows_d in tori.groupby("dimensions")}
    two, three = by_dimensions.get(2.0), by_dimensions.get(3.0)
    if two is None or three is None:
        rows.append(CLAIMS["torus_3d_less_than_2d"].unmeasured("tori of one dimension count only"))
        return rows
    test = CLAIMS["torus_3d_less_than_2d"].test
    cases = [
        (f"ratio {r:g}", gap, test.judge(gap))
        for r in sorted(set(two.index) & set(three.index))
        for gap in [difference(_simulated(two.loc[r]), _simulated(three.loc[r]))]
    ]
    _, gap, judgement = v.worst_of(cases)
    rows.append(
        CLAIMS["torus_3d_less_than_2d"].row(
            gap,
            v.with_context(
                judgement,
                f"{two['topology'].iloc[0]} against {three['topology'].iloc[0]}",
            ),
        )
    )
    return rows


def headline_claims(
    slowdown: pd.DataFrame | None = None, simulation: pd.DataFrame | None = None
) -> pd.DataFrame:
    """The paper's headline claims as rows of the claims table; a part of the
    study that did not run leaves its claims not measurable."""
    rows = (
        _benchmark_claims(slowdown)
        if slowdown is not None
        else [CLAIMS[c].unmeasured("the noise benchmark is disabled") for c in BENCHMARK]
    )
    rows.append(_on_torus(slowdown))
    rows += (
        _simulation_claims(simulation)
        if simulation is not None
        else [CLAIMS[c].unmeasured("the congestion simulator is disabled") for c in SIMULATION]
    )
    return v.table(rows)
