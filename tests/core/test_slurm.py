"""The workflow through a real Slurm: daemons, accounting, sbatch, srun, PMIx.

tests/slurm/cluster.sh starts a one-node cluster (munge, MariaDB, slurmdbd,
slurmctld, slurmd) on this machine; the workflow then runs a small slice
(build, one 2-rank ping-pong, its tidy table, table and figure) with
profiles/slurm, overridden only by tests/slurm/profile/config.yaml, from a
scratch working directory, then re-measures following the jobs with squeue
instead of sacct. Needs root. On an idle 2-core machine about 80 s in all
(cluster 4-6 s, first run ~50 s, squeue re-run ~17 s); the executor's
status checks come at growing intervals (1, 11, 21 ... s), so a loaded
machine can take several minutes.
"""

from __future__ import annotations

import copy
import datetime as dt
import os
import re
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
import yaml

from netnoise.io import read_benchmark
from netnoise.platform import from_config
from netnoise.platform.slurm import parse_scontrol
from netnoise.provenance import read_sidecar
from tests.conftest import REPO

CLUSTER = REPO / "tests" / "slurm" / "cluster.sh"
SITE_PROFILE = REPO / "profiles" / "slurm" / "config.yaml"
TEST_PROFILE = REPO / "tests" / "slurm" / "profile" / "config.yaml"
SNAKEMAKE = Path(sys.executable).parent / "snakemake"
# The rules that must become Slurm jobs; every other rule of the slice is local.
SLURM_RULES = {"build_programs", "measure_baseline_latency"}
TARGETS = (
    "tables/baseline_latency.csv",
    "figures/baseline_latency.svg",
    "figures/baseline_latency.png",
)


def merge(base: dict[str, Any], top: dict[str, Any]) -> dict[str, Any]:
    """``top`` over ``base``, key by key: nested mappings merge, anything else replaces."""
    out = copy.deepcopy(base)
    for key, value in top.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = merge(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out


def cluster(command: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(CLUSTER), command], env=env, capture_output=True, text=True, timeout=900
    )


@pytest.fixture(scope="module")
def slurm_env():
    """A running local cluster and the environment that reaches it; stopped at the
    end (even after a failure) unless it was already running before the tests."""
    if os.geteuid() != 0:
        pytest.skip("needs root: the local Slurm cluster's daemons run as root")
    if shutil.which("mpicc") is None:
        pytest.skip("Open MPI not installed (make setup installs it)")
    env = dict(os.environ)
    already_up = CLUSTER.exists() and cluster("status", env).returncode == 0
    started = time.monotonic()
    try:
        out = cluster("start", env)
        assert out.returncode == 0, f"cluster.sh start failed:\n{out.stdout}\n{out.stderr}"
        print(f"cluster up in {time.monotonic() - started:.1f} s: {out.stdout.strip()}")
        conf = cluster("env", env).stdout.strip().removeprefix("export SLURM_CONF=")
        yield {**env, "SLURM_CONF": conf}
    finally:
        if not already_up:
            out = cluster("stop", env)
            print(out.stdout, out.stderr)


