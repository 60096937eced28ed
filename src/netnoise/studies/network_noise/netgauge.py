"""Netgauge's ``collvsnoise`` pattern beside netnoise's noise benchmark (seed 001, Sec. 2).

Netgauge implements the seed's benchmark as ``netgauge -m mpi -x collvsnoise``.
For every application-communicator size ``c`` from the ``--commsize`` range
(in steps of 2) it splits the ranks at random, times 10 back-to-back 8-byte
``MPI_Allreduce`` in the ``c``-rank communicator while the other ranks exchange
10 MiB messages with a partner, then times them again without perturbation,
``-c`` times. Per ``c`` it prints one summary line, in microseconds per 10
collectives averaged over the ranks::

    # acc: P c size :: mean_quiet (median_quiet), mean_perturbed (median_perturbed)

Its perturbation is fixed at compile time (pairs, 10 MiB) as is its collective
(Allreduce); netnoise's ``noise`` makes both configurable and draws a random
permutation, so the comparison is at the ratios both ran.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

import pandas as pd

from netnoise.sim.congestion import perturber_count

#: Collectives Netgauge times back to back per sample.
CALLS_PER_SAMPLE = 10
PERTURB_BYTES = 10 * 1024 * 1024
_ACC = re.compile(r"^# acc: (\S+) (\S+) (\S+) :: (\S+) \((\S+)\), (\S+) \((\S+)\)\s*$")
_ACC_FIELDS = (
    "allocation",
    "application ranks",
    "size",
    "unperturbed mean",
    "unperturbed median",
    "perturbed mean",
    "perturbed median",
)


def _acc_values(line: str) -> tuple[list[int], list[float]] | str:
    """The three counts and four times of one ``# acc:`` line, or what is wrong with it."""
    match = _ACC.match(line)
    if match is None:
        return "not 'P c size :: mean (median), mean (median)'"
    tokens = match.groups()
    counts = []
    for name, token in zip(_ACC_FIELDS[:3], tokens[:3], strict=True):
        if not token.isdigit():
            return f"{name} {token!r} is not a whole number"
        counts.append(int(token))
    times = []
    for name, token in zip(_ACC_FIELDS[3:], tokens[3:], strict=True):
        try:
            value = float(token)
        except ValueError:
            return f"{name} {token!r} is not a number"
        if not math.isfinite(value):
            return f"{name} is {token!r}"
        times.append(value)
    return counts, times


def parse_collvsnoise(text: str) -> pd.DataFrame:
    """The ``# acc:`` lines of a collvsnoise run, per collective call, one row per size.

    Every ``# acc:`` line must hold finite numbers: Netgauge prints ``nan`` or
    ``inf`` when a size produced no valid sample, and a line that does not
    parse is no measurement either. Such lines raise ``ValueError`` naming
    each of them (line number, problem, text) rather than leaving a size
    silently out of the table.
    """
    rows, problems = [], []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.startswith("# acc:"):
            continue
        values = _acc_values(line)
        if isinstance(values, str):
            problems.append(f"line {number}: {values}: {line.strip()[:120]}")
            continue
        (ranks, app, size), times = values
        quiet_mean, quiet_median, pert_mean, pert_median = (t / CALLS_PER_SAMPLE for t in times)
        rows.append(
            {
                "allocation": ranks,
                "application_ranks": app,
                "ratio": (ranks - app) / ranks,
                "size_bytes": size,
                "unperturbed_mean_us": quiet_mean,
                "unperturbed_median_us": quiet_median,
                "perturbed_mean_us": pert_mean,
                "perturbed_median_us": pert_median,
            }
        )
    if problems:
        raise ValueError(
            f"collvsnoise output: {len(problems)} summary line(s) without a measurement:\n"
            + "\n".join(problems)
        )
    return pd.DataFrame(rows)


def application_sizes(allocation: int, ratios: Sequence[float]) -> list[int]:
    """Application-communicator sizes of noise's ratios: noise perturbs ``lround(ratio ×
    ranks)`` ranks (halves away from zero, as the simulator's perturber count)."""
    return sorted({allocation - perturber_count(allocation, r) for r in ratios})


def size_problems(allocation: int, ratios: Sequence[float]) -> list[str]:
    """Why Netgauge cannot run these ratios: it steps the size by 2 and pairs the perturbers."""
    sizes = application_sizes(allocation, ratios)
    problems = []
    if len({s % 2 for s in sizes}) > 1:
        problems.append(
            f"application communicator sizes {sizes} (of {allocation} ranks) mix odd and "
            "even, but Netgauge steps the size by 2"
        )
    odd = [allocation - s for s in sizes if (allocation - s) % 2]
    if odd:
        problems.append(
            f"perturbing ranks {odd} (of {allocation}) are odd, but Netgauge pairs them"
        )
    return problems


def collvsnoise_argv(
    binary: str, tests: int, allocation: int, ratios: Sequence[float]
) -> list[str]:
    """Netgauge's command line covering every ratio."""
    sizes = application_sizes(allocation, ratios)
    return [
        binary,
        "-c",
        str(tests),
        "-m",
        "mpi",
        "-x",
        "collvsnoise",
        "--commsize",
        f"{sizes[0]}-{sizes[-1]}",
    ]


def comparison(ours: pd.DataFrame, netgauge: pd.DataFrame, perturb_bytes: int) -> pd.DataFrame:
    """Allreduce slowdown of both benchmarks at the splits both ran, side by side.

    ``ours`` is the noise benchmark's slowdown table, ``netgauge`` the tidy
    collvsnoise rows; slowdowns are perturbed mean / unperturbed mean in %.
    Rows pair on the allocation and the number of perturbing ranks (noise's
    configured ratio rounded as noise rounds it); ``ratio`` is the share of
    perturbing ranks both ran. Netgauge's run carries its CPU record (``cpu_*``
    of the tidy rows, nan without one): all its ranks poll, so on few cores it
    may time the cores rather than the network.
    """
    mine = ours[ours["collective"] == "allreduce"]
    perturbing = pd.Series(
        [
            perturber_count(int(n), r)
            for n, r in zip(mine["allocation"], mine["ratio"], strict=True)
        ],
        index=mine.index,
        dtype=int,
    )
    rows = []
    for _, theirs in netgauge.iterrows():
        match = mine[
            (mine["allocation"] == theirs["allocation"])
            & (perturbing == theirs["allocation"] - theirs["application_ranks"])
        ]
        if match.empty:
            continue
        row = match.iloc[0]
        rows.append(
            {
                "allocation": int(theirs["allocation"]),
                "ratio": float(theirs["ratio"]),
                "netnoise_unperturbed_mean_us": row["unperturbed_mean_us"],
                "netnoise_perturbed_mean_us": row["perturbed_mean_us"],
                "netnoise_slowdown_pct": row["slowdown_pct"],
                "netnoise_perturb_bytes": perturb_bytes,
                "netgauge_unperturbed_mean_us": theirs["unperturbed_mean_us"],
                "netgauge_perturbed_mean_us": theirs["perturbed_mean_us"],
                "netgauge_slowdown_pct": 100
                * theirs["perturbed_mean_us"]
                / theirs["unperturbed_mean_us"],
                "netgauge_perturb_bytes": PERTURB_BYTES,
                "netgauge_cpu_mean_runnable": theirs.get("cpu_mean_runnable", math.nan),
                "netgauge_cpu_saturated": theirs.get("cpu_saturated", math.nan),
            }
        )
    return pd.DataFrame(rows)
