"""Seed 003 figures: link sharing (Fig. 4), prediction errors (Fig. 6), the Alltoallv (Fig. 8).

Rates are drawn as a share of one link alone at the same level and congestion
control (the paper's 940 Mbit/s), so the testbed's and the paper's values
share an axis.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from netnoise.studies.asymmetric.model import MODELS

LEVELS = {"mpi": ("MPI (p2p_concurrent)", "o", "full"), "tcp": ("TCP (iperf3)", "s", "none")}
DIRECTION_MARKERS = {"in": "v", "out": "^"}
MODEL_STYLE = {"asymmetric": ("black", "asymmetric model"), "fairness": ("0.55", "fairness model")}
ERROR_BINS = np.arange(-100, 105, 5)


def _colors(congestions) -> dict[str, str]:
    cycle = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    return {cc: cycle[i % len(cycle)] for i, cc in enumerate(congestions)}


def fairness(properties: pd.DataFrame, published: pd.DataFrame) -> plt.Figure:
    """Fig. 4 (unidirectional, Sec. 5.1): mean link rate against the number of links
    sharing one NIC or the backbone; bars: slowest and fastest link."""
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2), sharey=True)
    colors = _colors(sorted(properties["congestion"].unique()))
    for ax, (experiment, title) in zip(
        axes,
        (
            ("nic_unidirectional", "links from one node to one node (shared NIC)"),
            ("backbone_unidirectional", "links from rack 1 to rack 2 (shared backbone)"),
        ),
        strict=True,
    ):
        rows = properties[properties["experiment"] == experiment].sort_values("links")
        offsets = np.linspace(-0.15, 0.15, max(len(colors) * len(LEVELS), 1))
        for k, ((level, cc), group) in enumerate(rows.groupby(["level", "congestion"], sort=True)):
            name, marker, fill = LEVELS[level]
            x = group["links"] * (1 + offsets[k] / 4)
            ax.errorbar(
                x,
                group["share_mean"],
                yerr=[
                    group["share_mean"] - group["share_min"],
                    group["share_max"] - group["share_mean"],
                ],
                fmt=marker,
                fillstyle=fill,
                color=colors[cc],
                capsize=2,
                label=f"{name}, {cc}",
            )
        model = rows.drop_duplicates("links")
        ax.plot(
            model["links"],
            model["asymmetric_share"],
            "_",
            ms=28,
            mew=2,
            color="black",
            label="both models",
        )
        paper = published[published["experiment"] == experiment]
        if len(paper):
            ax.plot(
                paper["links"], paper["share"], "*", ms=12, color="black", label="paper (Sec. 5.1)"
            )
        ax.set_xscale("log", base=2)
        ax.set_xlabel("concurrent links |E|")
        ax.set_title(title, fontsize=10)
    axes[0].set_ylabel("link rate / rate of one link alone")
    axes[0].set_ylim(bottom=0)
    handles, labels = axes[1].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=3, fontsize=8, bbox_to_anchor=(0.5, -0.1))
    return fig


def bidirectional(properties: pd.DataFrame, published: pd.DataFrame, experiment: str) -> plt.Figure:
    """Fig. 4a/4b (Sec. 5.2): mean rate of the δ⁺ incoming and δ⁻ outgoing links of a
    shared NIC or backbone, measured at both levels, beside both models and the paper."""
    rows = properties[properties["experiment"] == experiment]
    congestions = sorted(rows["congestion"].unique())
    combos = (
        rows[["delta_in", "delta_out"]].drop_duplicates().sort_values(["delta_out", "delta_in"])
    )
    combos = [tuple(int(v) for v in c) for c in combos.itertuples(index=False)]
    fig, axes = plt.subplots(
        1,
        len(congestions),
        figsize=(max(5.5, 1.1 * len(combos)) * len(congestions), 4.4),
        sharey=True,
        squeeze=False,
    )
    for ax, cc in zip(axes[0], congestions, strict=True):
        mine = rows[rows["congestion"] == cc]
        for i, (d_in, d_out) in enumerate(combos):
            point = mine[(mine["delta_in"] == d_in) & (mine["delta_out"] == d_out)]
            for j, direction in enumerate(("in", "out")):
                side = point[point["direction"] == direction]
                x0 = i + (j - 0.5) * 0.4
                for k, (level, (name, _, fill)) in enumerate(LEVELS.items()):
                    r = side[side["level"] == level]
                    if r.empty:
                        continue
                    r = r.iloc[0]
                    ax.errorbar(
                        x0 + (k - 0.5) * 0.12,
                        r["share_mean"],
                        yerr=[
                            [r["share_mean"] - r["share_min"]],
                            [r["share_max"] - r["share_mean"]],
                        ],
                        fmt=DIRECTION_MARKERS[direction],
                        fillstyle=fill,
                        color=_colors(["in", "out"])[direction],
                        capsize=2,
                        label=f"{name}, {direction}" if i == 0 else None,
                    )
                if side.empty:
                    continue
                for model in MODELS:
                    color, label = MODEL_STYLE[model]
                    ax.hlines(
                        side[f"{model}_share"].iloc[0],
                        x0 - 0.17,
                        x0 + 0.17,
                        color=color,
                        lw=2,
                        label=label if (i == 0 and j == 0) else None,
                    )
            paper = published[
                (published["experiment"] == experiment)
                & (published["delta_in"] == d_in)
                & (published["delta_out"] == d_out)
            ]
            for j, direction in enumerate(("in", "out")):
                value = paper.loc[paper["direction"] == direction, "share"]
                if len(value):
                    ax.plot(
                        i + (j - 0.5) * 0.4,
                        value.iloc[0],
                        "*",
                        ms=12,
                        color="black",
                        label="paper (Sec. 5.2)"
                        if not ax.get_legend_handles_labels()[1].count("paper (Sec. 5.2)")
                        else None,
                    )
        ax.set_xticks(range(len(combos)), [f"δ⁺={a}\nδ⁻={b}" for a, b in combos])
        ax.set_title(f"TCP congestion control {cc}", fontsize=10)
        ax.set_ylim(0, max(1.15, float(rows["share_max"].max()) + 0.05))
    resource = (
        "one NIC (links between two nodes)"
        if experiment.startswith("nic")
        else "the backbone (rack 1)"
    )
    axes[0][0].set_ylabel("link rate / rate of one link alone")
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=4, fontsize=8, bbox_to_anchor=(0.5, -0.12))
    fig.suptitle(f"Incoming (δ⁺) and outgoing (δ⁻) links sharing {resource}", fontsize=11)
    return fig


def error_histograms(errors: pd.DataFrame, within: pd.DataFrame, congestion: str) -> plt.Figure:
    """Fig. 6: histograms of ε per d (columns) for both models (rows), random patterns
    of one congestion control; titles give the share within 10 % with its bootstrap
    interval over the patterns, the paper's, and the measurement-noise ceiling."""
    rows = errors[(errors["family"] == "random") & (errors["congestion"] == congestion)]
    ds = sorted(rows["d"].dropna().astype(int).unique())
    fig, axes = plt.subplots(
        2, len(ds), figsize=(3.8 * len(ds), 7), sharex=True, squeeze=False, layout="constrained"
    )
    mine = within[within["congestion"] == congestion].set_index("d")
    for r, model in enumerate(MODELS):
        for c, d in enumerate(ds):
            ax = axes[r][c]
            eps = 100 * rows.loc[(rows["model"] == model) & (rows["d"] == d), "eps"].clip(-100, 100)
            ax.hist(
                eps, bins=ERROR_BINS, color=MODEL_STYLE[model][0] if model == "fairness" else None
            )
            ax.axvspan(-10, 10, color="grey", alpha=0.12)
            prefix = "" if model == "asymmetric" else "fair_"
            share = mine.loc[d, f"{prefix}within10_pct"]
            low, high = (
                mine.loc[d, f"{prefix}within10_low_pct"],
                mine.loc[d, f"{prefix}within10_high_pct"],
            )
            paper = mine.loc[d, f"paper_main_{model}_pct"] if d in mine.index else np.nan
            paper_text = f", paper {paper:.1f} %" if np.isfinite(paper) else ""
            ax.set_title(
                f"{model}, d={d}\n{share:.0f} % within 10 % ({low:.0f}–{high:.0f}){paper_text}\n"
                f"noise ceiling {mine.loc[d, 'ceiling_pct']:.0f} %",
                fontsize=9,
            )
            if r == 1:
                ax.set_xlabel("ε (%)")
        axes[r][0].set_ylabel("links")
    fig.suptitle(
        f"Prediction error ε = (predicted − measured) / measured per link, random patterns, "
        f"{congestion}",
        fontsize=11,
    )
    return fig


