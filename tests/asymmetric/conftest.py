"""Fixtures of seed 003's tests: the default config, its racks, a fitted platform
and the ns-3 program."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from netnoise.studies.asymmetric import ns3
from netnoise.studies.asymmetric.testbed import racks
from tests.asymmetric.support import resolved, study_platform
from tests.conftest import build_csrc


@pytest.fixture(scope="module")
def config() -> dict:
    return resolved()


@pytest.fixture(scope="module")
def rack_nodes(config) -> dict[str, list[str]]:
    return racks(study_platform(config).testbed.as_config())


@pytest.fixture(scope="module")
def fitted(config, rack_nodes) -> dict:
    testbed = study_platform(config).testbed.as_config()
    return {
        "racks": {f"rack{r}": n for r, n in rack_nodes.items()},
        "nic_bps": 19e6,
        "backbone_bps": 190e6,
        "testbed": testbed,
    }


@pytest.fixture(scope="session")
def ns3_program(tmp_path_factory) -> Path:
    """asymmetric_ns3, built once (make install-ns3) into a temporary directory."""
    if not Path("/usr/include/ns3/core-module.h").exists() or shutil.which("make") is None:
        pytest.skip("ns-3 not installed (make setup installs libns3-dev)")
    return build_csrc(tmp_path_factory.mktemp("ns3-build"), target="install-ns3") / ns3.PROGRAM
