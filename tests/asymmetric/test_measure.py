"""Seed 003's measurements (measure.py): one process pair per link, and both
levels on a small two-rack testbed (root only)."""

from __future__ import annotations

import os
import shutil
import subprocess

import pandas as pd
import pytest

from netnoise.config import validate
from netnoise.platform.testbed import TestbedPlatform
from netnoise.studies.asymmetric.measure import measure_mpi, measure_tcp, rank_layout
from netnoise.studies.asymmetric.patterns import property_patterns
from netnoise.studies.asymmetric.testbed import racks
from netnoise.studies.asymmetric.tidy import tidy_mpi
from tests.asymmetric.support import study_platform
from tests.conftest import UNJUDGED_CPU

# A prefix of these tests' own: nothing else (workflow, other tests) uses it.
TEST_PREFIX = "nas3"


def test_rank_layout_gives_every_link_its_own_process_pair():
    links = pd.DataFrame({"src": ["a", "a", "b"], "dst": ["b", "b", "a"], "bytes": [5, 6, 7]})
    ranks, nodes = rank_layout(links)
    assert ranks.values.tolist() == [[0, 1, 5], [2, 3, 6], [4, 5, 7]]
    assert nodes == ["a", "b", "a", "b", "b", "a"]


@pytest.mark.root
@pytest.mark.slow
@pytest.mark.skipif(os.geteuid() != 0, reason="network namespaces need root")
def test_links_measured_at_both_levels_on_two_racks(tmp_path, built_programs):
    """A small two-rack testbed: two links out of one NIC and one across the backbone,
    at the MPI level (p2p_concurrent, one process per link end) and with iperf3."""
    if shutil.which("iperf3") is None:
        pytest.skip("iperf3 not installed")
    config = validate(
        {
            "platform": {"timeout_s": 120, "cpu": UNJUDGED_CPU},
            "asymmetric": {
                "testbed": {"prefix": TEST_PREFIX, "nodes": 8, "nic_mbit": 20},
                "iterations": {"min": 2, "max": 3},
                "properties": {
                    "message_mb": 10,
                    "nic_links": [1, 2],
                    "backbone_links": [4],
                    "backbone_degrees": [[4, 1]],
                },
                "random": {"nodes": [4]},
            },
        }
    )
    asym = config["asymmetric"]
    platform = TestbedPlatform(study_platform(config, "cubic"))
    try:
        rack_nodes = racks(platform.settings.testbed.as_config())
        trials = property_patterns(asym, rack_nodes)
        trials = trials[
            trials["experiment"].isin(["nic_unidirectional", "backbone_unidirectional"])
        ]
        outputs = [tmp_path / f"trial{t}.csv" for t in sorted(trials["trial"].unique())]
        measure_mpi(
            platform,
            built_programs / "p2p_concurrent",
            trials,
            outputs,
            log=tmp_path / "run.log",
            timeout_s=120,
            iterations=asym["iterations"],
            config={"asymmetric": asym},
            inputs={},
        )
        links, _ = tidy_mpi(outputs, trials, "properties", "cubic")
        alone = links[links["links"] == 1]["rate_mbit"].iloc[0]
        assert 14 < alone <= 20  # one link: the NIC rate less headers and MPI overhead
        shared = links[(links["experiment"] == "nic_unidirectional") & (links["links"] == 2)]
        assert shared["rate_mbit"].sum() == pytest.approx(alone, rel=0.3)  # two share one NIC
        tcp = measure_tcp(platform.testbed, trials[trials["links"] == 4], 1, "cubic")
        assert len(tcp) == 4 and (tcp["mbit"] > 10).all()  # 4 x 20 < 200: backbone not a limit
        record = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
        assert f"{TEST_PREFIX}-n08" in record
    finally:
        platform.testbed.down()
    leftover = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    assert f"{TEST_PREFIX}-" not in leftover
