"""The ``netnoise`` command."""

from __future__ import annotations

import argparse
import sys

import yaml

from netnoise import __version__, config, io, studies


def _cmd_version(_: argparse.Namespace) -> int:
    print(f"netnoise {__version__}")
    return 0


def _cmd_studies(_: argparse.Namespace) -> int:
    print("\n".join(studies.status_lines()))
    return 0


def _cmd_config_check(args: argparse.Namespace) -> int:
    resolved = config.load(args.file)
    if args.show:
        yaml.safe_dump(resolved, sys.stdout, sort_keys=False)
    else:
        print(f"{args.file}: valid")
    return 0


def _cmd_parse(args: argparse.Namespace) -> int:
    frame = io.tidy(io.read_benchmark(args.file))
    frame.to_csv(sys.stdout, index=False)
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="netnoise", description="Reproducible experiments on network interference."
    )
    sub = parser.add_subparsers(dest="command", required=True)

    sub.add_parser("version", help="print the version").set_defaults(func=_cmd_version)
    sub.add_parser(
        "studies", help="list the five studies and whether the workflow implements them"
    ).set_defaults(func=_cmd_studies)

    check = sub.add_parser("config", help="validate a workflow config file").add_subparsers(
        dest="action", required=True
    )
    check_cmd = check.add_parser("check", help="validate FILE against the schema")
    check_cmd.add_argument("file")
    check_cmd.add_argument("--show", action="store_true", help="print it with defaults filled in")
    check_cmd.set_defaults(func=_cmd_config_check)

    parse = sub.add_parser("parse", help="print a benchmark result file as a tidy CSV")
    parse.add_argument("file")
    parse.set_defaults(func=_cmd_parse)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except (config.ConfigError, io.BenchmarkFormatError, FileNotFoundError) as err:
        print(f"netnoise: {err}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
