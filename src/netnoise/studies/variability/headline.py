"""Seed 002's headline claims (Chunduri et al.), judged by :mod:`netnoise.verdicts`
against the spec in ``resources/reference``, each over runs, the paper's unit:

- the model's claims from every production run's out-of-fold predictions
  (``bound``: SVR, forest and the trees' spread of a run predicted by models
  that never trained on it), so that the bound's containment is judged on runs
  the model did not see, with the paper's bound (SVR ± the trees' spread), not
  the calibrated one netnoise reports beside it;
- the unseen application's R² from its runs predicted by a model trained on the
  other applications (``predicted``, Fig. 9's rows);
- the dominant features from forests fitted on resampled runs (``importances``);
- the run-to-run variability from the production campaign's runtimes beside the
  dedicated runs' (``runs``), which no background slows.

In simulated time the counters see exactly the load the network model shares its
links by (:func:`simulated_counters_gate`)."""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats

from netnoise import verdicts as v
from netnoise.estimates import Estimate, bootstrap_estimate, share_estimate

STUDY = "variability"
#: The model whose nested cross-validation is shown beside the paper's protocol.
COUNTER_MODEL = "counters_svr"
#: The campaign the claims are judged on, the harder one shown beside it, and
#: the runs no background slows.
JUDGED_CAMPAIGN = "production"
BESIDE_CAMPAIGN = "bursty"
DEDICATED = "dedicated"
#: Where each argument of :func:`headline_claims` is read, under a platform's results.
INPUTS = {
    "evaluation": "tables/variability/model_evaluation.csv",
    "bound": "tables/variability/rf_bound.csv",
    "predicted": "tables/variability/predicted_vs_true.csv",
    "importances": "tables/variability/feature_importance_resamples.csv",
    "runs": "tidy/variability/runs.csv",
    "paper_features": "resources/reference/variability/features.csv",
}

CLAIMS = v.read_claims(STUDY)


def pooled_r2(pairs) -> float:
    """R² of (true, predicted) pairs: one minus the residual over the total sum of squares."""
    truth, predicted = (np.asarray(side, float) for side in zip(*pairs, strict=True))
    total = float(np.sum((truth - truth.mean()) ** 2))
    return 1 - float(np.sum((truth - predicted) ** 2)) / total if total > 0 else np.nan


def _beside(evaluation: pd.DataFrame) -> str:
    """The nested cross-validation of both campaigns and the noise ceiling, in words."""
    parts = []
    for campaign in (JUDGED_CAMPAIGN, BESIDE_CAMPAIGN):
        rows = evaluation[
            (evaluation["campaign"] == campaign) & (evaluation["model"] == COUNTER_MODEL)
        ]
        if not rows.empty:
            row = rows.iloc[0]
            parts.append(
                f"{campaign} background, nested 10 × 10-fold: R² {row['r2_pooled']:.3g}"
                f" on {int(row['runs'])} runs"
            )
    ceilings = evaluation[evaluation["model"] == "noise_ceiling"]["r2_mean"]
    if not ceilings.empty:
        parts.append(f"noise ceiling R² {ceilings.min():.3g} to {ceilings.max():.3g}")
    return "; ".join(parts)


def simulated_counters_gate(simulated: bool):
    """In simulated time a run's counters see exactly the load the network model
    shares its links by, and nothing else slows the run: an accuracy there bounds
    what counters can explain from above, so a claim that holds is not measurable
    there, while one that fails says that even such counters fall short."""

    def gate(judgement: v.Judgement) -> v.Judgement:
        if not simulated:
            return judgement
        if judgement.verdict == v.REPRODUCED:
            return v.Judgement(
                v.NOT_MEASURABLE,
                f"{judgement.reason}; simulated counters see exactly what slows a run, so "
                "this is an upper bound, not a reproduction",
            )
        if judgement.verdict == v.NOT_REPRODUCED:
            return v.with_context(
                judgement, "simulated counters, which see exactly what slows a run, fall short"
            )
        return judgement

    return gate


