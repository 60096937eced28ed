"""Seed 001 figures: simulated slowdown on fat-trees (Fig. 13) and tori (Fig. 15, 16)."""

from __future__ import annotations

import matplotlib.pyplot as plt
import pandas as pd


def _band(ax, rows: pd.DataFrame, x: str, label: str) -> None:
    rows = rows.sort_values(x)
    (line,) = ax.plot(rows[x], rows["slowdown_mean"], marker="o", label=label)
    ax.fill_between(
        rows[x], rows["slowdown_p2.5"], rows["slowdown_p97.5"], color=line.get_color(), alpha=0.15
    )


def fat_tree_size(summary: pd.DataFrame) -> plt.Figure:
    """Fig. 13: slowdown vs fat-tree size at perturbation ratio 1/2."""
    fig, ax = plt.subplots()
    _band(ax, summary[summary["figure"] == "fat_tree_size"], "endpoints", "XGFT, ratio 1/2")
    ax.set_xscale("log")
    ax.set_xlabel("endpoints")
    ax.set_ylabel("slowdown (perturbed / unperturbed)")
    ax.set_title("Network noise on fat-trees (mean; band: 95 % of runs)")
    ax.legend()
    return fig


def torus_ratio(summary: pd.DataFrame) -> plt.Figure:
    """Fig. 15: slowdown vs perturbation ratio on a 2-D and a 3-D torus."""
    fig, ax = plt.subplots()
    rows = summary[summary["figure"] == "torus_ratio"]
    for dims, group in rows.groupby("dimensions"):
        endpoints = int(group["endpoints"].iloc[0])
        _band(ax, group, "ratio", f"{dims:.0f}-D torus, {endpoints} endpoints")
    ax.set_xlabel("perturbation ratio")
    ax.set_ylabel("slowdown (perturbed / unperturbed)")
    ax.set_title("Network noise on tori (paper: up to 12x, 3-D less affected)")
    ax.legend()
    return fig


def torus_size(summary: pd.DataFrame) -> plt.Figure:
    """Fig. 16: slowdown vs torus size at ratio 1/2, 2-D and 3-D."""
    fig, ax = plt.subplots()
    rows = summary[summary["figure"] == "torus_size"]
    for dims, group in rows.groupby("dimensions"):
        _band(ax, group, "endpoints", f"{dims:.0f}-D torus")
    ax.set_xscale("log")
    ax.set_xlabel("endpoints")
    ax.set_ylabel("slowdown (perturbed / unperturbed)")
    ax.set_title("Network noise vs torus size, ratio 1/2")
    ax.legend()
    return fig
