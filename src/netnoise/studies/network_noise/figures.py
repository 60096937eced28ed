"""Seed 001 figures: simulated slowdown on real fabrics (Fig. 11), fat-trees (Fig. 13) and
tori (Fig. 15, 16), and the noise benchmark's times and slowdowns (Fig. 3-6)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import PurePosixPath

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd


def _band(ax, rows: pd.DataFrame, x: str, label: str) -> None:
    rows = rows.sort_values(x)
    (line,) = ax.plot(rows[x], rows["slowdown_mean"], marker="o", label=label)
    ax.fill_between(
        rows[x], rows["slowdown_p2.5"], rows["slowdown_p97.5"], color=line.get_color(), alpha=0.15
    )


#: Label of each x axis of the simulator's figures and whether it is logarithmic.
_X_AXES = {"ratio": ("perturbation ratio", False), "endpoints": ("endpoints", True)}


def _slowdown_bands(bands: list[tuple[str, pd.DataFrame]], x: str, title: str) -> plt.Figure:
    """Mean simulated slowdown over ``x`` with the central 95 % of runs as a band,
    one line per (label, rows) of ``bands``."""
    fig, ax = plt.subplots()
    for label, rows in bands:
        _band(ax, rows, x, label)
    xlabel, log = _X_AXES[x]
    if log:
        ax.set_xscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel("slowdown (perturbed / unperturbed)")
    ax.set_title(title)
    if bands:
        ax.legend()
    return fig


def _bands_by(
    summary: pd.DataFrame, figure: str, by: str, label: Callable[[object, pd.DataFrame], str]
) -> list[tuple[str, pd.DataFrame]]:
    """The rows of ``figure``, one (label, rows) band per value of column ``by``."""
    rows = summary[summary["figure"] == figure]
    return [(label(key, group), group) for key, group in rows.groupby(by)]


def _endpoints(group: pd.DataFrame) -> int:
    return int(group["endpoints"].iloc[0])


def fabric_ratio(summary: pd.DataFrame) -> plt.Figure:
    """Fig. 11: slowdown vs perturbation ratio on each real fabric given as a topology file."""
    bands = _bands_by(
        summary,
        "fabric_ratio",
        "topology",
        lambda spec, group: (
            f"{PurePosixPath(spec.split(':', 1)[1]).name} ({_endpoints(group)} endpoints)"
        ),
    )
    return _slowdown_bands(bands, "ratio", "Network noise on real fabrics (ibnetdiscover files)")


def fat_tree_size(summary: pd.DataFrame) -> plt.Figure:
    """Fig. 13: slowdown vs fat-tree size at perturbation ratio 1/2."""
    bands = [("XGFT, ratio 1/2", summary[summary["figure"] == "fat_tree_size"])]
    return _slowdown_bands(
        bands, "endpoints", "Network noise on fat-trees (mean; band: 95 % of runs)"
    )


def torus_ratio(summary: pd.DataFrame) -> plt.Figure:
    """Fig. 15: slowdown vs perturbation ratio on a 2-D and a 3-D torus."""
    bands = _bands_by(
        summary,
        "torus_ratio",
        "dimensions",
        lambda dims, group: f"{dims:.0f}-D torus, {_endpoints(group)} endpoints",
    )
    return _slowdown_bands(
        bands, "ratio", "Network noise on tori (paper: up to 12x, 3-D less affected)"
    )


def torus_size(summary: pd.DataFrame) -> plt.Figure:
    """Fig. 16: slowdown vs torus size at ratio 1/2, 2-D and 3-D."""
    bands = _bands_by(summary, "torus_size", "dimensions", lambda dims, _: f"{dims:.0f}-D torus")
    return _slowdown_bands(bands, "endpoints", "Network noise vs torus size, ratio 1/2")


def _paired_boxes(ax, groups: list[tuple[str, pd.DataFrame]]) -> None:
    """Unperturbed and perturbed boxes side by side for each group, log time axis."""
    positions, data, colors = [], [], []
    for i, (_, group) in enumerate(groups):
        for j, perturbed in enumerate((0, 1)):
            positions.append(3 * i + j)
            data.append(group.loc[group["perturbed"] == perturbed, "time_us"].to_numpy())
            colors.append("C0" if perturbed == 0 else "C1")
    boxes = ax.boxplot(data, positions=positions, notch=True, whis=(0, 100), patch_artist=True)
    for patch, color in zip(boxes["boxes"], colors, strict=True):
        patch.set_facecolor(color)
        patch.set_alpha(0.5)
    ax.set_xticks([3 * i + 0.5 for i in range(len(groups))], [label for label, _ in groups])
    ax.set_yscale("log")
    ax.set_ylabel("collective time (µs)")
    ax.legend(
        [boxes["boxes"][0], boxes["boxes"][1]], ["unperturbed", "perturbed"], loc="upper left"
    )


def boxplot_by_ratio(tidy: pd.DataFrame, nodes: int) -> plt.Figure:
    """Fig. 3: allreduce times with and without perturbation for each perturbation ratio."""
    rows = tidy[(tidy["collective"] == "allreduce") & (tidy["allocation"] == nodes)]
    fig, ax = plt.subplots()
    groups = [(f"{r:g}", g) for r, g in rows.groupby("ratio")]
    _paired_boxes(ax, groups)
    ax.set_xlabel("perturbation ratio")
    ax.set_title(f"Allreduce in a {nodes}-node allocation (whiskers: full range)")
    return fig


def slowdown_by_ratio(slowdown: pd.DataFrame, nodes: int) -> plt.Figure:
    """Fig. 4: mean slowdown vs perturbation ratio per collective, least-squares lines."""
    rows = slowdown[slowdown["allocation"] == nodes]
    fig, ax = plt.subplots()
    for collective, group in rows.groupby("collective"):
        group = group.sort_values("ratio")
        (points,) = ax.plot(group["ratio"], group["slowdown_pct"], "o", label=collective)
        if len(group) > 1:
            slope, intercept = np.polyfit(group["ratio"], group["slowdown_pct"], 1)
            xs = np.array([group["ratio"].min(), group["ratio"].max()])
            ax.plot(xs, slope * xs + intercept, color=points.get_color())
    ax.axhline(100, color="black", lw=0.8)
    ax.set_xlabel("perturbation ratio")
    ax.set_ylabel("slowdown relative to unperturbed run (%)")
    ax.set_title(f"{nodes}-node allocation (paper: up to 150 % at small ratios)")
    ax.legend()
    return fig


def slowdown_by_allocation(slowdown: pd.DataFrame) -> plt.Figure:
    """Fig. 5: allreduce slowdown vs allocation size at ratio 1/2."""
    rows = slowdown[(slowdown["collective"] == "allreduce") & (slowdown["ratio"] == 0.5)]
    rows = rows.sort_values("allocation")
    fig, ax = plt.subplots()
    ax.plot(rows["allocation"], rows["slowdown_pct"], marker="o", label="allreduce, ratio 1/2")
    ax.axhline(100, color="black", lw=0.8)
    ax.set_xlabel("allocation (nodes)")
    ax.set_ylabel("slowdown relative to unperturbed run (%)")
    ax.set_title("Network noise grows with the allocation (paper Fig. 5)")
    ax.legend()
    return fig


def boxplot_by_collective(tidy: pd.DataFrame, nodes: int) -> plt.Figure:
    """Fig. 6: every collective with and without perturbation at ratio 1/2."""
    rows = tidy[(tidy["ratio"] == 0.5) & (tidy["allocation"] == nodes)]
    fig, ax = plt.subplots()
    _paired_boxes(ax, list(rows.groupby("collective")))
    ax.set_xlabel("collective")
    ax.set_title(f"Ratio 1/2, {nodes} nodes (paper Fig. 6: BlueGene/P)")
    return fig
