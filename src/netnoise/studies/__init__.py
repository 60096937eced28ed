"""The five studies netnoise reproduces, and where each one lives.

Every study has one key, and that key names its home everywhere: the package
``netnoise.studies.<key>``, the rule file ``workflow/rules/<key>.smk``, its
scripts, schema, report captions, tests, notebook, published reference values
and config section. :meth:`Study.files` lists them from these conventions (plus
the C programs that only this study runs), so ``netnoise studies --files KEY``
shows a study's whole story.
"""

from __future__ import annotations

import importlib
import subprocess
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

REPO = Path(__file__).resolve().parents[3]


@dataclass(frozen=True)
class Study:
    key: str
    number: str
    title: str
    seed: str
    programs: tuple[str, ...] = ()
    """C sources (relative to the repository) that only this study runs."""

    @property
    def homes(self) -> tuple[str, ...]:
        """Glob patterns of the files that belong to the study by their name."""
        key = self.key
        return (
            f"src/netnoise/studies/{key}/**/*",
            f"workflow/rules/{key}.smk",
            f"workflow/scripts/{key}/**/*",
            f"workflow/schemas/{key}.schema.yaml",
            f"workflow/report/{key}/**/*",
            f"tests/{key}/**/*",
            f".test/{key}/**/*",
            f"notebooks/{self.number}_{key}.ipynb",
            f"resources/reference/{key}/**/*",
        )

    def files(self, root: Path = REPO) -> list[str]:
        """Every file of the study under ``root``, relative to it, sorted."""
        found = {
            str(path.relative_to(root))
            for pattern in self.homes
            for path in root.glob(pattern)
            if path.is_file() and "__pycache__" not in path.parts
        }
        return sorted(found | set(self.programs))

    def module(self, name: str) -> ModuleType | None:
        """The study's submodule ``name`` (e.g. ``config``, ``cli``), or None if it has none."""
        try:
            return importlib.import_module(f"{__name__}.{self.key}.{name}")
        except ModuleNotFoundError as err:
            if err.name != f"{__name__}.{self.key}.{name}":
                raise
            return None


STUDIES = (
    Study(
        "impact_compression",
        "000",
        "Impact and Compression experiments, pairwise slowdown predictions",
        "000_7009c5ae4db82585.txt",
        ("csrc/bench/impactb.c",),
    ),
    Study(
        "network_noise",
        "001",
        "Network noise benchmark and congestion simulator",
        "001_9f0f9ede26bdffbe.txt",
        ("csrc/bench/noise.c",),
    ),
    Study(
        "variability",
        "002",
        "Counter-based model of network-induced variability",
        "002_9ff0e74a68d20027.txt",
    ),
    Study(
        "asymmetric",
        "003",
        "Asymmetric communication model for hierarchical Ethernet",
        "003_691d34d3fcf0833d.txt",
        ("csrc/bench/p2p_concurrent.c",),
    ),
    Study(
        "latency_variation",
        "004",
        "Latency variation versus latency mean, latency injection",
        "004_c25dd7b2cfbfc0d4.txt",
        (
            "csrc/bench/tcpping.c",
            "csrc/bench/barrier.c",
            "csrc/injector/README.md",
            "csrc/injector/injector.mk",
            "csrc/injector/nnlat.h",
            "csrc/injector/nnlat_core.c",
            "csrc/injector/nnlat_init.c",
            "csrc/injector/nnlat_mpi.c",
            "csrc/injector/nnlat_tcp.c",
            "csrc/injector/tests/check.sh",
            "csrc/injector/tests/sendfamily.c",
            "csrc/injector/tests/test_nnlatency.c",
            "csrc/injector/tests/wrapcost.c",
        ),
    ),
)
KEYS = tuple(study.key for study in STUDIES)


def get(key: str) -> Study:
    for study in STUDIES:
        if study.key == key:
            return study
    raise KeyError(f"no study {key!r}; the studies are {', '.join(KEYS)}")


def tracked_files(root: Path = REPO) -> list[str]:
    """Files of the repository (git's view when it is a checkout, else every file)."""
    try:
        out = subprocess.run(
            ["git", "ls-files", "--cached", "--others", "--exclude-standard"],
            cwd=root,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        return sorted(f for f in out.splitlines() if (root / f).is_file())
    except (OSError, subprocess.CalledProcessError):
        return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())


def status_lines(root: Path = REPO) -> list[str]:
    """One line per study: in the workflow, or which rule file it lacks."""
    lines = []
    for study in STUDIES:
        rules = root / "workflow" / "rules" / f"{study.key}.smk"
        state = "in the workflow" if rules.is_file() else f"not built yet (no {rules.name})"
        lines.append(f"{study.key:<20} {study.seed}  {state}: {study.title}")
    return lines
