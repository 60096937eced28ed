"""Files and settings of the latency injector ``libnnlatency.so`` (seed 004, Sec. 3).

The injector (``csrc/injector``, loaded with ``LD_PRELOAD``) holds every send
of a process back by a delay drawn from a *distribution table*: 512 lines of
8 space-separated non-negative integers, 4096 delays in all, indexed by 12
random bits. A *seed file* holds one integer. This module writes and checks
those files, predicts the delays a seed draws, builds the ``NN_LATENCY_*``
environment and reads the report the library writes at exit.

Example: a log-normal delay distribution, in nanoseconds::

    from scipy import stats
    table = quantile_table(stats.lognorm(s=0.5, scale=20_000).ppf)
    write_table(table, "lognormal.tab")
    write_seed("seed", 1)
    env = environment("lognormal.tab", "seed", level="mpi", report="injector.%r")
"""

from __future__ import annotations

import operator
import os
from collections.abc import Iterable
from pathlib import Path

import numpy as np

from netnoise.atomic import atomic_open
from netnoise.platform.base import mpirun_exports as mpirun_exports

ROWS = 512
COLUMNS = 8
TABLE_SIZE = ROWS * COLUMNS
INDEX_BITS = 12
LEVELS = ("mpi", "tcp")
#: spin: the paper's busy wait; sleep: give the core away until shortly before the deadline.
WAITS = ("spin", "sleep")
#: The longest busy-waited end of a sleeping wait the library takes (µs).
MAX_SLEEP_MARGIN_US = 10000
UNITS = {"ns": 1, "us": 1000}
#: The library refuses larger per-send delays: they would hang the run.
MAX_DELAY_NS = 60_000_000_000
LIBRARY = "libnnlatency.so"
REPORT_FORMAT = "nnlatency-report-1"

# The injector's generator (csrc/injector/nnlat.h): SplitMix64 scrambles the
# seed, then an LCG modulo 2**64 with Knuth's MMIX constants; the table index
# is the top 12 bits of each new state.
_MASK = (1 << 64) - 1
_LCG_A = 6364136223846793005
_LCG_C = 1442695040888963407


class TableError(ValueError):
    """A distribution table, seed file or report is malformed; names the file and line."""

    def __init__(self, path: str | os.PathLike[str], line: int | None, problem: str):
        where = f"{os.fspath(path)}:{line}" if line is not None else os.fspath(path)
        super().__init__(f"{where}: {problem}")
        self.path = os.fspath(path)
        self.line = line
        self.problem = problem


def unit_ns(unit: str | float) -> int | float:
    """Nanoseconds of a table unit: its name (``NN_LATENCY_UNIT``: "ns" or "us") or
    a positive number of nanoseconds."""
    if isinstance(unit, str):
        if unit not in UNITS:
            raise ValueError(f"unit {unit!r}: use one of {', '.join(UNITS)}")
        return UNITS[unit]
    if unit <= 0:
        raise ValueError("unit must be positive")
    return unit


def _check_values(values: Iterable[object], unit: str) -> list[int]:
    limit = MAX_DELAY_NS // unit_ns(unit)
    checked: list[int] = []
    for i, value in enumerate(values):
        if isinstance(value, bool | np.bool_):
            raise ValueError(f"table entry {i} is {value!r}, not a non-negative integer")
        try:
            number = operator.index(value)  # int and numpy integers, not floats
        except TypeError:
            raise ValueError(f"table entry {i} is {value!r}, not a non-negative integer") from None
        if number < 0:
            raise ValueError(f"table entry {i} is {number}: delays are non-negative")
        if number > limit:
            raise ValueError(
                f"table entry {i} is {number} {unit}, more than the limit of 60 s per send"
            )
        checked.append(number)
    if len(checked) != TABLE_SIZE:
        raise ValueError(f"a table has exactly {TABLE_SIZE} entries, got {len(checked)}")
    return checked


