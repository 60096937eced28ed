"""The names seed 004 files its runs under: probes, experiments, distributions, points.

A *point* is one injected distribution, named in file names as ``L<level>_<distribution>``
(``L20_lognorm``, ``L40_lognorm_scale25``), or ``zero``: the table of zero delays.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

#: Latency probes: packet level (TCP socket) and library level (MPI).
PROBES = ("tcpping", "pingpong")
LEVEL_LABELS = {"tcpping": "packet level (tcpping)", "pingpong": "library level (MPI pingpong)"}
#: Library-level experiment beside the probes.
BARRIER = "barrier"
VALIDATION_EXPERIMENTS = (*PROBES, BARRIER)
#: The two distributions of Sec. 6 (Fig. 5–12).
VALIDATION_DISTRIBUTIONS = ("uniform", "lognorm")
#: The table of zero delays: the reference of Fig. 15–16.
ZERO = "zero"
_POINT = re.compile(r"^L(\d+)_([a-z][a-z0-9_]*)$")
_STD = re.compile(r"^std\d[0-9p]*$")


def point_name(level: int | None, distribution: str) -> str:
    """File-name id of one injected distribution: ``L20_lognorm``, or ``zero``."""
    return ZERO if distribution == ZERO else f"L{int(level)}_{distribution}"


def parse_point(point: str) -> tuple[int | None, str]:
    """(level, distribution) of a :func:`point_name`; the zero table has no level."""
    if point == ZERO:
        return None, ZERO
    match = _POINT.match(point)
    if match is None:
        raise ValueError(f"{point!r} is not a point name such as L20_lognorm or zero")
    return int(match.group(1)), match.group(2)


def std_name(std_us: float) -> str:
    """The distribution of a level's grid with standard deviation ``std_us``."""
    return f"std{float(std_us):g}".replace(".", "p")


def is_grid_distribution(distribution: str) -> bool:
    """Whether a distribution is a point of a level's mean × spread grid: the
    constant delay at the level's mean (``uniform``, spread 0) or one of the
    log-normals of :func:`std_name` with that mean."""
    return distribution == "uniform" or _STD.match(distribution) is not None


def distribution_names(fractions: Iterable[float], stds_us: Iterable[float] = ()) -> list[str]:
    """The distributions of a level, in :func:`.level_fits.distributions`' order: the
    paper's five, then the grid of standard deviations."""
    tags = [f"lognorm_scale{100 * float(f):g}" for f in sorted(fractions, reverse=True)]
    return ["lognorm", "uniform", *tags, *(std_name(s) for s in sorted(stds_us))]
