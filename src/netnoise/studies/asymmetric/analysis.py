"""Seed 003's analysis: the model platform fitted to the measurements, both models'
errors on every measured link, and the tables set beside the paper's.

The model platform is fitted to the measurements as the paper fitted it to its
own (940 Mbit/s per NIC link, 9.4 Gbit/s backbone): the NIC rate is the rate
of one link alone at the MPI level, the backbone rate the configured ratio of
it.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from netnoise.studies.asymmetric import model as am
from netnoise.studies.asymmetric.cli import load_platform

# Columns of the paper's Table II (main testbed) set beside ours.
PUBLISHED_TABLE2 = [
    "n_trials",
    "steps",
    "pi_eps_pct",
    "eps_abs_pct",
    "eps_prime_abs_pct",
    "eps_dprime_abs_pct",
]


def fit_platform(
    links: pd.DataFrame, rack_nodes: Mapping[str, list[str]], testbed: Mapping[str, Any]
) -> dict[str, Any]:
    """The model platform (the CLI's PLATFORM.yaml) from the MPI property runs of one
    congestion control: the NIC rate is that of one link alone on a NIC, the backbone
    carries backbone_mbit / nic_mbit times as much (the paper's 940 Mbit/s and 9.4 Gbit/s);
    with backbone_mbit unknown (None: a cluster's), as much as the backbone runs moved
    together at most (all their links' bytes over the slowest link's time)."""
    alone = links[(links["experiment"] == "nic_unidirectional") & (links["links"] == 1)]
    if alone.empty:
        raise ValueError("no single-link NIC run (asymmetric.properties.nic_links needs 1)")
    nic_bps = float((8 * alone["bytes"] / alone["time_s"]).mean())
    if testbed["backbone_mbit"] is not None:
        backbone_bps = nic_bps * testbed["backbone_mbit"] / testbed["nic_mbit"]
    else:
        backbone = links[links["experiment"] == "backbone_unidirectional"]
        if backbone.empty:
            raise ValueError(
                "no backbone run to fit the backbone rate to (asymmetric.properties."
                "backbone_links is empty); give asymmetric.slurm.backbone_mbit"
            )
        together = backbone.groupby("trial").agg(bits=("bytes", "sum"), time_s=("time_s", "max"))
        backbone_bps = float((8 * together["bits"] / together["time_s"]).max())
    return {
        "racks": {f"rack{r}": list(nodes) for r, nodes in rack_nodes.items()},
        "nic_bps": nic_bps,
        "backbone_bps": backbone_bps,
    }


def load_platforms(
    congestion_controls: Sequence[str], paths: Sequence[str | os.PathLike[str]]
) -> dict[str, am.Platform]:
    """The fitted model platform (a PLATFORM.yaml) of every congestion control, read
    from ``paths`` in the same order."""
    return {cc: load_platform(path) for cc, path in zip(congestion_controls, paths, strict=True)}


def evaluate(links: pd.DataFrame, platforms: Mapping[str, Mapping[str, Any]]) -> pd.DataFrame:
    """ε of every measured link under both models, with the fitted platform of its
    congestion control; one row per link and model."""
    keep = [c for c in links.columns if c not in ("time_s", "ci95_s", "rate_mbit")]
    out = []
    # Trials are numbered within a family: each family is predicted on its own.
    for (_, congestion), group in links.groupby(["family", "congestion"], sort=True):
        measured = group.reset_index(drop=True)
        for model in am.MODELS:
            predicted = am.predict(platforms[congestion], measured[keep], model)
            out.append(
                am.errors(predicted, measured[["trial", "link", *am.PATTERN_COLUMNS, "time_s"]])
            )
    return pd.concat(out, ignore_index=True)


def table2(errors: pd.DataFrame, published: pd.DataFrame) -> pd.DataFrame:
    """Table II per congestion control and (|N|, d), the paper's main-testbed row beside."""
    random = errors[errors["family"] == "random"]
    ours = am.summary(random, by=["congestion", "nodes", "d"])
    paper = published[published["platform"] == "main testbed"]
    paper = paper[["nodes", "d", *PUBLISHED_TABLE2]].add_prefix("paper_")
    return ours.merge(
        paper, left_on=["nodes", "d"], right_on=["paper_nodes", "paper_d"], how="left"
    ).drop(columns=["paper_nodes", "paper_d"])


def within10(errors: pd.DataFrame, published: pd.DataFrame) -> pd.DataFrame:
    """Share of links within 10 % per d (all |N|, as Sec. 7.2 reports it) for both
    models, beside the paper's main-testbed and Grid5000 shares."""
    random = errors[errors["family"] == "random"]
    ours = am.summary(random, by=["congestion", "d"])[
        ["congestion", "d", "n_links", "n_patterns", "within10_pct", "fair_within10_pct"]
    ]
    paper = published.pivot_table(
        index="d", columns="platform", values=["asymmetric_pct", "fairness_pct"]
    )
    paper.columns = [
        f"paper_{'main' if p == 'main testbed' else 'grid5000'}_{m.split('_')[0]}_pct"
        for m, p in paper.columns
    ]
    return ours.merge(paper.reset_index(), on="d", how="left")


def property_rates(
    mpi: pd.DataFrame, tcp: pd.DataFrame, platforms: Mapping[str, Mapping[str, Any]]
) -> pd.DataFrame:
    """Fig. 4's data: per property trial, level and direction, the mean, min and max
    link rate, as measured and as both models give it, also as a share of one link
    alone (the paper's 940 Mbit/s) at the same level and congestion control, and
    ``asymmetry``: where the models differ, how far the measured links moved from
    the fairness model's rate towards the asymmetric model's (0 fairness, 1 asymmetric)."""
    frames = []
    nic_bps = {cc: am.as_platform(p).nic_bps for cc, p in platforms.items()}
    for level, frame in (("mpi", mpi[mpi["family"] == "properties"]), ("tcp", tcp)):
        for congestion, group in frame.groupby("congestion", sort=True):
            alone = group[(group["experiment"] == "nic_unidirectional") & (group["links"] == 1)]
            single = float(alone["rate_mbit"].mean())
            for trial, links in group.groupby("trial", sort=True):
                links = links.sort_values("link")
                model_rates = {
                    m: am.bandwidths(platforms[congestion], links[list(am.PATTERN_COLUMNS)], m)
                    / 1e6
                    for m in am.MODELS
                }
                for direction in sorted(links["direction"].unique()):
                    mask = (links["direction"] == direction).to_numpy()
                    rates = links.loc[mask, "rate_mbit"]
                    first = links.iloc[0]
                    frames.append(
                        {
                            "level": level,
                            "congestion": congestion,
                            "trial": trial,
                            "experiment": first["experiment"],
                            "links": first["links"],
                            "delta_in": first["delta_in"],
                            "delta_out": first["delta_out"],
                            "direction": direction,
                            "n": int(mask.sum()),
                            "rate_mean_mbit": rates.mean(),
                            "rate_min_mbit": rates.min(),
                            "rate_max_mbit": rates.max(),
                            "single_link_mbit": single,
                            "share_mean": rates.mean() / single,
                            "share_min": rates.min() / single,
                            "share_max": rates.max() / single,
                            **{
                                f"{m}_share": float(r[mask].mean()) * 1e6 / nic_bps[congestion]
                                for m, r in model_rates.items()
                            },
                        }
                    )
    table = pd.DataFrame(frames)
    # Where the models disagree: 0 where the link behaves as the fairness model
    # says, 1 where it is slowed as the asymmetric model says (the paper's finding).
    gap = table["fairness_share"] - table["asymmetric_share"]
    table["asymmetry"] = ((table["fairness_share"] - table["share_mean"]) / gap).where(
        gap.abs() > 1e-9
    )
    return table


def alltoallv_table(
    trials: pd.DataFrame, errors: pd.DataFrame, published: pd.DataFrame
) -> pd.DataFrame:
    """Sec. 7.3: the Alltoallv's measured execution time (slowest link of every
    iteration, mean) and both models' (the last predicted completion), with their
    errors, per congestion control and as published."""
    rows = []
    measured = trials[trials["family"] == "alltoallv"]
    for congestion, group in errors[errors["family"] == "alltoallv"].groupby("congestion"):
        meas = float(measured.loc[measured["congestion"] == congestion, "makespan_s"].iloc[0])
        row = {"source": "netnoise", "congestion": congestion, "measured_s": meas}
        for model in am.MODELS:
            pred = float(group.loc[group["model"] == model, "time_pred_s"].max())
            row[f"{model}_s"] = pred
            row[f"{model}_error_pct"] = 100 * (pred - meas) / meas
        rows.append(row)
    for record in published.itertuples(index=False):
        row = {"source": "paper", "congestion": "", "measured_s": record.measured_s}
        for model in am.MODELS:
            pred = getattr(record, f"{model}_s")
            row[f"{model}_s"] = pred
            row[f"{model}_error_pct"] = 100 * (pred - record.measured_s) / record.measured_s
        rows.append(row)
    return pd.DataFrame(rows)
