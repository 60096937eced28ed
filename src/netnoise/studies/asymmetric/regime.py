"""Where seed 003's asymmetric property lives: sweeps of the ns-3 tree.

The property (δ⁺ transfers into a NIC and one out of it, the outgoing one no
faster than each incoming one) needs windows that stay fixed and a queue that
holds them (docs/asymmetric.md). The sweeps measure where it holds, in ns-3
whatever ``asymmetric.network`` is, around the study's own tree
(``asymmetric.ns3``) and message (``asymmetric.properties.message_mb``):

- ``queue_window``: every queue depth of ``regime.queues`` with every window of
  ``regime.socket_buffer_bytes``, on the NIC experiment (``regime.nic_degree``);
- ``transfer_length``: every message of ``regime.message_mb``, on the NIC
  experiment;
- ``backbone_ratio``: every backbone rate of ``regime.backbone_ratios`` times
  the NIC's, on the backbone experiment (``regime.backbone_degree``).

A point runs two trials: one link alone on a NIC, the rate the shares are
taken against and the model platform is fitted to, and the experiment. Its
``asymmetry`` is the outgoing links' move from the fairness model's rate
(0) towards the asymmetric model's (1), as in the properties table, with the
interval the links' 95 % intervals give it.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from netnoise.studies.asymmetric import analysis, ns3, patterns
from netnoise.studies.asymmetric.tidy import tidy_mpi

SWEEPS = ("queue_window", "transfer_length", "backbone_ratio")
#: Trials of every point: the link alone, then the experiment.
TRIALS = 2
#: Links a path crosses one way, by experiment: host to ToR to host, or up
#: through both ToRs and the core.
_PATH_LINKS = {
    "nic_bidirectional": ("nic", "nic"),
    "backbone_bidirectional": ("nic", "backbone", "backbone", "nic"),
}


def points(study: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Every point of the sweeps, in order: its name (``p00``...), sweep, experiment,
    (δ⁺, δ⁻), message (paper MB) and ns-3 tree (``asymmetric.ns3`` with the point's
    changes)."""
    regime, base = study["regime"], study["ns3"]
    message = study["properties"]["message_mb"]
    nic = ("nic_bidirectional", regime["nic_degree"])
    backbone = ("backbone_bidirectional", regime["backbone_degree"])
    planned = [
        ("queue_window", nic, message, {"queue": queue, "socket_buffer_bytes": window})
        for queue in regime["queues"]
        for window in regime["socket_buffer_bytes"]
    ]
    planned += [("transfer_length", nic, mb, {}) for mb in regime["message_mb"]]
    planned += [
        ("backbone_ratio", backbone, message, {"backbone_mbit": base["nic_mbit"] * ratio})
        for ratio in regime["backbone_ratios"]
    ]
    return [
        {
            "point": f"p{i:02d}",
            "sweep": sweep,
            "experiment": experiment,
            "delta_in": degree[0],
            "delta_out": degree[1],
            "message_mb": mb,
            "ns3": {**base, **changes},
        }
        for i, (sweep, (experiment, degree), mb, changes) in enumerate(planned)
    ]


def point_patterns(point: Mapping[str, Any]) -> pd.DataFrame:
    """The point's two trials on its tree: the link alone, then the experiment."""
    tree = point["ns3"]
    degree = [[point["delta_in"], point["delta_out"]]]
    nic = point["experiment"] == "nic_bidirectional"
    experiments = {
        "testbed": {"nic_mbit": tree["nic_mbit"]},
        "properties": {
            "message_mb": point["message_mb"],
            "nic_links": [1],
            "backbone_links": [],
            "nic_degrees": degree if nic else [],
            "backbone_degrees": [] if nic else degree,
        },
    }
    return patterns.property_patterns(experiments, ns3.racks(tree))


def unloaded_rtt_s(point: Mapping[str, Any]) -> float:
    """Round trip of the experiment's path without queueing: its links' propagation
    both ways and a full packet serialised on each link out (the ACK's is negligible)."""
    tree = point["ns3"]
    packet_bits = 8 * (tree["segment_bytes"] + ns3.WIRE_OVERHEAD_BYTES)
    links = _PATH_LINKS[point["experiment"]]
    serialise = sum(packet_bits / (tree[f"{link}_mbit"] * 1e6) for link in links)
    return 2 * len(links) * tree["delay_us"] * 1e-6 + serialise


def _bottleneck_mbit(point: Mapping[str, Any]) -> float:
    tree = point["ns3"]
    if point["experiment"] == "nic_bidirectional":
        return tree["nic_mbit"]
    return min(tree["backbone_mbit"], point["delta_in"] * tree["nic_mbit"])


