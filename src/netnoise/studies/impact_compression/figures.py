"""Seed 000 figures: Fig. 3, 6, 7, 8, 9 and Table I, with the paper's values where it gives them.

Error bars are 95 % bootstrap intervals (ci.interval) of the measured quantity.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from netnoise.studies.impact_compression import queue
from netnoise.studies.impact_compression.analysis import (
    BASELINES,
    CONFIG_PATTERN,
    METHODS,
    paper_text,
    parse_config_id,
)


def _bars(table: pd.DataFrame, column: str, scale: float = 100) -> np.ndarray:
    """Error-bar lengths (below, above) of ``column`` from its interval columns."""
    value = table[column].to_numpy(float)
    low = table[f"{column}_ci_low"].to_numpy(float)
    high = table[f"{column}_ci_high"].to_numpy(float)
    return np.vstack([value - low, high - value]) * scale


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
    """Fig. 6: queue utilisation of each CompressionB configuration, against the
    load each node offers (``offered_load``, where the grid is swept by it, with
    the line utilisation = offered load) or else against B."""
    configs = utilization[utilization["component"].str.fullmatch(CONFIG_PATTERN)].copy()
    params = pd.DataFrame([parse_config_id(c) for c in configs["component"]], index=configs.index)
    configs = configs.join(params)
    by_load = "offered_load" in configs and configs["offered_load"].notna().all()
    fig, ax = plt.subplots()
    for (p, m), group in configs.groupby(["partners", "messages"]):
        x = group["offered_load"] * 100 if by_load else group["sleep_cycles"]
        order = np.argsort(x.to_numpy())
        group, x = group.iloc[order], x.iloc[order]
        ax.errorbar(
            x,
            group["utilization"] * 100,
            yerr=_bars(group, "utilization"),
            marker="o",
            capsize=2,
            label=f"P={p} flows, M={m}" if by_load else f"P={p}, M={m}",
        )
    ax.set_ylim(0, 100)
    if by_load:
        ax.plot([0, 100], [0, 100], color="grey", ls=":", lw=1, label="utilisation = offered")
        ax.set_xlabel("offered load per node (% of its link)")
    else:
        ax.set_xscale("log")
        ax.set_xlabel("B: sleep between partners (cycles)")
    ax.set_ylabel("switch queue utilisation (%)")
    ax.set_title(
        "Utilisation of CompressionB configurations (paper: 26 % to 92 % on Cab)\n"
        "bars: 95 % bootstrap interval"
    )
    ax.legend()
    return fig


def degradation_vs_utilization(
    degradation: pd.DataFrame, utilization: pd.DataFrame, lines: pd.DataFrame
) -> plt.Figure:
    """Fig. 7: degradation vs utilisation per application with both intervals, the
    monotone p_A the queue model predicts with (solid) and the paper's least-squares
    line (dotted); linear and symmetric-log axes."""
    u = utilization.set_index("component")
    fits = lines.set_index("application")
    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    for ax, log in zip(axes, (False, True), strict=True):
        for app, group in degradation.groupby("application"):
            configs = u.loc[group["config"]]
            x = configs["utilization"].to_numpy() * 100
            points = ax.errorbar(
                x,
                group["degradation"] * 100,
                xerr=_bars(configs, "utilization"),
                yerr=_bars(group, "degradation"),
                fmt="o",
                ms=4,
                capsize=2,
                label=app,
            )
            color = points.lines[0].get_color()
            curve_x, curve_y = queue.degradation_curve(degradation, u["utilization"], app)
            ax.plot(curve_x * 100, curve_y * 100, color=color)
            fit = fits.loc[app]
            xs = np.linspace(x.min(), x.max(), 20)
            line = (fit["slope"] * xs / 100 + fit["intercept"]) * 100
            ax.plot(xs, line, color=color, ls=":", lw=1)
        ax.set_xlabel("switch utilisation by CompressionB (%)")
        ax.set_ylabel("performance degradation (%)")
        if log:
            ax.set_yscale("symlog", linthresh=1)
    axes[0].set_title("linear (solid: monotone p_A; dotted: least squares)")
    axes[1].set_title("symmetric log")
    axes[0].legend()
    return fig


def prediction_errors(predictions: pd.DataFrame) -> plt.Figure:
    """Fig. 8: measured minus predicted slowdown of every pairing, per method and
    baseline; bars: the measured slowdown's 95 % interval."""
    table = predictions.sort_values(["application", "partner"])
    pairs = table.drop_duplicates(["application", "partner"])[["application", "partner"]]
    labels = [f"{a} + {p}" for a, p in pairs.itertuples(index=False)]
    methods = {m: label for m, label in METHODS.items() if m in set(table["method"])}
    fig, ax = plt.subplots(figsize=(max(6.4, 0.6 * len(labels)), 5.5))
    x = np.arange(len(labels))
    offsets = np.linspace(-0.3, 0.3, len(methods))
    for offset, (method, label) in zip(offsets, methods.items(), strict=True):
        rows = pairs.merge(table[table["method"] == method], how="left")
        ax.errorbar(
            x + offset,
            rows["error"] * 100,
            yerr=_bars(rows, "measured"),
            fmt="s" if method in BASELINES else "o",
            mfc="none" if method in BASELINES else None,
            ms=4,
            elinewidth=0.8,
            label=label,
        )
    ax.axhline(0, color="black", lw=0.8)
    for band in (10, 20):
        ax.axhspan(-band, band, color="grey", alpha=0.08)
    ax.set_xticks(x, labels, fontsize=7, rotation=60, ha="right")
    ax.set_ylabel("measured − predicted slowdown (points)")
    ax.set_title(
        "Prediction error per pairing (shaded: ±10 and ±20 points;\n"
        "bars: 95 % interval of the measured slowdown; hollow: baselines)"
    )
    ax.legend(ncol=3, loc="upper center", bbox_to_anchor=(0.5, -0.45))
    return fig


