"""``netnoise bench cpu``: what the wait policy and the cores of each job do to the CPU
and to the measurements.

On the testbed, every node shares this machine's cores. This benchmark runs the
heaviest co-run of each study once per wait policy of the blocking MPI calls
(``spin``: busy polling, as before the wait layer; ``hybrid``: spin briefly,
then sleep) and prints, per case and policy, the CPU load of the timed region
(mean and 95th percentile of runnable tasks, busy share, share of time some
task waited for a core) and the measured job's runtime over its repeated
identical runs (mean and coefficient of variation); then the idle ping-pong
round trip of each policy (median and 99th percentile). Figures, not
assertions: the numbers are the evidence for the policy the programs use.
Needs root (it brings up testbeds of its own, prefix ``nncpu``).

With ``--cores`` (e.g. ``shared,per_job``) it runs each case once per setting of
``platform.testbed.cores``: the measured job beside its background, alone, and
beside its CPU-only control (``cpuhog`` ranks in place of each background job,
as busy as that job was; for the noise benchmark its ``--perturbation cpu``),
and prints the measured job's runtime (median and CV over its repeated runs),
its own runnable tasks and CPU pressure (its cgroups'), the machine's runnable
tasks, the share of time the measured job's cores spent in softirq (the
kernel's packet work), and the slowdowns the background and the CPU-only control
cause. On cores of its own the CPU-only control should cost the measured job
little; on shared cores it costs what the cores alone explain.

Last, the CPU record of processes that only sleep (``--sleepers``) and, as a
control, of processes that only compute, read both ways: from the scheduler's
accounting (``mean_runnable_tasks``, what saturation is judged on) and from
20 ms samples of ``procs_running``. Samples taken by a thread that wakes from a
timer land on other sleepers' wake-ups, so they overstate the load of waiting
that wakes often; busy loops read the same both ways.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import errno
import json
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from netnoise import config as netnoise_config
from netnoise import project, studies, waiting
from netnoise.build import build_programs
from netnoise.cpu import CpuLimits, CpuLoad
from netnoise.cpusets import CORE_MODES, format_cpu_list
from netnoise.io import read_benchmark
from netnoise.platform.testbed import TestbedPlatform
from netnoise.provenance import read_sidecar
from netnoise.run import Job, corun
from netnoise.settings import Settings, overlaid
from netnoise.study import CpuCase, node_names

REPO = project.ROOT
PREFIX = "nncpu"


def policy_environment(policy: str) -> dict[str, str]:
    """The rank environment of a wait policy ``WAIT[/PROBE]``, each as NN_WAIT takes
    it (``mode[:spin_us[:sleep_us[:sleep_max_us]]]``; PROBE: the timed exchanges'
    policy, default the programs'). Plain ``spin`` is measured as ranks polled
    before the wait layer: spinning everywhere, yielding the core when Open MPI
    finds nothing to do."""
    wait, _, probe = policy.partition("/")
    found = waiting.problems({"mpi": wait, "probe": probe or None}, f"--policies {policy!r}")
    if found:
        raise netnoise_config.ConfigError("; ".join(found))
    env = waiting.environment({"mpi": wait, "probe": probe or None})
    if policy == "spin":
        env |= {"NN_PROBE_WAIT": "spin", "OMPI_MCA_mpi_yield_when_idle": "1"}
    return env


def cases() -> list[tuple[str, CpuCase]]:
    """(study key, case) of every registered study's cases (``STUDY.cpu_cases``),
    in the studies' order."""
    return [(study.key, case) for study in studies.STUDIES for case in study.cpu_cases]


def _one_rack(settings: Settings) -> dict[str, Any]:
    return {}


_platforms: dict[str, TestbedPlatform] = {}


def _platform(
    settings: Settings,
    layout: Callable[[Settings], dict[str, Any]],
    cores: str | None = None,
) -> TestbedPlatform:
    """The bench's testbed with a case's layout and ``cores`` (platform.testbed.cores;
    None: the config's); a layout of several racks has a prefix of its own, so a
    one-rack case need not rebuild it. One platform per setting, so that each waits
    for quiet cores once."""
    testbed = {**layout(settings)}
    racks = testbed.get("racks", settings.platform.testbed.racks)
    testbed["prefix"] = f"{PREFIX}{'r' if racks > 1 else ''}"
    if cores is not None:
        testbed["cores"] = cores
    platform = overlaid(settings.platform, {"testbed": testbed})
    key = json.dumps(platform.as_config(), sort_keys=True)
    if key not in _platforms:
        _platforms[key] = TestbedPlatform(platform)
    return _platforms[key]


def _file_name(policy: str) -> str:
    return policy.replace(":", "_").replace("/", "-")


def _with_policy(job: Job, policy: str) -> Job:
    return dataclasses.replace(job, env={**job.env, **policy_environment(policy)})


def _corun_measured(platform, measured: Job, background: list[Job], out: Path):
    """Run ``measured`` beside ``background`` recording, not judging, the CPU load;
    the measured job's data and the run's CPU record."""
    out.mkdir(parents=True, exist_ok=True)
    corun(platform, measured, background, log=out / "run.log", timeout_s=600,
          cpu=CpuLimits(max_runnable=1e9, attempts=1))  # fmt: skip
    return read_benchmark(measured.output).data, read_sidecar(measured.output)["cpu"]


def _moved(job: Job, out: Path) -> Job:
    return dataclasses.replace(job, output=out / Path(job.output).name)


def _cpu_hogs(bin_dir: Path, background: list[Job], record: dict[str, Any]) -> list[Job]:
    """A ``cpuhog`` job in place of each background job, on its nodes with its ranks,
    each rank as busy as that job's ranks were (its own CPU time in ``record``)."""
    busy = {job["name"]: job["busy_cores"] for job in record["jobs"] if job["role"] == "background"}
    hogs = []
    for job in background:
        load = min(busy[job.name] / job.ranks, 1.0)
        argv = [str(bin_dir / "cpuhog"), "--load", f"{load:.3f}", "--iterations", "0"]
        hogs.append(Job(f"cpuhog_{job.name}", argv, job.ranks, job.output, job.nodes))
    return hogs


def _spread(times: pd.Series) -> tuple[float, float]:
    return float(times.median()), float(100 * times.std(ddof=1) / times.mean())


def _own(record: dict[str, Any], role: str = "measured") -> dict[str, Any]:
    return next(job for job in record["jobs"] if job["role"] == role)


def _softirq_share(record: dict[str, Any], cores: Sequence[int]) -> float | None:
    """Mean share of time ``cores`` spent in softirq (mostly packet work)."""
    shares = record["softirq_share_by_core"]
    return float(np.mean([shares[c] for c in cores])) if cores else None


def steer_receive_work(platform: TestbedPlatform, cores: Sequence[int]) -> None:
    """Receive packet steering (RPS) on every device of the testbed: the receive
    processing of every packet on ``cores``, whichever core it arrived on. The
    masks go with the testbed's namespaces."""
    mask = format(sum(1 << core for core in cores), "x")
    script = f"for q in /sys/class/net/*/queues/rx-*/rps_cpus; do echo {mask} > $q; done"
    spec = platform.testbed.spec
    for namespace in [spec.fabric, *(node.name for node in spec.node_list())]:
        subprocess.run(["ip", "netns", "exec", namespace, "sh", "-c", script], check=True)


def run_case_cores(
    study: str,
    case: CpuCase,
    cores: str,
    bin_dir: Path,
    settings: Settings,
    work: Path,
    steer: bool = False,
):
    """One case on ``cores``: the measured job's runtime beside its background, its
    own runnable tasks and CPU pressure there, and the slowdowns the background and
    the CPU-only control cause (each against the measured job alone; for a job that
    perturbs itself, against its own unperturbed phase). ``steer``: with the
    receive processing of every packet on the others' cores
    (:func:`steer_receive_work`)."""
    platform = _platform(settings, case.layout, cores)
    label = f"{cores}+rps" if steer else cores
    out = work / f"{study}-{case.title.split()[0]}-{label}"
    if steer:
        platform.check()
        steer_receive_work(platform, platform.core_sets().others)
    measured, background = case.jobs(bin_dir, out / "beside", settings, platform)
    data, record = _corun_measured(platform, measured, background, out / "beside")
    if case.cpu_control is not None:
        control, _ = case.cpu_control(bin_dir, out / "control", settings, platform)
        control_data, _ = _corun_measured(platform, control, [], out / "control")
        times = case.runtime(data)
        quiet = _unperturbed_times(data)
        slowdown = 100 * times.median() / quiet.median()
        control_slowdown = (
            100 * case.runtime(control_data).median() / _unperturbed_times(control_data).median()
        )
    else:
        alone_data, _ = _corun_measured(platform, _moved(measured, out / "alone"), [],
                                        out / "alone")  # fmt: skip
        hogs = _cpu_hogs(bin_dir, [_moved(j, out / "control") for j in background], record)
        control_data, _ = _corun_measured(platform, _moved(measured, out / "control"), hogs,
                                          out / "control")  # fmt: skip
        times = case.runtime(data)
        alone = case.runtime(alone_data).median()
        slowdown = 100 * times.median() / alone
        control_slowdown = 100 * case.runtime(control_data).median() / alone
    median, cv = _spread(times)
    own = _own(record)
    # The measured job's cores (a job that binds its ranks by role spans both sets:
    # its application ranks run on the measured set).
    mine = list(platform.core_sets().measured)
    others = [c for c in range(len(record["softirq_share_by_core"])) if c not in mine]
    net = record["net_softirqs_by_core"]
    return {
        "case": case.title,
        "cores": label,
        "measured_on": format_cpu_list(mine),
        "runs": len(times),
        "median_s": median,
        "cv_pct": cv,
        "own_runnable": own["mean_runnable_tasks"],
        "own_stall": own["stall_fraction"],
        "all_runnable": record["mean_runnable_tasks"],
        "softirq_measured": _softirq_share(record, mine),
        "softirq_others": _softirq_share(record, others),
        "net_softirqs_measured": sum(net[c] for c in mine),
        "net_softirqs_all": sum(net),
        "slowdown_pct": float(slowdown),
        "cpu_control_pct": float(control_slowdown),
    }


def _unperturbed_times(data: pd.DataFrame) -> pd.Series:
    return data[data["perturbed"] == 0].groupby("split")["time_us"].mean() / 1e6


def run_case(study: str, case: CpuCase, policy: str, bin_dir: Path, settings: Settings, work: Path):
    platform = _platform(settings, case.layout)
    out = work / f"{study}-{case.title.split()[0]}-{_file_name(policy)}"
    out.mkdir(parents=True, exist_ok=True)
    measured, background = case.jobs(bin_dir, out, settings, platform)
    measured = _with_policy(measured, policy)
    background = [_with_policy(job, policy) for job in background]
    # Record the CPU load of every run instead of rejecting saturated ones.
    corun(platform, measured, background, log=out / "run.log", timeout_s=600,
          cpu=CpuLimits(max_runnable=1e9, attempts=1))  # fmt: skip
    cpu = read_sidecar(measured.output)["cpu"]
    times = case.runtime(read_benchmark(measured.output).data)
    return {
        "study": study,
        "case": case.title,
        "policy": policy,
        "mean_runnable": cpu["mean_runnable_tasks"],
        "sampled_runnable": cpu["sampled_runnable_tasks"],
        "busy_share": cpu["busy_fraction"],
        "stall_share": cpu["stall_fraction"],
        "runs": len(times),
        "runtime_mean_s": float(times.mean()),
        "runtime_cv_pct": float(100 * times.std(ddof=1) / times.mean()),
    }


def pingpong_idle(policy: str, bin_dir: Path, settings: Settings, work: Path) -> dict:
    platform = _platform(settings, _one_rack)
    nodes = node_names(platform)[:2]
    out = work / f"pingpong-{_file_name(policy)}.csv"
    argv = [str(bin_dir / "pingpong"), "--size", "1K", "--warmup", "200", "--iterations", "5000"]
    job = _with_policy(Job("pingpong", argv, 2, out, nodes), policy)
    corun(platform, job, log=work / "pingpong.log", timeout_s=600,
          cpu=CpuLimits(max_runnable=1e9, attempts=1))  # fmt: skip
    rtt = read_benchmark(out).data["rtt_us"]
    return {
        "policy": policy,
        "median_us": float(rtt.median()),
        "p99_us": float(np.percentile(rtt, 99)),
        "mean_runnable": read_sidecar(out)["cpu"]["mean_runnable_tasks"],
    }


# A loop of sleeps with the timer slack the netnoise programs set (1 µs), so
# that a sleep lasts what it asks for; no sleep at all is a busy loop.
SLEEPER = """
import ctypes, sys, time
ctypes.CDLL(None).prctl(29, 1000, 0, 0, 0)
pause, end = float(sys.argv[1]) * 1e-6, time.monotonic() + float(sys.argv[2])
while time.monotonic() < end:
    if pause:
        time.sleep(pause)
"""


def sleepers(processes: int, sleep_us: float, seconds: float = 3.0) -> dict[str, Any]:
    """The CPU record of ``processes`` processes that only sleep ``sleep_us`` at a
    time (0: that never sleep): no work, no MPI, no network."""
    argv = [sys.executable, "-c", SLEEPER, str(sleep_us), str(seconds + 1.0)]
    procs = [subprocess.Popen(argv) for _ in range(processes)]
    try:
        time.sleep(0.5)  # until every interpreter has started its loop
        with CpuLoad() as load:
            time.sleep(seconds)
    finally:
        for proc in procs:
            proc.kill()
            proc.wait()
    record = load.record()
    return {
        "processes": processes,
        "sleep_us": sleep_us,
        "mean_runnable": record["mean_runnable_tasks"],
        "waiting": record["waiting_tasks"],
        "sampled_runnable": record["sampled_runnable_tasks"],
        "busy_share": record["busy_fraction"],
        "stall_share": record["stall_fraction"],
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="netnoise bench cpu", description=__doc__)
    add_arguments(parser)
    return run(parser.parse_args(argv))


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--config",
        default=str(REPO / "config" / "config.yaml"),
        help="the config whose studies' co-runs are measured (default: %(default)s)",
    )
    parser.add_argument("--bin", help="built programs (default: build them into a scratch dir)")
    parser.add_argument(
        "--policies",
        default="spin,hybrid",
        help="comma-separated wait policies as NN_WAIT takes them, e.g. spin,hybrid:20:20:1000 "
        "(empty: no co-runs)",
    )
    parser.add_argument(
        "--cores",
        default="",
        help="comma-separated platform.testbed.cores settings to compare, e.g. shared,per_job: "
        "per case the measured job beside its background, alone and beside its CPU-only "
        "control, under the programs' own wait policy (empty: no such comparison)",
    )
    parser.add_argument(
        "--steer",
        action="store_true",
        help="with --cores: each case once more on cores per job with receive packet steering "
        "(RPS) putting the kernel's receive work on the other cores",
    )
    parser.add_argument("--cases", help="comma-separated case numbers (1-based; default: all)")
    parser.add_argument(
        "--sleepers",
        default="20,100,1000",
        help="comma-separated sleeps (µs) of 8 processes that only sleep; empty: none",
    )


