"""Seed 001 figures: simulated slowdown on real fabrics (Fig. 11), fat-trees (Fig. 13) and
tori (Fig. 15, 16), and the noise benchmark's times and slowdowns (Fig. 3-6) with their
95 % intervals and controls."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import PurePosixPath

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from netnoise.studies.network_noise.analysis import (
    added_time,
    correlations,
    ratio_sweep,
    split_slowdowns,
    with_perturbation,
)


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


def _held_application(rows: pd.DataFrame) -> str:
    """``, 4 application ranks at every ratio`` where the sweep held the application
    communicator's size (network_noise.benchmark.application_ranks), else nothing."""
    if "application_ranks" not in rows or rows["application_ranks"].isna().any():
        return ""
    sizes = rows["application_ranks"].unique()
    return f", {sizes[0]:g} application ranks at every ratio" if len(sizes) == 1 else ""


def boxplot_by_ratio(tidy: pd.DataFrame, nodes: int) -> plt.Figure:
    """Fig. 3: allreduce times with and without perturbation for each perturbation
    ratio (ratio 0: the ratio-0 control run, where there is one)."""
    tidy = ratio_sweep(with_perturbation(tidy))
    rows = tidy[(tidy["collective"] == "allreduce") & (tidy["allocation"] == nodes)]
    fig, ax = plt.subplots()
    groups = [(f"{r:g}", g) for r, g in rows.groupby("ratio")]
    _paired_boxes(ax, groups)
    ax.set_xlabel("perturbation ratio")
    ax.set_title(
        f"Allreduce in a {nodes}-node allocation{_held_application(rows)}\n(whiskers: full range)"
    )
    return fig


def _bars(rows: pd.DataFrame) -> np.ndarray:
    """Error-bar lengths (below, above) of the slowdown from its 95 % interval."""
    value = rows["slowdown_pct"].to_numpy(float)
    return np.vstack(
        [value - rows["slowdown_ci_low"].to_numpy(float), rows["slowdown_ci_high"] - value]
    )


def _rho(table: pd.DataFrame, **where: object) -> str:
    """`` (ρ 0.95)`` of the matching row of analysis.correlations, or nothing."""
    rows = table
    for column, value in where.items():
        rows = rows[rows[column] == value]
    return f" (ρ {rows['spearman'].iloc[0]:.2f})" if len(rows) else ""


#: The control runs drawn beside the measured points: hollow, in the colour of
#: their collective.
CONTROL_MARKERS = {"cpu": ("s", "CPU-only control"), "unshared": ("^", "no shared link")}


def _hollow_legend(controls: pd.DataFrame) -> str:
    """The title's key to the hollow markers of the controls drawn."""
    shown = [CONTROL_MARKERS[p] for p in CONTROL_MARKERS if (controls["perturbation"] == p).any()]
    markers = {"s": "squares", "^": "triangles"}
    return "".join(f"; hollow {markers[m]}: {name}" for m, name in shown)


def _controls(ax, controls: pd.DataFrame, x: str, color: str, shift: float = 0) -> None:
    """Each control's runs as hollow markers (CONTROL_MARKERS)."""
    for perturbation, (marker, _) in CONTROL_MARKERS.items():
        runs = controls[controls["perturbation"] == perturbation]
        if len(runs):
            ax.errorbar(
                runs[x] + shift,
                runs["slowdown_pct"],
                yerr=_bars(runs),
                fmt=marker,
                mfc="none",
                color=color,
                capsize=2,
                label="_nolegend_",
            )


def slowdown_by_ratio(
    slowdown: pd.DataFrame, nodes: int, published: pd.DataFrame | None = None
) -> plt.Figure:
    """Fig. 4: mean slowdown vs perturbation ratio per collective with 95 % intervals,
    least-squares lines and the Spearman correlation of each; ratio 0 is the
    ratio-0 control, hollow markers the CPU-only and unshared controls. The
    paper's stated slowdowns (``published``: resources/reference/network_noise/
    fig4.csv; its text has none of the figure's points) are dashed lines across
    the ratios."""
    slowdown = with_perturbation(slowdown)
    rho = correlations(slowdown).query("perturbation == 'network'")
    rows = ratio_sweep(slowdown)
    rows = rows[rows["allocation"] == nodes]
    controls = slowdown[
        slowdown["perturbation"].isin(list(CONTROL_MARKERS))
        & (slowdown["ratio"] > 0)
        & (slowdown["allocation"] == nodes)
    ]
    fig, ax = plt.subplots()
    collectives = sorted(rows["collective"].unique())
    # Collectives side by side around each ratio, so that their bars do not hide each other.
    dodge = 0.012 * (np.arange(len(collectives)) - (len(collectives) - 1) / 2)
    for shift, collective in zip(dodge, collectives, strict=True):
        group = rows[rows["collective"] == collective].sort_values("ratio")
        label = collective + _rho(rho, against="ratio", collective=collective, allocation=nodes)
        points = ax.errorbar(
            group["ratio"] + shift,
            group["slowdown_pct"],
            yerr=_bars(group),
            fmt="o",
            capsize=2,
            label=label,
        )
        color = points.lines[0].get_color()
        if len(group) > 1:
            slope, intercept = np.polyfit(group["ratio"], group["slowdown_pct"], 1)
            xs = np.array([group["ratio"].min(), group["ratio"].max()])
            ax.plot(xs, slope * xs + intercept, color=color)
        _controls(ax, controls[controls["collective"] == collective], "ratio", color, shift)
    ax.axhline(100, color="black", lw=0.8)
    if published is not None and len(rows):
        span = [0.0, float(rows["ratio"].max())]
        for (_, paper), style in zip(published.iterrows(), ("--", ":"), strict=False):
            ax.plot(
                span,
                [paper["slowdown_pct"]] * 2,
                ls=style,
                color="dimgrey",
                lw=1.2,
                label=f"paper: {paper['label']}",
            )
    ax.set_xlabel("perturbation ratio")
    ax.set_ylabel("slowdown relative to unperturbed run (%)")
    ax.set_title(
        f"{nodes}-node allocation{_held_application(rows)}\n"
        f"bars: 95 % interval over splits{_hollow_legend(controls)}"
    )
    ax.legend(fontsize="small")
    return fig