def error_summary(summary: pd.DataFrame, published: pd.DataFrame) -> plt.Figure:
    """Fig. 9: quartiles of each method's and baseline's errors, annotated with its
    mean absolute error, shares within 10 and 20 points and rank correlation, and
    below them the paper's values where it gives them (``published``:
    analysis.published_scores: its claims, and the baselines on its Table I)."""
    fig, ax = plt.subplots(figsize=(max(6.4, 1.4 * len(summary)), 5))
    for i, row in enumerate(summary.itertuples()):
        ax.vlines(i, row.min * 100, row.max * 100, color="black", lw=1)
        ax.bar(
            i,
            (row.q3 - row.q1) * 100,
            bottom=row.q1 * 100,
            width=0.5,
            alpha=0.6,
            color="C7" if row.method in BASELINES else f"C{i}",
        )
        ax.hlines(row.median * 100, i - 0.25, i + 0.25, color="black", lw=2)
        rho = "–" if np.isnan(row.spearman) else f"{row.spearman:.2f}"
        ours = (
            f"MAE {row.mean_abs_error * 100:.1f}\n{row.within_10pct:.0%} <10, "
            f"{row.within_20pct:.0%} <20\nρ {rho}"
        )
        ax.annotate(ours, (i, row.max * 100), ha="center", va="bottom", fontsize=7)
        paper = [
            f"{name} {text}{unit}"
            for score, name, scale, unit in (
                ("mean_abs_error", "MAE", 100, ""),
                ("within_10pct", "<10:", 100, " %"),
                ("within_20pct", "<20:", 100, " %"),
                ("spearman", "ρ", 1, ""),
            )
            if (text := paper_text(published, row.method, score, scale))
        ]
        if paper:
            ax.annotate(
                "paper:\n" + "\n".join(paper),
                (i, 0),
                xycoords=("data", "axes fraction"),
                xytext=(0, -38),
                textcoords="offset points",
                ha="center",
                va="top",
                fontsize=7,
                color="dimgrey",
            )
    ax.set_xticks(range(len(summary)), summary["label"], fontsize=8)
    ax.set_ylabel("measured − predicted slowdown (points)")
    claim = paper_text(published, "queue", "within_10pct", 100)
    ax.set_title(
        f"Error quartiles per method and baseline (paper: queue model {claim} % within "
        "10 points;\non its Table I, predicting 0 gives "
        f"{paper_text(published, 'zero', 'within_10pct', 100)} %)"
    )
    ax.margins(y=0.25)
    return fig


def _cell_text(value: float, low: float, high: float) -> str:
    if np.isnan(value):
        return ""
    if np.isnan(low):
        return f"{round(value)}"
    return f"{round(value)}\n[{round(low)}, {round(high)}]"


#: Columns of Table I's scores: (error_summary column, heading, scale, format).
_SCORE_COLUMNS = (
    ("mean_abs_error", "MAE\n(points)", 100, "{:.1f}"),
    ("within_10pct", "within\n10 (%)", 100, "{:.0f}"),
    ("within_20pct", "within\n20 (%)", 100, "{:.0f}"),
    ("spearman", "Spearman\nρ", 1, "{:.2f}"),
)
#: Table I's text sizes (points): where the report shows the figure (about 670 px
#: wide in a 1400-px window) each is 9 px or more (tests/impact_compression/test_figures.py).
TABLE1_TEXT = {"cell": 11, "interval": 10, "scores": 10}


