"""Seed 000 figures: Fig. 3, 6, 7, 8, 9 and Table I, with the paper's values where it gives them."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from netnoise.studies.impact_compression.analysis import CONFIG_PATTERN, METHODS, parse_config_id


def impact_latency(impact: pd.DataFrame, applications: list[str]) -> plt.Figure:
    """Fig. 3: ImpactB packet-latency distribution on the idle switch and beside each app."""
    fig, ax = plt.subplots()
    components = ["idle", *sorted(applications)]
    data = impact[impact["component"].isin(components)]
    edges = np.geomspace(data["latency_us"].min(), data["latency_us"].max(), 60)
    for component in components:
        values = data.loc[data["component"] == component, "latency_us"]
        weights = np.full(len(values), 100 / len(values))
        ax.hist(values, bins=edges, weights=weights, histtype="step", label=component)
    ax.set_xscale("log")
    ax.set_xlabel("packet latency (µs, half the ImpactB round trip)")
    ax.set_ylabel("packets (%)")
    ax.set_title("ImpactB latency: idle switch and beside each application")
    ax.legend()
    return fig


def compression_utilization(utilization: pd.DataFrame) -> plt.Figure:
    """Fig. 6: queue utilisation of each CompressionB configuration."""
    configs = utilization[utilization["component"].str.fullmatch(CONFIG_PATTERN)].copy()
    params = pd.DataFrame([parse_config_id(c) for c in configs["component"]], index=configs.index)
    configs = configs.join(params)
    fig, ax = plt.subplots()
    for (p, m), group in configs.groupby(["partners", "messages"]):
        group = group.sort_values("sleep_cycles")
        ax.plot(
            group["sleep_cycles"], group["utilization"] * 100, marker="o", label=f"P={p}, M={m}"
        )
    ax.set_xscale("log")
    ax.set_ylim(0, 100)
    ax.set_xlabel("B: sleep between partners (cycles)")
    ax.set_ylabel("switch queue utilisation (%)")
    ax.set_title("Utilisation of CompressionB configurations (paper: 26 % to 92 % on Cab)")
    ax.legend()
    return fig


def degradation_vs_utilization(
    degradation: pd.DataFrame, utilization: pd.DataFrame, lines: pd.DataFrame
) -> plt.Figure:
    """Fig. 7: degradation vs utilisation per application, linear and log axes, LS lines."""
    u = utilization.set_index("component")["utilization"]
    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    for ax, log in zip(axes, (False, True), strict=True):
        for app, group in degradation.groupby("application"):
            x = u.loc[group["config"]].to_numpy() * 100
            y = group["degradation"].to_numpy() * 100
            (points,) = ax.plot(x, y, "o", label=app)
            fit = lines.set_index("application").loc[app]
            xs = np.linspace(x.min(), x.max(), 20)
            ax.plot(
                xs, (fit["slope"] * xs / 100 + fit["intercept"]) * 100, color=points.get_color()
            )
        ax.set_xlabel("switch utilisation by CompressionB (%)")
        ax.set_ylabel("performance degradation (%)")
        if log:
            ax.set_yscale("symlog", linthresh=1)
    axes[0].set_title("linear")
    axes[1].set_title("symmetric log")
    axes[0].legend()
    return fig


def prediction_errors(predictions: pd.DataFrame) -> plt.Figure:
    """Fig. 8: measured minus predicted slowdown of every pairing, per method."""
    table = predictions.sort_values(["application", "partner"])
    pairs = table.drop_duplicates(["application", "partner"])[["application", "partner"]]
    labels = [f"{a} + {p}" for a, p in pairs.itertuples(index=False)]
    fig, ax = plt.subplots(figsize=(max(6.4, 0.5 * len(labels)), 5.5))
    x = np.arange(len(labels))
    offsets = np.linspace(-0.3, 0.3, len(METHODS))
    for offset, (method, label) in zip(offsets, METHODS.items(), strict=True):
        rows = table[table["method"] == method]
        ax.plot(x + offset, rows["error"] * 100, "o", ms=4, label=label)
    ax.axhline(0, color="black", lw=0.8)
    for band in (10, 20):
        ax.axhspan(-band, band, color="grey", alpha=0.08)
    ax.set_xticks(x, labels, fontsize=7, rotation=60, ha="right")
    ax.set_ylabel("measured − predicted slowdown (points)")
    ax.set_title("Prediction error per pairing (shaded: ±10 and ±20 points)")
    ax.legend(ncol=4, loc="upper center", bbox_to_anchor=(0.5, -0.45))
    return fig


def error_summary(summary: pd.DataFrame, claims: pd.DataFrame) -> plt.Figure:
    """Fig. 9: quartiles of each method's errors, with the paper's claims as text."""
    fig, ax = plt.subplots()
    for i, row in enumerate(summary.itertuples()):
        ax.vlines(i, row.min * 100, row.max * 100, color="black", lw=1)
        ax.bar(i, (row.q3 - row.q1) * 100, bottom=row.q1 * 100, width=0.5, alpha=0.6)
        ax.hlines(row.median * 100, i - 0.25, i + 0.25, color="black", lw=2)
        ax.annotate(
            f"{row.within_10pct:.0%} <10\n{row.within_20pct:.0%} <20",
            (i, row.max * 100),
            ha="center",
            va="bottom",
            fontsize=8,
        )
    ax.set_xticks(range(len(summary)), summary["label"])
    ax.set_ylabel("measured − predicted slowdown (points)")
    queue_claim = claims[(claims["method"] == "queue") & (claims["quantity"] == "within_10pct")]
    claim = f"paper: queue model > {queue_claim['value'].iloc[0]:.0%} within 10 points"
    ax.set_title(f"Error quartiles per method ({claim})")
    return fig


def slowdown_tables(ours: pd.DataFrame, published: pd.DataFrame) -> plt.Figure:
    """Table I: our measured slowdown matrix beside the paper's (different applications)."""
    theirs = published.pivot(index="application", columns="partner", values="slowdown_pct")
    order = ["FFTW", "Lulesh", "MCB", "MILC", "VPFFT", "AMG"]
    theirs = theirs.reindex(index=order, columns=order)
    mine = ours.set_index("application")
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.5))
    vmax = max(np.nanmax(mine.to_numpy(float)), np.nanmax(theirs.to_numpy(float)))
    for ax, matrix, title in (
        (axes[0], mine, "netnoise (this run), %"),
        (axes[1], theirs, "paper, Table I (Cab), %"),
    ):
        values = matrix.to_numpy(float)
        ax.imshow(values, cmap="Reds", vmin=0, vmax=vmax)
        for (i, j), v in np.ndenumerate(values):
            ax.text(j, i, f"{v:.0f}", ha="center", va="center", fontsize=8)
        ax.set_xticks(range(matrix.shape[1]), matrix.columns, rotation=45, ha="right")
        ax.set_yticks(range(matrix.shape[0]), matrix.index)
        ax.set_xlabel("co-running with")
        ax.set_title(title)
        ax.grid(False)
    axes[0].set_ylabel("slowdown of")
    return fig
