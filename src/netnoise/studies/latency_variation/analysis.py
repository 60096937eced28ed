"""Seed 004 Sec. 6–7: the statistics tables of the injected runs, Table 4 among them.

Achieved against intended injector delay; Kolmogorov–Smirnov normality of
every sample, Mann–Whitney U of uniform against log-normal, Pearson's r of
application runtime against the injected mean and standard deviation,
Steiger's Z (primary) and the paper's Fisher z of r_mean against r_std with
the power of Steiger's test (Table 4), and the fixed-mean comparisons of
Fig. 15–16. The inputs are the tidy tables of
:mod:`netnoise.studies.latency_variation.injection` and the injected
distributions of :func:`~netnoise.studies.latency_variation.injection.write_injector_files`.

Realised, not intended. Every rank's injector report gives the mean and
standard deviation of the delays it drew; pooled over the ranks of a run
(:func:`injector_delays`) they are the latency that run was given. A few
thousand draws from a heavy-tailed table realise a mean and spread far from
the table's (98–393 µs drawn where 143.5 µs was intended), so Table 4
correlates runtimes with the realised pair (:func:`correlation_runs`). The
drawn entries, not the time actually spent, are used: they depend on the
seed and the table alone, whereas a wait that overshoots because its rank
lost its core is slowed by the same contention that slows the application.

Designs. Nothing assumes one distribution family per level: every injected
distribution is a (level, distribution) point of the distributions table,
whether one of the paper's mean-preserving set or a point of a grid of means
and spreads; Table 4 reports r(mean, std) of the design as intended and as
realised. Over all distributions the two are tied together (the fit and the
mean-preserving log-normals widen with the level's mean), so Table 4 is also
computed over the grid alone (:func:`table4_grid`): every level's mean with
the spreads of ``fit.stds_us`` and none, a factorial design in which r(mean,
std) is 0 as intended, and the slopes of runtime on both (:func:`grid_effects`)
say what a µs of spread costs next to a µs of mean.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pandas as pd

from netnoise.studies.latency_variation import stats
from netnoise.studies.latency_variation.names import PROBES, ZERO, is_grid_distribution

#: Our proxy applications named by the NPB benchmark of Table 4 each stands for
#: (csrc/apps/README.md); NPB IS has no proxy.
PAPER_APPLICATIONS = {
    "fft_transpose": "FT",
    "cg_solver": "CG",
    "multigrid": "MG",
    "lu_wavefront": "LU",
}
REPORT_KEYS = ["experiment", "level", "distribution"]
#: Intended means within this share of the level's constant delay belong to the
#: paper's mean-preserving set of that level (Fig. 15–16).
SAME_MEAN = 0.005


def _report_keys(reports: pd.DataFrame) -> list[str]:
    """Columns that identify one run's reports: REPORT_KEYS and, where the runs
    of a point are launched separately, their ``launch``."""
    return [*REPORT_KEYS, *(["launch"] if "launch" in reports.columns else [])]


def _pooled_std(delays: pd.Series, means: pd.Series, stds: pd.Series, keys) -> pd.Series:
    """Population std of every group's delays from its ranks' counts, means and stds:
    ``Σ n_i (s_i² + m_i²) / N − M²``."""
    frame = pd.DataFrame({"n": delays, "nm": delays * means, "nsq": delays * (stds**2 + means**2)})
    sums = frame.groupby(keys, dropna=False).sum()
    mean = sums["nm"] / sums["n"]
    return np.sqrt(np.maximum(sums["nsq"] / sums["n"] - mean**2, 0.0)).where(
        stds.groupby(keys, dropna=False).apply(lambda s: s.notna().all())
    )


def injector_delays(reports: pd.DataFrame) -> pd.DataFrame:
    """Realised and achieved against intended delay per experiment, level and distribution.

    ``intended_mean_us`` is the table's mean; ``drawn_mean_us`` and
    ``drawn_std_us`` the mean and standard deviation of the entries the ranks
    drew (all delays of all ranks: the realised delay distribution of the
    run); ``achieved_mean_us`` and ``achieved_std_us`` those of the time the
    ranks actually held their sends back; ``late_share`` the share of waits
    that lost their core and overshot. The standard deviations are NaN for
    reports that do not give them (``drawn_std_ns``, ``std_ns``).
    """
    frame = reports[reports["delays"] > 0].copy()
    keys = _report_keys(frame)
    for column in ("drawn_std_ns", "std_ns"):
        if column not in frame.columns:
            frame[column] = np.nan
    frame["drawn_mean_ns"] = frame["drawn_total_ns"] / frame["delays"]
    frame["spent_mean_ns"] = frame["total_ns"] / frame["delays"]
    grouped = frame.groupby(keys, dropna=False)
    table = grouped.agg(
        ranks=("rank", "count"),
        delays=("delays", "sum"),
        intended_mean_ns=("table_mean_ns", "mean"),
        drawn_ns=("drawn_total_ns", "sum"),
        total_ns=("total_ns", "sum"),
        late_delays=("late_delays", "sum"),
    )
    by = [frame[k] for k in keys]
    table["drawn_std_us"] = (
        _pooled_std(frame["delays"], frame["drawn_mean_ns"], frame["drawn_std_ns"], by) / 1000
    )
    table["achieved_std_us"] = (
        _pooled_std(frame["delays"], frame["spent_mean_ns"], frame["std_ns"], by) / 1000
    )
    table = table.reset_index()
    table["intended_mean_us"] = table["intended_mean_ns"] / 1000
    table["drawn_mean_us"] = table["drawn_ns"] / table["delays"] / 1000
    table["achieved_mean_us"] = table["total_ns"] / table["delays"] / 1000
    table["achieved_minus_intended_us"] = table["achieved_mean_us"] - table["intended_mean_us"]
    table["late_share"] = table["late_delays"] / table["delays"]
    columns = [
        *keys,
        "ranks",
        "delays",
        "intended_mean_us",
        "drawn_mean_us",
        "drawn_std_us",
        "achieved_mean_us",
        "achieved_std_us",
        "achieved_minus_intended_us",
        "late_share",
    ]
    return table[columns]


def injector_delay_summary(delays: pd.DataFrame) -> pd.DataFrame:
    """Achieved against intended mean delay per distribution and level, over all experiments."""
    frame = delays.assign(
        intended_total=delays["intended_mean_us"] * delays["delays"],
        drawn_total=delays["drawn_mean_us"] * delays["delays"],
        achieved_total=delays["achieved_mean_us"] * delays["delays"],
        late=delays["late_share"] * delays["delays"],
    )
    table = (
        frame.groupby(["level", "distribution"], dropna=False)[
            ["delays", "intended_total", "drawn_total", "achieved_total", "late"]
        ]
        .sum()
        .reset_index()
    )
    for name in ("intended", "drawn", "achieved"):
        table[f"{name}_mean_us"] = table.pop(f"{name}_total") / table["delays"]
    table["late_share"] = table.pop("late") / table["delays"]
    table["achieved_over_intended"] = table["achieved_mean_us"] / table["intended_mean_us"]
    return table


def validation_table(samples: pd.DataFrame, points: pd.DataFrame) -> pd.DataFrame:
    """Fig. 5–10 as a table: mean and median per experiment, level and distribution.

    For the two probes one delay holds each direction of a round trip, so the
    one-way latency should rise by the table's mean: ``intended_mean_us`` is
    the zero table's mean plus ``table_mean_us``. A barrier's critical path has
    no such simple count: it is compared with its zero-table value only.
    """
    table = (
        samples.groupby(["experiment", "level", "distribution"], dropna=False)["value_us"]
        .agg(samples="count", mean_us="mean", median_us="median", std_us="std")
        .reset_index()
    )
    zero = table[table["distribution"] == ZERO].set_index("experiment")
    table["zero_mean_us"] = table["experiment"].map(zero["mean_us"])
    table["zero_median_us"] = table["experiment"].map(zero["median_us"])
    injected = points[["level", "distribution", "table_mean_us", "table_std_us"]]
    table = table.merge(injected, on=["level", "distribution"], how="left")
    zero_rows = table["distribution"] == ZERO
    table.loc[zero_rows, ["table_mean_us", "table_std_us"]] = 0.0
    probe = table["experiment"].isin(PROBES)
    table["intended_mean_us"] = np.where(
        probe, table["zero_mean_us"] + table["table_mean_us"], np.nan
    )
    table["rise_mean_us"] = table["mean_us"] - table["zero_mean_us"]
    return table


def normality_table(samples: pd.DataFrame, runtimes: pd.DataFrame) -> pd.DataFrame:
    """Kolmogorov–Smirnov normality of every latency and runtime sample (Sec. 6)."""
    groups = [
        (experiment, level, dist, group["value_us"])
        for (experiment, level, dist), group in samples.groupby(
            ["experiment", "level", "distribution"], dropna=False
        )
    ]
    groups += [
        (app, level, dist, group["runtime_s"])
        for (app, level, dist), group in runtimes.groupby(
            ["application", "level", "distribution"], dropna=False
        )
    ]
    rows = []
    for experiment, level, dist, values in groups:
        row = {"experiment": experiment, "level": level, "distribution": dist}
        values = values.to_numpy(float)
        if len(values) < 3 or np.ptp(values) == 0:
            rows.append({**row, "n": len(values)})
            continue
        result = stats.ks_normality(values)
        rows.append({**row, **{key: result[key] for key in ("n", "statistic", "pvalue", "normal")}})
    return pd.DataFrame(rows)


#: Columns of the Mann–Whitney table and the fields of :func:`.stats.mann_whitney`
#: they hold (a: the log-normal's sample, b: the uniform's).
MANN_WHITNEY_COLUMNS = {
    "n_lognorm": "n_a",
    "n_uniform": "n_b",
    "median_lognorm": "median_a",
    "median_uniform": "median_b",
    "u": "u",
    "pvalue": "pvalue",
    "prob_lognorm_greater": "prob_superiority",
}


def mann_whitney_table(samples: pd.DataFrame, runtimes: pd.DataFrame) -> pd.DataFrame:
    """Mann–Whitney U of uniform against log-normal injection per experiment and level."""
    frames = [
        samples.rename(columns={"value_us": "value"}),
        runtimes.rename(columns={"application": "experiment", "runtime_s": "value"}),
    ]
    rows = []
    for frame in frames:
        for (experiment, level), group in frame.groupby(["experiment", "level"]):
            uniform = group.loc[group["distribution"] == "uniform", "value"]
            lognorm = group.loc[group["distribution"] == "lognorm", "value"]
            if uniform.empty or lognorm.empty:
                continue
            result = stats.mann_whitney(lognorm, uniform)
            row = {ours: result[theirs] for ours, theirs in MANN_WHITNEY_COLUMNS.items()}
            rows.append({"experiment": experiment, "level": level, **row})
    return pd.DataFrame(rows)


def correlation_runs(
    runtimes: pd.DataFrame, points: pd.DataFrame, delays: pd.DataFrame
) -> pd.DataFrame:
    """Every application run under an injected distribution with its latency mean and std.

    ``latency_mean_us`` and ``latency_std_us`` are the realised delay
    distribution of the run (``drawn_mean_us``, ``drawn_std_us`` of
    :func:`injector_delays` for the application at that point) and
    ``latency_source`` is ``realised``; an application whose reports lack the
    realised std (reports written before the injector logged it) keeps the
    tables' ``table_mean_us`` and ``table_std_us`` for all its runs,
    ``latency_source`` ``intended``: one application never mixes the two.
    Both pairs stay in the table. The zero table is the reference of Fig.
    15–16, not one of the distributions, and stays out of the correlations.
    """
    injected = points[["level", "distribution", "table_mean_us", "table_std_us"]]
    runs = runtimes[runtimes["distribution"] != ZERO].merge(
        injected, on=["level", "distribution"], how="left", validate="many_to_one"
    )
    if runs["table_mean_us"].isna().any():
        missing = runs.loc[runs["table_mean_us"].isna(), ["level", "distribution"]]
        raise ValueError(f"runs without an injected distribution: {missing.drop_duplicates()}")
    keys = [k for k in _report_keys(delays) if k != "experiment" and k in runs.columns]
    realised = delays.rename(columns={"experiment": "application"})[
        ["application", *keys, "drawn_mean_us", "drawn_std_us"]
    ]
    runs = runs.merge(realised, on=["application", *keys], how="left", validate="many_to_one")
    complete = runs.groupby("application")["drawn_std_us"].transform(lambda s: s.notna().all())
    runs["latency_source"] = np.where(complete, "realised", "intended")
    runs["latency_mean_us"] = runs["drawn_mean_us"].where(complete, runs["table_mean_us"])
    runs["latency_std_us"] = runs["drawn_std_us"].where(complete, runs["table_std_us"])
    return runs.drop(columns=["drawn_mean_us", "drawn_std_us"])


def table4(runs: pd.DataFrame, published: pd.DataFrame) -> pd.DataFrame:
    """Table 4 per application beside the published row.

    Steiger's Z is the primary test, the paper's Fisher z beside it
    (:func:`.stats.correlation_table`); ``latency_source`` says whether the
    latency is the realised or the intended one (:func:`correlation_runs`),
    ``r_mean_std`` is the realised design's r(mean, std) across the runs and
    ``r_mean_std_intended`` the intended one's; ``distributions`` counts the
    injected distributions and ``runs_for_power`` is ``n_for_power`` per
    distribution, rounded up: the runs each would need for 80 % power at the
    measured correlations.
    """
    ours = stats.correlation_table(runs)
    design = pd.DataFrame(
        [
            {
                "application": app,
                "latency_source": g["latency_source"].iloc[0],
                "r_mean_std_intended": stats.pearson(g["table_mean_us"], g["table_std_us"])["r"],
                "distributions": len(g[["level", "distribution"]].drop_duplicates()),
            }
            for app, g in runs.groupby("application", sort=False)
        ],
        columns=["application", "latency_source", "r_mean_std_intended", "distributions"],
    ).set_index("application")
    ours = ours.join(design, on="application")
    ours["runs_for_power"] = np.ceil(ours["n_for_power"] / ours["distributions"])
    ours.insert(1, "paper_application", ours["application"].map(PAPER_APPLICATIONS).fillna(""))
    paper = published.rename(
        columns={
            "application": "paper_application",
            "r_mean": "paper_r_mean",
            "r_std": "paper_r_std",
            "significant_p": "paper_p",
        }
    )[["paper_application", "paper_r_mean", "paper_r_std", "paper_p"]]
    return ours.merge(paper, on="paper_application", how="outer").sort_values(
        "paper_application", key=lambda s: s.map(_paper_order(published)), ignore_index=True
    )


def grid_runs(runs: pd.DataFrame) -> pd.DataFrame:
    """The runs of :func:`correlation_runs` under the mean × spread grid
    (:func:`.names.is_grid_distribution`)."""
    return runs[runs["distribution"].map(is_grid_distribution)].reset_index(drop=True)


def table4_grid(runs: pd.DataFrame, published: pd.DataFrame) -> pd.DataFrame:
    """:func:`table4` over the grid's runs alone (:func:`grid_runs`). A design
    with one level or no spreads besides the constant (no ``fit.stds_us``)
    leaves nothing to correlate: then only the paper's rows."""
    grid = grid_runs(runs)
    spans = grid.groupby("application")[["table_mean_us", "table_std_us"]].nunique()
    varied = spans[(spans > 1).all(axis=1)].index
    return table4(grid[grid["application"].isin(varied)], published)


