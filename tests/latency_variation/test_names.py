"""Seed 004's names: point ids of the injected distributions and the distributions' order."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from netnoise.studies.latency_variation import level_fits, names


def test_point_names_round_trip():
    assert names.point_name(20, "lognorm_scale25") == "L20_lognorm_scale25"
    assert names.parse_point("L20_lognorm_scale25") == (20, "lognorm_scale25")
    assert names.point_name(None, names.ZERO) == names.parse_point(names.ZERO)[1] == "zero"
    assert names.parse_point("zero") == (None, "zero")
    with pytest.raises(ValueError, match="'20_uniform' is not a point name"):
        names.parse_point("20_uniform")


def test_distribution_names_are_the_fitted_ones():
    rng = np.random.default_rng(3)
    samples = pd.DataFrame({"level": 0, "latency_us": 5 + rng.lognormal(np.log(2.0), 0.5, 2000)})
    dists = level_fits.distributions(level_fits.fit_levels(samples, [0.5, 0.25, 0.75]))
    assert dists["distribution"].tolist() == names.distribution_names([0.5, 0.25, 0.75])
    assert names.distribution_names([0.25, 0.5, 0.75]) == [
        "lognorm",
        "uniform",
        "lognorm_scale75",
        "lognorm_scale50",
        "lognorm_scale25",
    ]
