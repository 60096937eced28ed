from __future__ import annotations

import os
import shutil
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from netnoise.cpu import CpuLimits
from netnoise.cpusets import CoreSets
from netnoise.settings import PlatformSettings

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


#: The clocks a platform times runs by (:attr:`Platform.clock`), as every result
#: table's ``clock`` column names them: real seconds on real cores, or a
#: simulator's virtual seconds, which no host core enters.
WALL = "wall"
SIMULATED = "simulated"


@dataclass(frozen=True)
class Program:
    """One MPI program of a co-run: its argv, its ranks, the nodes they go on (empty:
    the platform's choice) and the variables its ranks get."""

    argv: list[str]
    ranks: int
    nodes: list[str]
    env: dict[str, str]


class Platform(ABC):
    """Where MPI jobs run, and what a caller may ask of it instead of its kind.

    The attributes below are its capabilities: planning, running, the rules and the
    report ask them, so that a platform added here needs no change anywhere else.
    """

    kind: str
    #: The program every launch starts with; it must be on PATH.
    launcher: str
    #: How runs are timed (:data:`WALL` or :data:`SIMULATED`). In simulated time the
    #: jobs of a co-run hold their handshake among themselves, and the host's cores
    #: enter no result, so a run's CPU record does not apply.
    clock: str = WALL
    #: Whether the jobs of a co-run start in one launch (:meth:`corun_launch`) rather
    #: than one launch each.
    corun_in_one_launch: bool = False
    #: What a launch prints when one of its ranks failed while the others may wait
    #: for it forever (the run then ends); None: a failed rank ends its launch.
    rank_failure_marker: bytes | None = None
    #: Why ranks cannot be placed on named nodes here; None: they can.
    named_nodes_refused: str | None = None
    #: Whether a third-party program (netnoise.external) can run here.
    runs_third_party: bool = True
    #: Whether this machine's CPU load during a run's timed region is judged (a
    #: saturated run repeated or rejected) rather than only recorded: so where
    #: every emulated node shares the cores the runner samples.
    judges_saturation: bool = False
    #: Whether the workflow names the nodes of every job's ranks (:meth:`node_names`),
    #: choosing the layout a job spans, rather than leaving them to the launcher.
    names_nodes: bool = False
    #: Whether the platform shapes its links itself: the workflow then validates
    #: them before any study measures (testbed_validation).
    shapes_links: bool = False
    #: Whether the network's layout (which nodes under which switch, the rates of
    #: their links) is a real cluster's, found on it, rather than the one
    #: ``platform.testbed`` describes.
    discovers_layout: bool = False
    #: Whether every measurement job is an allocation of its own (the cluster's
    #: scheduler sizes it), rather than a process on this host.
    allocates_jobs: bool = False
    #: Whether the shipped results bundle (netnoise.bundle.SHIPPED) was measured
    #: here: every other platform's claims are shown beside it.
    reference: bool = False
    #: The csrc/Makefile flavour (``FLAVOUR``) this platform's programs are built in.
    build_flavour: str = "native"

    def __init__(self, settings: PlatformSettings):
        #: The validated ``platform`` section (a study's overlay over it, where a
        #: study's runs see one: netnoise.settings.Settings.effective).
        self.settings = settings

    # --------------------------------------------------------------- capabilities
    @property
    def places_named_nodes(self) -> bool:
        """Whether a job's ranks can be placed on nodes it names."""
        return self.named_nodes_refused is None

    @property
    def isolates_cores(self) -> bool:
        """Whether the measured job runs on cores no other job of its co-run has,
        each job's own CPU time recorded."""
        return False

    @property
    def has_counters(self) -> bool:
        """Whether a run can read the network's counters (its links' bytes and
        queues) over its timed region."""
        return False

    @property
    def reads_counters_in_run(self) -> bool:
        """Whether the measured program reads the network's counters itself
        (:meth:`link_counter_flags`) rather than a sampler beside the run."""
        return False

    @property
    def mpi_over_tcp(self) -> bool:
        """Whether MPI moves its messages through the ranks' TCP sockets (where a
        TCP-level injector delays them)."""
        return True

    @property
    def tcp_sockets(self) -> bool:
        """Whether a rank has TCP sockets at all (a probe of its own may use one)."""
        return True

    @property
    def supports_ns3(self) -> bool:
        """Whether the platform runs its network in ns-3 (packet level)."""
        return False

    @property
    def max_nodes(self) -> int | None:
        """The most nodes a job may name here; None: no limit the config knows."""
        return None

    @property
    def nic_mbit(self) -> float | None:
        """The rate (Mbit/s) every node's link is shaped to, where the platform shapes
        it; None where the network's rate is its own."""
        return None

    def node_names(self, count: int) -> list[str] | None:
        """The names of the first ``count`` nodes where jobs name their nodes
        (:attr:`names_nodes`); None: the launcher places the ranks."""
        return None

    def mpicc(self, configured: str) -> str:
        """The MPI C compiler of this platform's programs (``configured``: build.mpicc)."""
        return configured

    def cpu_limits(self) -> CpuLimits:
        """When a run here is CPU-saturated and what then (``platform.cpu``),
        judged where the platform judges saturation (:attr:`judges_saturation`):
        a localhost run has no network to measure, and on a cluster the runner's
        host is one node of the run, so there the load is recorded, not judged."""
        cpu = self.settings.cpu
        return CpuLimits(
            cpu.max_runnable, cpu.attempts, self.judges_saturation, cpu.tolerated_runnable
        )

    def facts(self) -> tuple[str, list[tuple[str, str]]] | None:
        """What a reader compares with a paper's machine, from the config, as a
        study's front page in the report shows it: a heading and (what, value)
        lines; None: nothing the config says."""
        return None

    def release(self) -> bool:
        """When the workflow ends: remove what the platform brought up, unless the
        config asks to keep it; whether it did (the studies' own then go too)."""
        return False

    # ------------------------------------------------------------------ launching
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
        if nodes and not self.places_named_nodes:
            raise PlatformUnavailable(
                f"placing ranks on named nodes is not possible on platform {self.kind!r}: "
                f"{self.named_nodes_refused}"
            )
        return self.build_launch(program, ranks, list(nodes or []), dict(env or {}))

    @abstractmethod
    def build_launch(
        self, program: list[str], ranks: int, nodes: list[str], env: dict[str, str]
    ) -> Launch:
        """:meth:`mpi_launch` as this platform builds it: ``nodes`` (empty: any) are
        allowed here, and ``env`` is a copy the launch may keep."""

    def corun_launches(self, programs: Sequence[Program]) -> list[Launch]:
        """The launches that start a co-run's programs (the background's, then the
        measured one): one each, or one for all where a co-run is one launch."""
        if self.corun_in_one_launch:
            return [self.corun_launch(programs)]
        return [self.mpi_launch(p.argv, p.ranks, p.nodes, p.env) for p in programs]

    def corun_launch(self, programs: Sequence[Program]) -> Launch:
        """One launch that runs every program at once, each program's ranks placed
        on its nodes as :meth:`mpi_launch` places them (no nodes: rank i on the
        platform's host i). Only a platform whose co-run is one launch
        (:attr:`corun_in_one_launch`) runs a co-run so."""
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
        raise PlatformUnavailable(f"platform {self.kind!r} reads no counters inside a run")

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
