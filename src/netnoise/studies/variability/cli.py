"""``netnoise variability``: seed 002's variability estimate of one run, from its counters.

Commands::

    netnoise variability estimate RUN --model MODEL [--json]
        [--runtime-s T] [--nodes N1,N2,...] [--node-count N]
    netnoise variability metrics RUN [--runtime-s T] [--nodes ...] [--node-count N]
    netnoise variability train RUN_DIR [RUN_DIR ...] --model MODEL [--cv K]
        [--inner-cv K] [--bound-level P] [--seed N]

RUN is a run directory (RUN_DIR) or a counters CSV. A run directory holds the
run's counter samples, ``counters.csv``, and its description, ``run.json``
(nodes, runtime and, to train, application); see
:mod:`netnoise.studies.variability.metrics` for both formats and how the counters
map to the paper's. A counters CSV alone describes nothing but its counters:
the job's nodes are the devices of its ``node_nic`` rows and its runtime the
span of its samples, unless ``--nodes`` and ``--runtime-s`` say otherwise
(options for a counters CSV only: a run directory's ``run.json`` gives them).

``estimate`` prints ``z ± bound`` (runtime standard deviations from the mean of
the application at that node count) and what it says of the run's network
conditions, or that no prediction can be given and why; exit code 0 either way
(``--json`` for scripts). A missing or malformed file gives a message and exit
code 2.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path
from typing import Any

from netnoise.studies.variability.config import minimum_runs
from netnoise.studies.variability.metrics import (
    RunDirError,
    metrics_of,
    metrics_of_counters,
    training_table,
)
from netnoise.studies.variability.model import Fitting, estimate, train
from netnoise.studies.variability.model_file import load_model, save_model

VERDICTS = {
    "congested": "ran in congested conditions (slower than a typical run beyond the bound)",
    "favourable": "ran in favourable conditions (faster than a typical run beyond the bound)",
    "typical": "typical network conditions (0 within the bound)",
}


def _fail(err: Exception) -> int:
    print(f"netnoise: {err}", file=sys.stderr)
    return 2


def _jsonable(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _run_metrics(args: argparse.Namespace) -> dict[str, Any]:
    """The metrics of RUN: a run directory, or a counters CSV with the options."""
    given = {
        option: value
        for option, value in (
            ("--runtime-s", args.runtime_s),
            ("--nodes", args.nodes),
            ("--node-count", args.node_count),
        )
        if value is not None
    }
    if Path(args.run).is_dir():
        if given:
            raise RunDirError(
                f"{', '.join(given)}: for a counters CSV only; {args.run}/run.json gives them"
            )
        return metrics_of(args.run)
    return metrics_of_counters(
        args.run,
        nodes=args.nodes.split(",") if args.nodes is not None else None,
        runtime_s=args.runtime_s,
        node_count=args.node_count,
    )


def _cmd_estimate(args: argparse.Namespace) -> int:
    try:
        metrics = _run_metrics(args)
        model = load_model(args.model)
    except (ValueError, OSError) as err:
        return _fail(err)
    result = estimate(model, metrics)
    if args.json:
        out = {k: _jsonable(v) for k, v in result.items()}
        out["run"] = str(args.run)
        out["application"] = metrics.get("application")
        print(json.dumps(out, indent=2, sort_keys=True))
        return 0
    app = metrics.get("application")
    label = f"{args.run} ({app + ', ' if app else ''}{metrics['nodes']} nodes)"
    if result["z"] is None:
        print(f"{label}: no prediction can be given: {result['reason']}")
    else:
        print(
            f"{label}: variability estimate {result['z']:+.2f} ± {result['bound']:.2f}: "
            f"{VERDICTS[result['verdict']]}"
        )
    return 0


def _cmd_metrics(args: argparse.Namespace) -> int:
    try:
        metrics = _run_metrics(args)
    except (RunDirError, OSError) as err:
        return _fail(err)
    print(json.dumps({k: _jsonable(v) for k, v in metrics.items()}, indent=2, sort_keys=True))
    return 0


def _cmd_train(args: argparse.Namespace) -> int:
    try:
        minimum_runs(args.cv, args.inner_cv, args.bound_level)  # refuses impossible splits
        table = training_table(args.run_dirs)
        fitting = Fitting(
            cv=args.cv, inner_cv=args.inner_cv, seed=args.seed, level=args.bound_level
        )
        model = train(table, fitting)
        save_model(args.model, model)
    except (ValueError, OSError) as err:
        return _fail(err)
    print(
        f"{args.model}: trained on {sum(model.applications.values())} runs of "
        f"{len(model.applications)} application(s); {args.cv}-fold R² {model.cv_r2:.2f} "
        f"(the grid's best); bound {model.bound_scale:.2f} x the trees' spread; out of fold: "
        f"estimate given for {model.coverage:.0%}, true z within it for "
        f"{model.containment:.0%}"
    )
    return 0


def _run_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "run", metavar="RUN", help="run directory (counters.csv, run.json) or a counters CSV"
    )
    parser.add_argument(
        "--runtime-s",
        type=float,
        help="counters CSV: the run's runtime (default: the span of its samples)",
    )
    parser.add_argument(
        "--nodes",
        help="counters CSV: the job's nodes, comma-separated (default: its node_nic devices)",
    )
    parser.add_argument(
        "--node-count", type=int, help="counters CSV: the job's node count (default: its nodes)"
    )


def register(subparsers: Any) -> argparse.ArgumentParser:
    """Add ``variability`` to the top-level ``netnoise`` subparsers."""
    parser = subparsers.add_parser(
        "variability", help="seed 002: how far a run's runtime is from typical, from its counters"
    )
    sub = parser.add_subparsers(dest="action", required=True)
    est = sub.add_parser("estimate", help="variability estimate z ± bound of RUN")
    _run_arguments(est)
    est.add_argument("--model", required=True, help="model file written by 'train'")
    est.add_argument("--json", action="store_true", help="print the result as JSON")
    est.set_defaults(func=_cmd_estimate)
    met = sub.add_parser("metrics", help="print the Table III metrics of RUN as JSON")
    _run_arguments(met)
    met.set_defaults(func=_cmd_metrics)
    tr = sub.add_parser("train", help="train the SVR + random-forest model on run directories")
    tr.add_argument(
        "run_dirs", metavar="RUN_DIR", nargs="+", help="campaign run folders to train on"
    )
    tr.add_argument("--model", required=True, help="model file to write")
    tr.add_argument("--cv", type=int, default=10, help="cross-validation folds (default 10)")
    tr.add_argument(
        "--inner-cv",
        type=int,
        default=5,
        help="folds inside each training fold that choose the grid and the bound (default 5)",
    )
    tr.add_argument(
        "--bound-level",
        type=float,
        default=0.9,
        help="share of new runs whose true z the bound is to hold (default 0.9)",
    )
    tr.add_argument(
        "--seed", type=int, default=0, help="seed of the folds and forests (default: 0)"
    )
    tr.set_defaults(func=_cmd_train)
    return parser