def sacct(env: dict[str, str], *args: str) -> list[list[str]]:
    out = subprocess.run(
        ["sacct", "--noheader", "--parsable2", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return [line.split("|") for line in out.stdout.splitlines() if line]


def workflow_jobs(env: dict[str, str], run_id: str, since: str) -> list[list[str]]:
    """The run's jobs as sacct sees them, once accounting has every one as finished."""
    fields = "JobID,JobName,Comment,State,Partition,Account"
    deadline = time.monotonic() + 30
    while True:
        rows = sacct(env, "-X", "--starttime", since, "--name", run_id, "-o", fields)
        if len(rows) >= len(SLURM_RULES) and all(r[3] == "COMPLETED" for r in rows):
            return rows
        if time.monotonic() > deadline:
            return rows
        time.sleep(1)


@pytest.fixture(scope="module")
def workspace(tmp_path_factory) -> Path:
    """A scratch working directory holding only config/config.yaml: the workflow
    itself runs from /work/main/workflow through --snakefile."""
    root = tmp_path_factory.mktemp("slurm-run")
    (root / "config").mkdir()
    config = {
        # The one node's two CPUs hold the test's 2 ranks.
        "platform": {
            "kind": "slurm",
            "timeout_s": 120,
            "slurm": {"nodes": 1, "tasks_per_node": 2},
        },
        "baseline": {"ranks": 2, "sizes": [8], "iterations": 50, "warmup": 5, "repetitions": 1},
        # Seed 003 needs its emulated racks; the workflow would skip it here anyway.
        "asymmetric": {"enabled": False},
        "variability": {"enabled": False},
        # Seed 004 needs the cluster's link rate, which this slice does not measure.
        "latency_variation": {"enabled": False},
    }
    (root / "config" / "config.yaml").write_text(yaml.safe_dump(config))
    return root


def run_slice(workdir: Path, env: dict[str, str], status_command: str, *extra: str):
    """Run the slice with the site profile plus the test overrides; return the
    run's Slurm jobs (JobID, JobName, Comment, State, Partition, Account)."""
    profile = merge(
        yaml.safe_load(SITE_PROFILE.read_text()), yaml.safe_load(TEST_PROFILE.read_text())
    )
    profile["slurm-status-command"] = status_command
    profile_dir = workdir / f"profile-{status_command}"
    profile_dir.mkdir(exist_ok=True)
    (profile_dir / "config.yaml").write_text(yaml.safe_dump(profile, sort_keys=False))

    since = (dt.datetime.now() - dt.timedelta(minutes=1)).strftime("%Y-%m-%dT%H:%M:%S")
    started = time.monotonic()
    run = subprocess.run(
        [
            str(SNAKEMAKE),
            "--snakefile",
            str(REPO / "workflow" / "Snakefile"),
            # The slice; `all` also holds the studies, which need more than this.
            *(f"results/slurm/{target}" for target in TARGETS),
            "--profile",
            str(profile_dir),
            "--verbose",
            *extra,
        ],
        cwd=workdir,
        env=env,
        capture_output=True,
        text=True,
        timeout=400,
    )
    print(f"workflow through Slurm ({status_command}): {time.monotonic() - started:.1f} s")
    log = run.stdout + run.stderr
    assert run.returncode == 0, log[-6000:]

    # The executor followed the jobs with the status command asked for.
    commands = set(re.findall(r"Status query timing \(cycle\): command=(\w+)", log))
    assert commands == {status_command}, commands

    run_id = re.search(r"SLURM run ID: (\S+)", log).group(1)
    jobs = run_jobs(env, run_id, since)
    for _job_id, name, _comment, state, partition, account in jobs:
        assert (name, state, partition, account) == (run_id, "COMPLETED", "netnoise", "netnoise")
    return jobs


def run_jobs(env: dict[str, str], run_id: str, since: str) -> list[list[str]]:
    """A run's jobs as sacct sees them, once accounting has them all as finished."""
    fields = "JobID,JobName,Comment,State,Partition,Account"
    deadline = time.monotonic() + 30
    while True:
        rows = sacct(env, "-X", "--starttime", since, "--name", run_id, "-o", fields)
        if (rows and all(r[3] == "COMPLETED" for r in rows)) or time.monotonic() > deadline:
            return rows
        time.sleep(1)


def rules_of(jobs: list[list[str]]) -> set[str]:
    """The rule of each job, from the comment the executor sets (rule_<name>[_wildcards_...])."""
    return {re.sub(r"_wildcards_.*", "", job[2]).removeprefix("rule_") for job in jobs}


def check_measurement(workdir: Path, env: dict[str, str], jobs: list[list[str]]) -> None:
    """The ping-pong ran as a 2-rank srun step of its Slurm job; its result, provenance,
    table and figure are there."""
    measure = [j for j in jobs if j[2].startswith("rule_measure_baseline_latency_")]
    assert len(measure) == 1, jobs
    measure_id = measure[0][0]
    steps = sacct(env, "-j", measure_id, "-o", "JobID,JobName,NTasks,NNodes,State")
    pingpong = [s for s in steps if s[1] == "pingpong"]
    assert len(pingpong) == 1, steps
    assert pingpong[0][0].startswith(f"{measure_id}.")
    assert pingpong[0][2:] == ["2", "1", "COMPLETED"], steps

    results = workdir / "results" / "slurm"
    raw = results / "raw" / "baseline" / "pingpong_size8_rep0.csv"
    bench = read_benchmark(raw)
    assert bench.meta["ranks"] == "2"
    assert bench.meta["hosts"] == socket.gethostname().split(".")[0]
    assert len(bench.data) == 50

    record = read_sidecar(raw)
    platform = record["platform"]
    assert record["exit_status"] == 0
    assert platform["kind"] == "slurm"
    assert platform["inside_allocation"] is True
    assert platform["slurm_job_id"] == measure_id
    assert platform["slurm_job_nodelist"] == bench.meta["hosts"]
    assert platform["job"]["Partition"] == "netnoise"
    assert platform["job"]["Account"] == "netnoise"
    assert platform["job"]["Comment"] == measure[0][2]
    # The site profile's slurm_extra asks for whole nodes.
    assert platform["job"]["OverSubscribe"] == "NO"
    assert record["command"][:4] == ["srun", "--mpi=pmix", "-n", "2"]
    assert "--nodes=1" in record["command"]

    table = pd.read_csv(results / "tables" / "baseline_latency.csv")
    assert table["size_bytes"].tolist() == [8]
    assert table["samples"].tolist() == [50]
    assert (table["median"] > 0).all()
    for suffix in ("svg", "png"):
        figure = results / "figures" / f"baseline_latency.{suffix}"
        assert figure.stat().st_size > 1000
        assert figure.stat().st_mtime > raw.stat().st_mtime


@pytest.mark.slurm
@pytest.mark.slow
def test_workflow_slice_runs_through_slurm(workspace, slurm_env):
    """Build and one 2-rank measurement become Slurm jobs of the local cluster
    (ranks through srun --mpi=pmix inside the job); tidy, table and figure are
    local rules, so nothing else appears in sacct."""
    jobs = run_slice(workspace, slurm_env, "sacct")
    assert rules_of(jobs) == SLURM_RULES, jobs
    check_measurement(workspace, slurm_env, jobs)


@pytest.mark.slurm
@pytest.mark.slow
def test_squeue_status_command(workspace, slurm_env):
    """The profile option for sites without accounting: the executor follows the
    jobs with squeue. Re-measures in the same workspace (builds too, if run alone)."""
    jobs = run_slice(workspace, slurm_env, "squeue", "--forcerun", "measure_baseline_latency")
    rules = rules_of(jobs)
    assert "measure_baseline_latency" in rules, jobs
    assert rules <= SLURM_RULES, jobs
    check_measurement(workspace, slurm_env, jobs)


def test_site_profile_leaves_the_allocation_to_the_rules():
    """profiles/slurm sets only what a site decides (runtime, partition, whole
    nodes); tasks, nodes and the launcher of each measurement follow from the
    config (workflow/rules/common.smk: measurement_resources), so a profile entry
    cannot contradict the config's ranks. One measurement at a time, a status command."""
    profile = yaml.safe_load(SITE_PROFILE.read_text())
    assert profile["executor"] == "slurm"
    assert "network=1" in profile["resources"]
    assert profile["slurm-status-command"] in ("sacct", "squeue")
    assert profile["default-resources"]["slurm_partition"]
    for rule, resources in profile["set-resources"].items():
        assert not {"tasks", "nodes", "mpi", "network"} & set(resources), rule


def test_test_profile_only_adapts_to_the_local_cluster():
    """The overrides of the test replace nothing but the local cluster's names, the
    slice's runtimes and the status-check timing."""
    overrides = yaml.safe_load(TEST_PROFILE.read_text())
    assert set(overrides["default-resources"]) == {"slurm_partition", "slurm_account"}
    for resources in overrides["set-resources"].values():
        assert set(resources) == {"runtime"}
    merged = merge(yaml.safe_load(SITE_PROFILE.read_text()), overrides)
    site = yaml.safe_load(SITE_PROFILE.read_text())
    assert (
        merged["set-resources"]["measure_baseline_latency"]["slurm_extra"]
        == site["set-resources"]["measure_baseline_latency"]["slurm_extra"]
    )
    assert merged["default-resources"]["mem_mb"] == site["default-resources"]["mem_mb"]


def test_slurm_placement_words():
    slurm = {
        "launcher": "srun --mpi=pmix",
        "nodes": 2,
        "tasks_per_node": 1,
        "exclusive": True,
        "switches": 1,
        "srun_args": ["--cpu-bind=cores"],
    }
    platform = from_config({"kind": "slurm", "slurm": slurm})
    assert platform.mpi_launch(["./pingpong"], 2).argv == [
        "srun",
        "--mpi=pmix",
        "-n",
        "2",
        "--nodes=2",
        "--ntasks-per-node=1",
        "--exclusive",
        "--switches=1",
        "--cpu-bind=cores",
        "./pingpong",
    ]
    # Named nodes replace the node count.
    argv = platform.mpi_launch(["./pingpong"], 2, ["n1", "n2"]).argv
    assert "--nodes=2" not in argv
    assert argv[-3:] == ["--nodelist", "n1,n2", "./pingpong"]


def test_slurm_steps_inside_a_job_take_only_their_cores(monkeypatch):
    """Inside a job every launch is an --exact step, so the two launches of a
    co-run share the allocation on separate cores instead of the second one
    waiting for the first one's (Slurm 22.05: "Requested nodes are busy")."""
    platform = from_config({"kind": "slurm", "slurm": {"launcher": "srun --mpi=pmix"}})
    monkeypatch.delenv("SLURM_JOB_ID", raising=False)
    assert "--exact" not in platform.mpi_launch(["./pingpong"], 2).argv
    monkeypatch.setenv("SLURM_JOB_ID", "7")
    assert platform.mpi_launch(["./pingpong"], 2).argv[:5] == [
        "srun",
        "--mpi=pmix",
        "-n",
        "2",
        "--exact",
    ]
    # A node per rank, in rank order, with repeats: an arbitrary distribution.
    argv = platform.mpi_launch(["./pingpong"], 3, ["a", "a", "b"]).argv
    assert argv[-4:] == ["--nodelist", "a,a,b", "--distribution=arbitrary", "./pingpong"]
    assert not any(w.startswith("--ntasks-per-node") for w in argv)


def test_slurm_describe_outside_a_job(monkeypatch):
    monkeypatch.delenv("SLURM_JOB_ID", raising=False)
    described = from_config({"kind": "slurm", "slurm": {"launcher": "srun"}}).describe()
    assert described["inside_allocation"] is False
    assert described["job"] is None


def test_parse_scontrol():
    line = "JobId=7 JobName=x Partition=p NodeList=n[1-2] NumNodes=2 OverSubscribe=NO Comment=c"
    fields = parse_scontrol(line)
    assert fields["NodeList"] == "n[1-2]"
    assert fields["OverSubscribe"] == "NO"
