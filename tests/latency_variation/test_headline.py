"""Seed 004's headline claims judged on synthetic tables, each on both sides of its target."""

from __future__ import annotations

import pandas as pd

from netnoise import verdicts as v
from netnoise.studies.latency_variation.headline import headline_claims


def _table4(r_mean: float, r_std: float, z: float) -> pd.DataFrame:
    return pd.DataFrame(
        [
            {"application": app, "n": 42, "r_mean": r_mean, "r_std": r_std, "steiger_z": z}
            for app in ("cg_solver", "lu_wavefront")
        ]
        + [{"application": None, "n": None, "r_mean": 0.7, "r_std": 0.9, "steiger_z": None}]
    )


def _fixed_mean(spread_runtime: float) -> pd.DataFrame:
    return pd.DataFrame(
        [
            {
                "level": 20,
                "application": "lu_wavefront",
                "distribution": d,
                "runs": 5,
                "runtime_mean_s": mean,
                "runtime_std_s": 0.05,
            }
            for d, mean in (("uniform", 1.0), ("lognorm_scale25", spread_runtime))
        ]
    )


def _verdicts(frame: pd.DataFrame) -> dict[str, str]:
    return dict(zip(frame["claim_id"], frame["verdict"], strict=True))


def test_variation_that_drives_runtime_reproduces_both_claims():
    verdict = _verdicts(headline_claims(_table4(0.5, 0.9, -4.0), _fixed_mean(3.0)))
    assert set(verdict.values()) == {v.REPRODUCED}


def test_mean_latency_that_drives_runtime_reproduces_neither():
    claims = headline_claims(_table4(0.9, 0.5, 4.0), _fixed_mean(1.2))
    assert set(_verdicts(claims).values()) == {v.NOT_REPRODUCED}
    assert "lognorm_scale25 against uniform" in claims["reason"].iloc[1]


def test_a_weak_difference_is_inconclusive():
    claims = headline_claims(_table4(0.6, 0.65, -0.5), _fixed_mean(2.25))
    assert _verdicts(claims)["variation_beats_mean"] == v.INCONCLUSIVE
    assert "runs for 80 % power" in claims["reason"].iloc[0]


def test_the_claims_words_name_the_targets_the_code_judges_by():
    from netnoise.studies.latency_variation import headline

    assert f"≥ {headline.HALF_FACTOR:.3g}×" in headline.SLOWDOWN.target
