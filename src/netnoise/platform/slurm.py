from __future__ import annotations

import os
import shlex
from typing import Any

from netnoise.platform.base import Launch, Platform

SLURM_ENV = ("SLURM_JOB_ID", "SLURM_JOB_NODELIST", "SLURM_JOB_NUM_NODES", "SLURM_CLUSTER_NAME")


class Slurm(Platform):
    """Inside a Slurm job: ranks start through the configured launcher (srun by default)."""

    kind = "slurm"

    def __init__(self, config: dict[str, Any]):
        super().__init__(config)
        self.launch_words = shlex.split(config["slurm"]["launcher"])
        self.launcher = self.launch_words[0]

    def mpi_launch(self, program: list[str], ranks: int, nodes: list[str] | None = None) -> Launch:
        placement = ["--nodelist", ",".join(nodes)] if nodes else []
        return Launch([*self.launch_words, "-n", str(ranks), *placement, *program])

    def describe(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "launcher": self.config["slurm"]["launcher"],
            **{name.lower(): os.environ.get(name) for name in SLURM_ENV},
        }
