"""The five studies netnoise reproduces and where the workflow implements each."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

WORKFLOW_DIR = Path(__file__).resolve().parents[2] / "workflow"


@dataclass(frozen=True)
class Study:
    key: str
    seed: str
    title: str
    rule_files: tuple[str, ...]

    def missing_rule_files(self, workflow_dir: Path = WORKFLOW_DIR) -> list[str]:
        return [f for f in self.rule_files if not (workflow_dir / "rules" / f).is_file()]


STUDIES = (
    Study(
        "impact_compression",
        "000_7009c5ae4db82585.txt",
        "Impact and Compression experiments, pairwise slowdown predictions",
        ("compression.smk", "pairings.smk"),
    ),
    Study(
        "network_noise",
        "001_9f0f9ede26bdffbe.txt",
        "Network noise benchmark and congestion simulator",
        ("perturbation.smk", "simulate.smk"),
    ),
    Study(
        "variability",
        "002_9ff0e74a68d20027.txt",
        "Counter-based model of network-induced variability",
        ("variability.smk",),
    ),
    Study(
        "asymmetric",
        "003_691d34d3fcf0833d.txt",
        "Asymmetric communication model for hierarchical Ethernet",
        ("asymmetric.smk",),
    ),
    Study(
        "latency_variation",
        "004_c25dd7b2cfbfc0d4.txt",
        "Latency variation versus latency mean, latency injection",
        ("characterize.smk", "injection.smk"),
    ),
)


def status_lines(workflow_dir: Path = WORKFLOW_DIR) -> list[str]:
    """One line per study: in the workflow, or which rule files it still lacks."""
    lines = []
    for study in STUDIES:
        missing = study.missing_rule_files(workflow_dir)
        state = "in the workflow" if not missing else f"not built yet (no {', '.join(missing)})"
        lines.append(f"{study.key:<20} {study.seed}  {state}: {study.title}")
    return lines
