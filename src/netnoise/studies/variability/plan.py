"""Seed 002's workflow plan (workflow/rules/variability.smk): the campaign's
measurement jobs, what each one runs and where, and the study's final files.

Pure functions of the config section ``variability`` and of paths, so the
workflow and the tests plan the same jobs.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from netnoise.config import study_testbed
from netnoise.studies.variability.campaign import batches, run_keys

# What the tabulate rule writes (tables/variability/<name>.csv) ...
TABLES = (
    "table2_runtime_statistics",
    "table3_metrics",
    "table4_correlations",
    "feature_importance",
    "model_summary",
    "model_evaluation",
    "cv_folds",
    "noise_floor",
    "learning_curve",
    "train_fraction",
    "table5_unseen_application",
    "predicted_vs_true",
    "rf_bound",
    "tsne",
    "table6_use_cases",
    "controlled_estimates",
)
# ... of which the report shows these; the others only feed figures.
REPORTED_TABLES = (
    "table2_runtime_statistics",
    "table3_metrics",
    "table4_correlations",
    "feature_importance",
    "model_summary",
    "model_evaluation",
    "noise_floor",
    "train_fraction",
    "table5_unseen_application",
    "table6_use_cases",
    "controlled_estimates",
)
# What the plot rule draws (figures/variability/<name>.svg and .png).
FIGURES = (
    "fig1_runtimes",
    "fig2_features",
    "fig4_controlled_extremes",
    "fig5_tsne",
    "fig7_predicted_vs_true",
    "fig8_learning_curve",
    "fig9_unseen_application",
    "fig10_sparse_samples",
    "fig11_rf_bound",
    "cross_validation",
)

# A run of a measurement job: [application, node count, run index].
Run = list[Any]


def measurement_batches(study: Mapping[str, Any]) -> dict[str, list[list[Run]]]:
    """Campaign -> its measurement jobs, each the list of runs it measures.

    The production campaign has ``runs`` runs per application and node count, each
    controlled extreme ``controlled_runs``; a campaign without runs has no jobs.
    """
    counts = {"production": study["runs"]}
    counts |= {campaign: study["controlled_runs"] for campaign in ("dedicated", "maximal")}
    jobs = {}
    for campaign, count in counts.items():
        keys = run_keys(study["applications"], study["node_counts"], count)
        if keys:
            jobs[campaign] = [
                [[k.application, k.node_count, k.index] for k in batch]
                for batch in batches(keys, study["runs_per_job"])
            ]
    return jobs


def batch_dirs(raw: str, jobs: Mapping[str, Sequence[Any]]) -> list[str]:
    """The output directory of every measurement job (``raw/<campaign>/batch<i>``)."""
    return [
        f"{raw}/{campaign}/batch{b}" for campaign, runs in jobs.items() for b in range(len(runs))
    ]


def measured_applications(
    study: Mapping[str, Any],
    applications: Mapping[str, Mapping[str, Any]],
    binary: Callable[[str], str],
) -> dict[str, dict[str, Any]]:
    """Program path and arguments of every application the campaign measures.

    ``applications`` is the config's applications section, ``binary`` gives the
    executable of an application by name.
    """
    return {
        name: {"program": binary(name), "args": applications[name].get("args", [])}
        for name in study["applications"]
    }


def programs(measured: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """The executables of the measured applications (the inputs of a measurement job)."""
    return sorted({app["program"] for app in measured.values()})


def study_platform(platform: Mapping[str, Any], study: Mapping[str, Any]) -> dict[str, Any]:
    """The platform with the study's testbed layout (racks, backbone) over the shared one.

    Measurements run one at a time (resource network), so the testbed is rebuilt
    with this layout when the study's jobs start and back when another study's do.
    """
    out = copy.deepcopy(dict(platform))
    out["testbed"].update(study_testbed(dict(study)))
    return out


def targets(platform_kind: str, tables: str, figures: str, model: str) -> list[str]:
    """The study's final files: every table, figure and the trained model.

    The campaign draws placements on the testbed and reads its counters, so other
    platforms have none.
    """
    if platform_kind != "testbed":
        return []
    return [
        *(f"{figures}/{name}.{ext}" for name in FIGURES for ext in ("svg", "png")),
        *(f"{tables}/{name}.csv" for name in TABLES),
        model,
    ]
