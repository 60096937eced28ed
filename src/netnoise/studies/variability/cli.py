"""``netnoise variability``: seed 002's variability estimate of one run, from its counters.

Commands::

    netnoise variability estimate RUN_DIR --model MODEL [--json]
    netnoise variability metrics RUN_DIR
    netnoise variability train RUN_DIR [RUN_DIR ...] --model MODEL [--cv K] [--seed N]

A run directory (RUN_DIR) holds:

- ``counters.csv``: the run's network counter samples in the tidy format of
  :mod:`netnoise.counters`, columns ``time_s,device,port,role,counter,value``
  (read with :func:`netnoise.counters.csvimport.read`, so ``role`` may be left
  out and defaults to ``node_nic``). At least a sample at the start and one at
  the end of the run; more samples in between add the time distribution.
  Roles: ``node_nic`` (the job's NICs), ``switch_port``, ``uplink``,
  ``core_port`` (the network queues its traffic meets). Counters: ``tx_bytes``,
  ``tx_packets``, and a stall counter, ``qdisc_overlimits`` (testbed) or
  ``xmit_wait_ticks`` (InfiniBand PortXmitWait). See
  :mod:`netnoise.studies.variability.model` for how they map to the paper's.
- ``run.json``: an object with

  - ``nodes`` (required): list of the job's node names, as in the ``device`` of
    their ``node_nic`` rows (or ``NODE:HCA``);
  - ``runtime_s`` (required): the run's runtime in seconds;
  - ``application`` (required by ``train``): the application's name; runs are
    standardised per application and node count;
  - ``node_count`` (optional): the job's number of nodes, if not ``len(nodes)``;
  - ``network_ports`` (optional): ``[[device, port], ...]``, the network
    queues that count as the job's (default: every network row of the file).

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

import pandas as pd

from netnoise.counters import csvimport
from netnoise.studies.variability import model as variability

VERDICTS = {
    "congested": "ran in congested conditions (slower than a typical run beyond the bound)",
    "favourable": "ran in favourable conditions (faster than a typical run beyond the bound)",
    "typical": "typical network conditions (0 within the bound)",
}


class RunDirError(ValueError):
    """A run directory that cannot be read; the message says what is wrong."""


def read_run_dir(path: str | Path) -> tuple[pd.DataFrame, dict[str, Any]]:
    """The counter samples and the run description of RUN_DIR (checked)."""
    run_dir = Path(path)
    if not run_dir.is_dir():
        raise RunDirError(f"{run_dir}: not a directory")
    info_path, counters_path = run_dir / "run.json", run_dir / "counters.csv"
    for needed in (info_path, counters_path):
        if not needed.is_file():
            raise RunDirError(f"{needed}: missing (a run directory holds run.json, counters.csv)")
    try:
        info = json.loads(info_path.read_text())
    except json.JSONDecodeError as err:
        raise RunDirError(f"{info_path}: not valid JSON ({err})") from err
    if not isinstance(info, dict):
        raise RunDirError(f"{info_path}: must hold a JSON object")
    nodes = info.get("nodes")
    if not isinstance(nodes, list) or not nodes or not all(isinstance(n, str) for n in nodes):
        raise RunDirError(f"{info_path}: 'nodes' must be a non-empty list of node names")
    runtime = info.get("runtime_s")
    if isinstance(runtime, bool) or not isinstance(runtime, int | float) or not runtime > 0:
        raise RunDirError(f"{info_path}: 'runtime_s' must be a positive number")
    if not math.isfinite(runtime):
        raise RunDirError(f"{info_path}: 'runtime_s' must be finite")
    count = info.get("node_count")
    if count is not None and (isinstance(count, bool) or not isinstance(count, int) or count < 1):
        raise RunDirError(f"{info_path}: 'node_count' must be a positive integer")
    ports = info.get("network_ports")
    if ports is not None and not (
        isinstance(ports, list)
        and all(
            isinstance(p, list) and len(p) == 2 and all(isinstance(x, str) for x in p)
            for p in ports
        )
    ):
        raise RunDirError(f"{info_path}: 'network_ports' must be a list of [device, port]")
    try:
        samples = csvimport.read(counters_path)
    except pd.errors.EmptyDataError as err:
        raise RunDirError(f"{counters_path}: empty file") from err
    except ValueError as err:  # csvimport's own messages, and pandas' ParserError
        raise RunDirError(f"{counters_path}: not a counter CSV: {err}") from err
    if samples.empty:
        raise RunDirError(f"{counters_path}: no counter rows")
    return samples, info


def metrics_of(path: str | Path) -> dict[str, Any]:
    """Table III metrics of the run in RUN_DIR, with its application and runtime."""
    samples, info = read_run_dir(path)
    ports = info.get("network_ports")
    try:
        metrics = variability.run_metrics(
            samples,
            info["nodes"],
            float(info["runtime_s"]),
            network_ports=[tuple(p) for p in ports] if ports is not None else None,
            node_count=info.get("node_count"),
        )
    except ValueError as err:
        raise RunDirError(f"{path}: {err}") from err
    metrics["application"] = info.get("application")
    metrics["runtime_s"] = float(info["runtime_s"])
    return metrics


def _fail(err: Exception) -> int:
    print(f"netnoise variability: {err}", file=sys.stderr)
    return 2


def _jsonable(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _cmd_estimate(args: argparse.Namespace) -> int:
    try:
        metrics = metrics_of(args.run_dir)
        model = variability.load_model(args.model)
    except (RunDirError, ValueError, FileNotFoundError) as err:
        return _fail(err)
    result = variability.estimate(model, metrics)
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
    except (RunDirError, FileNotFoundError) as err:
        return _fail(err)
    print(json.dumps({k: _jsonable(v) for k, v in metrics.items()}, indent=2, sort_keys=True))
    return 0


def _cmd_train(args: argparse.Namespace) -> int:
    try:
        rows = []
        for run_dir in args.run_dirs:
            metrics = metrics_of(run_dir)
            if not metrics.get("application"):
                raise RunDirError(f"{run_dir}/run.json: 'application' is needed for training")
            rows.append(metrics)
        model = variability.train(pd.DataFrame(rows), cv=args.cv, seed=args.seed)
    except (RunDirError, ValueError, FileNotFoundError) as err:
        return _fail(err)
    variability.save_model(args.model, model)
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
