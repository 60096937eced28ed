"""Wait policies are checked before any rank reads them."""

from __future__ import annotations

import pytest

from netnoise import waiting
from netnoise.config import ConfigError, validate


@pytest.mark.parametrize(
    "policy", ["spin", "sleep", "hybrid:0", "hybrid:20:10:100", "sleep:0:1:1", "spin:5.5"]
)
def test_policies_the_programs_take(policy):
    assert waiting.problem(policy, waiting.DEFAULTS["mpi"]) is None


@pytest.mark.parametrize(
    ("policy", "why"),
    [
        ("poll", "is not mode[:spin_us[:sleep_us[:sleep_max_us]]]"),
        ("", "is not mode"),
        ("hybrid:1:2:3:4", "is not mode"),
        ("sleep:-5", "'-5' is not a time in µs from 0 to 10000000"),
        ("sleep:1e3", "'1e3' is not a time"),
        ("sleep:nan", "'nan' is not a time"),
        ("sleep::20", "'' is not a time"),
        ("sleep:0:20000000", "'20000000' is not a time"),
        ("sleep:0:0.5", "the first sleep (0.5 µs) is shorter than 1 µs"),
        # Over the default's 1000 µs longest sleep.
        ("hybrid:50:2000", "the longest sleep (1000 µs) is shorter than the first (2000 µs)"),
        ("sleep:0:50:10", "the longest sleep (10 µs) is shorter than the first (50 µs)"),
    ],
)
def test_bad_policies_say_what_is_wrong(policy, why):
    assert why in waiting.problem(policy, waiting.DEFAULTS["mpi"])


def test_only_the_policies_given_reach_the_ranks():
    assert waiting.environment({"mpi": "spin", "probe": None}) == {"NN_WAIT": "spin"}
    assert waiting.environment({}) == {}
    both = waiting.environment({"mpi": "sleep", "probe": "hybrid:20"})
    assert both == {"NN_WAIT": "sleep", "NN_PROBE_WAIT": "hybrid:20"}


def test_a_bad_platform_policy_fails_the_config():
    with pytest.raises(ConfigError, match=r"platform\.wait\.probe: 'sleep:0:5:1': the longest"):
        validate({"platform": {"wait": {"probe": "sleep:0:5:1"}}})
    with pytest.raises(ConfigError, match=r"platform\.wait\.mpi"):
        validate({"platform": {"wait": {"mpi": "yield"}}})
    assert validate({"platform": {"wait": {"mpi": "spin"}}})["platform"]["wait"] == {
        "mpi": "spin",
        "probe": None,
    }
