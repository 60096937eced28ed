"""Platforms turn "run this MPI program with N ranks" into a launch command.

- ``testbed``: an emulated cluster of network namespaces on this host (the default).
- ``localhost``: every rank on this host, no network emulation.
- ``slurm``: inside a Slurm allocation, through ``srun`` (or a configured launcher).
- ``simgrid``: every rank in SimGrid's SMPI on a generated platform, in simulated time.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from netnoise.platform.base import SIMULATED, WALL, Launch, Platform, PlatformUnavailable, Program
from netnoise.platform.localhost import Localhost
from netnoise.platform.simgrid import SimgridPlatform
from netnoise.platform.slurm import Slurm
from netnoise.platform.testbed import TestbedPlatform
from netnoise.settings import PlatformSettings

KINDS: dict[str, type[Platform]] = {
    "testbed": TestbedPlatform,
    "localhost": Localhost,
    "slurm": Slurm,
    "simgrid": SimgridPlatform,
}


def from_settings(settings: PlatformSettings) -> Platform:
    """The platform the validated, typed ``platform`` section describes."""
    try:
        cls = KINDS[settings.kind]
    except KeyError:
        raise PlatformUnavailable(
            f"platform.kind {settings.kind!r} is not known; known kinds: {', '.join(KINDS)}"
        ) from None
    return cls(settings)


def from_config(platform: Mapping[str, Any]) -> Platform:
    """The platform of a validated ``platform`` section as the config (and a rule's
    params) give it: a mapping."""
    return from_settings(PlatformSettings.of(platform))


__all__ = [
    "KINDS",
    "SIMULATED",
    "WALL",
    "Launch",
    "Platform",
    "PlatformUnavailable",
    "Program",
    "from_config",
    "from_settings",
]
