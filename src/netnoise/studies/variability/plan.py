"""Seed 002's workflow plan (workflow/rules/variability.smk): the campaign's
measurement jobs, what each one runs and where, and the study's final files.

Pure functions of the config section ``variability`` and of paths, so the
workflow and the tests plan the same jobs.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypedDict

from netnoise.platform import Platform, from_settings
from netnoise.report import ABOUT, HEADLINE_CLAIMS, Result
from netnoise.settings import ApplicationSettings, Settings
from netnoise.studies.variability.campaign import CONTROLLED_CAMPAIGNS, batches, run_keys
from netnoise.studies.variability.settings import VariabilitySettings
from netnoise.study import StudyPaths

# What the tabulate rule writes (tables/variability/<name>.csv); the report shows
# those of REPORT_RESULTS, the others only feed figures.
TABLES = (
    "table2_runtime_statistics",
    "table3_metrics",
    "table4_correlations",
    "feature_importance",
    "feature_importance_resamples",
    "model_summary",
    "model_evaluation",
    "cv_folds",
    "noise_floor",
    "congestion_counters",
    "learning_curve",
    "train_fraction",
    "table5_unseen_application",
    "predicted_vs_true",
    "rf_bound",
    "tsne",
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

#: The report's results in the paper's order (netnoise.report).
REPORT_RESULTS = (
    HEADLINE_CLAIMS,
    ABOUT,
    Result("fig1_runtimes", "Fig. 1 · runtime of every production run"),
    Result("table2_runtime_statistics", "Table II · runtime statistics of the production runs"),
    Result("fig2_features", "Fig. 2 · distributions of the four dominant features"),
    Result("table3_metrics", "Table III · the counter metrics and the counters standing for them"),
    Result("table4_correlations", "Table IV · correlation of runtime with three metrics"),
    Result(
        "fig4_controlled_extremes", "Fig. 4 · stall ratio of production runs and the two extremes"
    ),
    Result("controlled_estimates", "Sec. III-F · the model's estimates of the controlled runs"),
    Result("feature_importance", "Sec. IV-A · random-forest importance of the seven features"),
    Result("fig5_tsne", "Fig. 5 · t-SNE embedding of the features"),
    Result("fig7_predicted_vs_true", "Fig. 7 · SVR prediction against true runtime z-score"),
    Result("model_summary", "Sec. IV-C · the model trained on all production runs"),
    Result("model_evaluation", "Sec. IV-C · nested cross-validation, baselines and the bound"),
    Result("cross_validation", "Sec. IV-C · every fold's R² beside the paper's 0.91"),
    Result("noise_floor", "Sec. IV-C · the R² that repeated identical runs allow"),
    Result("congestion_counters", "Sec. III-D · which congestion counters carry the runtime"),
    Result("fig8_learning_curve", "Fig. 8 · learning curve of the SVR"),
    Result("train_fraction", "Sec. V-A · accuracy against the training share"),
    Result("fig9_unseen_application", "Fig. 9 · predictions for an application left out"),
    Result("fig10_sparse_samples", "Fig. 10 · predictions with a few runs of it in training"),
    Result("table5_unseen_application", "Table V · accuracy on each application left out"),
    Result("fig11_rf_bound", "Fig. 11 · random-forest bound of every estimate"),
    Result("table6_use_cases", "Table VI · the use cases of Sec. VI"),
)

# A run of a measurement job: [application, node count, run index].
Run = list[Any]


class MeasuredApplication(TypedDict):
    """An application as a measurement job's params give it."""

    program: str
    args: list[str]


def measurement_batches(study: VariabilitySettings) -> dict[str, list[list[Run]]]:
    """Campaign -> its measurement jobs, each the list of runs it measures.

    The steady production campaign has ``runs`` runs per application and node
    count, the bursty one ``bursty_runs``, each controlled extreme
    ``controlled_runs``; a campaign without runs has no jobs.
    """
    counts = {"production": study.runs, "bursty": study.bursty_runs}
    counts |= {campaign: study.controlled_runs for campaign in CONTROLLED_CAMPAIGNS}
    jobs = {}
    for campaign, count in counts.items():
        keys = run_keys(study.applications, study.node_counts, count)
        if keys:
            jobs[campaign] = [
                [[k.application, k.node_count, k.index] for k in batch]
                for batch in batches(keys, study.runs_per_job)
            ]
    return jobs


def batch_dirs(raw: str, jobs: Mapping[str, Sequence[Any]]) -> list[str]:
    """The output directory of every measurement job (``raw/<campaign>/batch<i>``)."""
    return [
        f"{raw}/{campaign}/batch{b}" for campaign, runs in jobs.items() for b in range(len(runs))
    ]


def measured_applications(
    study: VariabilitySettings,
    applications: Mapping[str, ApplicationSettings],
    binary: Callable[[str], str],
) -> dict[str, MeasuredApplication]:
    """Program path and arguments of every application the campaign measures.

    ``applications`` is the config's applications section, ``binary`` gives the
    executable of an application by name.
    """
    return {
        name: {"program": binary(name), "args": applications[name].args or []}
        for name in study.applications
    }


def programs(measured: Mapping[str, MeasuredApplication]) -> list[str]:
    """The executables of the measured applications (the inputs of a measurement job)."""
    return sorted({app["program"] for app in measured.values()})


def allocation(study: VariabilitySettings, runs: Sequence[Run]) -> int:
    """Nodes of a Slurm job measuring ``runs``: its largest measured job's, and the
    nodes of the synthetic background (``variability.slurm.background_nodes``)."""
    return max(node_count for _, node_count, _ in runs) + study.slurm.background_nodes


def skipped(platform: Platform) -> str | None:
    """Why the study does not run on ``platform`` (the study's; None: it runs)."""
    if platform.places_named_nodes and platform.has_counters:
        return None
    return (
        "variability (seed 002) skipped: its runs are placed on nodes and read the "
        f"counters of their links, which platform {platform.kind!r} has not; use "
        "platform.kind testbed, slurm or simgrid (network_model flow)"
    )


def targets(platform: Platform, tables: str, figures: str, model: str) -> list[str]:
    """The study's final files on ``platform`` (the study's): every table, figure
    and the trained model (none where the study is skipped)."""
    if skipped(platform):
        return []
    return [
        *(f"{figures}/{name}.{ext}" for name in FIGURES for ext in ("svg", "png")),
        *(f"{tables}/{name}.csv" for name in TABLES),
        model,
    ]


def model_file(paths: StudyPaths) -> str:
    """The trained model: one file beside the models folders of the other studies."""
    return f"{paths.models}.npz"


def final_files(settings: Settings, paths: StudyPaths) -> list[str]:
    """The study's final files in this run (its ``STUDY.plan``), on the platform
    its runs see."""
    platform = from_settings(settings.effective(settings.study(VariabilitySettings)))
    return targets(platform, paths.tables, paths.figures, model_file(paths))