def alltoallv(table: pd.DataFrame) -> plt.Figure:
    """Fig. 8 / Sec. 7.3: execution time of the Alltoallv, measured and predicted."""
    fig, ax = plt.subplots()
    labels = [
        "paper (main testbed)" if row.source == "paper" else f"netnoise, {row.congestion}"
        for row in table.itertuples()
    ]
    x = np.arange(len(table))
    bars = {"measured": "measured_s", **{m: f"{m}_s" for m in MODELS}}
    width = 0.25
    for k, (name, column) in enumerate(bars.items()):
        color = "C0" if name == "measured" else MODEL_STYLE[name][0]
        ax.bar(x + (k - 1) * width, table[column], width, label=name, color=color)
        if name in MODELS:
            for xi, (value, err) in enumerate(
                zip(table[column], table[f"{name}_error_pct"], strict=True)
            ):
                ax.annotate(
                    f"{err:+.0f} %",
                    (xi + (k - 1) * width, value),
                    ha="center",
                    va="bottom",
                    fontsize=8,
                )
    ax.set_xticks(x, labels)
    ax.set_ylabel("execution time (s)")
    ax.set_title("Alltoallv on four nodes of one rack (labels: prediction error)")
    ax.legend(fontsize=8, loc="upper center", ncol=3, bbox_to_anchor=(0.5, -0.1))
    return fig


