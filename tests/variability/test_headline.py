"""Seed 002's headline claims judged on synthetic evaluations, on both sides of their targets."""

from __future__ import annotations

import pandas as pd

from netnoise import verdicts as v
from netnoise.studies.variability.headline import headline_claims


def _rows(r2: float, sd: float, containment: float, runs: int) -> list[dict]:
    return [
        {"model": "counters_svr", "runs": runs, "r2_pooled": r2, "r2_pooled_sd": sd},
        {"model": "combined", "runs": runs, "given": 1.0, "containment": containment},
        {"model": "noise_ceiling", "runs": runs, "r2_mean": 0.98},
    ]


def _evaluation(r2: float, sd: float, containment: float, runs: int = 96) -> pd.DataFrame:
    return pd.DataFrame(_rows(r2, sd, containment, runs)).assign(campaign="production")


def _verdicts(frame: pd.DataFrame) -> dict[str, str]:
    return dict(zip(frame["claim_id"], frame["verdict"], strict=True))


def test_a_model_as_accurate_as_the_papers_is_reproduced():
    verdict = _verdicts(headline_claims(_evaluation(0.93, 0.01, 0.99, runs=500)))
    assert verdict == {
        "counters_predict_runtime": v.REPRODUCED,
        "bound_contains_runtime": v.REPRODUCED,
    }


def test_a_weak_model_is_not_reproduced_and_a_borderline_bound_is_inconclusive():
    claims = headline_claims(_evaluation(0.34, 0.05, 0.92))
    verdict = _verdicts(claims)
    assert verdict["counters_predict_runtime"] == v.NOT_REPRODUCED
    assert "noise ceiling R² 0.98" in claims["reason"].iloc[0]
    assert verdict["bound_contains_runtime"] == v.INCONCLUSIVE
    assert verdict == _verdicts(headline_claims(_evaluation(0.34, 0.05, 0.92)))
    assert _verdicts(headline_claims(_evaluation(0.9, 0.01, 0.5)))["bound_contains_runtime"] == (
        v.NOT_REPRODUCED
    )


def test_simulated_counters_bound_the_accuracy_and_reproduce_nothing():
    """On a simulated network's counters an accuracy that meets the paper's is an
    upper bound (not measurable there); one that misses it stays not reproduced."""
    good = headline_claims(_evaluation(0.93, 0.01, 0.99, runs=500).assign(clock="simulated"))
    assert _verdicts(good) == {
        "counters_predict_runtime": v.NOT_MEASURABLE,
        "bound_contains_runtime": v.NOT_MEASURABLE,
    }
    assert "upper bound, not a reproduction" in good["reason"].iloc[0]
    weak = headline_claims(_evaluation(0.34, 0.05, 0.5).assign(clock="simulated"))
    assert set(_verdicts(weak).values()) == {v.NOT_REPRODUCED}
    assert (
        "simulated counters, which see exactly what slows a run, fall short"
        in (weak["reason"].iloc[0])
    )
    borderline = headline_claims(_evaluation(0.34, 0.05, 0.92).assign(clock="simulated"))
    assert _verdicts(borderline)["bound_contains_runtime"] == v.INCONCLUSIVE
    assert "fall short" not in borderline["reason"].iloc[1]
    wall = headline_claims(_evaluation(0.93, 0.01, 0.99, runs=500).assign(clock="wall"))
    assert set(_verdicts(wall).values()) == {v.REPRODUCED}


def test_the_claims_words_name_the_targets_the_code_judges_by():
    from netnoise.studies.variability import headline

    assert f"≥ {headline.PAPER_R2 - headline.R2_TOLERANCE:.2f}" in headline.PREDICTS.target
    assert f"≥ {headline.CONTAINMENT_TARGET_PCT:g} %" in headline.CONTAINS.target


def test_claims_are_judged_on_the_steady_campaign_with_the_bursty_one_beside():
    steady = _evaluation(0.93, 0.01, 0.99, runs=500)
    bursty = pd.DataFrame(_rows(0.2, 0.05, 0.5, 64)).assign(campaign="bursty")
    claims = headline_claims(pd.concat([bursty, steady], ignore_index=True))
    assert _verdicts(claims) == _verdicts(headline_claims(steady))
    reason = claims.set_index("claim_id").at["counters_predict_runtime", "reason"]
    assert (
        "steady background" in reason and "bursty background: R² 0.2 ± 0.098 on 64 runs" in reason
    )
