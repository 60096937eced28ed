"""Seed 003 end to end: link patterns on a two-rack testbed, their measurement, the models.

The study runs on its own emulated cluster (``asymmetric.testbed``): racks of
nodes joined through a core switch by uplinks (the backbone), NIC:backbone
1:10 as the paper's 1 GbE / 10 GbE. Every *pattern* (a trial) is a set of
links ``src -> dst`` of ``bytes`` that start together; each link has its own
sender and receiver process on its nodes (|P| = 2|E|, Sec. 4.1), so links
between the same two nodes are separate TCP connections, as in the paper.

Families of patterns:

- ``properties`` (Sec. 5, Fig. 4): unidirectional fairness on one NIC (all
  links from node a to node b of rack 1) and on the backbone (link i from the
  i-th node of rack 1 to the i-th node of rack 2), and bidirectional sharing:
  δ⁺ links into and δ⁻ links out of node a's NIC (between a and b, the paper's
  swap of senders and receivers), or of rack 1 through the backbone.
- ``random`` (Sec. 7.1): |N| nodes, the same number from each rack; each node
  d times picks a destination and keeps the link with probability 1/2.
- ``alltoallv`` (Sec. 7.3, Fig. 8): twelve transfers among four nodes of rack 1.

Message sizes are given in the paper's MB and scaled by nic_mbit / 940 so
that a transfer takes as long on the testbed as on the paper's 940 Mbit/s
links (10 MB: 85 ms): the dynamics that decide the error (slow start,
queueing, the rendezvous handshake) then weigh the same against the transfer.

Measured link times come from ``p2p_concurrent`` (MPI level: mean over its
iterations) and rates from concurrent ``iperf3`` transfers (TCP level). The
model platform is fitted to the measurements as the paper fitted it to its
own (940 Mbit/s per NIC link, 9.4 Gbit/s backbone): the NIC rate is the rate
of one link alone at the MPI level, the backbone rate the configured ratio of
it.
"""

from __future__ import annotations

import copy
import os
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats as st

from netnoise.io import read_benchmark
from netnoise.platform import Platform
from netnoise.run import run_benchmark
from netnoise.studies.asymmetric import model as am
from netnoise.testbed.fabric import Testbed, TestbedSpec
from netnoise.testbed.validation import iperf3_links

FAMILIES = ("properties", "random", "alltoallv")
EXPERIMENTS = (
    "nic_unidirectional",
    "backbone_unidirectional",
    "nic_bidirectional",
    "backbone_bidirectional",
)
# Rate (Mbit/s) of one TCP link on the paper's 1 GbE NICs (Sec. 5.1); sizes in
# the paper's MB are scaled by nic_mbit / PAPER_LINK_MBIT.
PAPER_LINK_MBIT = am.PAPER_NIC_BPS / 1e6
# Keys of asymmetric.testbed that replace those of platform.testbed.
TESTBED_KEYS = ("prefix", "nodes", "racks", "nic_mbit", "backbone_mbit", "queue_bytes")
TESTBED_KEYS += ("btl_tcp_links",)
# Columns of the paper's Table II (main testbed) set beside ours.
PUBLISHED_TABLE2 = [
    "n_trials",
    "steps",
    "pi_eps_pct",
    "eps_abs_pct",
    "eps_prime_abs_pct",
    "eps_dprime_abs_pct",
]
PATTERN_COLUMNS = [
    "trial",
    "link",
    "src",
    "dst",
    "bytes",
    "experiment",
    "direction",
    "links",
    "delta_in",
    "delta_out",
    "nodes",
    "d",
    "pattern",
]


# --------------------------------------------------------------------------- testbed


def study_prefix(platform: Mapping[str, Any], study: Mapping[str, Any]) -> str:
    """The study testbed's prefix: its own, or the main testbed's with ``r`` (racks)."""
    return study["testbed"]["prefix"] or f"{platform['testbed']['prefix']}r"


def study_platform(
    platform: Mapping[str, Any], study: Mapping[str, Any], congestion: str | None = None
) -> dict[str, Any]:
    """The ``platform`` config of the study's testbed: platform.testbed with the keys of
    asymmetric.testbed replaced, its own prefix, and the TCP congestion control of the run."""
    merged = copy.deepcopy(dict(platform))
    testbed = dict(merged["testbed"])
    testbed.update({k: study["testbed"][k] for k in TESTBED_KEYS})
    testbed["prefix"] = study_prefix(platform, study)
    if congestion is not None:
        testbed["tcp_congestion"] = congestion
    merged["testbed"] = testbed
    return merged