def summarize(
    point: Mapping[str, Any], links: pd.DataFrame, congestion: str, rule: Mapping[str, Any]
) -> dict[str, Any]:
    """One row of the regime table: the point's settings; the outgoing and incoming
    links' shares of the link alone, both models' shares and the asymmetry with its
    interval; the trials' iterations and whether the stopping ``rule``'s cap ended
    one. ``links`` are the point's tidy links (:func:`.tidy.tidy_mpi`)."""
    tree = point["ns3"]
    platform = analysis.fit_platform(
        links,
        ns3.racks(tree),
        {"nic_mbit": tree["nic_mbit"], "backbone_mbit": tree["backbone_mbit"]},
    )
    rates = analysis.property_rates(links, links.iloc[:0], {congestion: platform})
    shares = rates[rates["experiment"] == point["experiment"]].set_index("direction")
    out = shares.loc["out"]
    experiment = links[(links["experiment"] == point["experiment"]) & (links["direction"] == "out")]
    # A link's share moves against its time: its interval's ends give the share's.
    share_bounds = [
        float(
            (8 * experiment["bytes"] / (experiment["time_s"] + sign * experiment["ci95_s"])).mean()
        )
        / 1e6
        / out["single_link_mbit"]
        for sign in (1, -1)
    ]
    gap = out["fairness_share"] - out["asymmetric_share"]
    bounds = (
        sorted((out["fairness_share"] - s) / gap for s in share_bounds)
        if abs(gap) > 1e-9
        else [np.nan, np.nan]
    )
    queue_bytes = ns3.queue_link(tree)["queue_bytes"]
    rtt_s = unloaded_rtt_s(point)
    window = tree["socket_buffer_bytes"]
    drain_s = 8 * queue_bytes / (_bottleneck_mbit(point) * 1e6)
    capped = analysis.stopped_by_cap(links, rule["max"], rule["ci_width"])
    return {
        "congestion": congestion,
        "point": point["point"],
        "sweep": point["sweep"],
        "experiment": point["experiment"],
        "delta_in": point["delta_in"],
        "delta_out": point["delta_out"],
        "queue": tree["queue"],
        "queue_bytes": queue_bytes,
        "queue_bdp": queue_bytes / (tree["nic_mbit"] * 1e6 * rtt_s / 8),
        "socket_buffer_bytes": window,
        # Windows of the transfers through the port the property needs held.
        "queue_windows": queue_bytes / window if window else np.nan,
        "message_mb": point["message_mb"],
        "nic_mbit": tree["nic_mbit"],
        "backbone_ratio": tree["backbone_mbit"] / tree["nic_mbit"],
        "out_share": out["share_mean"],
        "in_share": shares.loc["in", "share_mean"],
        "fairness_out_share": out["fairness_share"],
        "asymmetric_out_share": out["asymmetric_share"],
        "asymmetry": out["asymmetry"],
        "asymmetry_low": bounds[0],
        "asymmetry_high": bounds[1],
        # A round trip lasts at most the unloaded one and a full queue's drain.
        "loaded_rtts_at_least": float(experiment["time_s"].mean()) / (rtt_s + drain_s),
        "iterations_min": int(links["iterations"].min()),
        "iterations_max": int(links["iterations"].max()),
        "cap_stopped": bool(capped.any()),
    }


def tabulate(
    study: Mapping[str, Any],
    congestion_controls: Sequence[str],
    paths: Sequence[str | os.PathLike[str]],
) -> pd.DataFrame:
    """The regime table: one row per congestion control and point, from the trial
    results ``paths`` in the order of :func:`result_paths` over ``congestion_controls``."""
    rule, planned = stopping_rule(study), points(study)
    cases = [(cc, point) for cc in congestion_controls for point in planned]
    if len(paths) != TRIALS * len(cases):
        raise ValueError(f"{len(paths)} results for {len(cases)} points of {TRIALS} trials")
    rows = []
    for i, (congestion, point) in enumerate(cases):
        files = paths[TRIALS * i : TRIALS * (i + 1)]
        links, _ = tidy_mpi(files, point_patterns(point), "properties", congestion)
        rows.append(summarize(point, links, congestion, rule))
    return pd.DataFrame(rows)


def named_point(study: Mapping[str, Any], name: str) -> dict[str, Any]:
    """The point called ``name``."""
    found = [p for p in points(study) if p["point"] == name]
    if not found:
        raise KeyError(f"no regime point {name!r}; asymmetric.regime has {len(points(study))}")
    return found[0]


def results(raw: str, suffix: str = "") -> list[str]:
    """The results of a point's trials under ``raw`` (the study's raw folder), the
    congestion control and point left open; ``suffix`` names a sidecar instead."""
    return [
        f"{raw}/regime/{{congestion}}/{{regime_point}}/trial{t}.csv{suffix}" for t in range(TRIALS)
    ]


def stopping_rule(study: Mapping[str, Any]) -> dict[str, Any]:
    """The stopping rule of every sweep trial: the study's least iterations, the
    sweep's cap and interval."""
    regime = study["regime"]
    return {
        "min": study["iterations"]["min"],
        "max": regime["max_iterations"],
        "ci_width": regime["ci_width"],
    }


def result_paths(
    raw: str | os.PathLike[str], study: Mapping[str, Any], congestion: str
) -> list[str]:
    """Every trial result of every point of one congestion control, point by point."""
    return [
        path.format(congestion=congestion, regime_point=point["point"])
        for point in points(study)
        for path in results(str(raw))
    ]
