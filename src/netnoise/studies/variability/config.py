"""Checks of the variability config section that its schema cannot express."""

from __future__ import annotations

import math
from typing import Any

from netnoise.config import enabled, undefined_applications
from netnoise.platform import from_settings
from netnoise.settings import Settings
from netnoise.studies.variability.settings import VariabilitySettings
from netnoise.testbed.fabric import frame_problems


def calibration_rank(runs: int, level: float) -> int:
    """The rank of the residual that calibrates a bound holding ``level`` of new runs
    on ``runs`` calibration runs (split-conformal: ⌈(n + 1)·level⌉)."""
    return math.ceil(round((runs + 1) * level, 9))


def minimum_runs(cv: int, inner_cv: int, level: float) -> int:
    """The fewest runs the model trains on with ``cv`` folds, ``inner_cv`` folds inside
    each training fold (two runs per inner test fold) and a bound for ``level``;
    ValueError for folds below 2 or a level outside (0, 1), for which none suffices."""
    if cv < 2 or inner_cv < 2:
        raise ValueError(f"cross-validation needs 2 folds or more, not {min(cv, inner_cv)}")
    if not 0 < level < 1:
        raise ValueError(f"the bound's level is a share of runs in (0, 1), not {level!r}")
    need = 2 * cv
    while True:
        smallest_training = need - math.ceil(need / cv)
        if (
            smallest_training >= 2 * inner_cv
            and calibration_rank(smallest_training, level) <= smallest_training
        ):
            return need
        need += 1


def problems(config: dict[str, Any]) -> list[str]:
    """The campaign's names, sizes and the model's splits must fit together."""
    study = enabled(config, "variability")
    if not study:
        return []
    chosen = study.get("applications", [])
    problems = undefined_applications(config, "variability.applications", chosen)
    model = study.get("model", {})
    named = {
        "variability.model.unseen_application": [model.get("unseen_application")],
        "variability.model.sparse_application": [model.get("sparse_application")],
        "variability.model.use_case.applications": model.get("use_case", {}).get(
            "applications", []
        ),
    }
    for key, names in named.items():
        for name in names:
            if name is not None and name not in chosen:
                problems.append(
                    f"{key}: {name!r} is not one of variability.applications ({', '.join(chosen)})"
                )
    counts = study.get("node_counts", [])
    use_nodes = model.get("use_case", {}).get("nodes")
    if use_nodes is not None and use_nodes not in counts:
        problems.append(
            f"variability.model.use_case.nodes: {use_nodes} is not one of "
            f"variability.node_counts ({', '.join(map(str, counts))})"
        )
    settings = Settings.of(config)
    runs_on = from_settings(settings.effective(settings.study(VariabilitySettings)))
    testbed = runs_on.settings.testbed.as_config()
    nodes, racks = testbed["nodes"], testbed["racks"]
    # Where the workflow places the runs, the study's testbed layout holds them.
    if runs_on.names_nodes and nodes is not None:
        if racks > nodes:
            problems.append(
                f"variability.testbed.racks: {racks} racks need at least {racks} nodes; "
                f"the study's testbed has {nodes}"
            )
        for count in counts:
            if count > nodes:
                problems.append(
                    f"variability.node_counts: {count} exceeds the study's testbed nodes ({nodes})"
                )
    if runs_on.shapes_links:
        problems += frame_problems(testbed, "variability.testbed over platform.testbed")
    if runs_on.discovers_layout:
        problems += _cluster_problems(study)
    runs = study.get("runs", 2)
    per_application = runs * len(counts)
    for added in model.get("added", []):
        if added > per_application - 2:
            problems.append(
                f"variability.model.added: {added} runs of a held-out application leave "
                f"fewer than 2 of its {per_application} runs (runs x node_counts) to test"
            )
    cv, inner_cv = model.get("cv", 10), model.get("inner_cv", 5)
    need = minimum_runs(cv, inner_cv, model.get("bound_level", 0.9))
    for key, per_group in (("runs", runs), ("bursty_runs", study.get("bursty_runs", 0))):
        total = per_group * len(counts) * len(chosen)
        if 0 < total < need:
            problems.append(
                f"variability.{key}: {total} runs of the campaign in all are too few for "
                f"{cv}-fold cross-validation with {inner_cv} folds inside and the bound's "
                f"level (need {need}: variability.model.cv, inner_cv, bound_level)"
            )
    if study.get("bursty_runs", 0) == 1:
        problems.append(
            "variability.bursty_runs: 1 run per application and node count has no "
            "runtime spread to model; give 0 (no bursty campaign) or at least 2"
        )
    background = study.get("background", {})
    for key in ("load", "compression_messages", "compression_sleep_cycles"):
        low, high = background.get(key, [1, 1])
        if low > high:
            problems.append(f"variability.background.{key}: low {low} is above high {high}")
    return problems


def _cluster_problems(study: dict[str, Any]) -> list[str]:
    """A synthetic background on a cluster needs nodes and, for loadgen, a link rate."""
    cluster = study.get("slurm", {})
    background = cluster.get("background_nodes", 0)
    problems = []
    if study.get("controlled_runs", 2) and background < 2:
        problems.append(
            "variability.controlled_runs: the maximal-background extreme loads nodes beside "
            "the measured job, which on a cluster are variability.slurm.background_nodes "
            f"({background}; loadgen needs at least 2); give some, or controlled_runs: 0 "
            "to leave both extremes out"
        )
    # Steady production runs and the maximal extreme both run loadgen.
    if background and cluster.get("link_mbit") is None:
        problems.append(
            "variability.slurm.link_mbit: null, but loadgen's load is a share of the link "
            "rate: give the rate of a node link in Mbit/s"
        )
    return problems
