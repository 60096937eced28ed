from __future__ import annotations

import logging
import math
import platform as pyplatform
import uuid
from functools import cached_property
from pathlib import Path
from typing import Any

# Imported for its registration: a testbed's down() then stops its Slurm cluster.
import netnoise.testbed.slurm  # noqa: F401
from netnoise import cpusets
from netnoise.cpu import wait_for_quiet_cores
from netnoise.platform.base import (
    Launch,
    Platform,
    PlatformUnavailable,
    mpirun_exports,
    one_node_per_rank,
    open_mpi_root_env,
    socket_buffer_mca,
    tcp_congestion_env,
)
from netnoise.settings import PlatformSettings
from netnoise.testbed.fabric import Testbed, TestbedError, TestbedSpec


def host_tcp_congestion() -> str:
    return Path("/proc/sys/net/ipv4/tcp_congestion_control").read_text().strip()


class TestbedPlatform(Platform):
    """MPI across the emulated cluster: mpirun in the first node's namespace,
    remote daemons started in the other nodes' namespaces by the testbed agent."""

    __test__ = False
    kind = "testbed"
    launcher = "mpirun"
    judges_saturation = True
    names_nodes = True
    shapes_links = True
    reference = True

    def __init__(self, settings: PlatformSettings):
        super().__init__(settings)
        self.cores = settings.testbed.cores
        self._cores_settled = False
        self._sets: cpusets.CoreSets | None = None
        # Set by check() where the host has no job cgroups (allowed on shared cores).
        self._without_cgroups = False

    @cached_property
    def testbed(self) -> Testbed:
        """The emulated cluster (not brought up until :meth:`check`)."""
        try:
            return Testbed(TestbedSpec.from_config(self.settings.testbed.as_config()))
        except TestbedError as err:
            raise PlatformUnavailable(str(err)) from err

    @property
    def isolates_cores(self) -> bool:
        return self.cores == "per_job"

    @property
    def has_counters(self) -> bool:
        """Every port of the fabric namespace is read beside the run."""
        return True

    @property
    def max_nodes(self) -> int:
        return self.settings.testbed.nodes

    @property
    def nic_mbit(self) -> float:
        return self.settings.testbed.nic_mbit

    def node_names(self, count: int) -> list[str]:
        prefix = self.settings.testbed.prefix
        return [f"{prefix}-n{i:02d}" for i in range(1, count + 1)]

    def facts(self) -> tuple[str, list[tuple[str, str]]]:
        """Nodes and racks, link rates and their ratio, queue depth in bytes and in
        time at the NIC's rate, frame size."""
        testbed = self.settings.testbed
        nic, backbone = testbed.nic_mbit, testbed.backbone_mbit
        facts = [
            ("Nodes", f"{testbed.nodes} in {testbed.racks} rack(s)"),
            ("NIC links", f"{nic:g} Mbit/s"),
        ]
        if backbone and testbed.racks > 1:
            facts.append(("Backbone", f"{backbone:g} Mbit/s (NIC:backbone 1:{backbone / nic:.3g})"))
        queue = testbed.queue_bytes
        if queue:
            at_nic_ms = 8 * queue / (nic * 1e3)
            facts.append(
                ("Queue per link", f"{queue / 1000:g} kB ({at_nic_ms:.3g} ms at the NIC rate)")
            )
        if testbed.mtu_bytes:
            facts.append(("MTU", f"{testbed.mtu_bytes} bytes"))
        return "This run's testbed (from its config)", facts

    def release(self) -> bool:
        if self.settings.testbed.keep_up:
            return False
        self.testbed.down()
        return True

    def check(self) -> None:
        """Bring the testbed up and claim it, check that each job can have cgroups of
        its own (removing those of runs that died); the first time, also wait for
        quiet cores."""
        super().check()
        self.core_sets()  # refuses a core setting this host cannot give
        try:
            Testbed.check_host()
            self.testbed.ensure_up()
        except TestbedError as err:
            raise PlatformUnavailable(str(err)) from err
        why = cpusets.cgroups_available()
        if why and self.cores == "per_job":
            raise PlatformUnavailable(f"platform.testbed.cores is per_job: {why}")
        if why:
            # Shared cores need no cgroups; the runs then lack per-job CPU records.
            self._without_cgroups = True
        else:
            cpusets.remove_stale()
        if not self._cores_settled:
            self._settle_cores()

    def _settle_cores(self) -> None:
        """Wait until the cores are quiet before a job's first run, so that it does
        not start beside work the job before it left behind (its ranks being
        killed, a testbed just taken down being freed); the log says how long
        each job waited."""
        self._cores_settled = True
        timeout_s = self.settings.cpu.quiet_wait_s
        if timeout_s == 0:
            return
        settling = wait_for_quiet_cores(timeout_s=timeout_s)
        log = logging.getLogger("netnoise")
        if settling.quiet:
            log.info(
                "testbed %s: cores quiet after %.1f s (%.2f cores busy)",
                self.testbed.spec.prefix,
                settling.waited_s,
                settling.busy_cores,
            )
        else:
            log.warning(
                "testbed %s: cores still busy (%.2f cores) after %.0f s; measuring all "
                "the same, each run's CPU record judges it",
                self.testbed.spec.prefix,
                settling.busy_cores,
                settling.waited_s,
            )

    def core_sets(self) -> cpusets.CoreSets | None:
        """``per_job``: the measured job on the first half of the cores, everything
        else on the rest, as two jobs on a cluster never share a core; ``shared``:
        every job on every core (each still in cgroups of its own, for its CPU
        record, where the host has them; None where it has not)."""
        if self._without_cgroups:
            return None
        if self._sets is None:
            try:
                self._sets = cpusets.core_sets(self.cores)
            except cpusets.CpusetError as err:
                raise PlatformUnavailable(str(err)) from err
        return self._sets

    def build_launch(
        self, program: list[str], ranks: int, nodes: list[str], env: dict[str, str]
    ) -> Launch:
        spec = self.testbed.spec
        chosen = [self.testbed.node(n) for n in nodes] if nodes else spec.node_list()
        binary = Path(program[0]).resolve()
        # Names, not the words given: a node may be named by its index too.
        if one_node_per_rank([n.name for n in chosen], ranks):
            # Open MPI's sequential mapper puts rank i on the i-th host listed.
            placement = ["--host", ",".join(n.address for n in chosen), "--map-by", "seq"]
        else:
            slots = math.ceil(ranks / len(chosen))
            placement = ["--host", ",".join(f"{n.address}:{slots}" for n in chosen)]
            # Consecutive ranks on different nodes: pairs and rings cross the network.
            placement += ["--map-by", "node"]
        mpirun = [
            "mpirun",
            "-n",
            str(ranks),
            *placement,
            "--mca",
            "plm_rsh_agent",
            str(self.testbed.agent),
            "--mca",
            "btl",
            "tcp,self",
            "--mca",
            "btl_tcp_if_include",
            "eth0",
            "--mca",
            "oob_tcp_if_include",
            "eth0",
            "--mca",
            "pml",
            "ob1",
            "--mca",
            "btl_tcp_links",
            str(spec.btl_tcp_links),
            # Every node shares the host's /tmp, where Open MPI keeps one session
            # directory per host name: two launches on one node at once (a measured
            # job beside its backgrounds) would create and remove it under each
            # other ("orte_session_dir failed"). Each launch has a tree of its own,
            # which Open MPI creates and the testbed's removal takes away.
            "--mca",
            "orte_tmpdir_base",
            str(self.testbed.state_dir / "ompi" / uuid.uuid4().hex),
            *socket_buffer_mca(spec.socket_buffer_bytes),
            # Every namespace shares the host's cores: binding would stack ranks on the
            # first core of the job's cpuset. The cpuset alone confines the job.
            # Waiting ranks sleep in netnoise's wait layer (csrc/common/nn_wait.h), so
            # Open MPI's yield_when_idle stays off: its yields hand a core to another
            # rank's burst.
            "--bind-to",
            "none",
        ]
        rank_env = tcp_congestion_env(
            spec.tcp_congestion, binary, env, "platform.testbed.tcp_congestion"
        )
        mpirun += mpirun_exports(rank_env)
        argv = self.testbed.exec_argv(chosen[0], [*mpirun, str(binary), *program[1:]])
        return Launch(argv, open_mpi_root_env())

    def describe(self) -> dict[str, Any]:
        status = self.testbed.status()
        sets = self.core_sets()
        # Where the run happened, not who else was around.
        for key in ("namespaces_present", "claimed_by", "processes_inside", "unknown"):
            status.pop(key, None)
        return {
            "kind": self.kind,
            **status,
            "host_tcp_congestion": host_tcp_congestion(),
            "cores": {
                "mode": self.cores,
                "measured": sets and cpusets.format_cpu_list(sets.measured),
                "others": sets and cpusets.format_cpu_list(sets.others),
            },
            "kernel": pyplatform.release(),
        }
