"""Seed 002 figures: Fig. 1, 2, 4, 5, 7-11 from the tidy runs and the model's tables, and
the nested repeated cross-validation beside the paper's protocol."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from netnoise.figures import GUIDE

# Marks of the controlled runs (Sec. III-F) drawn over the production runs.
CAMPAIGN_MARKERS = {"dedicated": "v", "maximal": "^"}
CAMPAIGN_LABELS = {"dedicated": "no background (dedicated)", "maximal": "maximal background"}
# Fig. 2: the four dominant features of Sec. IV-A and how to draw them.
TOP_FEATURES = (
    ("injection_rate_mean", "NIC bytes per second (proctile flits/s)", True),
    ("net_to_nic_ratio", "network / NIC bytes (flit ratio)", True),
    ("stall_ratio_p75", "75th pct. stalls per packet", False),
    ("network_stalls_p95", "95th pct. stalls per port", False),
)


def _grid(count: int, width: float = 3.6, height: float = 2.9) -> tuple[plt.Figure, np.ndarray]:
    cols = int(np.ceil(np.sqrt(count)))
    rows = -(-count // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(width * cols, height * rows), squeeze=False)
    for ax in axes.flat[count:]:
        ax.set_visible(False)
    return fig, axes.flat


def _campaign_legend(fig: plt.Figure, ax: plt.Axes) -> None:
    handles, labels = ax.get_legend_handles_labels()
    for campaign, marker in CAMPAIGN_MARKERS.items():
        handles.append(plt.Line2D([], [], ls="none", marker=marker, color="black"))
        labels.append(CAMPAIGN_LABELS[campaign])
    fig.legend(handles, labels, loc="lower center", ncol=4, bbox_to_anchor=(0.5, -0.05))


def runtimes(table: pd.DataFrame) -> plt.Figure:
    """Fig. 1: runtime distribution of the production runs per application and node
    count; the controlled runs as marks above (the paper: MILC, MILC Reorder)."""
    apps = sorted(table["application"].unique())
    counts = sorted(table["nodes"].unique())
    fig, axes = _grid(len(apps))
    for ax, app in zip(axes, apps, strict=False):
        rows = table[table["application"] == app]
        for i, nodes in enumerate(counts):
            prod = rows[(rows["campaign"] == "production") & (rows["nodes"] == nodes)]
            ax.hist(
                prod["runtime_s"], bins=12, histtype="step", color=f"C{i}", label=f"{nodes} nodes"
            )
        top = ax.get_ylim()[1]
        for i, nodes in enumerate(counts):
            for campaign, marker in CAMPAIGN_MARKERS.items():
                marks = rows[(rows["campaign"] == campaign) & (rows["nodes"] == nodes)]
                y = np.full(len(marks), top * (0.97 - 0.06 * i))
                ax.plot(marks["runtime_s"], y, ls="none", marker=marker, color=f"C{i}", ms=6)
        ax.set_title(app)
        ax.set_xlabel("runtime (s)")
        ax.set_ylabel("runs")
    _campaign_legend(fig, axes[0])
    fig.suptitle("Runtime of every production run (controlled runs marked above)")
    fig.tight_layout()
    return fig


def feature_distributions(table: pd.DataFrame) -> plt.Figure:
    """Fig. 2: distributions of the four dominant features per application."""
    runs = table[table["campaign"] == "production"]
    fig, axes = plt.subplots(2, 2, figsize=(9, 6.4))
    for ax, (column, label, log) in zip(axes.flat, TOP_FEATURES, strict=True):
        values = runs[column][np.isfinite(runs[column])]
        positive = values[values > 0]
        if log and len(positive):
            edges = np.geomspace(positive.min(), positive.max(), 25)
            ax.set_xscale("log")
        else:
            edges = np.linspace(values.min(), values.max(), 25) if len(values) else 10
        for app, group in runs.groupby("application"):
            ax.hist(group[column], bins=edges, histtype="step", label=app)
        ax.set_xlabel(label)
        ax.xaxis.set_minor_formatter(plt.NullFormatter())
    for ax in axes[:, 0]:
        ax.set_ylabel("runs")
    axes[0, 0].legend(fontsize=8)
    fig.suptitle("The four dominant features per application (production runs)")
    fig.tight_layout()
    return fig


def controlled_extremes(table: pd.DataFrame) -> plt.Figure:
    """Fig. 4: the mean stall-to-packet ratio of every run: production runs between the
    dedicated and the maximal-background runs, per node count."""
    counts = sorted(table["nodes"].unique())
    fig, axes = plt.subplots(1, len(counts), figsize=(4.2 * len(counts), 3.8), squeeze=False)
    for i, (ax, nodes) in enumerate(zip(axes.flat, counts, strict=True)):
        rows = table[table["nodes"] == nodes]
        values = rows.loc[rows["campaign"] == "production", "stall_ratio_mean"].dropna()
        ax.hist(values, bins=20, color=f"C{i}", alpha=0.5, label="production runs")
        top = ax.get_ylim()[1]
        for campaign, marker in CAMPAIGN_MARKERS.items():
            marks = rows.loc[rows["campaign"] == campaign, "stall_ratio_mean"].dropna()
            ax.plot(marks, np.full(len(marks), top * 0.95), ls="none", marker=marker, color="black")
        ax.set_title(f"{nodes}-node jobs")
        ax.set_xlabel("mean stalls per packet, job's network ports")
    axes.flat[0].set_ylabel("runs")
    _campaign_legend(fig, axes.flat[0])
    fig.tight_layout()
    return fig


def tsne(coordinates: pd.DataFrame) -> plt.Figure:
    """Fig. 5: t-SNE of the seven scaled features, one colour per application."""
    fig, ax = plt.subplots(figsize=(6.4, 5))
    shapes = {"o": "circles", "s": "squares", "^": "triangles", "D": "diamonds", "v": "wedges"}
    markers = dict(zip(sorted(coordinates["nodes"].unique()), shapes, strict=False))
    for i, (app, group) in enumerate(coordinates.groupby("application")):
        for nodes, points in group.groupby("nodes"):
            ax.scatter(
                points["x"],
                points["y"],
                s=14,
                color=f"C{i}",
                marker=markers[nodes],
                label=f"{app}" if nodes == min(markers) else None,
            )
    ax.set_xlabel("t-SNE 1")
    ax.set_ylabel("t-SNE 2")
    legend = ", ".join(f"{shapes[m]}: {n} nodes" for n, m in markers.items())
    ax.set_title(f"Feature space of the production runs ({legend})")
    ax.legend(fontsize=8)
    return fig


def predicted_vs_true(
    points: pd.DataFrame, paper: str, out_of_fold: pd.DataFrame | None = None
) -> plt.Figure:
    """Fig. 7, 9, 10: predicted against true z of the test runs; shaded where both
    are below (light congestion) or above (heavy) the mean.

    The R² in the title is that of the figure's one split. Given every run's
    out-of-fold prediction (the rf_bound table), the title also gives the R²
    the headline claim is judged by, pooled over all runs, so that the two
    numbers are not mistaken for one."""
    fig, ax = plt.subplots(figsize=(5.2, 5))
    low = min(points["z_true"].min(), points["z_pred"].min(), -1) - 0.3
    high = max(points["z_true"].max(), points["z_pred"].max(), 1) + 0.3
    for corner in (low, high):
        ax.fill_between([corner, 0], corner, 0, color="#56B4E9", alpha=0.15, lw=0, gid=GUIDE)
    ax.plot([low, high], [low, high], "k--", lw=1)
    for app, group in points.groupby("application"):
        ax.scatter(group["z_true"], group["z_pred"], s=14, label=app)
    ax.set_xlim(low, high)
    ax.set_ylim(low, high)
    ax.set_xlabel("true z (runtime standard deviations from the mean)")
    ax.set_ylabel("predicted z")
    first = points.iloc[0]
    judged = ""
    if out_of_fold is not None and len(out_of_fold):
        truth, predicted = out_of_fold["z_true"], out_of_fold["svr"]
        r2 = 1 - ((truth - predicted) ** 2).sum() / ((truth - truth.mean()) ** 2).sum()
        judged = f"\nheadline claim: R² {r2:.2f}, all {len(out_of_fold)} runs out of fold (10-fold)"
    ax.set_title(
        f"R² {first['r2']:.2f} on this split: {len(points)} test runs, "
        f"{int(first['n_train'])} trained{judged}\n(paper: {paper})",
        fontsize=10,
    )
    ax.legend(fontsize=8)
    return fig


def learning_curve(curve: pd.DataFrame, paper_samples: float) -> plt.Figure:
    """Fig. 8: training and cross-validation R² against the number of training runs."""
    fig, ax = plt.subplots()
    for column, label in (("train_r2", "training"), ("cv_r2", "cross-validation")):
        (line,) = ax.plot(curve["n_train"], curve[column], marker="o", label=label)
        spread = curve[f"{column}_std"]
        ax.fill_between(
            curve["n_train"],
            curve[column] - spread,
            curve[column] + spread,
            color=line.get_color(),
            alpha=0.15,
        )
    ax.set_xlabel("training runs")
    ax.set_ylabel("R²")
    ax.set_title(f"SVR learning curve (paper: about {paper_samples:.0f} runs needed)")
    ax.legend()
    return fig


def rf_bound(bound: pd.DataFrame, summary: pd.DataFrame) -> plt.Figure:
    """Fig. 11: out-of-fold forest estimates ± the spread of its trees, against true z,
    runs ordered by true z; SVR predictions outside the interval give no estimate."""
    rates = summary.set_index("quantity")
    ours, paper = rates["netnoise"], rates["paper"]
    rows = bound.sort_values("z_true").reset_index(drop=True)
    x = np.arange(len(rows))
    fig, ax = plt.subplots(figsize=(8, 4))
    ax.errorbar(
        x,
        rows["rf"],
        yerr=rows["bound"],
        fmt="none",
        ecolor="grey",
        alpha=0.5,
        lw=1,
        label="forest estimate ± bound",
    )
    given = rows["accepted"].astype(bool)
    ax.plot(x[given], rows.loc[given, "svr"], "o", ms=3, label="SVR, estimate given")
    ax.plot(x[~given], rows.loc[~given, "svr"], "x", ms=4, label="SVR outside: no estimate")
    ax.plot(x, rows["z_true"], "k-", lw=1, label="true z")
    ax.set_xlabel("run (ordered by true z)")
    ax.set_ylabel("z")
    ax.set_title(
        f"Combined model: estimate given for {ours['coverage']:.1%} of runs, true z within "
        f"it for {ours['containment']:.1%}\n(paper: {paper['coverage']:.1%} and "
        f"{paper['containment']:.1%})",
        fontsize=10,
    )
    ax.legend(fontsize=8, ncol=2)
    return fig


# Rows of cross_validation's left panel, top to bottom, and their labels.
CV_LABELS = {
    "group_mean": "per-group mean",
    "conditions_forest": "conditions only (forest)",
    "counters_forest": "counters (forest)",
    "counters_svr": "counters (SVR)",
    "counters_within_group": "counters scaled per group (forest)",
    "combined": "combined, runs given an estimate",
}
RATE_LABELS = {
    "given": "share given an estimate",
    "containment": "true z within bound (given)",
    "interval_coverage": "true z within bound (all)",
}


def cross_validation(folds: pd.DataFrame, evaluation: pd.DataFrame, level: float) -> plt.Figure:
    """The nested repeated CV of the steady campaign: every fold's R² of each model
    beside the paper's 0.91, the paper's protocol on our runs, the noise ceiling and
    each model's pooled R² on the bursty campaign; the combined model's rates per
    fold beside the bound's calibration level and the paper's rates."""
    rows = evaluation[evaluation["campaign"] == "production"].set_index("model")
    bursty = evaluation[evaluation["campaign"] == "bursty"].set_index("model")
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 5.4), gridspec_kw={"width_ratios": [3, 2]})
    names = [m for m in CV_LABELS if m in set(folds["model"])]
    scores = [folds.loc[folds["model"] == m, "r2"].dropna() for m in names]
    labels = [CV_LABELS[m] for m in names]
    left.boxplot(scores, orientation="horizontal", tick_labels=labels, widths=0.5)
    pooled = [rows.at[m, "r2_pooled"] for m in names]
    left.plot(pooled, range(1, len(names) + 1), "D", color="C3", label="pooled out-of-fold R²")
    shown = [(i, m) for i, m in enumerate(names, start=1) if m in bursty.index]
    if shown:
        left.plot(
            [bursty.at[m, "r2_pooled"] for _, m in shown],
            [i - 0.3 for i, _ in shown],
            "o",
            mfc="none",
            color="C3",
            label="pooled R², bursty background",
        )
    for name, marker, label in (
        ("svr_grid_best", "^", "grid's best score on its own folds"),
        ("svr_single_split", "v", "one 75/25 split"),
    ):
        if name in rows.index:
            y = names.index("counters_svr") + 1
            left.plot(rows.at[name, "r2_mean"], y + 0.3, marker, color="C1", label=label)
    paper = rows["paper_r2"].dropna()
    if len(paper):
        left.axvline(paper.iloc[0], color="black", ls="--", lw=1, label="paper (0.91)")
    for i, (_, ceiling) in enumerate(rows.loc[rows.index == "noise_ceiling"].iterrows()):
        left.axvspan(ceiling["r2_low"], ceiling["r2_high"], color=f"C{4 + i}", alpha=0.15)
        left.axvline(
            ceiling["r2_mean"], color=f"C{4 + i}", lw=1.5, label=f"ceiling: {ceiling['protocol']}"
        )
    left.set_xlabel("R² of z per test fold")
    left.set_xlim(max(-1.0, left.get_xlim()[0]), 1.02)
    # Below the axes: inside, it covered the lowest models' boxes.
    left.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.13), ncol=2)
    combined = folds[folds["model"] == "combined"]
    right.boxplot(
        [combined[c].dropna() for c in RATE_LABELS],
        orientation="horizontal",
        tick_labels=list(RATE_LABELS.values()),
        widths=0.5,
    )
    right.axvline(level, color="C2", lw=1.5, label=f"calibration level {level:.0%}")
    # The paper's rates on the rows of the rates they match (1: given, 2: containment).
    for i, paper_column in enumerate(("paper_given", "paper_containment"), start=1):
        value = rows.at["combined", paper_column] if "combined" in rows.index else np.nan
        if np.isfinite(value):
            right.plot(value, i, "*", color="black", ms=9, label="paper" if i == 1 else None)
    right.set_xlabel("share of the runs of a test fold")
    right.legend(fontsize=7, loc="lower left")
    repeats, cv = int(rows.at["counters_svr", "repeats"]), int(rows.at["counters_svr", "folds"])
    fig.suptitle(
        f"Nested {repeats} x {cv}-fold cross-validation: R² per test fold and the "
        "combined model's bound",
        fontsize=11,
    )
    fig.tight_layout()
    return fig
