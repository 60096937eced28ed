"""The claims rows every study's claims table is made of."""

from __future__ import annotations

import math

import scipy.stats as st

from netnoise.claims import claim, holds


def test_an_inclusive_bound_holds_for_the_target_up_to_rounding():
    rho = st.spearmanr([1, 2, 3, 4], [1, 3, 2, 4]).statistic
    assert rho != 0.8 and math.isclose(rho, 0.8)
    assert holds(rho, ">=", 0.8) and holds(0.8000000000000002, "<=", 0.8)
    assert not holds(0.79, ">=", 0.8) and not holds(rho, ">", 0.8)
    assert not holds(0.8, "<", 0.8)


def test_a_row_is_judged_only_with_a_criterion_and_a_value():
    assert claim("spearman", "bcast", 0.7999999999999999, ">=", 0.8)["meets"] is True
    assert claim("max", "all", 3.0)["meets"] is None
    assert claim("cv", "all", math.nan, "<=", 0.2)["meets"] is None
    row = claim("mae", "queue", 6.0, "<", 10.0, "< 10", unit="points")
    assert list(row) == [
        "claim", "scope", "value", "unit", "relation", "target", "meets", "paper", "detail",
    ]  # fmt: skip
    assert row["meets"] is True and row["unit"] == "points"
