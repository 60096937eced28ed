"""Seed 003's link patterns: every *pattern* (a trial) is a set of links ``src -> dst``
of ``bytes`` that start together; each link has its own sender and receiver process on
its nodes (|P| = 2|E|, Sec. 4.1), so links between the same two nodes are separate TCP
connections, as in the paper.

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
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from netnoise.studies.asymmetric import model as am

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


def paper_bytes(mb: float, nic_mbit: float) -> int:
    """Bytes that take as long at ``nic_mbit`` as ``mb`` of the paper's MB at 940 Mbit/s."""
    return round(mb * am.MB * nic_mbit / PAPER_LINK_MBIT)


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


def patterns(
    family: str, study: Mapping[str, Any], rack_nodes: Mapping[str, list[str]]
) -> pd.DataFrame:
    """Every trial of a family (one of :data:`FAMILIES`), its links numbered within it."""
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