#: The latency step (µs) :func:`grid_effects` gives the slopes per.
EFFECT_STEP_US = 100.0


def grid_effects(runs: pd.DataFrame) -> pd.DataFrame:
    """Runtime against latency mean and spread together, on the grid's runs.

    One row per application: the least-squares slopes of ``runtime_s`` on
    ``latency_mean_us`` and ``latency_std_us`` (:func:`.stats.two_slopes`),
    in seconds per :data:`EFFECT_STEP_US` µs, with 95 % t intervals;
    ``std_to_mean`` is the ratio of the two slopes, R² and n beside. On a
    factorial design the slopes separate what the correlations of Table 4 mix
    with the ranges the design gives each variable: how much a µs of spread
    costs next to a µs of mean. An application whose grid leaves the two
    unidentified (one level, no spread) is left out.
    """
    slopes = {
        f"{name}_{part}": f"{b}{suffix}"
        for name, b in (("mean", "b1"), ("std", "b2"))
        for part, suffix in (
            (f"s_per_{EFFECT_STEP_US:g}us", ""),
            ("ci_low", "_low"),
            ("ci_high", "_high"),
        )
    }
    columns = ["application", "paper_application", "n", "latency_source", *slopes]
    columns += ["std_to_mean", "r2"]
    rows = []
    for app, g in grid_runs(runs).groupby("application", sort=False):
        fit = stats.two_slopes(
            g["runtime_s"],
            g["latency_mean_us"] / EFFECT_STEP_US,
            g["latency_std_us"] / EFFECT_STEP_US,
        )
        if not np.isfinite(fit["b1"]):
            continue
        rows.append(
            {
                "application": app,
                "paper_application": PAPER_APPLICATIONS.get(app, ""),
                "n": fit["n"],
                "latency_source": g["latency_source"].iloc[0],
                **{ours: fit[theirs] for ours, theirs in slopes.items()},
                "std_to_mean": fit["b2"] / fit["b1"] if fit["b1"] != 0 else math.nan,
                "r2": fit["r2"],
            }
        )
    return pd.DataFrame(rows, columns=columns)


