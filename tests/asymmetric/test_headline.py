"""Seed 003's headline claims judged on synthetic tables, each on both sides of its target."""

from __future__ import annotations

import pandas as pd

from netnoise import verdicts as v
from netnoise.studies.asymmetric.headline import headline_claims


def _properties(asymmetry: list[float]) -> pd.DataFrame:
    return pd.DataFrame({"level": "mpi", "asymmetry": asymmetry})


def _within10(share: float) -> pd.DataFrame:
    return pd.DataFrame(
        [
            {
                "congestion": "cubic",
                "d": d,
                "n_patterns": 12,
                "within10_pct": share,
                "within10_low_pct": share - 5,
                "within10_high_pct": share + 5,
                "cap_stopped_pct": 0.0,
                "ceiling_pct": 97.0,
                "max_margin_pct": 4.0 * d,
            }
            for d in (1, 2)
        ]
    )


def _errors(fair_hits: int) -> pd.DataFrame:
    """Ten patterns of ten links per d: the asymmetric model within 10 % on 9 of
    each pattern's links, the fairness model on ``fair_hits`` (patterns differ by one)."""
    rows = []
    for d in (1, 2):
        for trial in range(10):
            for link in range(10):
                for model, hits in (("asymmetric", 9), ("fairness", fair_hits + trial % 2)):
                    rows.append(
                        {
                            "family": "random",
                            "congestion": "cubic",
                            "d": d,
                            "trial": trial,
                            "link": link,
                            "model": model,
                            "within_10pct": link < hits,
                        }
                    )
    return pd.DataFrame(rows)


def _verdicts(frame: pd.DataFrame) -> dict[str, str]:
    return dict(zip(frame["claim_id"], frame["verdict"], strict=True))


def test_an_asymmetric_platform_reproduces_every_claim():
    verdict = _verdicts(headline_claims(_properties([0.9, 0.8, 0.95]), _within10(85), _errors(5)))
    assert set(verdict.values()) == {v.REPRODUCED}


def test_a_fair_platform_reproduces_none():
    claims = headline_claims(_properties([0.05, 0.0, 0.1]), _within10(50), _errors(9))
    verdict = _verdicts(claims)
    assert set(verdict.values()) == {v.NOT_REPRODUCED}
    assert "noise ceiling 97 %" in claims["reason"].iloc[1]


def test_a_spread_asymmetry_is_inconclusive_with_the_samples_it_needs():
    claims = headline_claims(_properties([0.2, 0.9, 0.6]), _within10(85), _errors(5))
    assert claims["verdict"].iloc[0] == v.INCONCLUSIVE
    assert "link groups for 80 % power" in claims["reason"].iloc[0]


def test_the_claims_words_name_the_targets_the_code_judges_by():
    from netnoise.studies.asymmetric import headline

    assert f"≥ {headline.ASYMMETRY_TARGET}" in headline.PROPERTY.target
    assert f"≥ {headline.PAPER_WITHIN10_PCT:g} %" in headline.WITHIN_10.target


def test_the_margin_is_told_beside_the_largest_it_could_be():
    claims = headline_claims(_properties([0.9, 0.8, 0.95]), _within10(85), _errors(9))
    beats = claims.set_index("claim_id").loc["beats_fairness_model", "reason"]
    assert beats.endswith("the models' predictions differ on 4 % of its links")
