"""Seed 003's headline claims judged on synthetic tables, each on both sides of its band."""

from __future__ import annotations

import pandas as pd

from netnoise import verdicts as v
from netnoise.studies.asymmetric.headline import headline_claims


def _properties(asymmetry: list[float]) -> pd.DataFrame:
    return pd.DataFrame({"level": "mpi", "congestion": "cubic", "asymmetry": asymmetry})


WITHIN10 = pd.DataFrame(
    [
        {
            "congestion": "cubic",
            "d": d,
            "cap_stopped_pct": 0.0,
            "ceiling_pct": 97.0,
            "max_margin_pct": 4.0 * d,
        }
        for d in (1, 2, 3)
    ]
)


def _errors(hits: dict[int, int], fair_hits: int, eps: dict[int, float], patterns: int = 30):
    """``patterns`` random patterns of ten links per d: the asymmetric model
    within 10 % on ``hits[d]`` of each pattern's links (one more on every other
    pattern), with mean |ε| ``eps[d]``; the fairness model within 10 % on
    ``fair_hits`` links."""
    rows = []
    for d in (1, 2, 3):
        for trial in range(patterns):
            for link in range(10):
                for model, within in (
                    ("asymmetric", hits[d] + trial % 2),
                    ("fairness", fair_hits + trial % 2),
                ):
                    rows.append(
                        {
                            "family": "random",
                            "congestion": "cubic",
                            "d": d,
                            "trial": trial,
                            "link": link,
                            "model": model,
                            "within_10pct": link < within,
                            "abs_eps": eps[d] / 100 * (1 + 0.2 * (trial % 3 - 1)),
                        }
                    )
    alltoallv = [
        {
            "family": "alltoallv",
            "congestion": "cubic",
            "trial": 0,
            "link": 0,
            "model": model,
            "time_pred_s": time,
            "within_10pct": True,
            "abs_eps": 0.0,
            "d": None,
        }
        for model, time in (("asymmetric", 1.10), ("fairness", 0.85))
    ]
    return pd.DataFrame(rows + alltoallv)


TRIALS = pd.DataFrame(
    {
        "family": ["alltoallv"],
        "congestion": ["cubic"],
        "trial": [0],
        "iterations": [80],
        "makespan_s": [1.095],
        "makespan_ci95_s": [0.01],
    }
)
PAPER_LIKE = _errors({1: 8, 2: 7, 3: 7}, 5, {1: 3.8, 2: 7.0, 3: 8.5})


def _verdicts(frame: pd.DataFrame) -> dict[str, str]:
    return dict(zip(frame["claim_id"], frame["verdict"], strict=True))


def test_an_asymmetric_platform_reproduces_every_claim():
    verdict = _verdicts(headline_claims(_properties([0.9, 1.0, 1.1]), WITHIN10, PAPER_LIKE, TRIALS))
    assert set(verdict.values()) == {v.REPRODUCED}, verdict


def test_fairness_is_not_the_asymmetric_property():
    verdict = _verdicts(
        headline_claims(_properties([0.0, 0.1, -0.1]), WITHIN10, PAPER_LIKE, TRIALS)
    )
    assert verdict["asymmetric_property"] == v.NOT_REPRODUCED


def test_every_d_must_be_in_its_band():
    """All links within 10 % at d = 1 is larger than the paper's share: the
    regime where no model can be told from another."""
    perfect = _errors({1: 10, 2: 7, 3: 7}, 5, {1: 3.8, 2: 7.0, 3: 8.5})
    claims = headline_claims(_properties([1.0, 1.0]), WITHIN10, perfect, TRIALS)
    row = claims.set_index("claim_id").loc["model_within_10"]
    assert row["verdict"] == v.NOT_REPRODUCED
    assert "deciding: d1" in row["reason"] and "larger than the paper's" in row["reason"]


def test_no_lead_over_fairness_is_not_reproduced():
    even = _errors({1: 8, 2: 7, 3: 7}, 8, {1: 3.8, 2: 7.0, 3: 8.5})
    verdict = _verdicts(headline_claims(_properties([1.0, 1.0]), WITHIN10, even, TRIALS))
    assert verdict["beats_fairness_model"] != v.REPRODUCED


def test_an_error_that_does_not_grow_with_d_is_no_trend():
    flat = _errors({1: 8, 2: 7, 3: 7}, 5, {1: 6.0, 2: 6.0, 3: 6.0})
    claims = headline_claims(_properties([1.0, 1.0]), WITHIN10, flat, TRIALS)
    assert _verdicts(claims)["error_grows_with_d"] == v.NOT_REPRODUCED


def test_the_alltoallv_claim_needs_both_its_parts():
    """The asymmetric model within 10 %, but the fairness model closer still."""
    close = PAPER_LIKE.copy()
    alltoallv = close["family"] == "alltoallv"
    close.loc[alltoallv & (close["model"] == "asymmetric"), "time_pred_s"] = 1.16
    close.loc[alltoallv & (close["model"] == "fairness"), "time_pred_s"] = 1.095
    row = (
        headline_claims(_properties([1.0]), WITHIN10, close, TRIALS)
        .set_index("claim_id")
        .loc["alltoallv_asymmetric_model"]
    )
    assert row["verdict"] == v.NOT_REPRODUCED
    assert "deciding: fairness_worse" in row["reason"]


def test_without_random_patterns_the_pattern_claims_are_not_measurable():
    properties_only = PAPER_LIKE[PAPER_LIKE["family"] == "alltoallv"]
    verdict = _verdicts(headline_claims(_properties([1.0]), WITHIN10, properties_only, TRIALS))
    assert verdict["model_within_10"] == verdict["error_grows_with_d"] == v.NOT_MEASURABLE
