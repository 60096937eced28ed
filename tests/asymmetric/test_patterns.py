"""Seed 003's link patterns (patterns.py): the Fig. 4 experiments, the random
patterns of Sec. 7.1 and the Alltoallv of Sec. 7.3, in the paper's MB."""

from __future__ import annotations

import pytest

from netnoise.studies.asymmetric import model as am
from netnoise.studies.asymmetric import patterns as asymmetric_patterns
from netnoise.studies.asymmetric.patterns import (
    FAMILIES,
    PATTERN_COLUMNS,
    alltoallv_pattern,
    paper_bytes,
    property_patterns,
    random_patterns,
    trial_count,
)


def test_paper_bytes_keep_the_papers_transfer_times():
    # 10 MB at 940 Mbit/s take 85.1 ms; so do 212766 bytes at 20 Mbit/s.
    size = paper_bytes(10, 20)
    assert size == 212766
    assert 8 * size / 20e6 == pytest.approx(8 * 10 * am.MB / am.PAPER_NIC_BPS, rel=1e-5)


def test_property_patterns_place_the_links_of_fig4(config, rack_nodes):
    patterns = property_patterns(config["asymmetric"], rack_nodes)
    assert patterns["trial"].nunique() == trial_count("properties", config["asymmetric"])
    assert (patterns["bytes"] == paper_bytes(20, 20)).all()
    a, b = rack_nodes["1"][:2]
    nic4 = patterns[(patterns["experiment"] == "nic_unidirectional") & (patterns["links"] == 4)]
    assert list(zip(nic4["src"], nic4["dst"], strict=True)) == [(a, b)] * 4
    bb = patterns[(patterns["experiment"] == "backbone_unidirectional") & (patterns["links"] == 16)]
    assert list(bb["src"]) == rack_nodes["1"] and list(bb["dst"]) == rack_nodes["2"]
    two_one = patterns[
        (patterns["experiment"] == "nic_bidirectional")
        & (patterns["delta_in"] == 2)
        & (patterns["delta_out"] == 1)
    ]
    assert list(zip(two_one["src"], two_one["dst"], two_one["direction"], strict=True)) == [
        (b, a, "in"),
        (b, a, "in"),
        (a, b, "out"),
    ]
    backbone = patterns[
        (patterns["experiment"] == "backbone_bidirectional") & (patterns["delta_out"] == 2)
    ]
    incoming = backbone[backbone["direction"] == "in"]
    outgoing = backbone[backbone["direction"] == "out"]
    assert len(incoming) == 16 and len(outgoing) == 2
    assert set(incoming["src"]) == set(rack_nodes["2"]) and set(incoming["dst"]) == set(
        rack_nodes["1"]
    )
    assert set(outgoing["src"]) <= set(rack_nodes["1"]) and set(outgoing["dst"]) <= set(
        rack_nodes["2"]
    )


def test_random_patterns_are_balanced_deterministic_and_never_empty(config, rack_nodes):
    asym = config["asymmetric"]
    patterns = random_patterns(asym, rack_nodes)
    assert patterns["trial"].nunique() == trial_count("random", asym) == 12
    assert patterns.groupby("trial").size().min() >= 1
    used = set(patterns["src"]) | set(patterns["dst"])
    assert used <= set(rack_nodes["1"][:5]) | set(rack_nodes["2"][:5])
    assert set(patterns["bytes"]) <= {paper_bytes(10, 20), paper_bytes(20, 20)}
    assert (patterns["src"] != patterns["dst"]).all()
    assert random_patterns(asym, rack_nodes).equals(patterns)
    # Each pattern has its own generator: a larger grid keeps the first patterns.
    more = dict(asym, random={**asym["random"], "patterns": 6})
    bigger = random_patterns(more, rack_nodes)
    first = bigger[(bigger["d"] == 1) & (bigger["pattern"] == 0)].drop(columns="trial")
    mine = patterns[(patterns["d"] == 1) & (patterns["pattern"] == 0)].drop(columns="trial")
    assert first.reset_index(drop=True).equals(mine.reset_index(drop=True))
    # d draws per node with probability 1/2: about |N| d / 2 links per pattern.
    mean_links = patterns.groupby(["d", "trial"]).size().groupby("d").mean()
    assert mean_links.loc[3] > mean_links.loc[1]


def test_alltoallv_pattern_is_the_reconstructed_case_on_rack_one(config, rack_nodes):
    pattern = alltoallv_pattern(config["asymmetric"], rack_nodes)
    assert len(pattern) == 12
    assert set(pattern["src"]) == set(rack_nodes["1"][:4]) == set(pattern["dst"])
    expected = sorted(paper_bytes(mb, 20) for mb in am.ALLTOALLV_RECONSTRUCTED_MB.values())
    assert sorted(pattern["bytes"]) == expected


def test_trial_count_follows_the_config_alone(config):
    asym = config["asymmetric"]
    # Defaults: 3 NIC link counts, 2 backbone ones, 3 NIC and 1 backbone degree pairs;
    # one |N| and three d with 4 patterns each; one Alltoallv.
    assert [trial_count(f, asym) for f in FAMILIES] == [9, 12, 1]
    with pytest.raises(ValueError, match="unknown pattern family 'ring'"):
        trial_count("ring", asym)


def test_patterns_of_a_family_number_their_trials(config, rack_nodes):
    asym = config["asymmetric"]
    for family in FAMILIES:
        frame = asymmetric_patterns.patterns(family, asym, rack_nodes)
        assert list(frame.columns) == PATTERN_COLUMNS
        assert sorted(frame["trial"].unique()) == list(range(trial_count(family, asym)))
        assert (frame.groupby("trial")["link"].min() == 0).all()
