"""``netnoise predict asymmetric``: predicted link times of a pattern (seed 003).

PLATFORM.yaml and PATTERN.csv are read by :mod:`netnoise.studies.asymmetric.files`.
Output on stdout: CSV ``src,dst,bytes,time_s``, one row per link in input
order. A bad file gives ``netnoise: FILE:LINE: problem`` on stderr and exit
status 2.
"""

from __future__ import annotations

import argparse
import sys

from netnoise.studies.asymmetric.files import load_pattern, load_platform
from netnoise.studies.asymmetric.model import MODELS, PATTERN_COLUMNS, predict


def run(args: argparse.Namespace) -> int:
    """Print the predicted time of every link as CSV; 2 on bad input."""
    try:
        platform = load_platform(args.platform)
        pattern = load_pattern(args.pattern, platform)
        frame = predict(platform, pattern, args.model)
    except ValueError as err:
        print(f"netnoise: {err}", file=sys.stderr)
        return 2
    frame[[*PATTERN_COLUMNS, "time_s"]].to_csv(sys.stdout, index=False)
    return 0


def _model_subparsers(predict_parser: argparse.ArgumentParser):
    # argparse keeps a parser's sub-parsers among its (private) actions; another
    # model may have created `predict` first, so its sub-parsers are reused.
    for action in predict_parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return action
    return predict_parser.add_subparsers(dest="action", required=True, metavar="MODEL")


def register(subparsers) -> None:
    """Add ``predict asymmetric`` to the top-level sub-parsers of ``netnoise``."""
    predict_parser = subparsers.choices.get("predict")
    if predict_parser is None:
        predict_parser = subparsers.add_parser(
            "predict", help="predict communication times with a model of the studies"
        )
    models = _model_subparsers(predict_parser)
    cmd = models.add_parser(
        "asymmetric",
        help="link times of concurrent transfers on racks of Ethernet nodes (seed 003)",
        description="Predict the time of every link of a pattern of simultaneous transfers "
        "with the asymmetric bottleneck model (Algorithms 1 and 2 of seed 003) or its "
        "fairness-only baseline. Prints CSV src,dst,bytes,time_s in input order.",
    )
    cmd.add_argument(
        "--platform",
        required=True,
        metavar="PLATFORM.yaml",
        help="racks (rack name -> node names), nic_bps, backbone_bps",
    )
    cmd.add_argument(
        "--pattern", required=True, metavar="PATTERN.csv", help="CSV with header src,dst,bytes"
    )
    cmd.add_argument("--model", choices=MODELS, default="asymmetric", help="(default: %(default)s)")
    cmd.set_defaults(func=run)


def main(argv: list[str] | None = None) -> int:
    """Stand-alone entry: ``python -m netnoise.studies.asymmetric.cli predict asymmetric ...``."""
    parser = argparse.ArgumentParser(prog="netnoise")
    register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
