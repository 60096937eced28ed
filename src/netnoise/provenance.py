"""Provenance sidecars: what produced a result, from what, where and when.

Every result file ``X`` gets ``X.prov.json`` holding the config subset that
drove it, checksums of its inputs and of itself, the git revision, software
versions, the hwloc topology of the machine, the platform description, the
start and end time and the exit status.
"""

from __future__ import annotations

import datetime as dt
import functools
import hashlib
import json
import os
import platform as pyplatform
import shutil
import subprocess
import sys
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from netnoise import project
from netnoise.atomic import write_json
from netnoise.cpusets import parse_cpu_list

SCHEMA = "netnoise-provenance-1"
SIDECAR_SUFFIX = ".prov.json"
PACKAGES = (
    "netnoise",
    "snakemake",
    "numpy",
    "pandas",
    "scipy",
    "scikit-learn",
    "matplotlib",
    "seaborn",
    "pyarrow",
)
REPO_ROOT = project.ROOT


def sidecar_path(result: str | os.PathLike[str]) -> Path:
    return Path(f"{result}{SIDECAR_SUFFIX}")


def sha256(path: str | os.PathLike[str]) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="milliseconds")


def _first_line(argv: list[str]) -> str | None:
    if shutil.which(argv[0]) is None:
        return None
    try:
        out = subprocess.run(argv, capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    text = (out.stdout or out.stderr).strip()
    return text.splitlines()[0] if text else None


@functools.cache
def git_state(root: str = str(REPO_ROOT)) -> dict[str, Any]:
    """Revision of the source tree and whether it had uncommitted changes."""

    def git(*args: str) -> str | None:
        try:
            out = subprocess.run(
                ["git", "-C", root, *args], capture_output=True, text=True, timeout=30
            )
        except (OSError, subprocess.TimeoutExpired):
            return None
        return out.stdout.strip() if out.returncode == 0 else None

    sha = git("rev-parse", "HEAD")
    status = git("status", "--porcelain", "--untracked-files=no")
    return {"sha": sha or "unknown", "dirty": bool(status) if status is not None else None}


@functools.cache
def software_versions() -> dict[str, Any]:
    packages = {}
    for name in PACKAGES:
        try:
            packages[name] = version(name)
        except PackageNotFoundError:
            packages[name] = None
    return {
        "python": sys.version.split()[0],
        "packages": packages,
        "mpirun": _first_line(["mpirun", "--version"]),
        "mpicc": _first_line(["mpicc", "--version"]),
        "lstopo": _first_line(["lstopo", "--version"]),
        "kernel": pyplatform.release(),
        "hostname": pyplatform.node(),
    }


@functools.cache
def hwloc_topology() -> str | None:
    """The machine's hwloc topology as lstopo XML, or None without hwloc."""
    if shutil.which("lstopo") is None:
        return None
    try:
        out = subprocess.run(
            ["lstopo", "--of", "xml", "-"], capture_output=True, text=True, timeout=60
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.stdout if out.returncode == 0 else None


def record(
    *,
    result: str | os.PathLike[str],
    inputs: dict[str, str | os.PathLike[str]] | None = None,
    config: dict[str, Any] | None = None,
    platform: dict[str, Any] | None = None,
    command: list[str] | None = None,
    start: str,
    end: str,
    exit_status: int,
    extra: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Build the provenance record of ``result`` (which must already exist).

    ``extra`` adds run-specific sections (CPU load, co-run partners)."""
    return {
        **(extra or {}),
        "schema": SCHEMA,
        "result": {"path": str(result), "sha256": sha256(result)},
        "inputs": {
            name: {"path": str(p), "sha256": sha256(p)} for name, p in (inputs or {}).items()
        },
        "config": config or {},
        "platform": platform or {},
        "command": command,
        "git": git_state(),
        "software": software_versions(),
        "hwloc_topology_xml": hwloc_topology(),
        "start": start,
        "end": end,
        "exit_status": exit_status,
    }


def write_sidecar(result: str | os.PathLike[str], **fields: Any) -> Path:
    """Write ``result.prov.json`` atomically and return its path."""
    path = sidecar_path(result)
    write_json(path, record(result=result, **fields))
    return path


def read_sidecar(result: str | os.PathLike[str]) -> dict[str, Any]:
    with open(sidecar_path(result)) as fh:
        data = json.load(fh)
    if data.get("schema") != SCHEMA:
        raise ValueError(
            f"{sidecar_path(result)}: schema {data.get('schema')!r}, expected {SCHEMA}"
        )
    return data


# The CPU record of a run, as tidy-table columns: how busy the cores were in
# its timed region (netnoise.cpu), so that every table can show it.
CPU_COLUMNS = {
    "cpu_mean_runnable": "mean_runnable_tasks",
    "cpu_busy_share": "busy_fraction",
    "cpu_stall_share": "stall_fraction",
    "cpu_saturated": "saturated",
}


# The measured job's own CPU record (its cgroups', where the platform gives each
# job cores of its own), as tidy-table columns beside the machine-wide ones.
JOB_CPU_COLUMNS = {
    "cpu_job_cores": "cores",
    "cpu_job_runnable": "mean_runnable_tasks",
    "cpu_job_stall_share": "stall_fraction",
}


def measured_job_cpu(cpu: dict[str, Any]) -> dict[str, Any]:
    """The measured job's own record in a run's CPU record; empty without one."""
    return next((job for job in cpu.get("jobs") or [] if job.get("role") == "measured"), {})


def cores_apart(cpu: dict[str, Any]) -> bool | None:
    """Whether the measured job ran on no core any other job of its run ran on, by
    the kernel's accounting of their timed region; None without per-job records or
    without another job."""
    jobs = cpu.get("jobs") or []
    measured = [set(parse_cpu_list(j["ran_on"])) for j in jobs if j["role"] == "measured"]
    others = [set(parse_cpu_list(j["ran_on"])) for j in jobs if j["role"] != "measured"]
    if not measured or not others:
        return None
    return not measured[0] & set().union(*others)


def cpu_columns(result: str | os.PathLike[str]) -> dict[str, Any]:
    """The CPU record of ``result``'s sidecar as tidy columns (empty values when the
    result has no sidecar or the sidecar no CPU record)."""
    try:
        cpu = read_sidecar(result).get("cpu") or {}
    except FileNotFoundError:
        cpu = {}
    job = measured_job_cpu(cpu)
    return {
        **{column: cpu.get(key) for column, key in CPU_COLUMNS.items()},
        **{column: job.get(key) for column, key in JOB_CPU_COLUMNS.items()},
    }


def sidecars(results: str | os.PathLike[str]) -> list[Path]:
    """Every provenance sidecar of a run's results directory (``results/<platform>``):
    beside each measured file, co-run backgrounds and run directories included."""
    results = Path(results)
    return sorted(results.glob("raw/**/*.prov.json")) + sorted(
        results.glob("tables/**/*.prov.json")
    )


def _hwloc_summary(xml: str | None) -> str:
    if not xml:
        return "unknown"
    counts = {kind: xml.count(f'type="{kind}"') for kind in ("Package", "Core", "PU")}
    return f"{counts['Package']} package(s), {counts['Core']} cores, {counts['PU']} PUs"


def sidecar_problem(record: Any) -> str | None:
    """Why ``record`` is not a sidecar :func:`summary_table`, :func:`cpu_columns`
    and :func:`run_identity` can read (its schema, the result's path and checksum,
    dates, sections of the right kinds), or None."""
    if not isinstance(record, dict) or record.get("schema") != SCHEMA:
        return f"not a sidecar of schema {SCHEMA}"
    result = record.get("result")
    if not (isinstance(result, dict) and isinstance(result.get("path"), str)
            and isinstance(result.get("sha256"), str)):  # fmt: skip
        return "'result' must give the result's path and sha256"
    for key in ("start", "end"):
        value = record.get(key)
        try:
            if value is not None:
                dt.datetime.fromisoformat(value)
        except (TypeError, ValueError):
            return f"{key!r} is not a date and time (ISO 8601)"
    kinds = {"cpu": dict, "platform": dict, "software": dict, "git": dict, "config": dict,
             "hwloc_topology_xml": str, "exit_status": int}  # fmt: skip
    for key, kind in kinds.items():
        value = record.get(key)
        if value is not None and (not isinstance(value, kind) or isinstance(value, bool)):
            return f"{key!r} must be a {kind.__name__}"
    nested = (("git", "sha", str), ("platform", "nodes", list), ("software", "packages", dict),
              ("cpu", "rejected", list))  # fmt: skip
    for section, key, kind in nested:
        value = (record.get(section) or {}).get(key)
        if value is not None and not isinstance(value, kind):
            return f"'{section}.{key}' must be a {kind.__name__}"
    return None


def summary_table(sidecars: list[str | os.PathLike[str]], root: str | os.PathLike[str]):
    """One row per result: where, when and with what it was made (from its sidecar)."""
    import pandas as pd

    rows = []
    for path in sorted(map(str, sidecars)):
        with open(path) as fh:
            record = json.load(fh)
        cpu = record.get("cpu") or {}
        platform = record.get("platform") or {}
        # A simulator's run: its simulated and wall time (netnoise.platform.simgrid).
        simulation = record.get("platform_run") or {}
        software = record.get("software") or {}
        git = record.get("git") or {}
        start, end = record.get("start"), record.get("end")
        result = (
            os.path.relpath(record["result"]["path"], root)
            if os.path.isabs(record["result"]["path"])
            else record["result"]["path"]
        )
        rows.append(
            {
                "result": result,
                "study": _study_of(result),
                "exit_status": record.get("exit_status"),
                "start": start,
                "duration_s": (
                    dt.datetime.fromisoformat(end) - dt.datetime.fromisoformat(start)
                ).total_seconds()
                if start and end
                else None,
                "git_sha": git.get("sha", "unknown")[:12],
                "git_dirty": git.get("dirty"),
                "netnoise": (software.get("packages") or {}).get("netnoise"),
                "platform": platform.get("kind"),
                "nodes": len(platform.get("nodes") or []) or None,
                "mpi": software.get("mpirun"),
                "kernel": software.get("kernel"),
                "host": software.get("hostname"),
                "hwloc": _hwloc_summary(record.get("hwloc_topology_xml")),
                "cpu_mean_runnable": cpu.get("mean_runnable_tasks"),
                "cpu_busy_share": cpu.get("busy_fraction"),
                "cpu_saturated": cpu.get("saturated"),
                # False in simulated time (netnoise.run.NOT_APPLICABLE).
                "cpu_applicable": cpu.get("applicable", True) if cpu else None,
                "cpu_rejected_attempts": len(cpu.get("rejected") or []) if cpu else None,
                # The testbed records how its jobs share the cores; other
                # platforms record how many cores the host has.
                "cores": cores.get("mode")
                if isinstance(cores := platform.get("cores"), dict)
                else None,
                "cpu_job_cores": measured_job_cpu(cpu).get("cores"),
                "cpu_job_runnable": measured_job_cpu(cpu).get("mean_runnable_tasks"),
                "cores_apart": cores_apart(cpu),
                "simulated_s": simulation.get("simulated_s"),
                "simulated_per_wall": simulation.get("simulated_per_wall"),
                "result_sha256": record["result"]["sha256"][:16],
            }
        )
    return pd.DataFrame(rows)


def _study_of(result: str) -> str:
    """The folder a raw result sits in (``results/<platform>/raw/<study>/...``),
    ``platform`` for the shared ones (tables, the baseline)."""
    parts = result.split("/")
    if "raw" in parts[:-1]:
        study = parts[parts.index("raw") + 1]
        return "platform" if study == "baseline" else study
    return "platform"


def cpu_summary(table):
    """Per study, from :func:`summary_table`: measured results, how many of them
    were in simulated time (their CPU record does not apply), how many were
    CPU-saturated, how many attempts were rejected as such, the mean runnable
    tasks of their timed regions (median and maximum), the busy share of the
    cores (median over all results and over the saturated ones), and failures.

    The saturated results' busy share tells how much of their load was work:
    the rest is tasks waiting for a core, wake-ups included."""
    simulated = table["cpu_applicable"].eq(False) if "cpu_applicable" in table else False
    measured = table[table["cpu_mean_runnable"].notna() | simulated].assign(
        cpu_saturated=lambda t: t["cpu_saturated"].fillna(False).astype(bool),
        simulated=simulated,
    )
    grouped = measured.groupby("study", sort=True)
    summary = grouped.agg(
        results=("result", "size"),
        simulated=("simulated", "sum"),
        saturated=("cpu_saturated", "sum"),
        rejected_attempts=("cpu_rejected_attempts", "sum"),
        runnable_median=("cpu_mean_runnable", "median"),
        runnable_max=("cpu_mean_runnable", "max"),
        busy_median=("cpu_busy_share", "median"),
    ).reset_index()
    saturated = measured[measured["cpu_saturated"]]
    summary["saturated_busy_median"] = summary["study"].map(
        saturated.groupby("study")["cpu_busy_share"].median()
    )
    summary["saturated_share"] = summary["saturated"] / summary["results"]
    failures = table[table["exit_status"] != 0].groupby("study").size()
    summary["failures"] = summary["study"].map(failures).fillna(0).astype(int)
    return summary


@dataclass(frozen=True)
class RunIdentity:
    """Which run a set of sidecars comes from: the revisions (with how many
    results each), how many were measured from a checkout with uncommitted
    changes, the machines, the first and last start, and the results whose
    config disagrees with the run's (key path: theirs against the run's)."""

    revisions: dict[str, int]
    dirty: int
    machines: dict[str, int]
    first: str | None
    last: str | None
    config_mismatches: dict[str, str]

    def problems(self) -> list[str]:
        """Why these results are not one run of one clean revision with one config."""
        found = []
        if len(self.revisions) > 1:
            listed = ", ".join(f"{sha[:12]}: {n}" for sha, n in self.revisions.items())
            found.append(f"the results come from {len(self.revisions)} revisions ({listed})")
        if self.dirty:
            found.append(
                f"{self.dirty} results were measured from a checkout with uncommitted changes"
            )
        if self.config_mismatches:
            (key, difference), *rest = self.config_mismatches.items()
            more = f" and {len(rest)} more" if rest else ""
            found.append(f"results were measured with another config ({key}: {difference}{more})")
        return found

    def record(self) -> dict[str, Any]:
        """The identity as a bundle's manifest keeps it."""
        return {
            "revisions": self.revisions,
            "dirty": self.dirty,
            "machines": self.machines,
            "first": self.first,
            "last": self.last,
        }

    def describe(self) -> str:
        """One line: the revision(s), machine(s) and dates of the results."""
        revisions = (
            ", ".join(f"{sha[:12]} ({n} results)" for sha, n in self.revisions.items())
            or "no revision recorded"
        )
        machines = ", ".join(f"{m} ({n})" for m, n in self.machines.items()) or "unknown"
        span = f"measured {self.first} to {self.last}"
        if self.first and self.last:
            seconds = (
                dt.datetime.fromisoformat(self.last) - dt.datetime.fromisoformat(self.first)
            ).total_seconds()
            span += f" ({seconds / 60:.0f} min)"
        return f"revision {revisions}; machine {machines}; {span}"


def _disagreements(subset: Any, config: Any, path: str) -> dict[str, str]:
    """Where a sidecar's config subset differs from the run's config."""
    if isinstance(subset, dict) and isinstance(config, dict):
        found: dict[str, str] = {}
        for key, value in subset.items():
            found |= _disagreements(value, config.get(key), f"{path}.{key}" if path else key)
        return found
    if subset != config:
        return {path: f"{str(subset)[:40]} there, {str(config)[:40]} in the run's"}
    return {}


def run_identity(records: Iterable[Mapping[str, Any]], config: Mapping[str, Any]) -> RunIdentity:
    """The :class:`RunIdentity` of sidecar ``records`` against the run's ``config``."""
    revisions: Counter[str] = Counter()
    machines: Counter[str] = Counter()
    dirty = 0
    starts = []
    mismatches: dict[str, str] = {}
    for record in records:
        git = record.get("git") or {}
        revisions[str(git.get("sha") or "unknown")] += 1
        dirty += bool(git.get("dirty"))
        machines[str((record.get("software") or {}).get("hostname") or "unknown")] += 1
        if record.get("start"):
            starts.append(str(record["start"]))
        # A sidecar's config holds the study sections its job read, beside the
        # job's own parameters (not config keys) and the platform with the
        # study's testbed layout over it (checked by the layout the job ran on).
        studied = {
            key: value
            for key, value in (record.get("config") or {}).items()
            if key in config and key != "platform"
        }
        mismatches |= _disagreements(studied, config, "")
    return RunIdentity(
        dict(revisions.most_common()),
        dirty,
        dict(machines.most_common()),
        min(starts, default=None),
        max(starts, default=None),
        mismatches,
    )