def racks(testbed: Mapping[str, Any]) -> dict[str, list[str]]:
    """Rack number (as text) -> node names of a testbed config section, in order."""
    spec = TestbedSpec.from_config(dict(testbed))
    out: dict[str, list[str]] = {}
    for node in spec.node_list():
        out.setdefault(str(node.rack), []).append(node.name)
    return out


def paper_bytes(mb: float, nic_mbit: float) -> int:
    """Bytes that take as long at ``nic_mbit`` as ``mb`` of the paper's MB at 940 Mbit/s."""
    return round(mb * am.MB * nic_mbit / PAPER_LINK_MBIT)


# --------------------------------------------------------------------------- patterns


def _trial(rows: Sequence[tuple[str, str, int, str]], **descriptors: Any) -> pd.DataFrame:
    frame = pd.DataFrame(rows, columns=["src", "dst", "bytes", "direction"])
    frame.insert(0, "link", range(len(frame)))
    for key, value in descriptors.items():
        frame[key] = value
    return frame


def _number(trials: list[pd.DataFrame]) -> pd.DataFrame:
    for i, frame in enumerate(trials):
        frame.insert(0, "trial", i)
    out = pd.concat(trials, ignore_index=True)
    return out.reindex(columns=PATTERN_COLUMNS)


def property_patterns(
    study: Mapping[str, Any], rack_nodes: Mapping[str, list[str]]
) -> pd.DataFrame:
    """The Fig. 4 experiments, one trial each (see the module docstring)."""
    props = study["properties"]
    size = paper_bytes(props["message_mb"], study["testbed"]["nic_mbit"])
    first, second = rack_nodes["1"], rack_nodes["2"]
    a, b = first[0], first[1]
    trials = []
    for n in props["nic_links"]:
        trials.append(_trial([(a, b, size, "out")] * n, experiment="nic_unidirectional", links=n))
    for n in props["backbone_links"]:
        links = [(first[i], second[i], size, "out") for i in range(n)]
        trials.append(_trial(links, experiment="backbone_unidirectional", links=n))
    for d_in, d_out in props["nic_degrees"]:
        links = [(b, a, size, "in")] * d_in + [(a, b, size, "out")] * d_out
        trials.append(
            _trial(
                links,
                experiment="nic_bidirectional",
                links=d_in + d_out,
                delta_in=d_in,
                delta_out=d_out,
            )
        )
    for d_in, d_out in props["backbone_degrees"]:
        links = [(second[i], first[i], size, "in") for i in range(d_in)]
        links += [(first[i], second[i], size, "out") for i in range(d_out)]
        trials.append(
            _trial(
                links,
                experiment="backbone_bidirectional",
                links=d_in + d_out,
                delta_in=d_in,
                delta_out=d_out,
            )
        )
    return _number(trials)


def random_patterns(study: Mapping[str, Any], rack_nodes: Mapping[str, list[str]]) -> pd.DataFrame:
    """``patterns`` random patterns (Sec. 7.1) for every (|N|, d) of the grid.

    |N| nodes, the same number from every rack (the first ones); every pattern
    draws from its own generator seeded by (seed, |N|, d, index), so changing
    the grid leaves the other patterns as they were. An empty draw is drawn again.
    """
    rand = study["random"]
    sizes = [paper_bytes(mb, study["testbed"]["nic_mbit"]) for mb in rand["message_mb"]]
    trials = []
    for n in rand["nodes"]:
        per_rack = n // len(rack_nodes)
        nodes = [name for names in rack_nodes.values() for name in names[:per_rack]]
        for d in rand["d"]:
            for index in range(rand["patterns"]):
                rng = np.random.default_rng([rand["seed"], n, d, index])
                pattern = am.random_pattern(nodes, d, sizes, rng)
                while pattern.empty:
                    pattern = am.random_pattern(nodes, d, sizes, rng)
                links = [(s, t, b, "") for s, t, b in pattern.itertuples(index=False)]
                trials.append(
                    _trial(
                        links, experiment="random", links=len(links), nodes=n, d=d, pattern=index
                    )
                )
    return _number(trials)


