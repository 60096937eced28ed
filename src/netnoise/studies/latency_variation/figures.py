"""Seed 004 figures: Fig. 2–16 and Table 4, the published values beside ours where given."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from scipy import stats

from netnoise.studies.latency_variation.fits import Lognormal
from netnoise.studies.latency_variation.headline import CLAIMS, FIXED_MEAN_PARTS, STEADY
from netnoise.studies.latency_variation.names import (
    LEVEL_LABELS,
    PROBES,
    VALIDATION_DISTRIBUTIONS,
    ZERO,
)

STATISTIC_LABELS = {"mean": "mean", "std": "standard deviation", "median": "median"}
EXPERIMENT_LABELS = {
    "tcpping": "packet level (tcpping), one-way latency",
    "pingpong": "MPI ping-pong, one-way latency",
    "barrier": "MPI_Barrier, time of the slowest rank",
}


def latency_vs_load(table: pd.DataFrame, statistic: str) -> plt.Figure:
    """Fig. 2 (mean) and Fig. 3 (standard deviation) of latency against background load."""
    fig, ax = plt.subplots()
    for probe in PROBES:
        rows = table[table["probe"] == probe].sort_values("level")
        ax.plot(rows["level"], rows[statistic], marker="o", label=LEVEL_LABELS[probe])
    ax.set_yscale("log")
    ax.set_xlabel("background load (% of the link rate, loadgen pairs)")
    ax.set_ylabel(f"one-way latency {STATISTIC_LABELS[statistic]} (µs)")
    ax.set_title(f"Latency {STATISTIC_LABELS[statistic]} under congestion")
    ax.legend()
    return fig


def idle_histogram(samples: pd.DataFrame, fits: pd.DataFrame, probe: str) -> plt.Figure:
    """Fig. 4: packet latency without background load, with the fitted log-normal."""
    idle = samples[(samples["probe"] == probe) & (samples["level"] == 0)]["latency_us"]
    fit = fits[fits["level"] == 0].iloc[0]
    fig, ax = plt.subplots()
    upper = np.quantile(idle, 0.99)
    edges = np.linspace(idle.min(), upper, 80)
    ax.hist(idle, bins=edges, density=True, alpha=0.6, label=f"measured ({len(idle)} samples)")
    dist = Lognormal(fit["shape"], fit["loc_us"], fit["scale_us"]).dist()
    xs = np.linspace(edges[0], edges[-1], 400)
    ax.plot(
        xs,
        dist.pdf(xs),
        label=f"log-normal fit (s={fit['shape']:.2f}, loc={fit['loc_us']:.1f}, "
        f"scale={fit['scale_us']:.1f} µs)",
    )
    beyond = int((idle > upper).sum())
    ax.set_xlabel(f"one-way latency (µs); {beyond} samples above {upper:.0f} µs not drawn")
    ax.set_ylabel("density (1/µs)")
    ax.set_title(f"Idle-network latency, {LEVEL_LABELS[probe]}")
    ax.legend()
    return fig


def injected_by_level(validation: pd.DataFrame, experiment: str, statistic: str) -> plt.Figure:
    """Fig. 5–10: mean or median of a probe or barrier under uniform and log-normal injection."""
    rows = validation[validation["experiment"] == experiment]
    fig, ax = plt.subplots()
    for dist in VALIDATION_DISTRIBUTIONS:
        chosen = rows[rows["distribution"] == dist].sort_values("level")
        ax.plot(chosen["level"], chosen[f"{statistic}_us"], marker="o", label=dist)
    if statistic == "mean" and rows["intended_mean_us"].notna().any():
        chosen = rows[rows["distribution"] == "uniform"].sort_values("level")
        ax.plot(
            chosen["level"],
            chosen["intended_mean_us"],
            linestyle="--",
            color="grey",
            label="intended (zero-table mean + injected mean)",
        )
    zero = rows.loc[rows["distribution"] == ZERO, f"{statistic}_us"]
    if not zero.empty:
        ax.axhline(zero.iloc[0], color="black", linewidth=0.8, label="zero injected latency")
    ax.set_xlabel("injected distribution fitted at background load (%)")
    ax.set_ylabel(f"{STATISTIC_LABELS[statistic]} (µs)")
    ax.set_title(f"{EXPERIMENT_LABELS[experiment]}: {STATISTIC_LABELS[statistic]}")
    ax.legend()
    return fig


def runtimes_by_level(summary: pd.DataFrame, distribution: str) -> plt.Figure:
    """Fig. 11 (uniform) and Fig. 12 (log-normal): runtime relative to zero injected latency."""
    fig, ax = plt.subplots()
    zero = summary[summary["distribution"] == ZERO].set_index("application")["mean_s"]
    rows = summary[summary["distribution"] == distribution]
    for app, group in rows.groupby("application"):
        group = group.sort_values("level")
        ax.plot(group["level"], group["mean_s"] / zero[app], marker="o", label=app)
    ax.axhline(1, color="black", linewidth=0.8)
    ax.set_xlabel("injected distribution fitted at background load (%)")
    ax.set_ylabel("mean runtime / runtime with zero injected latency")
    ax.set_title(f"Application runtimes, {distribution} injection")
    ax.legend()
    return fig


def runtime_vs_latency(runs: pd.DataFrame, table: pd.DataFrame, variable: str) -> plt.Figure:
    """Fig. 13 (against the injected mean) and Fig. 14 (against the injected std).

    One point per level and distribution (mean runtime of its runs, relative
    to the application's mean over all its runs so applications share an
    axis) with its 95 % interval over the runs, and the least-squares line over
    the runs; the legend gives Table 4's r beside the paper's for the NPB code
    the application stands for. The latency is the realised one where the
    injector reported it (``latency_source``), as in Table 4.
    """
    column = {"mean": "latency_mean_us", "std": "latency_std_us"}[variable]
    rows = table.dropna(subset=["application"]).set_index("application")
    fig, ax = plt.subplots()
    for app, group in runs.groupby("application"):
        scale = group["runtime_s"].mean()
        grouped = group.groupby(["level", "distribution"])
        points = grouped[[column, "runtime_s"]].mean()
        spread = grouped["runtime_s"].agg(["std", "count"])
        half = (
            stats.t.ppf(0.975, np.maximum(spread["count"] - 1, 1))
            * spread["std"].fillna(0)
            / np.sqrt(spread["count"])
        )
        label = f"{app}: r = {rows[f'r_{variable}'].get(app, np.nan):.2f}"
        paper = (
            rows[f"paper_r_{variable}"].get(app, np.nan)
            if f"paper_r_{variable}" in rows
            else np.nan
        )
        if np.isfinite(paper):
            label += f" (paper, {rows['paper_application'].get(app)}: {paper:.2f})"
        dots = ax.errorbar(
            points[column],
            points["runtime_s"] / scale,
            yerr=half / scale,
            fmt="o",
            capsize=2,
            label=label,
        )
        x, y = group[column].to_numpy(float), group["runtime_s"].to_numpy(float) / scale
        if np.ptp(x) > 0:
            slope, intercept = np.polyfit(x, y, 1)
            xs = np.linspace(x.min(), x.max(), 20)
            ax.plot(xs, slope * xs + intercept, color=dots.lines[0].get_color())
    sources = " and ".join(sorted(runs["latency_source"].unique()))
    ax.set_xlabel(f"injected latency {STATISTIC_LABELS[variable]} (µs, {sources})")
    ax.set_ylabel("runtime / the application's mean runtime (95 % interval)")
    ax.set_title(f"Runtime against latency {STATISTIC_LABELS[variable]}")
    ax.legend(fontsize="small")
    return fig


def fixed_mean(table: pd.DataFrame, level: int) -> plt.Figure:
    """Fig. 15–16: runtime difference to zero injection at one fixed-mean level, by spread.

    Beside each application standing for one of Fig. 16's (LU, CG, MG), a
    dashed line marks where its runtime would be at the paper's increase over
    its runtime without spread (the spec's ``fixed_mean_slowdown``, over
    headline.STEADY, as the claim is judged); the title gives our largest
    factor over the runtime without spread."""
    rows = table[table["level"] == level]
    apps = sorted(rows["application"].unique())
    order = (
        rows.drop_duplicates("distribution").sort_values("table_std_us")["distribution"].tolist()
    )
    stds = rows.drop_duplicates("distribution").set_index("distribution")["table_std_us"]
    mean = rows["table_mean_us"].iloc[0] if len(rows) else np.nan
    fig, ax = plt.subplots(figsize=(7.5, 4))
    width = 0.8 / max(len(order), 1)
    x = np.arange(len(apps))
    realised = (
        rows.groupby("distribution")[["realised_mean_us", "realised_std_us"]].mean()
        if "realised_std_us" in rows.columns
        else None
    )
    for i, dist in enumerate(order):
        values = rows[rows["distribution"] == dist].set_index("application")["difference_pct"]
        label = f"{dist} (std {stds[dist]:.0f} µs"
        if realised is not None and np.isfinite(realised.loc[dist]).all():
            got = realised.loc[dist]
            label += f"; drawn {got['realised_mean_us']:.0f} ± {got['realised_std_us']:.0f}"
        ax.bar(
            x + (i - (len(order) - 1) / 2) * width,
            values.reindex(apps).to_numpy(float),
            width,
            label=label + ")",
        )
    ax.axhline(0, color="black", linewidth=0.8)
    steady = rows[rows["distribution"] == STEADY].set_index("application")["difference_pct"]
    parts = {app: part for part, app in FIXED_MEAN_PARTS.items()}
    tests = CLAIMS["fixed_mean_slowdown"].tests
    for i, app in enumerate(apps):
        if app in parts and app in steady.index:
            test = tests[parts[app]]
            paper = ((1 + test.paper_number / 100) * (1 + steady[app] / 100) - 1) * 100
            ax.hlines(
                paper,
                i - 0.45,
                i + 0.45,
                colors="black",
                linestyles="--",
                label=f"paper: {parts[app].upper()} {test.paper_value.split(';')[0]} over {STEADY}"
                " (Sec. 7, Fig. 16)",
            )
    factors = (1 + rows.set_index(["application", "distribution"])["difference_pct"] / 100).div(
        1 + steady / 100, level="application"
    )
    worst = ""
    if factors.notna().any():
        app, dist = factors.idxmax()
        worst = f"\nlargest: {factors.max():.2f}× the {STEADY} runtime ({app}, {dist})"
    ax.set_xticks(x, apps)
    ax.set_ylabel("mean runtime − runtime at zero injection (%)")
    ax.set_title(
        f"Fixed mean {mean:.1f} µs (fitted at {level:g} % load), growing spread{worst}",
        fontsize=10,
    )
    ax.legend(fontsize=8)
    return fig


def table4_figure(table: pd.DataFrame) -> plt.Figure:
    """Table 4: r_mean, r_std, Steiger's p (primary) and Fisher's p, the design's
    r(mean, std), the power of Steiger's test and the runs per distribution it
    needs for 80 %, beside the published values."""
    columns = ["application", "paper", "n", "r_mean", "r_std", "r(mean, std)"]
    columns += ["p Steiger", "p Fisher", "power", "runs/dist. for 80 %"]
    columns += ["paper r_mean", "paper r_std", "paper p"]
    cells = []
    for row in table.itertuples(index=False):
        cells.append(
            [
                row.application if isinstance(row.application, str) else "(no proxy)",
                row.paper_application or "",
                _fmt(row.n, "{:.0f}"),
                _fmt(row.r_mean, "{:.2f}"),
                _fmt(row.r_std, "{:.2f}"),
                _fmt(row.r_mean_std, "{:.2f}"),
                _fmt(row.steiger_p, "{:.2g}"),
                _fmt(row.fisher_p, "{:.2g}"),
                _fmt(row.steiger_power, "{:.2f}"),
                _fmt(row.runs_for_power, "{:.0f}"),
                _fmt(row.paper_r_mean, "{:.2f}"),
                _fmt(row.paper_r_std, "{:.2f}"),
                _fmt(row.paper_p, "{:.3g}"),
            ]
        )
    fig, ax = plt.subplots(figsize=(13, 0.5 + 0.35 * (len(cells) + 1)))
    ax.axis("off")
    chart = ax.table(cellText=cells, colLabels=columns, loc="center", cellLoc="center")
    chart.auto_set_font_size(False)
    chart.set_fontsize(8)
    chart.scale(1, 1.3)
    ax.set_title("Table 4: correlation of runtime with injected latency mean and std")
    return fig


def _fmt(value: object, pattern: str) -> str:
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return "–"
    if isinstance(value, float) and np.isinf(value):
        return "never"
    return pattern.format(value)
