"""Seed 003's analysis: the model platform fitted to the measurements, both models'
errors on every measured link, and the tables set beside the paper's.

The model platform is fitted to the measurements as the paper fitted it to its
own (940 Mbit/s per NIC link, 9.4 Gbit/s backbone): the NIC rate is the rate
of one link alone at the MPI level, the backbone rate the configured ratio of
it.

How precise the measurements are (:func:`precision`), beside each share of
links within 10 %: the share a perfect model could reach given each link's
measured 95 % interval (the noise ceiling), the share of trials that
``p2p_concurrent`` stopped at its iteration cap rather than on precision,
how many round trips and how much queue a transfer lasts, and a bootstrap
interval of the share over the patterns.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats as st

from netnoise.studies.asymmetric import model as am
from netnoise.studies.asymmetric.files import load_platform

#: The tolerance of the paper's "within 10 %" (Sec. 7.2).
TOLERANCE = 0.1
#: Resamples of the patterns behind each bootstrap interval, and their seed.
BOOTSTRAP_RESAMPLES = 4000
BOOTSTRAP_SEED = 3

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


def within_share_ceiling(time_s, ci95_s, iterations, tolerance: float = TOLERANCE):
    """Per link, the probability that a perfect model's prediction lies within
    ``tolerance`` of the measured mean time: the measurement noise ceiling.

    A perfect model predicts the true mean ``T``; the measured mean ``M`` is
    ``N(T, se)`` with ``se`` the link's standard error (its 95 % half-width
    over the Student t quantile of its iterations, as :mod:`.tidy` computed
    it). ``|T − M| ≤ tolerance · M`` holds for ``T/(1+tol) ≤ M ≤ T/(1−tol)``,
    with probability ``Φ((T/(1−tol) − T)/se) − Φ((T/(1+tol) − T)/se)``; ``T``
    is estimated by the measured mean. The mean of this over the links is the
    share a perfect model is expected to reach (exactly what drawing every
    measured mean from ``N(T, se)`` and counting would converge to). A link
    without spread gets 1; one with fewer than two iterations NaN.
    """
    time_s, ci95_s, iterations = (np.asarray(v, dtype=float) for v in (time_s, ci95_s, iterations))
    with np.errstate(invalid="ignore", divide="ignore"):
        se = ci95_s / st.t.ppf(0.975, iterations - 1)
        upper = st.norm.cdf((time_s / (1 - tolerance) - time_s) / se)
        lower = st.norm.cdf((time_s / (1 + tolerance) - time_s) / se)
    share = np.where(se > 0, upper - lower, 1.0)
    return np.where((iterations >= 2) & np.isfinite(ci95_s), share, np.nan)


def stopped_by_cap(links: pd.DataFrame, cap: int, ci_width: float) -> pd.Series:
    """Per trial (family, congestion, trial), whether ``p2p_concurrent`` stopped at its
    iteration cap: it ran ``cap`` iterations and some link's 95 % interval was still
    wider than ``ci_width`` of its mean (a trial whose last allowed iteration
    brought it within reach stopped on precision)."""
    wide = 2 * links["ci95_s"] > ci_width * links["time_s"]
    capped = links["iterations"] >= cap
    frame = links.assign(_capped=capped & wide)
    return frame.groupby(["family", "congestion", "trial"])["_capped"].any()


def lone_flow_rtt_s(tcp: pd.DataFrame) -> pd.Series:
    """Per congestion control, the round-trip time iperf3 measured on one link alone
    on a NIC (its own queue included), in seconds."""
    alone = tcp[(tcp["experiment"] == "nic_unidirectional") & (tcp["links"] == 1)]
    return alone.groupby("congestion")["mean_rtt_us"].mean() / 1e6


def bootstrap_share(
    within: pd.Series, patterns: pd.Series, resamples: int = BOOTSTRAP_RESAMPLES, seed: int = 0
) -> tuple[float, float]:
    """Percentile 95 % interval (%) of the share of ``within`` links, resampling the
    patterns (with all their links) with replacement."""
    counts = pd.DataFrame({"k": within.astype(float), "p": patterns.to_numpy()}).groupby("p")["k"]
    hits, links = counts.sum().to_numpy(), counts.count().to_numpy()
    if len(links) == 0:
        return np.nan, np.nan
    draws = np.random.default_rng(seed).integers(0, len(links), size=(resamples, len(links)))
    shares = 100 * hits[draws].sum(axis=1) / links[draws].sum(axis=1)
    low, high = np.percentile(shares, [2.5, 97.5])
    return float(low), float(high)


def precision(
    errors: pd.DataFrame,
    links: pd.DataFrame,
    tcp: pd.DataFrame,
    iterations: Mapping[str, Any],
    testbed: Mapping[str, Any],
    by: Sequence[str],
) -> pd.DataFrame:
    """How far the random patterns' shares within 10 % can be trusted, per ``by`` group.

    Columns: ``ci95_median_pct`` (median 95 % half-width of a link's mean time,
    % of it), ``ceiling_pct`` (the share a perfect model could reach,
    :func:`within_share_ceiling`), ``n_trials`` and ``cap_stopped_pct``
    (trials stopped by the iteration cap ``iterations["max"]``, not by the
    ``ci_width`` rule, :func:`stopped_by_cap`), ``duration_rtts_median`` and
    ``duration_rtts_min`` (link times in round trips of a lone flow,
    :func:`lone_flow_rtt_s`), ``queue_share_median`` (the NIC queue's drain
    time, ``queue_bytes`` at ``nic_mbit``, over the link time), the bootstrap
    95 % intervals over the patterns of both models' shares
    (``within10_low_pct`` … ``fair_within10_high_pct``), and, on the links
    where the two models' predictions differ by more than 10 %,
    ``n_disagree`` with each model's share within 10 % there, and
    ``max_margin_pct``: the largest margin by which either model's share can beat
    the other's, the share of links whose two predictions differ at all (a mean
    over the patterns, as :mod:`.headline` averages the margin), which no
    measurement can exceed.
    """
    random = errors[errors["family"] == "random"]
    keys = ["family", "congestion", "trial", "link"]
    measured = links[[*keys, "ci95_s"]]
    asym = random[random["model"] == "asymmetric"].merge(
        measured, on=keys, how="left", validate="one_to_one"
    )
    fair = random[random["model"] == "fairness"].set_index(keys)
    asym["fair_within"] = fair["within_10pct"].reindex(asym.set_index(keys).index).to_numpy()
    asym["fair_pred_s"] = fair["time_pred_s"].reindex(asym.set_index(keys).index).to_numpy()
    capped = stopped_by_cap(links, int(iterations["max"]), float(iterations["ci_width"]))
    rtt = lone_flow_rtt_s(tcp)
    queue_s = (
        8 * testbed["queue_bytes"] / (testbed["nic_mbit"] * 1e6)
        if testbed.get("queue_bytes")
        else np.nan
    )
    rows = []
    for setting, group in asym.groupby(list(by), sort=True):
        key = setting if isinstance(setting, tuple) else (setting,)
        trials = group[["family", "congestion", "trial"]].drop_duplicates()
        stopped = capped.reindex(pd.MultiIndex.from_frame(trials))
        ceiling = within_share_ceiling(group["time_meas_s"], group["ci95_s"], group["iterations"])
        durations = group["time_meas_s"] / group["congestion"].map(rtt)
        predictions = group[["time_pred_s", "fair_pred_s"]]
        disagree = predictions.max(axis=1) > (1 + TOLERANCE) * predictions.min(axis=1)
        # Both models put a link with one prediction on the same side of 10 %.
        differ = predictions.max(axis=1) > (1 + 1e-9) * predictions.min(axis=1)
        low, high = bootstrap_share(group["within_10pct"], group["trial"], seed=BOOTSTRAP_SEED)
        fair_low, fair_high = bootstrap_share(
            group["fair_within"], group["trial"], seed=BOOTSTRAP_SEED
        )
        rows.append(
            {
                **dict(zip(by, key, strict=True)),
                "ci95_median_pct": 100 * float((group["ci95_s"] / group["time_meas_s"]).median()),
                "ceiling_pct": 100 * float(np.nanmean(ceiling)),
                "n_trials": len(trials),
                "cap_stopped_pct": 100 * float(stopped.mean()),
                "duration_rtts_median": float(durations.median()),
                "duration_rtts_min": float(durations.min()),
                "queue_share_median": float((queue_s / group["time_meas_s"]).median()),
                "within10_low_pct": low,
                "within10_high_pct": high,
                "fair_within10_low_pct": fair_low,
                "fair_within10_high_pct": fair_high,
                "n_disagree": int(disagree.sum()),
                "disagree_within10_pct": 100 * float(group.loc[disagree, "within_10pct"].mean())
                if disagree.any()
                else np.nan,
                "disagree_fair_within10_pct": 100
                * float(group.loc[disagree, "fair_within"].astype(float).mean())
                if disagree.any()
                else np.nan,
                "max_margin_pct": 100 * float(differ.groupby(group["trial"]).mean().mean()),
            }
        )
    return pd.DataFrame(rows)


def table2(errors: pd.DataFrame, published: pd.DataFrame, quality: pd.DataFrame) -> pd.DataFrame:
    """Table II per congestion control and (|N|, d), with the measurement's precision
    (:func:`precision` by congestion, nodes and d) beside each share, and the paper's
    main-testbed row."""
    random = errors[errors["family"] == "random"]
    ours = am.summary(random, by=["congestion", "nodes", "d"])
    ours = ours.merge(quality, on=["congestion", "nodes", "d"], how="left")
    paper = published[published["platform"] == "main testbed"]
    paper = paper[["nodes", "d", *PUBLISHED_TABLE2]].add_prefix("paper_")
    return ours.merge(
        paper, left_on=["nodes", "d"], right_on=["paper_nodes", "paper_d"], how="left"
    ).drop(columns=["paper_nodes", "paper_d"])


def within10(errors: pd.DataFrame, published: pd.DataFrame, quality: pd.DataFrame) -> pd.DataFrame:
    """Share of links within 10 % per d (all |N|, as Sec. 7.2 reports it) for both
    models, with the measurement's precision beside (:func:`precision` by congestion
    and d: noise ceiling, trials stopped by the cap, durations in round trips,
    bootstrap intervals, the links where the models disagree), and the paper's
    main-testbed and Grid5000 shares."""
    random = errors[errors["family"] == "random"]
    ours = am.summary(random, by=["congestion", "d"])[
        ["congestion", "d", "n_links", "n_patterns", "within10_pct", "fair_within10_pct"]
    ]
    ours = ours.merge(quality, on=["congestion", "d"], how="left")
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
