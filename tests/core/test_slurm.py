"""The workflow through a real multi-node Slurm: every study through profiles/slurm.

The rig is the testbed's own Slurm cluster (``netnoise testbed up --slurm``) of
``.test/slurm/config.yaml``: 8 nodes in 2 racks, one slurmd in each node's
namespaces, slurmctld and slurmdbd (accounting) on this host, so ranks cross the
shaped node links and the backbone. The workflow runs from a scratch directory
outside /tmp (a node's /tmp is its own) with profiles/slurm, overridden only by
tests/slurm/profile/config.yaml, and runs a small slice of every study: the
baseline ping-pong with its table and figure, a seed-000 co-run and pairing, the
seed-001 noise benchmark at two allocations, seed-002 production runs with
counters, one seed-003 pattern across the racks, seed-004 characterisation and one
injected run. Slurm's own records (sacct, and the cpu-bind lines slurmstepd
prints) then show that co-run steps overlapped on separate cores and that ranks
ran on the hosts they were meant for. Needs root. On an idle 2-core machine about
4.5 minutes (rig 5 s, build ~40 s, 13 jobs of 9-14 s one after another, each
seen done by the executor's first status check 16 s after its submission),
then ~35 s for the squeue re-run; a job the first check misses is seen 26 s
later, so a loaded machine takes longer.
"""

from __future__ import annotations

import copy
import datetime as dt
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
import yaml

from netnoise import config as nnconfig
from netnoise.io import read_benchmark
from netnoise.platform import from_config
from netnoise.platform.slurm import parse_scontrol
from netnoise.provenance import read_sidecar
from netnoise.testbed.fabric import Testbed, TestbedError, TestbedSpec
from netnoise.testbed.slurm import ACCOUNT, PARTITION, SlurmCluster
from tests.conftest import REPO, full_platform, slurm_platform

RIG_CONFIG = REPO / ".test" / "slurm" / "config.yaml"
SITE_PROFILE = REPO / "profiles" / "slurm" / "config.yaml"
TEST_PROFILE = REPO / "tests" / "slurm" / "profile" / "config.yaml"
SNAKEMAKE = Path(sys.executable).parent / "snakemake"
RESULTS = Path("results") / "slurm"
RAW = RESULTS / "raw"
BASELINE = RAW / "baseline" / "pingpong_size8_rep0.csv"
IMPACT = RAW / "impact_compression" / "impact" / "app_halo3d.csv"
PAIRING = RAW / "impact_compression" / "runs" / "pairing" / "halo3d" / "monte_carlo.csv"
NOISE = {
    n: RAW / "network_noise" / "benchmark" / f"allreduce_r0.5_n{n}_network.csv" for n in (4, 8)
}
PRODUCTION = RAW / "variability" / "production" / "batch0"
TRIAL = RAW / "asymmetric" / "mpi" / "random" / "cubic" / "trial000.csv"
CHARACTERISATION = RAW / "latency_variation" / "characterize" / "tcpping_L50.csv"
INJECTED = RAW / "latency_variation" / "injection" / "cg_solver" / "L50_std0.csv"
TARGETS = (
    RESULTS / "tables" / "baseline_latency.csv",
    RESULTS / "figures" / "baseline_latency.svg",
    IMPACT,
    PAIRING,
    *NOISE.values(),
    PRODUCTION,
    TRIAL,
    CHARACTERISATION,
    INJECTED,
)
# Rule -> Slurm jobs it must become; every other rule of the slice is local.
SLURM_JOBS = {
    "build_programs": 1,
    "measure_baseline_latency": 1,
    "measure_impact_of_application": 1,
    "measure_pairing": 1,
    "measure_network_noise": 2,
    "measure_variability_runs": 1,
    "measure_asymmetric_random": 1,
    "measure_latency_under_load": 4,
    "measure_injected_applications": 1,
}
# Co-runs: result -> the log of its rule, its measured and its background program.
LOGS = RESULTS / "logs"
CORUNS = {
    IMPACT: (LOGS / "impact_compression" / "impact_app_halo3d.log", "impactb", "halo3d"),
    PAIRING: (
        LOGS / "impact_compression" / "pairing_halo3d_monte_carlo.log",
        "halo3d",
        "monte_carlo",
    ),
    CHARACTERISATION: (
        LOGS / "latency_variation" / "characterize_tcpping_L50.log",
        "tcpping",
        "loadgen",
    ),
}
CPU_BIND = re.compile(r"cpu-bind=MASK - (\S+), task\s+\d+\s+\d+ \[\d+\]: mask (0x[0-9a-f]+) set")


