"""Study 100's figure: every canary's CIF per congestor setting."""

from __future__ import annotations

import matplotlib.figure
import numpy as np
import pandas as pd
from matplotlib import pyplot as plt
from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

from netnoise.figures import place_legends
from netnoise.studies.characterise.cif import CANARIES, STATISTICS

LABELS = {"average": "average", "p99": "99th percentile"}


def fig_cif(cif: pd.DataFrame) -> matplotlib.figure.Figure:
    """One panel per statistic: a point per canary and congestor setting, its
    interval over rounds as the error bar, on a log scale (a CIF and its
    inverse equally far from 1), and CIF 1 (no impact) drawn."""
    congestors = list(dict.fromkeys(cif["congestor"]))
    canaries = [c for c in CANARIES if c in set(cif["canary"])]
    fig, axes = plt.subplots(1, len(STATISTICS), figsize=(9, 3.6), sharey=True)
    spacing = 0.6 / max(len(congestors), 1)
    for ax, statistic in zip(axes, STATISTICS, strict=True):
        rows = cif[cif["statistic"] == statistic].set_index(["congestor", "canary"])
        for i, congestor in enumerate(congestors):
            at = [j for j, c in enumerate(canaries) if (congestor, c) in rows.index]
            picked = [rows.loc[(congestor, canaries[j])] for j in at]
            x = np.asarray(at) + (i - (len(congestors) - 1) / 2) * spacing
            values = np.array([row["cif"] for row in picked])
            errors = np.array(
                [
                    [row["cif"] - row["cif_ci_low"], row["cif_ci_high"] - row["cif"]]
                    for row in picked
                ]
            ).T
            ax.errorbar(
                x, values, yerr=errors, fmt="o", capsize=3, label=f"congestors: {congestor}"
            )
        ax.axhline(1, color="0.3", linewidth=0.8, linestyle="--", label="no impact (CIF 1)")
        ax.set_xticks(np.arange(len(canaries)), canaries)
        ax.set_title(f"CIF, {LABELS[statistic]}")
        ax.set_yscale("log")
        ax.yaxis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))
        ax.yaxis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:g}"))
        ax.yaxis.set_minor_formatter(NullFormatter())
    axes[0].set_ylabel("congested / isolated (above 1: worse)")
    axes[-1].legend()
    place_legends(fig)
    return fig
