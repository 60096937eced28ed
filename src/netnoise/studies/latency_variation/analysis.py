"""Seed 004 Sec. 6–7: the statistics tables of the injected runs, Table 4 among them.

Achieved against intended injector delay; Kolmogorov–Smirnov normality of
every sample, Mann–Whitney U of uniform against log-normal, Pearson's r of
application runtime against the injected mean and standard deviation,
Fisher's z of r_mean against r_std (Table 4), and the fixed-mean comparisons
of Fig. 15–16. The inputs are the tidy tables of
:mod:`netnoise.studies.latency_variation.injection` and the injected
distributions of :func:`~netnoise.studies.latency_variation.injection.write_injector_files`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from netnoise.studies.latency_variation import stats
from netnoise.studies.latency_variation.names import PROBES, ZERO

#: Our proxy applications named by the NPB benchmark of Table 4 each stands for
#: (csrc/apps/README.md); NPB IS has no proxy.
PAPER_APPLICATIONS = {
    "fft_transpose": "FT",
    "cg_solver": "CG",
    "multigrid": "MG",
    "lu_wavefront": "LU",
}
REPORT_KEYS = ["experiment", "level", "distribution"]


def injector_delays(reports: pd.DataFrame) -> pd.DataFrame:
    """Achieved against intended mean delay per experiment, level and distribution.

    ``intended_mean_us`` is the table's mean, ``drawn_mean_us`` the mean of the
    entries the ranks drew, ``achieved_mean_us`` the time the ranks actually
    held their sends back (all delays of all ranks, weighted by count);
    ``late_share`` the share of waits that lost their core and overshot.
    """
    frame = reports[reports["delays"] > 0].copy()
    frame["drawn_ns"] = frame["drawn_total_ns"]
    grouped = frame.groupby(REPORT_KEYS, dropna=False)
    table = grouped.agg(
        ranks=("rank", "count"),
        delays=("delays", "sum"),
        intended_mean_ns=("table_mean_ns", "mean"),
        drawn_ns=("drawn_ns", "sum"),
        total_ns=("total_ns", "sum"),
        late_delays=("late_delays", "sum"),
    ).reset_index()
    table["intended_mean_us"] = table["intended_mean_ns"] / 1000
    table["drawn_mean_us"] = table["drawn_ns"] / table["delays"] / 1000
    table["achieved_mean_us"] = table["total_ns"] / table["delays"] / 1000
    table["achieved_minus_intended_us"] = table["achieved_mean_us"] - table["intended_mean_us"]
    table["late_share"] = table["late_delays"] / table["delays"]
    columns = [
        *REPORT_KEYS,
        "ranks",
        "delays",
        "intended_mean_us",
        "drawn_mean_us",
        "achieved_mean_us",
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


def correlation_runs(runtimes: pd.DataFrame, points: pd.DataFrame) -> pd.DataFrame:
    """Every application run under a fitted distribution with the injected mean and std.

    The zero table is the reference of Fig. 15–16, not one of the
    congestion levels' distributions, and stays out of the correlations.
    """
    injected = points[["level", "distribution", "table_mean_us", "table_std_us"]]
    runs = runtimes[runtimes["distribution"] != ZERO].merge(
        injected, on=["level", "distribution"], how="left", validate="many_to_one"
    )
    if runs["table_mean_us"].isna().any():
        missing = runs.loc[runs["table_mean_us"].isna(), ["level", "distribution"]]
        raise ValueError(f"runs without an injected distribution: {missing.drop_duplicates()}")
    return runs.rename(
        columns={"table_mean_us": "latency_mean_us", "table_std_us": "latency_std_us"}
    )


def table4(runs: pd.DataFrame, published: pd.DataFrame) -> pd.DataFrame:
    """Table 4 (r_mean, r_std, Fisher's p, n) per application beside the published row."""
    ours = stats.correlation_table(runs)
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


def _paper_order(published: pd.DataFrame) -> dict[str, int]:
    return {name: i for i, name in enumerate(published["application"])}


def fixed_mean_table(runtimes: pd.DataFrame, points: pd.DataFrame, levels: Sequence[int]):
    """Fig. 15–16: mean runtime per distribution at fixed-mean levels, relative to zero."""
    zero = runtimes[runtimes["distribution"] == ZERO].groupby("application")["runtime_s"].mean()
    chosen = runtimes[runtimes["level"].isin(list(levels))]
    table = (
        chosen.groupby(["level", "application", "distribution"])["runtime_s"]
        .agg(runs="count", runtime_mean_s="mean", runtime_std_s="std")
        .reset_index()
    )
    table["zero_runtime_s"] = table["application"].map(zero)
    table["difference_pct"] = (table["runtime_mean_s"] / table["zero_runtime_s"] - 1) * 100
    injected = points[["level", "distribution", "table_mean_us", "table_std_us"]]
    table = table.merge(injected, on=["level", "distribution"], how="left")
    return table.sort_values(["level", "application", "table_std_us"], ignore_index=True)


def runtime_summary(runtimes: pd.DataFrame) -> pd.DataFrame:
    """Fig. 11–12 as a table: mean and std of runtime per application, level, distribution."""
    return (
        runtimes.groupby(["application", "level", "distribution"], dropna=False)["runtime_s"]
        .agg(runs="count", mean_s="mean", std_s="std", median_s="median")
        .reset_index()
    )
