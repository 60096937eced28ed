from __future__ import annotations

import os
import shutil
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from netnoise.cpusets import CoreSets

if TYPE_CHECKING:
    import pandas as pd


class PlatformUnavailable(RuntimeError):
    """The configured platform cannot run here; the message says what to do."""


@dataclass
class Launch:
    """A ready-to-run command: argv plus the environment it needs on top of ours."""

    argv: list[str]
    env: dict[str, str] = field(default_factory=dict)

    def environment(self) -> dict[str, str]:
        return {**os.environ, **self.env}


def mpirun_exports(env: dict[str, str] | None) -> list[str]:
    """``mpirun -x NAME=VALUE`` words: the variables reach the ranks, not mpirun itself."""
    words: list[str] = []
    for name, value in (env or {}).items():
        words += ["-x", f"{name}={value}"]
    return words


def socket_buffer_mca(size: int | None) -> list[str]:
    """``mpirun`` words that give every TCP socket of the ranks ``size`` bytes of send
    and receive buffer, the ceiling of its window (none: the kernel's autotuning)."""
    if size is None:
        return []
    return ["--mca", "btl_tcp_sndbuf", str(size), "--mca", "btl_tcp_rcvbuf", str(size)]


TCP_SHIM = "libnntcpcc.so"


def tcp_congestion_env(
    congestion: str, binary: Path, env: dict[str, str] | None, key: str
) -> dict[str, str]:
    """``env`` plus what sets every rank's TCP congestion control to ``congestion``
    (``default`` keeps the host's): the shim built beside the benchmarks, preloaded,
    sets it per socket. ``key`` names the config key asking for it."""
    rank_env = dict(env or {})
    if congestion == "default":
        return rank_env
    shim = binary.parent / TCP_SHIM
    if not shim.exists():
        raise PlatformUnavailable(
            f"{key} is {congestion!r} but {shim} is missing; it is built with the "
            "benchmarks (rule build_programs)"
        )
    # Both preloads (e.g. the latency injector and the shim) load: ld.so reads a list.
    preload = [rank_env["LD_PRELOAD"]] if rank_env.get("LD_PRELOAD") else []
    rank_env["LD_PRELOAD"] = ":".join([*preload, str(shim)])
    rank_env["NN_TCP_CONGESTION"] = congestion
    return rank_env


def one_node_per_rank(nodes: list[str], ranks: int) -> bool:
    """Whether the node names of a launch give the node of every rank in rank order,
    as they do when a node appears more than once; such a placement needs one name
    per rank."""
    if len(set(nodes)) == len(nodes):
        return False
    if len(nodes) != ranks:
        raise PlatformUnavailable(
            f"a placement with repeated nodes needs one node per rank: "
            f"{len(nodes)} nodes for {ranks} ranks"
        )
    return True


def open_mpi_root_env() -> dict[str, str]:
    """Open MPI refuses to start as root unless told; containers and CI run as root."""
    if os.geteuid() == 0:
        return {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}
    return {}


class Platform(ABC):
    kind: str
    #: The program every launch starts with; it must be on PATH.
    launcher: str
    #: Whether runs take simulated time. A co-run is then one launch
    #: (:meth:`corun_launch`) in which its jobs meet, and the host's cores enter
    #: no result.
    simulated: bool = False
    #: Why ranks cannot be placed on named nodes here; None: they can.
    named_nodes_refused: str | None = None

    def __init__(self, config: dict[str, Any]):
        self.config = config

    def mpi_launch(
        self,
        program: list[str],
        ranks: int,
        nodes: list[str] | None = None,
        env: dict[str, str] | None = None,
    ) -> Launch:
        """The command that runs ``program`` with ``ranks`` MPI ranks, on ``nodes`` if given:
        the nodes to spread the ranks over, or, when a node appears more than once, the
        node of every rank in rank order (one entry per rank, see :func:`one_node_per_rank`).

        ``env`` holds variables every rank gets and the launcher does not (the
        latency injector's ``LD_PRELOAD`` must not load into mpirun or srun).
        """
        if nodes and self.named_nodes_refused:
            raise PlatformUnavailable(
                "placing ranks on named nodes needs platform.kind testbed, slurm or simgrid; "
                + self.named_nodes_refused
            )
        return self.build_launch(program, ranks, list(nodes or []), dict(env or {}))

    @abstractmethod
    def build_launch(
        self, program: list[str], ranks: int, nodes: list[str], env: dict[str, str]
    ) -> Launch:
        """:meth:`mpi_launch` as this platform builds it: ``nodes`` (empty: any) are
        allowed here, and ``env`` is a copy the launch may keep."""

    def corun_launch(
        self, programs: list[tuple[list[str], int, list[str]]], env: dict[str, str]
    ) -> Launch:
        """One launch that runs every ``(program, ranks, nodes)`` at once, each
        program's ranks placed on its nodes as :meth:`mpi_launch` places them (no
        nodes: rank i on the platform's host i); ``env`` as :meth:`mpi_launch`'s.
        Only a simulated platform runs a co-run so."""
        raise PlatformUnavailable(f"platform {self.kind!r} runs each job in a launch of its own")

    def link_counter_flags(self, path: Path, interval_s: float) -> list[str]:
        """The options that make a simulated run's measured program write the
        network's counters over its timed part to ``path``, read every
        ``interval_s`` (0: at its start and end only); :meth:`simulated_counters`
        reads them. A platform that runs on a real network reads its counters
        beside the run instead."""
        raise PlatformUnavailable(
            f"platform {self.kind!r} reads the network's counters beside a run, not inside it"
        )

    def simulated_counters(self, path: Path) -> pd.DataFrame:
        """The counters (:mod:`netnoise.counters`, tidy) a run wrote as
        :meth:`link_counter_flags` asked."""
        raise PlatformUnavailable(f"platform {self.kind!r} simulates no network")

    def core_sets(self) -> CoreSets | None:
        """The cores of the measured job and of everything else, each job in cgroups
        of its own; None: jobs are placed by the platform's launcher alone."""
        return None

    @abstractmethod
    def describe(self) -> dict[str, Any]:
        """What a provenance record should say about where the run happened."""

    def run_record(self, output: str) -> dict[str, Any] | None:
        """What a run's provenance adds to ``describe``, read from what its launches
        printed (``output``): a simulator's simulated and wall time, for one; None:
        nothing."""
        return None

    def check(self) -> None:
        """Raise PlatformUnavailable when this platform cannot run here."""
        if shutil.which(self.launcher) is None:
            raise PlatformUnavailable(
                f"platform {self.kind!r}: {self.launcher!r} is not on PATH; "
                "install Open MPI (make setup) or set the launcher in the config"
            )
