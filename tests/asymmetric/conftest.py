"""Fixtures of seed 003's tests: the default config, its racks and a fitted platform."""

from __future__ import annotations

import pytest

from netnoise.studies.asymmetric.testbed import racks, study_platform
from tests.asymmetric.support import resolved


@pytest.fixture(scope="module")
def config() -> dict:
    return resolved()


@pytest.fixture(scope="module")
def rack_nodes(config) -> dict[str, list[str]]:
    return racks(study_platform(config["platform"], config["asymmetric"])["testbed"])


@pytest.fixture(scope="module")
def fitted(config, rack_nodes) -> dict:
    testbed = study_platform(config["platform"], config["asymmetric"])["testbed"]
    return {
        "racks": {f"rack{r}": n for r, n in rack_nodes.items()},
        "nic_bps": 19e6,
        "backbone_bps": 190e6,
        "testbed": testbed,
    }