def run(args: argparse.Namespace) -> int:
    settings = Settings.of(netnoise_config.load(args.config))
    if args.bin is not None and not Path(args.bin).is_dir():
        raise FileNotFoundError(errno.ENOTDIR, "not a directory of built programs", args.bin)
    sleeps = _sleeps(args.sleepers)
    policies = [p for p in args.policies.split(",") if p]
    for policy in policies:
        policy_environment(policy)
    modes = [m for m in args.cores.split(",") if m]
    unknown = [m for m in modes if m not in CORE_MODES]
    if unknown:
        raise netnoise_config.ConfigError(
            f"--cores: {', '.join(unknown)}: expected a comma-separated list of "
            f"{', '.join(CORE_MODES)}"
        )
    chosen = cases()
    if args.cases:
        chosen = [chosen[int(i) - 1] for i in args.cases.split(",")]
    if policies:
        compare_policies(policies, chosen, settings, args.bin)
    if modes or args.steer:
        compare_cores(modes, chosen, settings, args.bin, args.steer)
    if sleeps:
        print()
        print("8 processes that only sleep and 4 that only compute, as the CPU record reads them:")
        table = pd.DataFrame([*(sleepers(8, v) for v in sleeps), sleepers(4, 0)])
        print(table.to_string(index=False, float_format=lambda v: f"{v:.3g}"))
    return 0