def merge(base: dict[str, Any], top: dict[str, Any]) -> dict[str, Any]:
    """``top`` over ``base``, key by key: nested mappings merge, anything else replaces."""
    out = copy.deepcopy(base)
    for key, value in top.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = merge(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out


@pytest.fixture(scope="module")
def rig():
    """The 8-node, 2-rack testbed with its Slurm cluster; the environment that
    reaches it and the rack of every node. Removed at the end, even after a failure."""
    if shutil.which("mpicc") is None:
        pytest.skip("Open MPI not installed (make setup installs it)")
    try:
        Testbed.check_host()
    except TestbedError as err:
        pytest.skip(f"no testbed here: {err}")
    spec = TestbedSpec.from_config(nnconfig.load(RIG_CONFIG)["platform"]["testbed"])
    testbed = Testbed(spec)
    try:
        testbed.up()
        cluster = SlurmCluster(testbed)
        started = cluster.start()
        print(f"Slurm of {len(spec.node_list())} testbed nodes up in {started['start_s']} s")
        racks = {node.name: node.rack for node in spec.node_list()}
        yield {"env": {**os.environ, **cluster.env()}, "racks": racks}
    finally:
        testbed.down()


@pytest.fixture(scope="module")
def workspace(request):
    """A scratch working directory with the rig's config, on the file system the
    nodes share (not /tmp); removed unless a test failed, to look into."""
    root = Path(tempfile.mkdtemp(prefix="netnoise-slurm-", dir="/var/tmp"))
    (root / "config").mkdir()
    shutil.copy(RIG_CONFIG, root / "config" / "config.yaml")
    failed_before = request.session.testsfailed
    yield root
    if request.session.testsfailed == failed_before:
        shutil.rmtree(root, ignore_errors=True)
    else:
        print(f"the Slurm run's working directory is kept: {root}")


def sacct(env: dict[str, str], *args: str) -> list[dict[str, str]]:
    fields = "JobID,JobName,Comment,State,Partition,Account,NodeList,NNodes,NTasks,Start,End"
    out = subprocess.run(
        ["sacct", "--noheader", "--parsable2", "-o", fields, *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    names = fields.split(",")
    return [dict(zip(names, line.split("|"), strict=True)) for line in out.stdout.splitlines()]


def run_jobs(env: dict[str, str], run_id: str, since: str, count: int) -> list[dict[str, str]]:
    """A run's jobs as sacct sees them, once accounting has all ``count`` as finished."""
    deadline = time.monotonic() + 30
    while True:
        rows = sacct(env, "-X", "--starttime", since, "--name", run_id)
        finished = len(rows) >= count and all(r["State"] == "COMPLETED" for r in rows)
        if finished or time.monotonic() > deadline:
            return rows
        time.sleep(1)


def rule_of(job: dict[str, str]) -> str:
    """A job's rule, from the comment the executor sets (rule_<name>[_wildcards_...])."""
    return re.sub(r"_wildcards_.*", "", job["Comment"]).removeprefix("rule_")


def run_workflow(
    workdir: Path, env: dict[str, str], status_command: str, targets, count: int, *extra: str
) -> list[dict[str, str]]:
    """Run ``targets`` with the site profile plus the test overrides; return the
    run's Slurm jobs, all checked COMPLETED in the rig's partition and account."""
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
            *map(str, targets),
            "--profile",
            str(profile_dir),
            "--verbose",
            *extra,
        ],
        cwd=workdir,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    print(f"workflow through Slurm ({status_command}): {time.monotonic() - started:.1f} s")
    log = run.stdout + run.stderr
    assert run.returncode == 0, log[-6000:]

    # The executor followed the jobs with the status command asked for.
    commands = set(re.findall(r"Status query timing \(cycle\): command=(\w+)", log))
    assert commands == {status_command}, commands

    run_id = re.search(r"SLURM run ID: (\S+)", log).group(1)
    jobs = run_jobs(env, run_id, since, count)
    for job in jobs:
        assert (job["State"], job["Partition"], job["Account"]) == (
            "COMPLETED",
            PARTITION,
            ACCOUNT,
        ), job
    return jobs


def steps_of(env: dict[str, str], job: dict[str, str]) -> list[dict[str, str]]:
    """The job's srun steps (not its batch step)."""
    steps = sacct(env, "-j", job["JobID"])
    return [s for s in steps if re.fullmatch(rf"{job['JobID']}\.\d+", s["JobID"])]


def hosts(env: dict[str, str], nodelist: str) -> list[str]:
    out = subprocess.run(
        ["scontrol", "show", "hostnames", nodelist],
        env=env,
        capture_output=True,
        text=True,
        check=True,
        timeout=30,
    )
    return out.stdout.split()


def overlap(a: dict[str, str], b: dict[str, str]) -> bool:
    """Two steps ran at the same time (sacct's whole seconds: touching counts)."""
    return a["Start"] <= b["End"] and b["Start"] <= a["End"]


@pytest.fixture(scope="module")
def every_study(rig, workspace):
    """The slice of every study, run once through the site profile with sacct."""
    return run_workflow(workspace, rig["env"], "sacct", TARGETS, sum(SLURM_JOBS.values()))


@pytest.mark.slurm
@pytest.mark.slow
def test_every_study_becomes_slurm_jobs(every_study):
    """Each measurement rule is a Slurm job of its own (build too); fits, tables and
    figures ran locally, so nothing else appears in sacct."""
    counts: dict[str, int] = {}
    for job in every_study:
        counts[rule_of(job)] = counts.get(rule_of(job), 0) + 1
    assert counts == SLURM_JOBS, every_study


@pytest.mark.slurm
@pytest.mark.slow
def test_corun_steps_overlap_on_separate_cores(rig, workspace, every_study):
    """Every co-run is two steps of one allocation that ran at the same time on the
    same nodes, and on each node slurmstepd bound them to different cores: --exact
    gives each step its own, so the second never waits for the first's."""
    env = rig["env"]
    jobs = {job["JobID"]: job for job in every_study}
    for result, (log, *programs) in CORUNS.items():
        job = jobs[read_sidecar(workspace / result)["platform"]["slurm_job_id"]]
        steps = {s["JobName"]: s for s in steps_of(env, job)}
        assert set(programs) <= set(steps), (job, steps)
        measured, background = (steps[name] for name in programs)
        assert overlap(measured, background), (measured, background)
        assert measured["NodeList"] == background["NodeList"], (measured, background)
        nodes = hosts(env, measured["NodeList"])
        assert len(nodes) == 2 and measured["NTasks"] == background["NTasks"] == "2"

        masks: dict[str, set[int]] = {}
        for node, mask in CPU_BIND.findall((workspace / log).read_text()):
            masks.setdefault(node, set()).add(int(mask, 16))
        assert set(masks) == set(nodes), (log, masks)
        for node, seen in masks.items():
            # One core per step: as many distinct masks as steps, none sharing a core.
            assert len(seen) == 2, (log, node, masks)
            first, second = seen
            assert not first & second, (log, node, masks)


@pytest.mark.slurm
@pytest.mark.slow
def test_ranks_run_on_the_intended_hosts(rig, workspace, every_study):
    """One rank per node, on distinct hosts, where each study meant them: the noise
    benchmark's 4 and 8 nodes, the seed-003 pattern's sender and receiver in
    different racks, and every result names the hosts Slurm gave its step."""
    env = rig["env"]
    by_result = {}
    for job in every_study:
        for step in steps_of(env, job):
            by_result.setdefault(rule_of(job), []).append(step)

    for nodes, path in NOISE.items():
        bench = read_benchmark(workspace / path)
        ranks = bench.meta["hosts"].split(",")
        assert len(ranks) == len(set(ranks)) == nodes, bench.meta["hosts"]
        step = [s for s in by_result["measure_network_noise"] if s["NNodes"] == str(nodes)]
        assert len(step) == 1 and step[0]["NTasks"] == str(nodes), by_result
        assert hosts(env, step[0]["NodeList"]) == sorted(ranks)

    trial = read_benchmark(workspace / TRIAL)
    ranks = trial.meta["hosts"].split(",")
    patterns = pd.concat(
        pd.read_csv(p) for p in (workspace / RAW / "asymmetric" / "patterns").glob("*.csv")
    )
    racks = json.loads((workspace / RAW / "asymmetric" / "racks.json").read_text())
    link = patterns[(patterns["experiment"] == "random") & (patterns["trial"] == 0)].iloc[0]
    assert ranks == [link["src"], link["dst"]]
    rack_of = {node: rack for rack, nodes in racks.items() for node in nodes}
    assert rack_of[link["src"]] != rack_of[link["dst"]]
    assert {rig["racks"][n] for n in ranks} == {1, 2}
    (step,) = by_result["measure_asymmetric_random"]
    assert hosts(env, step["NodeList"]) == sorted(ranks)


@pytest.mark.slurm
@pytest.mark.slow
def test_study_results_from_slurm(workspace, every_study):
    """What each study's jobs wrote: complete results whose provenance is the Slurm
    job that measured them, counters from both nodes of every production run, and
    an injected run that loaded the injector."""
    job_of = {j["Comment"]: j["JobID"] for j in every_study}
    for path in (BASELINE, IMPACT, PAIRING, *NOISE.values(), TRIAL, CHARACTERISATION):
        record = read_sidecar(workspace / path)
        platform = record["platform"]
        assert record["exit_status"] == 0, path
        assert platform["kind"] == "slurm" and platform["inside_allocation"] is True, path
        assert platform["slurm_job_id"] in job_of.values(), path
        assert platform["job"]["Partition"] == PARTITION, path
        # The site profile's slurm_extra asks for whole nodes.
        assert platform["job"]["OverSubscribe"] == "NO", path

    bench = read_benchmark(workspace / BASELINE)
    assert len(bench.data) == 50
    assert len(set(bench.meta["hosts"].split(","))) == 2
    table = pd.read_csv(workspace / RESULTS / "tables" / "baseline_latency.csv")
    assert table["samples"].tolist() == [50] and (table["median"] > 0).all()
    assert (workspace / RESULTS / "figures" / "baseline_latency.svg").stat().st_size > 1000

    runs = sorted(p for p in (workspace / PRODUCTION).iterdir() if p.is_dir())
    assert [r.name for r in runs] == ["cg_solver_n2_run0000", "halo3d_n2_run0000"]
    for run in runs:
        assert read_sidecar(run / "application.csv")["platform"]["kind"] == "slurm"
        counters = pd.read_csv(run / "counters.csv")
        sent = counters[counters["counter"] == "tx_bytes"].groupby(["device", "port"])["value"]
        # Each node's NIC and its switch port, read on the node by the sampler step.
        assert len(sent) == 4, run
        assert (sent.agg(lambda s: s.max() - s.min()) > 0).all(), run

    assert read_sidecar(workspace / INJECTED)["exit_status"] == 0
    report = pd.read_csv((workspace / INJECTED).with_suffix(".injector.csv"))
    assert sorted(report["rank"]) == [0, 1]
    assert (report["enabled"] == 1).all() and (report["delays"] > 0).all()


@pytest.mark.slurm
@pytest.mark.slow
def test_squeue_status_command(rig, workspace, every_study):
    """The profile option for sites without accounting: the executor follows the
    jobs with squeue. Re-measures the ping-pong in the same workspace."""
    jobs = run_workflow(
        workspace,
        rig["env"],
        "squeue",
        [BASELINE],
        1,
        "--forcerun",
        "measure_baseline_latency",
    )
    assert [rule_of(j) for j in jobs] == ["measure_baseline_latency"]
    (step,) = [s for s in steps_of(rig["env"], jobs[0]) if s["JobName"] == "pingpong"]
    assert (step["NTasks"], step["NNodes"], step["State"]) == ("2", "2", "COMPLETED")
    assert len(read_benchmark(workspace / BASELINE).data) == 50


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
    """The overrides of the test replace nothing but the rig's account, the slice's
    runtimes and the status-check timing."""
    overrides = yaml.safe_load(TEST_PROFILE.read_text())
    assert set(overrides["default-resources"]) == {"slurm_partition", "slurm_account"}
    for resources in overrides["set-resources"].values():
        assert set(resources) == {"runtime"}
    merged = merge(yaml.safe_load(SITE_PROFILE.read_text()), overrides)
    site = yaml.safe_load(SITE_PROFILE.read_text())
    for rule in SLURM_JOBS:
        extra = site["set-resources"][rule].get("slurm_extra")
        assert merged["set-resources"][rule].get("slurm_extra") == extra, rule
    assert merged["default-resources"]["mem_mb"] == site["default-resources"]["mem_mb"]


def test_rig_config_runs_every_study_on_slurm():
    """The rig's config is a valid slurm config with every paper's study enabled
    (study 100 needs 10 nodes, GPCNeT's least; the rig's cluster has 8)."""
    resolved = nnconfig.load(RIG_CONFIG)
    assert resolved["platform"]["kind"] == "slurm"
    assert "--cpu-bind=verbose" in resolved["platform"]["slurm"]["srun_args"]
    from netnoise.studies import PAPERS

    assert all(resolved[s.key].get("enabled", True) for s in PAPERS)
    assert not resolved["characterise"]["enabled"]


def test_slurm_placement_words():
    slurm = {
        "launcher": "srun --mpi=pmix",
        "nodes": 2,
        "tasks_per_node": 1,
        "exclusive": True,
        "switches": 1,
        "srun_args": ["--cpu-bind=cores"],
    }
    platform = from_config(full_platform({"kind": "slurm", "slurm": slurm}))
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
    # Named nodes replace the node count; one per rank, rank i on the i-th.
    argv = platform.mpi_launch(["./pingpong"], 2, ["n2", "n1"]).argv
    assert "--nodes=2" not in argv
    assert argv[-4:] == ["--nodelist", "n2,n1", "--distribution=arbitrary", "./pingpong"]
    # Fewer nodes than ranks: srun spreads the ranks over them.
    argv = platform.mpi_launch(["./pingpong"], 4, ["n1", "n2"]).argv
    assert argv[-3:] == ["--nodelist", "n1,n2", "./pingpong"]


def test_slurm_steps_inside_a_job_take_only_their_cores(monkeypatch):
    """Inside a job every launch is an --exact step, so the two launches of a
    co-run share the allocation on separate cores instead of the second one
    waiting for the first one's (Slurm 22.05: "Requested nodes are busy")."""
    platform = slurm_platform("srun --mpi=pmix")
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


def test_helper_steps_answer_for_themselves():
    """A helper on the job's nodes (the counter sampler) overlaps the ranks and does
    not carry the workflow's process id, which means nothing on another node."""
    from netnoise import lifeline

    platform = slurm_platform("srun --mpi=pmix")
    argv = platform.node_step(["python", "-m", "sampler"], ["a", "b"]).argv
    assert argv[:2] == ["srun", "--overlap"]
    assert argv[-6:] == ["env", "-u", lifeline.ENV, "python", "-m", "sampler"]


def test_slurm_describe_outside_a_job(monkeypatch):
    monkeypatch.delenv("SLURM_JOB_ID", raising=False)
    described = slurm_platform("srun").describe()
    assert described["inside_allocation"] is False
    assert described["job"] is None


def test_parse_scontrol():
    line = "JobId=7 JobName=x Partition=p NodeList=n[1-2] NumNodes=2 OverSubscribe=NO Comment=c"
    fields = parse_scontrol(line)
    assert fields["NodeList"] == "n[1-2]"
    assert fields["OverSubscribe"] == "NO"


@pytest.mark.parametrize(
    ("root", "prefix", "base", "kept"),
    [
        ("/tmp/nn-clone", "/tmp/nn-clone/.venv", "/usr", ["/tmp/nn-clone"]),
        (
            "/tmp/nn-clone",
            "/tmp/venvs/nn",
            "/tmp/py/3.11",
            ["/tmp/nn-clone", "/tmp/py/3.11", "/tmp/venvs/nn"],
        ),
        ("/work/nn", "/work/nn/.venv", "/usr", []),
        ("/tmp", "/tmp/.venv", "/usr", ["/tmp/.venv"]),
        ("/var/tmp/nn", "/tmp/nn-venv", "/usr", ["/tmp/nn-venv"]),
    ],
)
def test_the_checkout_and_its_environment_stay_visible_in_every_node(
    monkeypatch, root, prefix, base, kept
):
    """A node has a /tmp of its own: what the jobs run from that lies under /tmp
    (a clone there, its venv) is bound into it, the rest is visible as it is."""
    from netnoise.testbed import slurm

    monkeypatch.setattr(slurm.project, "ROOT", Path(root))
    monkeypatch.setattr(sys, "prefix", prefix)
    monkeypatch.setattr(sys, "base_prefix", base)
    assert slurm.kept_in_nodes() == kept
