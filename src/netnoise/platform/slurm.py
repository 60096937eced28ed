"""The slurm platform: ranks start through ``srun`` (``platform.slurm.launcher``).

Two ways to use it:

- under the Snakemake slurm executor (``snakemake --profile profiles/slurm``):
  every measurement is a Slurm job whose allocation the profile asks for
  (``tasks``, ``nodes``, ``slurm_extra``), and ``srun`` starts the ranks as a
  step of that job;
- with the local executor on a login node: every ``srun`` makes its own
  allocation, so the allocation options below (``exclusive``, ``switches``)
  act on it directly.

The executor's job step removes most ``SLURM_*`` variables before running a
rule (``SLURM_JOB_ID`` and ``SLURM_CLUSTER_NAME`` stay), including
``SLURM_CONF`` and ``SLURM_JOB_NODELIST``: ``srun`` still finds the job
through ``SLURM_JOB_ID`` and the config at its default path, and
:meth:`Slurm.describe` asks ``scontrol`` for what the environment lost.

Inside a job every launch is a step with ``--exact``: it gets only the CPUs
its ranks ask for. Without it Slurm 22.05 gives the first step of a co-run
every CPU of the allocation and the second one waits forever ("Requested
nodes are busy"); with it the measured job and its background share the
allocation on separate cores. Ranks are spread one per node by default
(``platform.slurm.tasks_per_node: 1``): a study's ranks stand for its nodes.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
from pathlib import Path
from typing import Any

from netnoise import lifeline
from netnoise.platform.base import (
    Launch,
    Platform,
    PlatformUnavailable,
    mpirun_exports,
    one_node_per_rank,
    tcp_congestion_env,
)
from netnoise.settings import PlatformSettings, SlurmSettings

SLURM_ENV = ("SLURM_JOB_ID", "SLURM_JOB_NODELIST", "SLURM_JOB_NUM_NODES", "SLURM_CLUSTER_NAME")
# Fields of `scontrol show job` that say where and how a measurement ran.
JOB_FIELDS = (
    "JobName",
    "Partition",
    "Account",
    "NodeList",
    "NumNodes",
    "NumTasks",
    "NumCPUs",
    "OverSubscribe",
    "Switches",
    "Comment",
)


def placement_words(slurm: SlurmSettings) -> list[str]:
    """srun words for the placement keys of ``platform.slurm`` (none by default)."""
    words = []
    if slurm.nodes:
        words.append(f"--nodes={slurm.nodes}")
    if slurm.tasks_per_node:
        words.append(f"--ntasks-per-node={slurm.tasks_per_node}")
    if slurm.exclusive:
        words.append("--exclusive")
    if slurm.switches:
        words.append(f"--switches={slurm.switches}")
    words.extend(slurm.srun_args)
    return words


def _scontrol(*args: str, timeout_s: float = 10) -> str:
    """What ``scontrol ARGS`` prints; PlatformUnavailable if it cannot say."""
    if shutil.which("scontrol") is None:
        raise PlatformUnavailable("scontrol is not on PATH: this host is not a Slurm node")
    try:
        out = subprocess.run(
            ["scontrol", *args], capture_output=True, text=True, timeout=timeout_s, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as err:
        raise PlatformUnavailable(f"scontrol {' '.join(args)}: {err}") from err
    if out.returncode != 0:
        raise PlatformUnavailable(f"scontrol {' '.join(args)} failed: {out.stderr.strip()}")
    return out.stdout


def expand_hostlist(expression: str) -> list[str]:
    """Node names of a Slurm host list (``n[01-03],m7``), in order."""
    return _scontrol("show", "hostnames", expression).split()


def leaf_switches() -> dict[str, list[str]]:
    """Leaf switch -> its nodes, from ``scontrol show topology`` (a tree topology);
    empty where the cluster has none."""
    switches = {}
    for line in _scontrol("show", "topology").splitlines():
        fields = parse_scontrol(line)
        if fields.get("Level") == "0" and "SwitchName" in fields and fields.get("Nodes"):
            switches[fields["SwitchName"]] = expand_hostlist(fields["Nodes"])
    return switches


def allocation_nodes(job_id: str | None = None) -> list[str]:
    """The nodes of the job this process runs in (or of ``job_id``), in order."""
    job_id = job_id or os.environ.get("SLURM_JOB_ID")
    if not job_id:
        raise PlatformUnavailable("not inside a Slurm job (SLURM_JOB_ID is not set)")
    fields = parse_scontrol(_scontrol("show", "job", "-o", job_id))
    return expand_hostlist(fields["NodeList"])


def parse_scontrol(text: str) -> dict[str, str]:
    """``Key=Value`` pairs of one ``scontrol show -o`` line (values without spaces)."""
    fields = {}
    for word in text.split():
        key, sep, value = word.partition("=")
        if sep:
            fields[key] = value
    return fields


def job_record(job_id: str, timeout_s: float = 10) -> dict[str, str] | None:
    """What ``scontrol show job`` says about ``job_id``, or None if it cannot say."""
    if shutil.which("scontrol") is None:
        return None
    try:
        out = subprocess.run(
            ["scontrol", "show", "job", "-o", job_id],
            capture_output=True,
            text=True,
            timeout=timeout_s,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    if out.returncode != 0:
        return None
    fields = parse_scontrol(out.stdout)
    return {name: fields[name] for name in JOB_FIELDS if name in fields}


class Slurm(Platform):
    """In or beside a Slurm allocation: ranks start through the configured launcher."""

    kind = "slurm"
    discovers_layout = True
    allocates_jobs = True

    def __init__(self, settings: PlatformSettings):
        super().__init__(settings)
        slurm = settings.slurm
        self.launch_words = shlex.split(slurm.launcher)
        self.launcher = self.launch_words[0]
        self.placement = placement_words(slurm)

    @property
    def has_counters(self) -> bool:
        """Samplers started beside the ranks read each node's interfaces."""
        return True

    @property
    def max_nodes(self) -> int | None:
        """The nodes the config gives the cluster (platform.slurm.nodes), if it does."""
        return self.settings.slurm.nodes

    @property
    def mpi_over_tcp(self) -> bool:
        """Not where the cluster's fabric is rdma (InfiniBand, RoCE, Omni-Path,
        Slingshot): MPI then moves its messages without TCP."""
        return self.settings.slurm.fabric != "rdma"

    def build_launch(
        self, program: list[str], ranks: int, nodes: list[str], env: dict[str, str]
    ) -> Launch:
        placement = self.placement
        if nodes:
            # Named nodes fix the node count and the ranks per node; a configured
            # --nodes or --ntasks-per-node could contradict them.
            placement = [w for w in placement if not w.startswith(("--nodes=", "--ntasks-per"))]
            placement = [*placement, "--nodelist", ",".join(nodes)]
            if one_node_per_rank(nodes, ranks) or len(nodes) == ranks:
                # Rank i on the i-th node listed; srun's default would take the
                # nodes in sorted order (a seed-003 link's sender on its receiver's).
                placement = [*placement, "--distribution=arbitrary"]
        rank_env = tcp_congestion_env(
            self.settings.slurm.tcp_congestion,
            Path(program[0]),
            env,
            "platform.slurm.tcp_congestion",
        )
        return Launch(
            [
                *self.launch_words,
                "-n",
                str(ranks),
                *self._step_words(),
                *placement,
                *self._exports(rank_env),
                *program,
            ]
        )

    @staticmethod
    def _step_words() -> list[str]:
        """Inside a job, a launch is a step that gets only the CPUs it asks for."""
        return ["--exact"] if os.environ.get("SLURM_JOB_ID") else []

    def node_step(self, program: list[str], nodes: list[str]) -> Launch:
        """One task of a non-MPI ``program`` on each of ``nodes``, as a step of the
        current job that shares its CPUs with every other step (``--overlap``): a
        helper beside the measured ranks, e.g. a counter sampler.

        The helper answers for itself: the workflow's process id means nothing on
        another node, and the helper ends with its step, which ends with this job."""
        srun = self.launch_words[0]
        if Path(srun).name != "srun":
            raise PlatformUnavailable(
                f"starting a helper on every node of the job needs srun, not {srun!r} "
                "(platform.slurm.launcher)"
            )
        return Launch(
            [
                srun,
                "--overlap",
                "-n",
                str(len(nodes)),
                "--ntasks-per-node=1",
                "--nodelist",
                ",".join(nodes),
                # (srun --export cannot unset a variable the launcher has.)
                "env",
                "-u",
                lifeline.ENV,
                *program,
            ]
        )

    def _exports(self, env: dict[str, str] | None) -> list[str]:
        """Launcher words that give ``env`` to the tasks only: srun's ``--export``
        (ALL keeps the rest of the environment) or mpirun's ``-x``."""
        if not env:
            return []
        if Path(self.launcher).name != "srun":
            return mpirun_exports(env)
        bad = [f"{k}={v}" for k, v in env.items() if "," in f"{k}{v}"]
        if bad:
            raise ValueError(f"srun --export cannot carry a comma: {', '.join(bad)}")
        return ["--export=" + ",".join(["ALL", *(f"{k}={v}" for k, v in env.items())])]

    def describe(self) -> dict[str, Any]:
        env = {name.lower(): os.environ.get(name) for name in SLURM_ENV}
        job_id = env["slurm_job_id"]
        job = job_record(job_id) if job_id else None
        if job:
            env["slurm_job_nodelist"] = env["slurm_job_nodelist"] or job.get("NodeList")
            env["slurm_job_num_nodes"] = env["slurm_job_num_nodes"] or job.get("NumNodes")
        return {
            "kind": self.kind,
            "launcher": self.settings.slurm.launcher,
            "placement": self.placement,
            # Inside a job srun starts a step of it; outside, srun allocates.
            "inside_allocation": job_id is not None,
            **env,
            "job": job,
        }
