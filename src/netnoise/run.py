"""Run benchmarks on a platform: alone or co-running, with timeouts, full reaping,
atomic results and provenance.

A co-run starts the background jobs (an ImpactB probe, a CompressionB or
load-generator background, a second application), waits until each has
finished its warm-up (``--ready-file``), runs the measured job, then tells
the background jobs to stop (``--stop-file``) and waits for them. Any job
failing, a background job ending early, or a timeout fails the whole co-run:
its results never appear.

On a simulated platform the jobs of a co-run are one launch, and they keep
the same order among themselves, in simulated time: the measured job's timed
part starts once the background has created its ready file, and the
background stops once the measured job has created its end file.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from netnoise import counters as counter_tools
from netnoise import lifeline, provenance, waiting
from netnoise.atomic import atomic_path, write_csv
from netnoise.cpu import CpuLoad, JobLoad
from netnoise.cpusets import CoreSets, JobCgroup, format_cpu_list
from netnoise.external import ExternalProgram
from netnoise.filewatch import DirectoryWatch
from netnoise.io import BenchmarkFormatError, read_benchmark
from netnoise.platform import Platform


class RunFailed(RuntimeError):
    """A run failed or timed out; none of its results were written."""


class _JobEnded(RunFailed):
    """A job of the run exited while the runner waited for something of it."""


class _StartFailed(Exception):
    """A job exited before its warm-up ended (e.g. mpirun's daemons failed to start):
    nothing was measured yet, so the co-run may be tried again."""


#: Launches of a co-run before a job that never starts fails it (Open MPI 4.1's
#: daemons lose a race for a node's session directory now and then when two
#: jobs start on one node at once).
LAUNCH_ATTEMPTS = 3


# The measured job's handshake files (--<name>-file): created by the job after
# its warm-up, by the runner once the windows are open, by the job after its
# timed part, by the runner once the windows are closed.
HANDSHAKE = ("ready", "start", "end", "release")


@dataclass
class Job:
    """One MPI program of a run. ``program`` is a netnoise benchmark's argv
    without ``--output`` (and, for background jobs, without the stop/ready files),
    or, with ``external``, a third-party program's argv that netnoise.external wraps.
    ``env`` is given to every rank, not to the launcher: e.g. the latency
    injector's ``LD_PRELOAD`` and ``NN_LATENCY_*``. ``binds_by_role``: the program
    has ranks of both kinds, measured and perturbing (the noise benchmark, whose
    roles are drawn anew every split), and binds each rank to the core set of its
    role itself (``NN_CPUS_MEASURED``, ``NN_CPUS_OTHER``); its cgroups span both
    sets."""

    name: str
    program: list[str]
    ranks: int
    output: str | os.PathLike[str]
    nodes: list[str] | None = None
    external: ExternalProgram | None = None
    env: dict[str, str] = field(default_factory=dict)
    binds_by_role: bool = False

    def launch(
        self, platform: Platform, flags: list[str], place: JobCgroup | None = None
    ) -> tuple[list[str], dict[str, str]]:
        """The command starting this job with the run's ``flags`` (output, stop, ready),
        inside ``place`` if given; its ranks wait as ``platform.wait`` says unless the
        job's ``env`` says otherwise."""
        env = {**waiting.environment(platform.config.get("wait", {})), **self.env}
        sets = platform.core_sets()
        if self.binds_by_role and sets is not None and sets.disjoint:
            env["NN_CPUS_MEASURED"] = format_cpu_list(sets.measured)
            env["NN_CPUS_OTHER"] = format_cpu_list(sets.others)
        if self.external is None:
            launch = platform.mpi_launch([*self.program, *flags], self.ranks, self.nodes, env)
            argv = launch.argv
        else:
            launch = platform.mpi_launch(self.program, self.ranks, self.nodes, env)
            argv = self.external.wrap(launch.argv, flags, self.ranks, self.nodes)
        return (place.wrap(argv) if place else argv), launch.environment()


def job_from_spec(spec: dict[str, Any]) -> Job:
    """The Job of a workflow job spec: ``name, program, args, ranks, nodes, output``
    and optionally ``external`` (netnoise.external's options) and ``env``."""
    external = spec.get("external")
    return Job(
        spec["name"],
        [spec["program"], *map(str, spec["args"])],
        spec["ranks"],
        spec["output"],
        spec["nodes"],
        ExternalProgram(**external) if external else None,
        dict(spec.get("env", {})),
        bool(spec.get("binds_by_role", False)),
    )


class _Process:
    def __init__(self, job: Job, argv: list[str], env: dict[str, str], log: IO[bytes]):
        self.job = job
        self.argv = argv
        log.write(f"$ [{job.name}] {' '.join(argv)}\n".encode())
        log.flush()
        # A session of its own, ended with everything it started (ranks and daemons
        # included) when the run ends, the runner dies or the workflow is killed.
        self.proc = lifeline.spawn(argv, env=env, stdout=log, stderr=subprocess.STDOUT)

    def kill(self, grace_s: float = 5.0) -> None:
        lifeline.stop(self.proc, grace_s)


# How often a waiting runner checks its processes (and files a watch cannot see).
CHECK_S = 0.05


def _wait_for(
    files: Sequence[Path],
    processes: Sequence[_Process],
    deadline: float,
    what: str,
    log: Path,
    timeout_s: float,
    watch: DirectoryWatch,
) -> None:
    """Until every file exists; a process ending first or the deadline fails the run.
    The files appear in the watched directory, which wakes the waiter at once."""
    while not all(f.exists() for f in files):
        for proc in processes:
            code = proc.proc.poll()
            if code is not None:
                raise _JobEnded(
                    f"{proc.job.name} exited with status {code} while waiting for {what}; "
                    f"log {log}:\n" + log.read_text(errors="replace")[-2000:]
                )
        if time.monotonic() > deadline:
            raise RunFailed(
                f"the run did not finish within {timeout_s:g} s (waiting for {what}); see {log}"
            )
        watch.wait(min(CHECK_S, deadline - time.monotonic()))


@contextlib.contextmanager
def _staged(outputs: Sequence[str | os.PathLike[str]]) -> Iterator[list[Path]]:
    with contextlib.ExitStack() as stack:
        yield [stack.enter_context(atomic_path(o)) for o in outputs]


@dataclass(frozen=True)
class CpuLimits:
    """When a run counts as CPU-saturated (mean runnable tasks during its timed
    region above ``max_runnable``; None: the number of cores), how many times a
    co-run is tried before it is rejected, whether saturation is judged at
    all (otherwise it is only recorded), and the load up to which the last
    attempt is kept all the same, recorded as saturated (``tolerated_runnable``;
    None: never)."""

    max_runnable: float | None = None
    attempts: int = 3
    judged: bool = True
    tolerated_runnable: float | None = None

    def rejects(self, cpu: CpuLoad, attempt: int) -> bool:
        """Whether attempt number ``attempt`` with this CPU load is discarded."""
        if not self.judged:
            return False
        if attempt == self.attempts and self.tolerated_runnable is not None:
            return cpu.mean_runnable > self.tolerated_runnable
        return cpu.saturated

    @classmethod
    def from_config(cls, platform: dict[str, Any]) -> CpuLimits:
        """The platform config's ``cpu`` section. Saturation is judged on the testbed
        only: there every emulated node shares the cores the runner samples; a
        localhost run has no network to measure, and on a cluster the runner's
        host is one node of the run, so there the load is recorded, not judged."""
        cpu = platform.get("cpu", {})
        judged = platform.get("kind", "testbed") == "testbed"
        return cls(
            cpu.get("max_runnable"), cpu.get("attempts", 3), judged, cpu.get("tolerated_runnable")
        )


class _Saturated(Exception):
    def __init__(self, record: dict[str, Any]):
        super().__init__(record)
        self.record = record


@dataclass
class _Attempt:
    argv: list[list[str]]  # of every job: background ones, then the measured one
    cpu: dict[str, Any]
    timed_s: float


def corun(
    platform: Platform,
    measured: Job,
    background: Sequence[Job] = (),
    *,
    log: str | os.PathLike[str],
    timeout_s: float,
    config: dict[str, Any] | None = None,
    inputs: dict[str, str | os.PathLike[str]] | None = None,
    counters: counter_tools.Snapshot | None = None,
    counters_output: str | os.PathLike[str] | None = None,
    counter_interval_s: float = 0.0,
    launch_together: bool = False,
    stop_grace_s: float = 30.0,
    cpu: CpuLimits | None = None,
) -> None:
    """Run ``measured`` while ``background`` jobs load the same platform.

    The background jobs start first; the measured job's timed part starts once
    every background job has finished its warm-up (``--ready-file``) and the
    measured job has finished its own, and the background stops only after the
    measured job's last timed iteration. The measured program takes part in a
    handshake (``--ready-file``, ``--start-file``, ``--end-file``,
    ``--release-file``): it waits after its warm-up until the CPU sampling and the
    first counter snapshot have started, and after its timed part until the last
    snapshot is taken, so both windows are exactly the timed region. With
    ``launch_together`` the measured job is launched at once beside the
    background (its launch overlaps theirs); its timed part still waits.

    A run whose timed region was CPU-saturated (``cpu``; by default the
    platform config's ``cpu`` section) is discarded and tried again, at most
    ``cpu.attempts`` times; then the co-run fails. A launch in which a job
    exits before its warm-up ends is tried again apart from those, up to
    :data:`LAUNCH_ATTEMPTS` times. Every job's
    output appears, with its provenance sidecar, only if every job succeeded.
    """
    if counters is not None and counters_output is None:
        raise ValueError("counters need counters_output")
    if counters_output is not None and counters is None and not platform.simulated:
        raise ValueError("counters_output needs counters, unless the platform simulates them")
    limits = cpu or CpuLimits.from_config(platform.config)
    platform.check()
    log_path = Path(log)
    log_path.parent.mkdir(parents=True, exist_ok=True)
    log_offset = log_path.stat().st_size if log_path.exists() else 0
    start = provenance.now()
    rejected = []
    attempt, launches_lost = 1, 0
    while True:
        if platform.simulated:
            outcome = _simulated_once(
                platform,
                measured,
                background,
                log_path=log_path,
                timeout_s=timeout_s,
                counters_output=counters_output,
                counter_interval_s=counter_interval_s,
            )
            break
        try:
            outcome = _corun_once(
                platform,
                measured,
                background,
                log_path=log_path,
                timeout_s=timeout_s,
                counters=counters,
                counters_output=counters_output,
                counter_interval_s=counter_interval_s,
                launch_together=launch_together,
                stop_grace_s=stop_grace_s,
                limits=limits,
                attempt=attempt,
            )
            break
        except _Saturated as saturated:
            rejected.append(saturated.record)
            with open(log_path, "a") as fh:
                fh.write(
                    f"attempt {attempt} of {limits.attempts}: CPU-saturated timed region "
                    f"(mean runnable tasks {saturated.record['mean_runnable_tasks']} > "
                    f"{saturated.record['max_runnable']}); discarded\n"
                )
            if attempt == limits.attempts:
                worst = min(r["mean_runnable_tasks"] for r in rejected)
                raise RunFailed(
                    f"{measured.name}: every one of {limits.attempts} attempts was CPU-saturated "
                    f"(mean runnable tasks at best {worst} > {rejected[0]['max_runnable']}); "
                    f"the machine is too busy for a network measurement; see {log_path}"
                ) from None
            attempt += 1
        except _StartFailed as failed:
            # Nothing was measured, so a lost launch costs no CPU attempt.
            launches_lost += 1
            if launches_lost == LAUNCH_ATTEMPTS:
                raise RunFailed(str(failed)) from None
            with open(log_path, "a") as fh:
                fh.write(
                    f"launch {launches_lost} of {LAUNCH_ATTEMPTS}: a job did not start; again\n"
                )
    end = provenance.now()
    jobs = [*background, measured]
    corun_record = [
        {"name": j.name, "ranks": j.ranks, "nodes": j.nodes, "command": argv}
        for j, argv in zip(jobs, outcome.argv, strict=True)
    ]
    judged = limits.judged and not platform.simulated
    cpu_record = {**outcome.cpu, "judged": judged, "attempts": attempt, "rejected": rejected}
    with open(log_path, "rb") as fh:
        fh.seek(log_offset)
        platform_record = platform.run_record(fh.read().decode(errors="replace"))
    for job, argv in zip(jobs, outcome.argv, strict=True):
        provenance.write_sidecar(
            job.output,
            inputs=inputs,
            config=config,
            platform=platform.describe(),
            command=argv,
            start=start,
            end=end,
            exit_status=0,
            extra={
                "cpu": cpu_record,
                "timed_region_s": round(outcome.timed_s, 6),
                "corun": corun_record if background else None,
                **({"platform_run": platform_record} if platform_record is not None else {}),
            },
        )


def _check_outputs(jobs: Sequence[Job], outputs: Sequence[Path]) -> None:
    """Every job's output must read as a benchmark's, whatever the job's status said."""
    for job, path in zip(jobs, outputs, strict=True):
        try:
            read_benchmark(path)
        except BenchmarkFormatError as err:
            raise RunFailed(f"{job.name} exited 0 but its output is invalid: {err}") from err


@contextlib.contextmanager
def _placed(jobs: Sequence[Job], sets: CoreSets | None) -> Iterator[list[JobCgroup | None]]:
    """Each job's cgroups on its core set (the last job is the measured one), removed
    with whatever is left inside them when the run ends; none without core sets."""
    if sets is None:
        yield [None] * len(jobs)
        return
    with contextlib.ExitStack() as stack:
        places: list[JobCgroup | None] = []
        for i, job in enumerate(jobs):
            if i < len(jobs) - 1:
                cores = sets.others
            elif job.binds_by_role:
                cores = tuple(sorted({*sets.measured, *sets.others}))
            else:
                cores = sets.measured
            place = JobCgroup.for_job(i, cores)
            stack.callback(place.remove)
            places.append(place.create())
        yield places


@contextlib.contextmanager
def _runner_on(cores: Sequence[int] | None) -> Iterator[None]:
    """The runner's CPU and counter sampling threads, started inside this, on the
    background's cores, off the measured job's. Entered after the jobs started:
    a process inherits the affinity its launcher asked for, and the kernel keeps
    it within a cpuset the process enters."""
    if not cores:
        yield
        return
    before = os.sched_getaffinity(0)
    os.sched_setaffinity(0, cores)
    try:
        yield
    finally:
        os.sched_setaffinity(0, before)


def _corun_once(
    platform: Platform,
    measured: Job,
    background: Sequence[Job],
    *,
    log_path: Path,
    timeout_s: float,
    counters: counter_tools.Snapshot | None,
    counters_output: str | os.PathLike[str] | None,
    counter_interval_s: float,
    launch_together: bool,
    stop_grace_s: float,
    limits: CpuLimits,
    attempt: int,
) -> _Attempt:
    jobs = [*background, measured]
    processes: list[_Process] = []
    extra_outputs = [counters_output] if counters_output is not None else []
    sets = platform.core_sets()
    # The handshake files go beside the log, on the file system every node of a
    # cluster shares: a rank on another node cannot reach the runner's /tmp.
    with (
        tempfile.TemporaryDirectory(prefix=".netnoise-run-", dir=log_path.parent) as scratch_dir,
        DirectoryWatch(scratch_dir) as watch,
        open(log_path, "ab") as log_fh,
        _staged([*(j.output for j in jobs), *extra_outputs]) as staged,
        _placed(jobs, sets) as places,
    ):
        scratch = Path(scratch_dir)
        stop_file = scratch / "stop"
        try:
            ready = []
            for i, job in enumerate(background):
                ready.append(scratch / f"ready-{i}")
                flags = ["--output", str(staged[i])]
                flags += ["--stop-file", str(stop_file), "--ready-file", str(ready[-1])]
                processes.append(_Process(job, *job.launch(platform, flags, places[i]), log_fh))
            deadline = time.monotonic() + timeout_s
            waits = (log_path, timeout_s, watch)
            if not launch_together:
                _wait_for(ready, processes, deadline, "the background's warm-up", *waits)

            handshake = {name: scratch / f"measured-{name}" for name in HANDSHAKE}
            flags = ["--output", str(staged[len(background)])]
            for name, path in handshake.items():
                flags += [f"--{name}-file", str(path)]
            main = _Process(measured, *measured.launch(platform, flags, places[-1]), log_fh)
            processes.append(main)
            try:
                _wait_for([*ready, handshake["ready"]], processes, deadline, "the warm-ups", *waits)
            except _JobEnded as err:
                raise _StartFailed(str(err)) from None
            job_loads = [
                JobLoad(job.name, "measured" if job is measured else "background", place)
                for job, place in zip(jobs, places, strict=True)
                if place is not None
            ]
            cpu = CpuLoad(max_runnable=limits.max_runnable, jobs=job_loads)
            sampler = (
                counter_tools.Sampler(counters, counter_interval_s)
                if counters is not None
                else contextlib.nullcontext()
            )
            with _runner_on(sets.others if sets else None), sampler:
                cpu.start()
                timed_from = time.monotonic()
                handshake["start"].touch()
                _wait_for([handshake["end"]], processes, deadline, "the timed part's end", *waits)
                timed_s = time.monotonic() - timed_from
                cpu.stop()
            handshake["release"].touch()
            try:
                status = main.proc.wait(timeout=max(deadline - time.monotonic(), 0.1))
            except subprocess.TimeoutExpired:
                raise RunFailed(
                    f"{measured.name} did not finish within {timeout_s:g} s; see {log_path}"
                ) from None
            if status != 0:
                raise RunFailed(
                    f"{measured.name} exited with status {status}; log {log_path}:\n"
                    + log_path.read_text(errors="replace")[-2000:]
                )
            stop_file.touch()
            for proc in processes[:-1]:
                try:
                    code = proc.proc.wait(timeout=stop_grace_s)
                except subprocess.TimeoutExpired:
                    raise RunFailed(
                        f"background job {proc.job.name} did not stop within {stop_grace_s:g} s"
                    ) from None
                if code != 0:
                    raise RunFailed(f"background job {proc.job.name} exited with status {code}")
            if limits.rejects(cpu, attempt):
                raise _Saturated(cpu.record())
            _check_outputs(jobs, staged[: len(jobs)])
            if counters is not None:
                write_csv(staged[-1], sampler.result())
        finally:
            for proc in processes:
                proc.kill()
    return _Attempt([p.argv for p in processes], cpu.record(), timed_s)


#: The CPU record of a run in simulated time.
NOT_APPLICABLE = {
    "applicable": False,
    "why": "simulated time: the host's cores enter no result, however busy they were",
}


#: What SMPI prints when a rank ends with a status other than 0. In a co-run the
#: other program would wait for it for ever, in simulated time.
RANK_FAILED = b"SMPI process did not return 0"


def _simulation_status(process: _Process, log: Path, offset: int, timeout_s: float) -> int:
    """The exit status of a simulation; 1, once it is stopped, when a rank of it
    failed (its log from ``offset`` on says so). A run longer than ``timeout_s``
    fails."""
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            return process.proc.wait(timeout=CHECK_S)
        except subprocess.TimeoutExpired:
            pass
        with open(log, "rb") as fh:
            fh.seek(offset)
            if RANK_FAILED in fh.read():
                process.kill()
                return 1
        if time.monotonic() > deadline:
            raise RunFailed(f"{process.job.name} did not finish within {timeout_s:g} s; see {log}")


def _simulated_once(
    platform: Platform,
    measured: Job,
    background: Sequence[Job],
    *,
    log_path: Path,
    timeout_s: float,
    counters_output: str | os.PathLike[str] | None,
    counter_interval_s: float,
) -> _Attempt:
    """Every job in one launch of a simulated platform; the runner takes no part in
    the handshake, which the jobs hold among themselves in simulated time. With
    ``counters_output`` the measured program reads the simulated network's
    counters over its timed part itself (every ``counter_interval_s`` simulated
    seconds too), and they are written there in the tidy format."""
    if len(background) > 1:
        raise RunFailed(
            f"{measured.name}: a co-run in simulated time takes one background job, "
            f"got {len(background)}"
        )
    jobs = [*background, measured]
    for job in jobs:
        if job.external is not None:
            raise RunFailed(
                f"{job.name}: a third-party program runs on platform.kind testbed or slurm, "
                f"not on {platform.kind!r}"
            )
    envs = [{**waiting.environment(platform.config.get("wait", {})), **job.env} for job in jobs]
    env = {name: value for job_env in envs for name, value in job_env.items()}
    if any(job_env.items() - env.items() for job_env in envs):
        raise RunFailed(
            f"{measured.name}: the jobs of a co-run in simulated time share one process's "
            "environment, and theirs differ: " + "; ".join(map(str, envs))
        )
    extra_outputs = [counters_output] if counters_output is not None else []
    with (
        tempfile.TemporaryDirectory(prefix=".netnoise-run-", dir=log_path.parent) as scratch_dir,
        open(log_path, "ab") as log_fh,
        _staged([*(job.output for job in jobs), *extra_outputs]) as staged,
    ):
        scratch = Path(scratch_dir)
        ready, end = scratch / "background-ready", scratch / "measured-end"
        links = scratch / "link-counters.csv"
        flags = [["--output", str(path)] for path in staged[: len(jobs)]]
        if background:
            flags[0] += ["--ready-file", str(ready), "--stop-file", str(end)]
            flags[1] += ["--start-file", str(ready), "--end-file", str(end)]
        if counters_output is not None:
            flags[-1] += platform.link_counter_flags(links, counter_interval_s)
        programs = [
            ([*job.program, *job_flags], job.ranks, list(job.nodes or []))
            for job, job_flags in zip(jobs, flags, strict=True)
        ]
        if background:
            launch = platform.corun_launch(programs, env)
        else:
            launch = platform.mpi_launch(*programs[0], env)
        started = time.monotonic()
        log_offset = log_fh.tell()
        process = _Process(measured, launch.argv, launch.environment(), log_fh)
        try:
            status = _simulation_status(process, log_path, log_offset, timeout_s)
            if status != 0:
                raise RunFailed(
                    f"{measured.name} exited with status {status}; log {log_path}:\n"
                    + log_path.read_text(errors="replace")[-2000:]
                )
            _check_outputs(jobs, staged[: len(jobs)])
            if counters_output is not None:
                write_csv(staged[-1], platform.simulated_counters(links))
        finally:
            process.kill()
    return _Attempt([launch.argv] * len(jobs), dict(NOT_APPLICABLE), time.monotonic() - started)


def run_benchmark(
    platform: Platform,
    program: list[str],
    ranks: int,
    output: str | os.PathLike[str],
    log: str | os.PathLike[str],
    timeout_s: float,
    config: dict[str, Any] | None = None,
    inputs: dict[str, str | os.PathLike[str]] | None = None,
    nodes: list[str] | None = None,
    cpu: CpuLimits | None = None,
    binds_by_role: bool = False,
) -> Path:
    """Run one benchmark alone; its result and provenance appear only on success.
    ``binds_by_role``: as :class:`Job`'s."""
    job = Job(Path(program[0]).name, program, ranks, output, nodes, binds_by_role=binds_by_role)
    corun(platform, job, log=log, timeout_s=timeout_s, config=config, inputs=inputs, cpu=cpu)
    return Path(output)