def write_table(values: Iterable[object], path: str | os.PathLike[str], unit: str = "ns") -> Path:
    """Write exactly 4096 non-negative integers as 512 lines of 8, atomically.

    ``unit`` is the unit the library will be told (``NN_LATENCY_UNIT``); it
    only sets the upper limit checked here (60 s per send). Entry ``i`` is
    line ``i // 8 + 1``, column ``i % 8 + 1``.
    """
    checked = _check_values(values, unit)
    with atomic_open(path) as fh:
        for row in range(ROWS):
            fh.write(" ".join(map(str, checked[row * COLUMNS : (row + 1) * COLUMNS])) + "\n")
    return Path(path)


def _problem_with(token: str, unit_ns: int) -> str | None:
    if token.isascii() and token.isdigit():
        if int(token) * unit_ns <= MAX_DELAY_NS:
            return None
        return "is larger than the limit of 60 s per send"
    if token.startswith("-") and token[1:2].isdigit():
        return "is negative: delays are non-negative integers"
    return "is not a non-negative integer"


def read_table(path: str | os.PathLike[str], unit: str = "ns") -> list[int]:
    """The 4096 entries of a table file, checked as strictly as the library does.

    Raises TableError naming the file, the line and the problem: a line
    without exactly 8 values, a negative or non-integer value, a value above
    60 s, or a file with other than 512 lines.
    """
    nanoseconds = unit_ns(unit)
    values: list[int] = []
    lineno = 0
    with open(path, newline="") as fh:
        for lineno, raw in enumerate(fh, start=1):
            if lineno > ROWS:
                raise TableError(path, lineno, f"more than {ROWS} lines")
            line = raw.removesuffix("\n").removesuffix("\r")
            tokens = line.replace("\t", " ").split(" ")
            tokens = [t for t in tokens if t]
            if len(tokens) != COLUMNS:
                raise TableError(path, lineno, f"{len(tokens)} values, expected {COLUMNS}")
            for column, token in enumerate(tokens, start=1):
                problem = _problem_with(token, nanoseconds)
                if problem is not None:
                    raise TableError(path, lineno, f"value {column} '{token[:40]}' {problem}")
                values.append(int(token))
    if lineno < ROWS:
        raise TableError(path, lineno + 1, f"file ends after {lineno} lines, expected {ROWS}")
    return values


def write_seed(path: str | os.PathLike[str], seed: int) -> Path:
    """Write a seed file: one non-negative integer below 2**64, atomically."""
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer):
        raise ValueError(f"seed {seed!r} is not an integer")
    if not 0 <= int(seed) <= _MASK:
        raise ValueError(f"seed {seed} is outside [0, 2**64)")
    with atomic_open(path) as fh:
        fh.write(f"{int(seed)}\n")
    return Path(path)


def read_seed(path: str | os.PathLike[str]) -> int:
    """The integer of a seed file; TableError names the line of any problem."""
    seed: int | None = None
    lineno = 0
    with open(path) as fh:
        for lineno, line in enumerate(fh, start=1):
            tokens = line.split()
            if not tokens:
                continue
            if seed is not None or len(tokens) > 1:
                raise TableError(path, lineno, "expected a single integer in the file")
            if not (tokens[0].isascii() and tokens[0].isdigit()) or int(tokens[0]) > _MASK:
                raise TableError(path, lineno, f"'{tokens[0][:40]}' is not a 64-bit seed")
            seed = int(tokens[0])
    if seed is None:
        raise TableError(path, lineno + 1, "no integer in the file")
    return seed


def constant_table(delay: int) -> list[int]:
    """A table whose every entry is ``delay``: each send waits exactly that long.

    The unit is the one the library will be told (``environment(unit=...)``);
    ``write_table`` checks the 60 s limit in that unit.
    """
    return _check_values([delay] * TABLE_SIZE, "us")


def _mix_seed(seed: int) -> int:
    z = (seed + 0x9E3779B97F4A7C15) & _MASK
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
    return z ^ (z >> 31)


def indices(seed: int, count: int) -> list[int]:
    """The first ``count`` table indices the injector draws in a process seeded with ``seed``."""
    state = _mix_seed(seed & _MASK)
    out = []
    for _ in range(count):
        state = (state * _LCG_A + _LCG_C) & _MASK
        out.append(state >> (64 - INDEX_BITS))
    return out


