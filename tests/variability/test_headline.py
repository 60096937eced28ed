"""Seed 002's headline claims judged on synthetic runs, on both sides of their bands."""

from __future__ import annotations

import numpy as np
import pandas as pd

from netnoise import verdicts as v
from netnoise.studies.variability.headline import headline_claims

RUNS = 1000
FEATURES = [
    "net_to_nic_ratio",
    "injection_rate_mean",
    "stall_ratio_p75",
    "network_stalls_p95",
    "network_bytes_mean",
    "network_stalls_mean",
    "nodes",
]
PAPER_FEATURES = pd.DataFrame({"rank": range(1, 8), "feature": FEATURES})
EVALUATION = pd.DataFrame(
    [
        {"campaign": "production", "model": "counters_svr", "runs": RUNS, "r2_pooled": 0.9},
        {"campaign": "production", "model": "noise_ceiling", "runs": RUNS, "r2_mean": 0.98},
    ]
)


def _bound(noise: float, spread: float, disagree: float = 0.05) -> pd.DataFrame:
    """Out-of-fold predictions of every run: z_true = SVR + noise, the forest's
    trees spread by ``spread`` about SVR ± ``disagree``."""
    rng = np.random.default_rng(3)
    svr = rng.normal(0, 1, RUNS)
    return pd.DataFrame(
        {
            "svr": svr,
            "rf": svr + rng.normal(0, disagree, RUNS),
            "spread": np.full(RUNS, spread),
            "z_true": svr + rng.normal(0, noise, RUNS),
        }
    )


def _predicted(noise: float) -> pd.DataFrame:
    rng = np.random.default_rng(3)
    truth = rng.normal(0, 1, 64)
    return pd.DataFrame(
        {
            "figure": "fig9",
            "application": "halo3d",
            "n_train": 300,
            "z_true": truth,
            "z_pred": truth + rng.normal(0, noise, 64),
        }
    )


def _importances(lead: float) -> pd.DataFrame:
    rng = np.random.default_rng(3)
    rows = []
    for resample in range(100):
        weights = rng.uniform(0.05, 0.1, len(FEATURES))
        weights[:2] += lead
        rows += [
            {"resample": resample, "feature": f, "importance": w}
            for f, w in zip(FEATURES, weights / weights.sum(), strict=True)
        ]
    return pd.DataFrame(rows)


def _runs(spread: float, dedicated_spread: float = 0.01) -> pd.DataFrame:
    rng = np.random.default_rng(3)
    production = 10 * (1 + rng.uniform(0, spread, 40))
    dedicated = 10 * (1 + rng.uniform(0, dedicated_spread, 12))
    return pd.DataFrame(
        {
            "application": "cg_solver",
            "nodes": 4,
            "campaign": ["production"] * 40 + ["dedicated"] * 12,
            "runtime_s": [*production, *dedicated],
        }
    )


def _claims(evaluation=EVALUATION, **parts) -> pd.DataFrame:
    tables = {
        "bound": _bound(0.3, 1.0),
        "predicted": _predicted(0.4),
        "importances": _importances(0.4),
        "runs": _runs(0.8),
        **parts,
    }
    return headline_claims(evaluation=evaluation, paper_features=PAPER_FEATURES, **tables)


def _verdicts(frame: pd.DataFrame) -> dict[str, str]:
    return dict(zip(frame["claim_id"], frame["verdict"], strict=True))


def test_a_model_as_accurate_as_the_papers_is_reproduced():
    verdict = _verdicts(_claims())
    assert verdict["counters_predict_runtime"] == v.REPRODUCED
    assert verdict["unseen_application_r2"] == v.REPRODUCED
    assert verdict["dominant_features"] == v.REPRODUCED
    assert verdict["variability_up_to_74"] == v.REPRODUCED


def test_a_perfect_model_is_not_the_papers():
    claims = _claims(bound=_bound(0.01, 1.0)).set_index("claim_id")
    assert claims.loc["counters_predict_runtime", "verdict"] == v.NOT_REPRODUCED
    assert "larger than the paper's" in claims.loc["counters_predict_runtime", "reason"]


def test_the_bound_is_judged_as_the_paper_draws_it_on_runs_the_model_did_not_see():
    """A bound calibrated to hold 90 % of these very runs would hold them by
    construction; the paper's SVR ± the trees' spread is judged instead, here
    on runs whose error is twice the spread: it holds about a third of them."""
    calibrated = _bound(2.0, 1.0)
    scale = np.quantile(np.abs(calibrated["z_true"] - calibrated["svr"]), 0.9)
    assert scale > 2  # a calibrated bound would have stretched to hold 90 %
    row = _claims(bound=calibrated).set_index("claim_id").loc["bound_contains_runtime"]
    assert row["verdict"] == v.NOT_REPRODUCED and row["value"] < 50
    held = _claims(bound=_bound(0.48, 1.0)).set_index("claim_id").loc["bound_contains_runtime"]
    assert held["verdict"] == v.REPRODUCED


def test_an_estimate_withheld_for_every_run_is_not_the_papers_nine_percent():
    row = _claims(bound=_bound(0.3, 0.1, disagree=1.0)).set_index("claim_id")
    assert row.loc["estimate_withheld", "verdict"] == v.NOT_REPRODUCED


def test_other_dominant_features_refute_the_ranking():
    assert _verdicts(_claims(importances=_importances(-0.04)))["dominant_features"] == (
        v.NOT_REPRODUCED
    )


def test_variability_the_dedicated_runs_show_too_is_not_the_networks():
    verdict = _verdicts(_claims(runs=_runs(0.8, dedicated_spread=0.8)))
    assert verdict["variability_up_to_74"] == v.NOT_REPRODUCED


def test_simulated_counters_bound_the_accuracy_and_reproduce_nothing():
    """On a simulated network's counters an accuracy that meets the paper's is an
    upper bound (not measurable there); one that misses it stays not reproduced."""
    simulated = EVALUATION.assign(clock="simulated")
    good = _claims(simulated).set_index("claim_id")
    assert good.loc["counters_predict_runtime", "verdict"] == v.NOT_MEASURABLE
    assert "upper bound, not a reproduction" in good.loc["counters_predict_runtime", "reason"]
    weak = _claims(simulated, bound=_bound(2.0, 1.0)).set_index("claim_id")
    assert weak.loc["counters_predict_runtime", "verdict"] == v.NOT_REPRODUCED
    assert "fall short" in weak.loc["counters_predict_runtime", "reason"]
