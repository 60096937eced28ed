"""Seed 001 end to end: summaries of simulated runs and of the benchmark."""

from __future__ import annotations

import pandas as pd

from netnoise.sim.congestion import summarize
from netnoise.sim.topology import describe


def point_name(figure: str, spec: str, ratio: float) -> str:
    """File-name-safe id of one simulated point."""
    safe = spec.replace(":", "-").replace(",", ".").replace("/", "_")
    return f"{figure}__{safe}__r{ratio:g}"


def dimensions(spec: str) -> int | None:
    """Number of torus dimensions of a SPEC, None for other topologies."""
    return len(spec.split(":", 1)[1].split("x")) if spec.startswith("torus:") else None


def simulation_summary(runs: list[pd.DataFrame], figures: list[str]) -> pd.DataFrame:
    """One row per simulated point: figure, topology, ratio, endpoints and the slowdown summary."""
    rows = []
    for frame, figure in zip(runs, figures, strict=True):
        first = frame.iloc[0]
        rows.append(
            {
                "figure": figure,
                "topology": first["topology"],
                "dimensions": dimensions(first["topology"]),
                "collective": first["collective"],
                "ratio": first["ratio"],
                "endpoints": first["endpoints"],
                "processes": first["processes"],
                **{f"slowdown_{k}": v for k, v in summarize(frame["slowdown"]).items()},
                "overhead_mean": frame["overhead"].mean(),
            }
        )
    return pd.DataFrame(rows).sort_values(["figure", "dimensions", "endpoints", "ratio"])


def topology_table(runs: list[pd.DataFrame], published: pd.DataFrame) -> pd.DataFrame:
    """Endpoints, switches and cables of every simulated topology beside the paper's counts.

    ``published`` has ``layout, endpoints, switches, spec, source``; rows are matched on
    the SPEC without its optional parallel-cable part (which the paper's counts ignore).
    """
    specs = sorted({frame["topology"].iloc[0] for frame in runs})
    rows = []
    for spec in specs:
        counts = describe(spec)
        base = "/".join(spec.split("/")[:2]) if spec.startswith("xgft:") else spec
        paper = published[published["spec"] == base]
        rows.append(
            {
                "topology": spec,
                **counts,
                "paper_layout": paper["layout"].iloc[0] if len(paper) else "",
                "paper_endpoints": paper["endpoints"].iloc[0] if len(paper) else None,
                "paper_switches": paper["switches"].iloc[0] if len(paper) else None,
            }
        )
    return pd.DataFrame(rows)


def benchmark_slowdown(tidy: pd.DataFrame) -> pd.DataFrame:
    """Mean perturbed and unperturbed collective time per point and the relative slowdown
    (perturbed mean / unperturbed mean, Fig. 4 and 5), with the Mann-Whitney p-value of
    the two samples (Fig. 3's notches ask the same question)."""
    from scipy.stats import mannwhitneyu

    rows = []
    keys = ["collective", "ratio", "allocation"]
    for key, group in tidy.groupby(keys):
        perturbed = group.loc[group["perturbed"] == 1, "time_us"]
        quiet = group.loc[group["perturbed"] == 0, "time_us"]
        rows.append(
            {
                **dict(zip(keys, key, strict=True)),
                "samples": len(perturbed),
                "perturbed_mean_us": perturbed.mean(),
                "unperturbed_mean_us": quiet.mean(),
                "perturbed_median_us": perturbed.median(),
                "unperturbed_median_us": quiet.median(),
                "slowdown_pct": 100 * perturbed.mean() / quiet.mean(),
                "mann_whitney_p": mannwhitneyu(perturbed, quiet).pvalue,
            }
        )
    return pd.DataFrame(rows)