#: The sweeps of the regime table, each a panel: its title, x column, the unit the
#: column is divided by and the axis label.
REGIME_PANELS = (
    ("queue_window", "queue × window", "queue_bytes", 1e3, "queue of every port (kB)"),
    ("transfer_length", "transfer length", "message_mb", 1, "message (paper MB)"),
    ("backbone_ratio", "NIC:backbone ratio", "backbone_ratio", 1, "backbone rate / NIC rate"),
)


def _tick(value: float) -> str:
    return f"{value:,.0f}" if value >= 10 else f"{value:g}"


def _window_label(window: float) -> str:
    return "autotuned windows" if pd.isna(window) else f"{window / 1024:g} KiB windows"


def regime(table: pd.DataFrame) -> plt.Figure:
    """Where the asymmetric property lives (ns-3 sweeps): the outgoing links'
    asymmetry (0: the fairness model's rate, 1: the asymmetric model's) against
    queue depth per window, message size and NIC:backbone ratio; bars: the
    interval the links' 95 % intervals give."""
    fig, axes = plt.subplots(1, len(REGIME_PANELS), figsize=(13, 4.2), sharey=True)
    congestions = sorted(table["congestion"].unique())
    markers = dict(zip(congestions, "osD^", strict=False))
    for ax, (sweep, title, column, unit, label) in zip(axes, REGIME_PANELS, strict=True):
        rows = table[table["sweep"] == sweep]
        by_window = rows["socket_buffer_bytes"].fillna(-1)
        for (cc, _), group in rows.groupby(["congestion", by_window], sort=True):
            group = group.sort_values(column)
            ax.errorbar(
                group[column] / unit,
                group["asymmetry"],
                yerr=[
                    group["asymmetry"] - group["asymmetry_low"],
                    group["asymmetry_high"] - group["asymmetry"],
                ],
                marker=markers[cc],
                capsize=2,
                label=f"{cc}, {_window_label(group['socket_buffer_bytes'].iloc[0])}",
            )
        if rows["asymmetry"].isna().any():
            ax.annotate(
                "missing points: both models give the same rates",
                (0.02, 0.02),
                xycoords="axes fraction",
                fontsize=7,
            )
        for level, name in ((0, "fairness model"), (1, "asymmetric model")):
            ax.axhline(level, color="0.55" if level == 0 else "black", lw=0.8, ls="--")
            ax.annotate(
                name,
                (1.0, level),
                xycoords=("axes fraction", "data"),
                ha="right",
                va="bottom",
                fontsize=7,
            )
        ax.set_xlabel(label)
        ax.set_title(title, fontsize=10)
        if rows.empty:
            ax.annotate("not swept", (0.5, 0.5), xycoords="axes fraction", ha="center")
            continue
        ax.set_xscale("log")
        ax.minorticks_off()
        ticks = sorted(rows[column].unique() / unit)
        ax.set_xticks(ticks, [_tick(t) for t in ticks])
        ax.legend(fontsize=7, loc="best")
    axes[0].set_ylabel("asymmetry of the outgoing links")
    return fig
