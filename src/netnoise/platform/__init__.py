"""Platforms turn "run this MPI program with N ranks" into a launch command.

- ``testbed``: an emulated cluster of network namespaces on this host (the default).
- ``localhost``: every rank on this host, no network emulation.
- ``slurm``: inside a Slurm allocation, through ``srun`` (or a configured launcher).
- ``simgrid``: every rank in SimGrid's SMPI on a generated platform, in simulated time.
"""

from __future__ import annotations

from typing import Any

from netnoise.platform.base import SIMULATED, WALL, Launch, Platform, PlatformUnavailable, Program
from netnoise.platform.localhost import Localhost
from netnoise.platform.simgrid import SimgridPlatform
from netnoise.platform.slurm import Slurm
from netnoise.platform.testbed import TestbedPlatform

KINDS: dict[str, type[Platform]] = {
    "testbed": TestbedPlatform,
    "localhost": Localhost,
    "slurm": Slurm,
    "simgrid": SimgridPlatform,
}


def from_config(platform_config: dict[str, Any]) -> Platform:
    """The platform described by the validated ``platform`` section of the config."""
    kind = platform_config["kind"]
    try:
        cls = KINDS[kind]
    except KeyError:
        raise PlatformUnavailable(
            f"platform.kind {kind!r} is not known; known kinds: {', '.join(KINDS)}"
        ) from None
    return cls(platform_config)


__all__ = [
    "KINDS",
    "SIMULATED",
    "WALL",
    "Launch",
    "Platform",
    "PlatformUnavailable",
    "Program",
    "from_config",
]