def _score_table(ax, summary: pd.DataFrame, published: pd.DataFrame) -> None:
    """Every method's and baseline's scores on our pairings, then the paper's
    (published_scores: its claims, the baselines on its Table I) where it gives them."""
    ax.axis("off")
    rows = []
    for row in summary.itertuples():
        ours = [
            "–" if np.isnan(v := getattr(row, score)) else text.format(v * scale)
            for score, _, scale, text in _SCORE_COLUMNS
        ]
        paper = [
            paper_text(published, row.method, score, scale) or "–"
            for score, _, scale, _ in _SCORE_COLUMNS
        ]
        rows.append([row.label, *ours, *paper])
    headings = [heading for _, heading, _, _ in _SCORE_COLUMNS]
    table = ax.table(
        cellText=rows,
        colLabels=["", *headings, *(f"paper: {h}" for h in headings)],
        loc="center",
        cellLoc="center",
    )
    table.auto_set_font_size(False)
    table.set_fontsize(TABLE1_TEXT["scores"])
    table.auto_set_column_width(list(range(len(rows[0]))))
    table.scale(1, 1.5)
    for (row, _), cell in table.get_celld().items():
        if row == 0:
            cell.set_height(cell.get_height() * 1.8)
    ax.set_title(
        "How well each method predicts our pairings' slowdowns\n"
        "(paper: its claims, and the baselines on its Table I)",
        fontsize=10,
    )


def slowdown_tables(
    ours: pd.DataFrame,
    published: pd.DataFrame,
    slowdowns: pd.DataFrame | None = None,
    summary: pd.DataFrame | None = None,
    published_scores: pd.DataFrame | None = None,
) -> plt.Figure:
    """Table I: our measured slowdown matrix beside the paper's (different
    applications), each titled with its mean and maximum; with ``slowdowns``
    (measured_slowdowns) each of our cells also gives its 95 % interval; with
    ``summary`` (error_summary) and ``published_scores`` (published_scores) a
    table under both gives every method's and baseline's MAE, shares within 10
    and 20 points and rank correlation, ours and the paper's."""
    theirs = published.pivot(index="application", columns="partner", values="slowdown_pct")
    order = ["FFTW", "Lulesh", "MCB", "MILC", "VPFFT", "AMG"]
    theirs = theirs.reindex(index=order, columns=order)
    mine = ours.set_index("application")
    intervals = {}
    if slowdowns is not None:
        for row in slowdowns.itertuples():
            intervals[(row.application, row.partner)] = (
                row.measured_ci_low * 100,
                row.measured_ci_high * 100,
            )
    if summary is None:
        fig, axes = plt.subplots(1, 2, figsize=(10, 5))
    else:
        table_height = 0.38 * (len(summary) + 4)
        fig = plt.figure(figsize=(10, 5 + table_height))
        grid = fig.add_gridspec(
            2, 2, height_ratios=[5, table_height], hspace=0.5, bottom=0.02, wspace=0.35
        )
        axes = [fig.add_subplot(grid[0, 0]), fig.add_subplot(grid[0, 1])]
        _score_table(fig.add_subplot(grid[1, :]), summary, published_scores)
    vmax = max(np.nanmax(mine.to_numpy(float)), np.nanmax(theirs.to_numpy(float)))
    for ax, matrix, title in (
        (axes[0], mine, "netnoise (this run), % [95 % interval]"),
        (axes[1], theirs, "paper, Table I (Cab), %"),
    ):
        values = matrix.to_numpy(float)
        ax.imshow(values, cmap="Reds", vmin=0, vmax=vmax)
        for (i, j), v in np.ndenumerate(values):
            low, high = intervals.get((matrix.index[i], matrix.columns[j]), (np.nan, np.nan))
            color = "white" if v > 0.6 * vmax else "black"
            text = _cell_text(v, low, high)
            size = TABLE1_TEXT["interval" if "\n" in text else "cell"]
            ax.text(j, i, text, ha="center", va="center", fontsize=size, color=color)
        ax.set_xticks(range(matrix.shape[1]), matrix.columns, rotation=45, ha="right")
        ax.set_yticks(range(matrix.shape[0]), matrix.index)
        ax.set_xlabel("co-running with")
        ax.set_title(f"{title}\nmean {np.nanmean(values):.1f}, max {np.nanmax(values):.0f}")
        ax.grid(False)
    axes[0].set_ylabel("slowdown of")
    return fig