def delays(table: list[int], seed: int, count: int) -> list[int]:
    """The first ``count`` delays (in the table's unit) drawn by a process seeded with ``seed``."""
    if len(table) != TABLE_SIZE:
        raise ValueError(f"a table has exactly {TABLE_SIZE} entries, got {len(table)}")
    return [table[i] for i in indices(seed, count)]


def environment(
    table: str | os.PathLike[str],
    seed: str | os.PathLike[str],
    level: str = "mpi",
    unit: str = "ns",
    strict: bool = False,
    report: str | os.PathLike[str] | None = None,
    library: str | os.PathLike[str] | None = None,
    wait: str = "spin",
    sleep_margin_us: int | None = None,
) -> dict[str, str]:
    """The ``NN_LATENCY_*`` variables for the ranks (``LD_PRELOAD`` too, given ``library``).

    ``table``, ``seed`` and ``report`` are made absolute, since ranks may
    start elsewhere; in each, ``%r`` stands for the rank and ``%p`` for the
    process id (e.g. ``report="injector.%r"``: one report per rank; without
    ``%r``/``%p`` only rank 0 writes it). ``wait="sleep"`` lets a rank sleep
    through all but the last ``sleep_margin_us`` of each delay (the library's
    default: 100 µs), for ranks that share cores.
    """
    if level not in LEVELS:
        raise ValueError(f"level {level!r}: expected one of {', '.join(LEVELS)}")
    if wait not in WAITS:
        raise ValueError(f"wait {wait!r}: expected one of {', '.join(WAITS)}")
    whole = isinstance(sleep_margin_us, int) and not isinstance(sleep_margin_us, bool)
    if sleep_margin_us is not None and not (whole and 0 <= sleep_margin_us <= MAX_SLEEP_MARGIN_US):
        raise ValueError(
            f"sleep_margin_us {sleep_margin_us!r}: expected a whole number of µs, "
            f"0 to {MAX_SLEEP_MARGIN_US}"
        )
    unit_ns(unit)
    env = {
        "NN_LATENCY_TABLE": os.path.abspath(table),
        "NN_LATENCY_SEED": os.path.abspath(seed),
        "NN_LATENCY_LEVEL": level,
        "NN_LATENCY_UNIT": unit,
        "NN_LATENCY_STRICT": "1" if strict else "0",
        "NN_LATENCY_WAIT": wait,
    }
    if sleep_margin_us is not None:
        env["NN_LATENCY_SLEEP_MARGIN_US"] = str(sleep_margin_us)
    if report is not None:
        env["NN_LATENCY_REPORT"] = os.path.abspath(report)
    if library is not None:
        env["LD_PRELOAD"] = os.path.abspath(library)
    return env


def _report_value(text: str) -> int | float | str:
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        return text


def read_report(path: str | os.PathLike[str]) -> dict[str, int | float | str]:
    """The ``key=value`` report the library writes at exit, numbers converted.

    Keys include ``level``, ``enabled``, ``delays`` (delays injected),
    ``total_ns``/``mean_ns``/``std_ns`` (time actually spent),
    ``drawn_mean_ns``/``drawn_std_ns`` (mean and standard deviation of the
    drawn entries: the realised delay distribution; older reports lack the
    two standard deviations), ``table_mean_ns`` (the intended mean) and
    ``late_delays`` (busy waits that lost the core and overshot by more than
    ``late_threshold_ns``) with ``late_total_ns``, and ``ontime_mean_ns`` (the
    mean of the other delays: the busy wait's own accuracy).
    """
    report: dict[str, int | float | str] = {}
    with open(path) as fh:
        for lineno, line in enumerate(fh, start=1):
            key, sep, value = line.rstrip("\n").partition("=")
            if not sep or not key:
                raise TableError(path, lineno, f"'{line.strip()[:60]}' is not key=value")
            report[key] = _report_value(value)
    if report.get("format") != REPORT_FORMAT:
        raise TableError(path, 1, f"not a {REPORT_FORMAT} report")
    return report