def _sleeps(text: str) -> list[float]:
    problem = netnoise_config.ConfigError(
        f"--sleepers: {text!r}: expected comma-separated sleeps of 1-1e6 µs"
    )
    try:
        sleeps = [float(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise problem from None
    if any(not 1 <= v <= 1e6 for v in sleeps):
        raise problem
    return sleeps


@contextlib.contextmanager
def _bench_work(settings: Settings, bin_dir: str | None) -> Iterator[tuple[Path, Path]]:
    """(scratch directory, built programs); the bench's testbeds are taken down after."""
    with tempfile.TemporaryDirectory(prefix="netnoise-bench-cpu-") as scratch:
        work = Path(scratch)
        built = Path(bin_dir) if bin_dir else work / "bin"
        if not bin_dir:
            build_programs(REPO / "csrc", built, mpicc=settings.build.mpicc,
                           cflags=settings.build.cflags, log=work / "build.log",
                           build_dir=work / "objects")  # fmt: skip
        try:
            yield work, built
        finally:
            brought_up = {p.testbed.spec.prefix: p for p in _platforms.values()}
            for platform in brought_up.values():
                platform.testbed.down()


def compare_cores(
    modes, cases, settings: Settings, bin_dir: str | None, steer: bool = False
) -> None:
    """Every case on every core setting (platform.testbed.cores); ``steer``: each case
    once more on cores per job with the receive processing on the others' cores."""
    rows = []
    with _bench_work(settings, bin_dir) as (work, built):
        for study, case in cases:
            for mode, steered in [*((m, False) for m in modes), *([("per_job", True)] * steer)]:
                rows.append(run_case_cores(study, case, mode, built, settings, work, steered))
                print(", ".join(f"{k} {v}" for k, v in rows[-1].items()), file=sys.stderr,
                      flush=True)  # fmt: skip
    print()
    print(
        "The measured job beside its background on each core setting: runtime (median, CV),\n"
        "its own runnable tasks and CPU pressure, the machine's runnable tasks, the measured\n"
        "and other cores' share of time in softirq and the packet softirqs raised (on the\n"
        "measured cores, on all), and the slowdowns (%) the background and the\n"
        "CPU-only control cause against the job alone (or its own unperturbed phase):"
    )
    print(pd.DataFrame(rows).to_string(index=False, float_format=lambda v: f"{v:.4g}"))


def compare_policies(policies, cases, settings: Settings, bin_dir: str | None) -> None:
    """Every case under every policy, then the idle ping-pong of each policy."""
    rows, pings = [], []
    with _bench_work(settings, bin_dir) as (work, built):
        for policy in policies:
            pings.append(pingpong_idle(policy, built, settings, work))
            for study, case in cases:
                rows.append(run_case(study, case, policy, built, settings, work))
                _print_row(rows[-1])
    print()
    print(pd.DataFrame(rows).to_string(index=False, float_format=lambda v: f"{v:.3g}"))
    print()
    print("idle 1 KiB ping-pong across two testbed nodes:")
    print(pd.DataFrame(pings).to_string(index=False, float_format=lambda v: f"{v:.4g}"))
    if len(pings) == 2:
        ratio = pings[1]["median_us"] / pings[0]["median_us"]
        print(f"median {pings[1]['policy']} / {pings[0]['policy']}: {ratio:.3f}")


def _print_row(row: dict[str, Any]) -> None:
    print(
        f"{row['study']:<19} {row['case']:<40} {row['policy']:<7} runnable "
        f"{row['mean_runnable']:.2f} (sampled {row['sampled_runnable']:.2f}), "
        f"busy {row['busy_share']:.2f}, "
        f"runtime {row['runtime_mean_s']:.4g} s ± {row['runtime_cv_pct']:.1f} % "
        f"over {row['runs']}",
        file=sys.stderr,
        flush=True,
    )
