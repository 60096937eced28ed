from __future__ import annotations

import os
from typing import Any

from netnoise.platform.base import (
    Launch,
    Platform,
    mpirun_exports,
    open_mpi_root_env,
)
from netnoise.settings import PlatformSettings


class Localhost(Platform):
    """All ranks on this host through mpirun; messages never cross a network."""

    kind = "localhost"
    named_nodes_refused = "localhost has one node; use platform.kind testbed, slurm or simgrid"

    def __init__(self, settings: PlatformSettings):
        super().__init__(settings)
        self.launcher = settings.mpirun

    def build_launch(
        self, program: list[str], ranks: int, nodes: list[str], env: dict[str, str]
    ) -> Launch:
        argv = [
            self.launcher,
            "-n",
            str(ranks),
            # More ranks than cores is normal here; binding would stack them on core 0.
            "--oversubscribe",
            "--bind-to",
            "none",
            *self.settings.mpirun_args,
            *mpirun_exports(env),
            *program,
        ]
        env = {
            **open_mpi_root_env(),
            # Single-copy shared memory needs ptrace rights containers often lack.
            "OMPI_MCA_btl_vader_single_copy_mechanism": "none",
        }
        return Launch(argv, env)

    def describe(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "network": "none: every rank on one host, messages go through shared memory",
            "cores": os.cpu_count(),
        }
