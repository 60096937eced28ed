"""``netnoise bench injector``: how exactly libnnlatency delays a ping-pong (seed 004, Sec. 3).

Interleaved pairs of 2-rank ping-pongs on this host, each without and right
after it with a constant delay D on every send, at the MPI and at the TCP level.
Per pair: the median round trip of both runs, the median's rise, the share
of the injector's busy waits that lost their core and the most runnable tasks
(on average over a run's timed region, from its provenance record) of both runs.
Per level: the mean median rise over the undisturbed pairs (few late waits,
no task beside the ranks for long) with its 99% confidence interval, against the
expected 2 D (one delayed send each way) to 2 D + 15% (the TCP level adds
about 4%), and the fastest round trips' rise.

These are timing figures of a shared machine, judged here and not in the test
suite: load inflates the rise even in interleaved pairs, since a 400 us round
trip loses its core far more often than a 1 us one. The test suite checks what
no load can change (every round trip waits at least 2 D; the counts of the
reports), on the same measurements (:func:`measure`).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from scipy import stats

from netnoise import config as netnoise_config
from netnoise import project
from netnoise.build import build_programs
from netnoise.config import validate
from netnoise.io import read_benchmark
from netnoise.platform import from_settings
from netnoise.provenance import read_sidecar
from netnoise.run import run_benchmark
from netnoise.settings import PlatformSettings, overlaid
from netnoise.studies.latency_variation import injector

REPO = project.ROOT
LEVELS = ("mpi", "tcp")
# Each rank on a core of its own: at the tcp level the per-iteration MPI_Allreduce
# of pingpong is delayed as well (outside the timed region), and two ranks sharing
# a core would sit out each other's busy wait inside it.
BOUND = ["--bind-to", "core:overload-allowed", "--map-by", "core"]
TCP_BTL = ["--mca", "btl", "tcp,self", "--mca", "btl_tcp_if_include", "lo"]
# A pair is undisturbed when under this share of its busy waits lost their core...
UNDISTURBED = 0.05
# ... and neither run had more than this many runnable tasks beside its two
# spinning ranks on average: a task there for good takes a rank's core half the
# time, and the late waits alone do not show ranks losing their cores between them.
SPARE_RUNNABLE = 0.5
# The median rise may exceed 2 D by this share.
RISE_MARGIN = 0.15
CONFIDENCE = 0.99


def pingpong(
    bin_dir: Path, work: Path, name: str, mpirun_args: list[str], iterations: int
) -> tuple[np.ndarray, str]:
    """Run a 2-rank pingpong, busy polling (a sleeping wait would add its wake-up to
    the delays measured here); return its round trips (us) and its log. Its CPU
    load is in the provenance record beside ``work/<name>.csv``."""
    defaults = PlatformSettings.of(validate({})["platform"])
    platform = from_settings(
        overlaid(defaults, {"kind": "localhost", "mpirun_args": mpirun_args, "timeout_s": 120})
    )
    out = work / f"{name}.csv"
    log = work / f"{name}.log"
    run_benchmark(
        platform,
        [str(bin_dir / "pingpong"), "--mpi-wait", "spin", "--iterations", str(iterations)],
        ranks=2,
        output=out,
        log=log,
        timeout_s=120,
    )
    return read_benchmark(out).data["rtt_us"].to_numpy(), log.read_text()


@dataclass
class Pair:
    """A ping-pong without the injector and, right after it, one with it."""

    base: np.ndarray
    injected: np.ndarray
    reports: list[dict]  # of the injected run, per rank
    cpu: list[dict]  # the provenance CPU records of both runs

    @property
    def median_rise(self) -> float:
        return float(np.median(self.injected) - np.median(self.base))

    @property
    def late(self) -> float:
        """Share of the busy waits that lost their core: how busy the machine was."""
        return max(int(r["late_delays"]) / max(int(r["delays"]), 1) for r in self.reports)

    @property
    def runnable(self) -> float:
        """The most runnable tasks on average of either run's timed region."""
        return max(float(c["mean_runnable_tasks"]) for c in self.cpu)

    @property
    def undisturbed(self) -> bool:
        crowded = any(c["mean_runnable_tasks"] > c["cores"] + SPARE_RUNNABLE for c in self.cpu)
        return not crowded and self.late < UNDISTURBED


def measure(
    level: str, bin_dir: Path, work: Path, pairs: int, iterations: int, delay_us: int
) -> list[Pair]:
    """``pairs`` interleaved pairs of ``iterations`` round trips at ``level``."""
    work.mkdir(parents=True, exist_ok=True)
    table = injector.write_table(injector.constant_table(delay_us), work / "c.tab", unit="us")
    seed = injector.write_seed(work / "seed", 42)
    env = injector.environment(
        table,
        seed,
        level=level,
        unit="us",
        strict=True,
        report=work / "report.%r",
        library=bin_dir / injector.LIBRARY,
    )
    args = BOUND + (TCP_BTL if level == "tcp" else [])
    exports = injector.mpirun_exports(env)
    measured = []
    for pair in range(pairs):
        base, _ = pingpong(bin_dir, work, f"base{pair}", args, iterations)
        injected, _ = pingpong(bin_dir, work, f"injected{pair}", args + exports, iterations)
        reports = [injector.read_report(work / f"report.{rank}") for rank in (0, 1)]
        cpu = [read_sidecar(work / f"{run}{pair}.csv")["cpu"] for run in ("base", "injected")]
        measured.append(Pair(base, injected, reports, cpu))
    return measured