def _paper_order(published: pd.DataFrame) -> dict[str, int]:
    return {name: i for i, name in enumerate(published["application"])}


def mean_preserving_points(points: pd.DataFrame, level: int) -> pd.DataFrame:
    """The injected distributions of ``level`` that share the mean of its constant
    delay (the paper's ``uniform``) to within ``SAME_MEAN``: the paper's
    mean-preserving set, whatever other distributions (a grid of means and
    spreads) the level holds."""
    rows = points[points["level"] == level]
    constant = rows.loc[rows["distribution"] == "uniform", "table_mean_us"]
    if constant.empty:
        raise ValueError(f"level {level}: no uniform (constant) distribution to fix the mean")
    mean = float(constant.iloc[0])
    return rows[(rows["table_mean_us"] - mean).abs() <= SAME_MEAN * mean]


def fixed_mean_table(
    runtimes: pd.DataFrame,
    points: pd.DataFrame,
    levels: Sequence[int],
    delays: pd.DataFrame | None = None,
):
    """Fig. 15–16: mean runtime per distribution of the mean-preserving set at each of
    ``levels``, relative to zero injection; with ``delays`` (:func:`injector_delays`),
    the realised mean and std of each application's delays beside the intended ones."""
    zero = runtimes[runtimes["distribution"] == ZERO].groupby("application")["runtime_s"].mean()
    injected = pd.concat([mean_preserving_points(points, level) for level in levels])
    injected = injected[["level", "distribution", "table_mean_us", "table_std_us"]]
    chosen = runtimes.merge(injected[["level", "distribution"]], on=["level", "distribution"])
    table = (
        chosen.groupby(["level", "application", "distribution"])["runtime_s"]
        .agg(runs="count", runtime_mean_s="mean", runtime_std_s="std")
        .reset_index()
    )
    table["zero_runtime_s"] = table["application"].map(zero)
    table["difference_pct"] = (table["runtime_mean_s"] / table["zero_runtime_s"] - 1) * 100
    table = table.merge(injected, on=["level", "distribution"], how="left")
    if delays is not None:
        realised = delays.rename(columns={"experiment": "application"})
        realised = (
            realised.groupby(["application", "level", "distribution"])[
                ["drawn_mean_us", "drawn_std_us"]
            ]
            .mean()
            .rename(
                columns={"drawn_mean_us": "realised_mean_us", "drawn_std_us": "realised_std_us"}
            )
            .reset_index()
        )
        table = table.merge(realised, on=["application", "level", "distribution"], how="left")
    return table.sort_values(["level", "application", "table_std_us"], ignore_index=True)


def runtime_summary(runtimes: pd.DataFrame) -> pd.DataFrame:
    """Fig. 11–12 as a table: mean and std of runtime per application, level, distribution."""
    return (
        runtimes.groupby(["application", "level", "distribution"], dropna=False)["runtime_s"]
        .agg(runs="count", mean_s="mean", std_s="std", median_s="median")
        .reset_index()
    )
