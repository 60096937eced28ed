"""``netnoise variability``: seed 002's variability estimate of one run, from its counters.

Commands::

    netnoise variability estimate RUN_DIR --model MODEL [--json]
    netnoise variability metrics RUN_DIR
    netnoise variability train RUN_DIR [RUN_DIR ...] --model MODEL [--cv K] [--seed N]

A run directory (RUN_DIR) holds the run's counter samples, ``counters.csv``, and
its description, ``run.json`` (nodes, runtime and, to train, application); see
:mod:`netnoise.studies.variability.metrics` for both formats and how the counters
map to the paper's.

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
from typing import Any

from netnoise.studies.variability.metrics import RunDirError, metrics_of, training_table
from netnoise.studies.variability.model import estimate, load_model, save_model, train

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


def _cmd_estimate(args: argparse.Namespace) -> int:
    try:
        metrics = metrics_of(args.run_dir)
        model = load_model(args.model)
    except (ValueError, OSError) as err:
        return _fail(err)
    result = estimate(model, metrics)
    if args.json:
        out = {k: _jsonable(v) for k, v in result.items()}
        out["run_dir"] = str(args.run_dir)
        out["application"] = metrics.get("application")
        print(json.dumps(out, indent=2, sort_keys=True))
        return 0
    app = metrics.get("application")
    label = f"{args.run_dir} ({app + ', ' if app else ''}{metrics['nodes']} nodes)"
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
        metrics = metrics_of(args.run_dir)
    except (RunDirError, OSError) as err:
        return _fail(err)
    print(json.dumps({k: _jsonable(v) for k, v in metrics.items()}, indent=2, sort_keys=True))
    return 0


def _cmd_train(args: argparse.Namespace) -> int:
    try:
        table = training_table(args.run_dirs)
        model = train(table, cv=args.cv, seed=args.seed)
        save_model(args.model, model)
    except (ValueError, OSError) as err:
        return _fail(err)
    print(
        f"{args.model}: trained on {sum(model.applications.values())} runs of "
        f"{len(model.applications)} application(s); {args.cv}-fold R² {model.cv_r2:.2f}, "
        f"coverage {model.coverage:.0%}, containment {model.containment:.0%}"
    )
    return 0


def register(subparsers: Any) -> argparse.ArgumentParser:
    """Add ``variability`` to the top-level ``netnoise`` subparsers."""
    parser = subparsers.add_parser(
        "variability", help="seed 002: how far a run's runtime is from typical, from its counters"
    )
    sub = parser.add_subparsers(dest="action", required=True)
    est = sub.add_parser("estimate", help="variability estimate z ± bound of RUN_DIR")
    est.add_argument("run_dir", metavar="RUN_DIR", help="directory with counters.csv, run.json")
    est.add_argument("--model", required=True, help="model file written by 'train'")
    est.add_argument("--json", action="store_true", help="print the result as JSON")
    est.set_defaults(func=_cmd_estimate)
    met = sub.add_parser("metrics", help="print the Table III metrics of RUN_DIR as JSON")
    met.add_argument("run_dir", metavar="RUN_DIR")
    met.set_defaults(func=_cmd_metrics)
    tr = sub.add_parser("train", help="train the SVR + random-forest model on run directories")
    tr.add_argument("run_dirs", metavar="RUN_DIR", nargs="+")
    tr.add_argument("--model", required=True, help="model file to write")
    tr.add_argument("--cv", type=int, default=10, help="cross-validation folds (default 10)")
    tr.add_argument("--seed", type=int, default=0)
    tr.set_defaults(func=_cmd_train)
    return parser