def fastest_rise(pairs: list[Pair]) -> float:
    """The rise of the fastest round trip: of those that kept their cores."""
    return float(min(p.injected.min() for p in pairs) - min(p.base.min() for p in pairs))


def rise_interval(pairs: list[Pair]) -> tuple[float, float] | None:
    """The CONFIDENCE interval of the mean median rise over the undisturbed pairs,
    or None with fewer than three of them."""
    rises = [p.median_rise for p in pairs if p.undisturbed]
    if len(rises) < 3:
        return None
    half = stats.t.ppf((1 + CONFIDENCE) / 2, len(rises) - 1) * stats.sem(rises)
    return float(np.mean(rises) - half), float(np.mean(rises) + half)


def verdict(interval: tuple[float, float] | None, delay_us: int) -> str:
    """Within the expected range, outside it (the whole interval is), or no verdict."""
    if interval is None:
        return "machine too busy: fewer than 3 undisturbed pairs"
    low, high = interval
    if high < 2 * delay_us or low > (1 + RISE_MARGIN) * 2 * delay_us:
        return "OUTSIDE"
    return "within"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--bin", help="built programs (default: build them into a scratch dir)")
    parser.add_argument("--pairs", type=int, default=6, help="interleaved pairs per level")
    parser.add_argument("--iterations", type=int, default=500, help="round trips per run")
    parser.add_argument("--delay-us", type=int, default=200, help="the constant delay D")
    parser.add_argument("--levels", default=",".join(LEVELS), help="mpi, tcp or both")


def register(benches: argparse._SubParsersAction) -> None:
    parser = benches.add_parser(
        "injector",
        help="median and fastest round-trip rise of a ping-pong under a constant injected delay",
    )
    add_arguments(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    levels = args.levels.split(",")
    if not set(levels) <= set(LEVELS):
        raise netnoise_config.ConfigError(
            f"--levels {args.levels!r}: expected {', '.join(LEVELS)} or both, comma-separated"
        )
    for option, value, least in (
        ("--pairs", args.pairs, 3),  # a confidence interval needs them
        ("--iterations", args.iterations, 1),
        ("--delay-us", args.delay_us, 1),
    ):
        if value < least:
            raise netnoise_config.ConfigError(f"{option} {value}: expected at least {least}")
    if args.bin:
        lacking = [n for n in ("pingpong", injector.LIBRARY) if not (Path(args.bin) / n).is_file()]
        if lacking:
            raise netnoise_config.ConfigError(
                f"--bin {args.bin}: lacks {', '.join(lacking)} (build csrc into it, or leave "
                "--bin out to build them into a scratch directory)"
            )
    d = args.delay_us
    failed = False
    with tempfile.TemporaryDirectory(prefix="netnoise-bench-injector-") as scratch:
        work = Path(scratch)
        bin_dir = Path(args.bin) if args.bin else work / "bin"
        if not args.bin:
            build_programs(REPO / "csrc", bin_dir, mpicc="mpicc", cflags="-O2",
                           log=work / "build.log", build_dir=work / "objects")  # fmt: skip
        for level in levels:
            pairs = measure(level, bin_dir, work / level, args.pairs, args.iterations, d)
            print(f"{level} level, D = {d} us, {args.iterations} round trips per run:")
            for i, p in enumerate(pairs):
                print(
                    f"  pair {i + 1}: median {np.median(p.base):9.3f} -> "
                    f"{np.median(p.injected):9.3f} us, rise {p.median_rise:8.1f} us, "
                    f"{p.late:6.1%} of the waits late, {p.runnable:5.2f} runnable tasks"
                    f"{'' if p.undisturbed else ' (disturbed)'}"
                )
            interval = rise_interval(pairs)
            shown = "-" if interval is None else f"{interval[0]:.1f} to {interval[1]:.1f} us"
            print(
                f"  mean median rise ({CONFIDENCE:.0%}): {shown}; expected {2 * d} to "
                f"{(1 + RISE_MARGIN) * 2 * d:g} us: {verdict(interval, d)}"
            )
            ontime = [r["ontime_mean_ns"] / 1000 for p in pairs for r in p.reports]
            print(
                f"  fastest round trip rise {fastest_rise(pairs):.1f} us; on-time waits "
                f"{min(ontime):.2f} to {max(ontime):.2f} us for D = {d} us",
                flush=True,
            )
            failed |= verdict(interval, d) == "OUTSIDE"
    print(
        f"{os.cpu_count()} cores, load average {' '.join(f'{v:.2f}' for v in os.getloadavg())}",
        file=sys.stderr,
    )
    return 1 if failed else 0
