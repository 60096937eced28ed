"""What a bundle carries, found from the workflow's own job graph
(``snakemake --detailed-summary``), so a new rule needs no bundle code."""

from __future__ import annotations

import csv
import io
import os
import subprocess
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from netnoise import config as netnoise_config
from netnoise import project
from netnoise.bundle.layout import BundleError, sha256

#: Rules that derive tables, figures and model evaluations from cached results;
#: everything else (builds, measurements, tidying of raw files, simulations,
#: model training) makes what a bundle carries.
ANALYSIS_PREFIXES = ("analyse_", "tabulate_", "plot_", "evaluate_", "compare_")


def is_analysis(rule: str) -> bool:
    return rule.startswith(ANALYSIS_PREFIXES)


@dataclass(frozen=True)
class PlannedFile:
    """One output of the workflow's job graph, the rule making it and that job's inputs."""

    path: str
    rule: str
    inputs: tuple[str, ...]


def parse_summary(text: str) -> list[PlannedFile]:
    """Rows of ``snakemake --detailed-summary``."""
    lines = [line for line in text.splitlines() if line.count("\t") >= 4]
    rows = csv.DictReader(io.StringIO("\n".join(lines)), delimiter="\t")
    planned = []
    for row in rows:
        inputs = row.get("input-file(s)") or ""
        planned.append(
            PlannedFile(
                row["output_file"],
                row["rule"],
                tuple(i for i in inputs.split(",") if i and i != "-"),
            )
        )
    return planned


def snakemake_argv(
    workdir: Path, configfiles: Sequence[str | os.PathLike[str]], *args: str
) -> list[str]:
    """The command line running the workflow in ``workdir`` with ``configfiles``."""
    snakefile = project.path("workflow", "Snakefile")
    argv = [*project.snakemake_command(), "--snakefile", str(snakefile)]
    argv += ["--directory", str(workdir)]
    if configfiles:
        argv += ["--configfile", *map(str, configfiles)]
    return [*argv, *args]


def planned_files(
    workdir: str | os.PathLike[str], configfiles: Sequence[str | os.PathLike[str]]
) -> list[PlannedFile]:
    """The workflow's job graph for this working directory and config."""
    argv = snakemake_argv(Path(workdir), configfiles, "--detailed-summary")
    out = subprocess.run(argv, capture_output=True, text=True, check=False)
    if out.returncode != 0:
        raise BundleError(f"the workflow could not plan its jobs: {snakemake_error(out.stderr)}")
    return parse_summary(out.stdout)


def snakemake_error(stderr: str) -> str:
    """What a failed Snakemake said, without its traceback: the error's last
    lines (a traceback's exception line alone)."""
    lines = [line for line in stderr.splitlines() if line.strip()]
    if any(line.startswith("Traceback (most recent call last)") for line in lines):
        return lines[-1].strip()
    return "\n".join(lines[-20:])[-3000:]


def analysis_inputs(planned: Iterable[PlannedFile]) -> dict[str, str]:
    """Inputs of analysis rules that other rules make, each with the rule making it."""
    planned = list(planned)
    made_by = {f.path: f.rule for f in planned}
    needed = {i for f in planned if is_analysis(f.rule) for i in f.inputs}
    return {p: made_by[p] for p in needed if p in made_by and not is_analysis(made_by[p])}


def cached_files(planned: Iterable[PlannedFile]) -> dict[str, str]:
    """Files a bundle carries, each with the rule that makes it.

    The analysis inputs, and outputs of other rules that nothing consumes
    (provenance sidecars, measured tables that are targets themselves).
    """
    planned = list(planned)
    consumed = {i for f in planned for i in f.inputs}
    unconsumed = {
        f.path: f.rule
        for f in planned
        if not is_analysis(f.rule)
        and f.path not in consumed
        # Programs are rebuilt from source, never shipped; their build record is.
        and not (f.rule.startswith("build_") and not f.path.endswith(".json"))
    }
    return {**unconsumed, **analysis_inputs(planned)}


def raw_files(planned: Iterable[PlannedFile]) -> dict[str, str]:
    return {f.path: f.rule for f in planned if "/raw/" in f.path}


def derived_tables(planned: Iterable[PlannedFile], workdir: Path) -> dict[str, str]:
    """SHA-256 of every CSV table the analysis rules made in this run."""
    return {
        f.path: sha256((workdir / f.path).read_bytes())
        for f in planned
        if is_analysis(f.rule) and f.path.endswith(".csv") and (workdir / f.path).is_file()
    }


def run_config(configfiles: Sequence[str | os.PathLike[str]]) -> dict[str, Any]:
    """The config the workflow ran with: files merged in order, validated, defaults filled."""
    return netnoise_config.load_files(configfiles)


def run_directory(workdir: str | os.PathLike[str]) -> Path:
    """``workdir``, where a workflow ran, as an absolute path; BundleError unless it is
    an existing directory (Snakemake would create it, and its ``.snakemake`` inside)."""
    if not str(workdir).strip():
        raise BundleError("the working directory is empty text: name a directory")
    path = Path(workdir).resolve()
    if not path.is_dir():
        raise BundleError(f"{workdir}: no such directory (where the workflow ran)")
    return path
