"""``netnoise topology describe`` and ``netnoise simulate``.

:func:`register` adds both sub-commands to the ``netnoise`` argument parser; every
handler returns the exit code (2 for a bad SPEC or impossible settings, with the reason
on stderr).
"""

from __future__ import annotations

import argparse
import json
import sys
import time

from netnoise.atomic import write_csv
from netnoise.sim.congestion import MAX_RUNS, layout, simulate, summarize
from netnoise.sim.patterns import COLLECTIVES
from netnoise.sim.routing import RoutingError
from netnoise.sim.topology import SPEC_FORMS, SpecError, parse_spec

SPEC_HELP = f"topology: {SPEC_FORMS}"


def _fail(err: Exception | str) -> int:
    print(f"netnoise: {err}", file=sys.stderr)
    return 2


def _cmd_describe(args: argparse.Namespace) -> int:
    try:
        topo = parse_spec(args.spec)
    except (SpecError, OSError) as err:
        return _fail(err)
    info = topo.describe()
    if args.json:
        print(json.dumps(info))
    else:
        print(
            f"{topo.spec}: {info['endpoints']} endpoints, {info['switches']} switches, "
            f"{info['links']} links"
        )
    return 0


class _Progress:
    """Runs done, on stderr, every ``every_s`` seconds of a long simulation."""

    def __init__(self, total: int, every_s: float = 2.0) -> None:
        self.total, self.every_s = total, every_s
        self.start = self.shown = time.monotonic()

    def __call__(self, done: int) -> None:
        now = time.monotonic()
        if now - self.shown >= self.every_s and done < self.total:
            self.shown = now
            rate = done / (now - self.start)
            print(
                f"netnoise: {done} of {self.total} runs simulated, about "
                f"{(self.total - done) / rate:.0f} s left",
                file=sys.stderr,
                flush=True,
            )


def _fmt(stats: dict[str, float], digits: int = 3) -> str:
    f = f"{{:.{digits}f}}"
    return (
        f"mean {f.format(stats['mean'])}  median {f.format(stats['median'])}  "
        f"95% interval of runs [{f.format(stats['p2.5'])}, {f.format(stats['p97.5'])}]"
    )


def _cmd_simulate(args: argparse.Namespace) -> int:
    try:
        topo = parse_spec(args.topology)
        plan = layout(topo.n_endpoints, args.ratio, args.processes)
        frame = simulate(
            topo,
            args.collective,
            args.ratio,
            args.runs,
            args.seed,
            args.processes,
            progress=_Progress(args.runs),
        )
    except (SpecError, RoutingError, ValueError, OSError) as err:
        return _fail(err)
    info = topo.describe()
    print(
        f"{topo.spec}: {info['endpoints']} endpoints, {info['switches']} switches, "
        f"{info['links']} links"
    )
    print(
        f"{args.collective} on {plan.processes} processes ({int(frame['levels'].iloc[0])} levels), "
        f"{plan.perturbers} perturbing endpoints (ratio {args.ratio:g}), {plan.idle} idle; "
        f"{args.runs} runs, seed {args.seed}"
    )
    slow = summarize(frame["slowdown"])
    print(
        f"slowdown (perturbed / unperturbed time): {_fmt(slow)}  "
        f"(95% CI of the mean [{slow['mean_ci_low']:.3f}, {slow['mean_ci_high']:.3f}])"
    )
    print(
        "overhead (perturbed - unperturbed, congestion units): "
        f"{_fmt(summarize(frame['overhead']), 2)}"
    )
    print(f"unperturbed time: {_fmt(summarize(frame['t_unperturbed']), 2)}")
    if args.out:
        try:
            write_csv(args.out, frame)
        except OSError as err:
            return _fail(f"{args.out}: cannot write ({err})")
        print(f"wrote {len(frame)} rows to {args.out}")
    return 0


def _ratio(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not 0 <= value < 1:
        raise argparse.ArgumentTypeError(f"must be in [0, 1), got {text}")
    return value


def _positive(text: str, most: int | None = None) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if value < 1 or (most is not None and value > most):
        bound = f"in [1, {most}]" if most is not None else ">= 1"
        raise argparse.ArgumentTypeError(f"must be {bound}, got {text}")
    return value


def _runs(text: str) -> int:
    return _positive(text, MAX_RUNS)


def _seed(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be >= 0, got {text}")
    return value


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``topology describe`` and ``simulate`` to the ``netnoise`` CLI."""
    topology = subparsers.add_parser(
        "topology", help="network topologies of the congestion simulator"
    )
    actions = topology.add_subparsers(dest="action", required=True)
    describe = actions.add_parser(
        "describe", help="count the endpoints, switches and links (cables) of SPEC"
    )
    describe.add_argument("spec", metavar="SPEC", help=SPEC_HELP)
    describe.add_argument(
        "--json",
        action="store_true",
        help='print {"endpoints": ..., "switches": ..., "links": ...}',
    )
    describe.set_defaults(func=_cmd_describe)

    sim = subparsers.add_parser(
        "simulate",
        help="dependency-based congestion simulation of a collective under network noise",
        description=(
            "Random runs of the seed-001 simulation (Sec. 3): the application's processes "
            "on random endpoints, every perturbing endpoint sending to another perturbing "
            "endpoint, each message costing the maximum congestion along its path, the "
            "collective's time the longest path through the dependency graph.  Slowdown = "
            "perturbed / unperturbed time of the same run."
        ),
    )
    sim.add_argument("--topology", required=True, metavar="SPEC", help=SPEC_HELP)
    sim.add_argument(
        "--collective", required=True, choices=COLLECTIVES, help="the pattern the ranks run"
    )
    sim.add_argument(
        "--ratio",
        required=True,
        type=_ratio,
        help="perturbation ratio: fraction of all endpoints that perturb, round(R*N)",
    )
    sim.add_argument(
        "--runs",
        type=_runs,
        default=1000,
        help=f"random runs, at most {MAX_RUNS} (default: 1000); progress on stderr when long",
    )
    sim.add_argument("--seed", type=_seed, default=1, help="seed of the runs (default: 1)")
    sim.add_argument(
        "--processes",
        type=_positive,
        help="application processes (default: all endpoints that do not perturb, "
        "N - round(R*N), as in the paper)",
    )
    sim.add_argument("--out", metavar="FILE", help="write one CSV row per run to FILE")
    sim.set_defaults(func=_cmd_simulate)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="netnoise", description="The congestion simulator.")
    register(parser.add_subparsers(dest="command", required=True))
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