def _added_time_by_allocation(ax, tidy: pd.DataFrame) -> None:
    """The time the perturbation adds to an allreduce call at ratio 1/2 (ms) per
    allocation, with its 95 % interval over the random splits."""
    splits = split_slowdowns(tidy)
    at_half = splits[
        (splits["collective"] == "allreduce")
        & (splits["ratio"] == 0.5)
        & (splits["perturbation"] == "network")
    ]
    points = [(n, *added_time(group)) for n, group in at_half.groupby("allocation")]
    if points:
        allocation, *times_us = np.array(points, float).T
        value, low, high = (t / 1000 for t in times_us)
        ax.errorbar(
            allocation, value, yerr=np.vstack([value - low, high - value]), marker="o", capsize=2
        )
    ax.set_xlabel("allocation (nodes)")
    ax.set_ylabel("time added to a call (ms)")
    ax.set_title("Time the perturbation adds to a call\n(perturbed mean − unperturbed mean)")


def slowdown_by_allocation(slowdown: pd.DataFrame, tidy: pd.DataFrame | None = None) -> plt.Figure:
    """Fig. 5: allreduce slowdown vs allocation size at ratio 1/2 with 95 % intervals
    and its Spearman correlation; hollow markers its controls. Given the
    benchmark's tidy table, a second panel shows the time the perturbation adds
    to a call: the slowdown divides it by the collective's own time, which on
    the testbed grows fast with the communicator."""
    slowdown = with_perturbation(slowdown)
    rho = correlations(slowdown).query("perturbation == 'network'")
    at_half = (slowdown["collective"] == "allreduce") & (slowdown["ratio"] == 0.5)
    rows = slowdown[at_half & (slowdown["perturbation"] == "network")].sort_values("allocation")
    controls = slowdown[at_half & slowdown["perturbation"].isin(list(CONTROL_MARKERS))]
    controls = controls.sort_values("allocation")
    if tidy is None:
        fig, ax = plt.subplots()
    else:
        fig, (ax, added) = plt.subplots(1, 2, figsize=(10, 4.2))
        _added_time_by_allocation(added, with_perturbation(tidy))
    label = "allreduce, ratio 1/2" + _rho(
        rho, against="allocation", collective="allreduce", ratio=0.5
    )
    points = ax.errorbar(
        rows["allocation"],
        rows["slowdown_pct"],
        yerr=_bars(rows),
        marker="o",
        capsize=2,
        label=label,
    )
    _controls(ax, controls, "allocation", points.lines[0].get_color())
    ax.axhline(100, color="black", lw=0.8)
    ax.set_xlabel("allocation (nodes)")
    ax.set_ylabel("slowdown relative to unperturbed run (%)")
    ax.set_title(
        "Slowdown against the allocation (paper Fig. 5: it grows)\n"
        f"bars: 95 % interval over splits{_hollow_legend(controls)}"
    )
    ax.legend()
    return fig


def boxplot_by_collective(tidy: pd.DataFrame, nodes: int) -> plt.Figure:
    """Fig. 6: every collective with and without perturbation at ratio 1/2."""
    tidy = with_perturbation(tidy)
    rows = tidy[
        (tidy["ratio"] == 0.5) & (tidy["allocation"] == nodes) & (tidy["perturbation"] == "network")
    ]
    fig, ax = plt.subplots()
    _paired_boxes(ax, list(rows.groupby("collective")))
    ax.set_xlabel("collective")
    ax.set_title(f"Ratio 1/2, {nodes} nodes (paper Fig. 6: BlueGene/P)")
    return fig