def _bound_claims(bound: pd.DataFrame, evaluation: pd.DataFrame, gate) -> list[dict]:
    runs = bound.dropna(subset=["svr", "rf", "spread", "z_true"])
    given = (runs["svr"] - runs["rf"]).abs() <= runs["spread"]
    accepted = runs[given]
    inside = ((accepted["z_true"] - accepted["svr"]).abs() <= accepted["spread"]).sum()
    oof = list(zip(runs["z_true"], runs["svr"], strict=True))
    return [
        CLAIMS["counters_predict_runtime"].judged(
            bootstrap_estimate(oof, pooled_r2),
            gate,
            context="the paper's protocol (its grid chosen by cross-validation on all runs);"
            f" interval over the runs; {_beside(evaluation)}",
        ),
        CLAIMS["bound_contains_runtime"].judged(
            share_estimate(int(inside), len(accepted)).scaled(100),
            gate,
            context=f"{len(accepted)} of {len(runs)} held-out runs given an estimate",
        ),
        CLAIMS["estimate_withheld"].judged(
            share_estimate(int((~given).sum()), len(runs)).scaled(100), gate
        ),
    ]


def _unseen(predicted: pd.DataFrame, gate) -> dict:
    claim = CLAIMS["unseen_application_r2"]
    rows = predicted[predicted["figure"] == "fig9"]
    if rows.empty:
        return claim.unmeasured(
            "no application was left out (variability.model.unseen_application)"
        )
    pairs = list(zip(rows["z_true"], rows["z_pred"], strict=True))
    return claim.judged(
        bootstrap_estimate(pairs, pooled_r2),
        gate,
        context=f"{rows['application'].iloc[0]} left out, trained on {int(rows['n_train'].iloc[0])}"
        " runs of the others",
    )


def _dominance(importances: pd.DataFrame, paper_features: pd.DataFrame) -> dict:
    dominant = list(paper_features.sort_values("rank")["feature"].iloc[:2])
    wide = importances.pivot(index="resample", columns="feature", values="importance")
    others = [f for f in wide.columns if f not in dominant]
    lead = wide[dominant].min(axis=1) - wide[others].max(axis=1)
    low, high = np.percentile(lead, [2.5, 97.5])
    # The point estimate is the resamples' median: every forest here saw resampled runs.
    estimate = Estimate(float(lead.median()), float(low), float(high), len(lead))
    order = list(wide.mean().sort_values(ascending=False).index)
    ranks = " and ".join(f"{f} {order.index(f) + 1}" for f in dominant)
    return CLAIMS["dominant_features"].judged(
        estimate,
        context=f"ranks by mean importance: {ranks} of {len(order)}, over {len(lead)}"
        " resamples of the runs",
    )


def _spread(group: pd.Series) -> float:
    times = np.asarray(group, float)
    return 100 * (times.max() / times.min() - 1) if len(times) else np.nan


def _variability(runs: pd.DataFrame) -> dict:
    claim = CLAIMS["variability_up_to_74"]
    production = runs[runs["campaign"] == JUDGED_CAMPAIGN]
    if production.empty:
        return claim.unmeasured("no production run")
    keys = ["application", "nodes"]
    spreads = production.groupby(keys)["runtime_s"].apply(_spread)
    application, nodes = spreads.idxmax()
    times = production[(production["application"] == application) & (production["nodes"] == nodes)][
        "runtime_s"
    ]
    estimate = bootstrap_estimate(list(times), _spread)
    dedicated = runs[
        (runs["campaign"] == DEDICATED)
        & (runs["application"] == application)
        & (runs["nodes"] == nodes)
    ]["runtime_s"]
    controls = None
    if len(dedicated) >= 2:
        # One-sided Levene test: the production runs spread more than the dedicated.
        two_sided = stats.levene(times, dedicated, center="median").pvalue
        wider = np.var(times, ddof=1) > np.var(dedicated, ddof=1)
        p_value = two_sided / 2 if wider else 1 - two_sided / 2
        controls = [
            v.Control("dedicated runs (no background)", estimate.value, _spread(dedicated), p_value)
        ]
    return claim.judged(
        estimate,
        v.network_gate(controls),
        context=f"{application} on {nodes} nodes, {len(times)} production runs",
    )


def headline_claims(
    evaluation: pd.DataFrame,
    bound: pd.DataFrame,
    predicted: pd.DataFrame,
    importances: pd.DataFrame,
    runs: pd.DataFrame,
    paper_features: pd.DataFrame,
) -> pd.DataFrame:
    """The paper's headline claims as rows of the claims table (on counters of a
    simulated network where ``evaluation``'s ``clock`` says so)."""
    gate = simulated_counters_gate(v.simulated_clock(evaluation))
    return v.table(
        [
            *_bound_claims(bound, evaluation, gate),
            _unseen(predicted, gate),
            _dominance(importances, paper_features),
            _variability(runs),
        ]
    )