def alltoallv_pattern(
    study: Mapping[str, Any], rack_nodes: Mapping[str, list[str]]
) -> pd.DataFrame:
    """Sec. 7.3's Alltoallv on the first four nodes of rack 1 (sizes: see
    :data:`netnoise.studies.asymmetric.model.ALLTOALLV_RECONSTRUCTED_MB`)."""
    case = am.alltoallv_case()
    names = dict(zip(case.platform.racks["rack"], rack_nodes["1"], strict=False))
    nic = study["testbed"]["nic_mbit"]
    links = [
        (names[s], names[t], paper_bytes(b / am.MB, nic), "")
        for s, t, b in case.pattern.itertuples(index=False)
    ]
    return _number([_trial(links, experiment="alltoallv", links=len(links), nodes=4)])


def patterns(family: str, study: Mapping[str, Any], rack_nodes: Mapping[str, list[str]]):
    makers = {
        "properties": property_patterns,
        "random": random_patterns,
        "alltoallv": alltoallv_pattern,
    }
    return makers[family](study, rack_nodes)


def trial_count(family: str, study: Mapping[str, Any]) -> int:
    """Trials of a family, known from the config alone (the workflow's DAG needs it)."""
    if family == "properties":
        props = study["properties"]
        keys = ("nic_links", "backbone_links", "nic_degrees", "backbone_degrees")
        return sum(len(props[k]) for k in keys)
    if family == "random":
        rand = study["random"]
        return len(rand["nodes"]) * len(rand["d"]) * rand["patterns"]
    if family == "alltoallv":
        return 1
    raise ValueError(f"unknown pattern family {family!r}; families: {', '.join(FAMILIES)}")


# --------------------------------------------------------------------------- measurement


def rank_layout(links: pd.DataFrame) -> tuple[pd.DataFrame, list[str]]:
    """Link i's sender is rank 2i on its src node, its receiver rank 2i+1 on its dst node.

    Returns the ``p2p_concurrent`` pattern (ranks) and the node of every rank."""
    n = len(links)
    ranks = pd.DataFrame(
        {"src": 2 * np.arange(n), "dst": 2 * np.arange(n) + 1, "bytes": links["bytes"].to_numpy()}
    )
    nodes = [node for pair in zip(links["src"], links["dst"], strict=True) for node in pair]
    return ranks, nodes


def measure_mpi(
    platform: Platform,
    program: str | os.PathLike[str],
    trials: pd.DataFrame,
    outputs: Sequence[str | os.PathLike[str]],
    *,
    log: str | os.PathLike[str],
    timeout_s: float,
    iterations: Mapping[str, Any],
    config: dict[str, Any],
    inputs: dict[str, str | os.PathLike[str]],
) -> None:
    """Run ``p2p_concurrent`` once per trial (in trial order) into ``outputs``."""
    ids = sorted(trials["trial"].unique())
    if len(ids) != len(outputs):
        raise ValueError(f"{len(ids)} trials but {len(outputs)} outputs")
    with tempfile.TemporaryDirectory(prefix="netnoise-patterns-") as scratch:
        for trial, output in zip(ids, outputs, strict=True):
            links = trials[trials["trial"] == trial].sort_values("link")
            ranks, nodes = rank_layout(links)
            pattern_file = Path(scratch) / f"trial{trial}.csv"
            ranks.to_csv(pattern_file, index=False)
            argv = [
                str(program),
                "--pattern",
                str(pattern_file),
                "--min-iterations",
                str(iterations["min"]),
                "--max-iterations",
                str(iterations["max"]),
                "--ci-width",
                str(iterations["ci_width"]),
            ]
            run_benchmark(
                platform,
                argv,
                ranks=len(nodes),
                output=output,
                log=log,
                timeout_s=timeout_s,
                config={**config, "trial": int(trial)},
                inputs=inputs,
                nodes=nodes,
            )


def measure_tcp(
    testbed: Testbed, trials: pd.DataFrame, seconds: float, congestion: str
) -> pd.DataFrame:
    """Every trial's links as concurrent iperf3 transfers: one row per link."""
    rows = []
    for trial, links in trials.groupby("trial", sort=True):
        links = links.sort_values("link")
        pairs = list(zip(links["src"], links["dst"], strict=True))
        results = iperf3_links(testbed, pairs, seconds, congestion)
        for (link, src, dst), result in zip(
            links[["link", "src", "dst"]].itertuples(index=False), results, strict=True
        ):
            rows.append({"trial": trial, "link": link, "src": src, "dst": dst, **result})
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------- tidy


