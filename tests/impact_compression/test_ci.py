"""Seed 000's bootstrap intervals: coverage of a known value, determinism, small sets."""

from __future__ import annotations

import math

import numpy as np
import pytest

from netnoise.studies.impact_compression import ci


def test_slowdown_interval_covers_the_true_slowdown_at_the_nominal_rate():
    """Runs alone ~ N(10 s, 0.5 s), beside a partner ~ N(12 s, 0.6 s): the true
    slowdown is 20 %. Over 400 independent experiments of 30 runs each, the 95 %
    interval must contain it about 95 % of the time (binomial sd 1.1 points)."""
    data = np.random.default_rng(11)
    hits = 0
    experiments = 400
    for i in range(experiments):
        alone = data.normal(10.0, 0.5, size=30)
        beside = data.normal(12.0, 0.6, size=30)
        low, high = ci.interval([beside, alone], ci.relative_change, f"experiment {i}")
        hits += low <= 0.2 <= high
    assert 0.91 <= hits / experiments <= 0.985


def test_interval_is_seeded_by_the_name_of_what_it_resamples():
    data = np.random.default_rng(12)
    beside, alone = data.normal(12, 1, size=10), data.normal(10, 1, size=10)
    first = ci.interval([beside, alone], ci.relative_change, "a beside b")
    assert ci.interval([beside, alone], ci.relative_change, "a beside b") == first
    assert ci.interval([beside, alone], ci.relative_change, "b beside a") != first
    low, high = first
    assert low < ci.relative_change(beside, alone) < high


def test_a_set_of_one_has_no_interval():
    low, high = ci.interval([np.array([12.0]), np.array([9.0, 11.0])], ci.relative_change, "x")
    assert math.isnan(low) and math.isnan(high)


def test_percentile_interval_is_the_central_95_percent():
    replicates = np.arange(1, 1001, dtype=float)
    assert ci.percentile_interval(replicates) == pytest.approx((25.975, 975.025))