def tidy_mpi(
    paths: Sequence[str | os.PathLike[str]], trials: pd.DataFrame, family: str, congestion: str
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Per link: mean time over the iterations, its 95 % interval and the rate; per trial:
    the pattern's completion time (slowest link of each iteration, mean over iterations).

    ``paths`` are the ``p2p_concurrent`` results of the trials in trial order."""
    ids = sorted(trials["trial"].unique())
    if len(ids) != len(paths):
        raise ValueError(f"{len(ids)} trials but {len(paths)} result files")
    link_frames, trial_rows = [], []
    for trial, path in zip(ids, paths, strict=True):
        data = read_benchmark(path).data
        links = trials[trials["trial"] == trial].sort_values("link").reset_index(drop=True)
        stats = data.groupby("link")["time_s"].agg(["mean", "std", "count"])
        if list(stats.index) != list(links["link"]):
            raise ValueError(f"{path}: links {list(stats.index)}, the pattern has {len(links)}")
        sizes = data.groupby("link")["size_bytes"].first().to_numpy()
        if (sizes != links["bytes"].to_numpy()).any():
            raise ValueError(f"{path}: message sizes differ from the pattern of trial {trial}")
        count = stats["count"].to_numpy()
        half = st.t.ppf(0.975, np.maximum(count - 1, 1)) * stats["std"].to_numpy() / np.sqrt(count)
        frame = links.assign(
            family=family,
            congestion=congestion,
            time_s=stats["mean"].to_numpy(),
            ci95_s=half,
            iterations=count,
        )
        frame["rate_mbit"] = 8 * frame["bytes"] / frame["time_s"] / 1e6
        link_frames.append(frame)
        makespan = data.groupby("iteration")["time_s"].max()
        trial_rows.append(
            {
                "family": family,
                "congestion": congestion,
                "trial": trial,
                "experiment": links["experiment"].iloc[0],
                "iterations": len(makespan),
                "makespan_s": makespan.mean(),
                "makespan_ci95_s": float(
                    st.t.ppf(0.975, max(len(makespan) - 1, 1))
                    * makespan.std()
                    / np.sqrt(len(makespan))
                ),
            }
        )
    return pd.concat(link_frames, ignore_index=True), pd.DataFrame(trial_rows)


def tidy_tcp(frames: Mapping[str, pd.DataFrame], trials: pd.DataFrame) -> pd.DataFrame:
    """iperf3 rows of every congestion control joined with their pattern's descriptors."""
    out = []
    for congestion, frame in frames.items():
        joined = trials.merge(
            frame[["trial", "link", "mbit", "retransmits", "mean_rtt_us"]],
            on=["trial", "link"],
            how="inner",
            validate="one_to_one",
        )
        if len(joined) != len(trials):
            raise ValueError(f"iperf3 ({congestion}): {len(joined)} of {len(trials)} links")
        out.append(joined.rename(columns={"mbit": "rate_mbit"}).assign(congestion=congestion))
    return pd.concat(out, ignore_index=True)


# --------------------------------------------------------------------------- models


def fit_platform(
    links: pd.DataFrame, rack_nodes: Mapping[str, list[str]], testbed: Mapping[str, Any]
) -> dict[str, Any]:
    """The model platform (the CLI's PLATFORM.yaml) from the MPI property runs of one
    congestion control: the NIC rate is that of one link alone on a NIC, the backbone
    carries backbone_mbit / nic_mbit times as much (the paper's 940 Mbit/s and 9.4 Gbit/s)."""
    alone = links[(links["experiment"] == "nic_unidirectional") & (links["links"] == 1)]
    if alone.empty:
        raise ValueError("no single-link NIC run (asymmetric.properties.nic_links needs 1)")
    nic_bps = float((8 * alone["bytes"] / alone["time_s"]).mean())
    ratio = testbed["backbone_mbit"] / testbed["nic_mbit"]
    return {
        "racks": {f"rack{r}": list(nodes) for r, nodes in rack_nodes.items()},
        "nic_bps": nic_bps,
        "backbone_bps": nic_bps * ratio,
    }


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
