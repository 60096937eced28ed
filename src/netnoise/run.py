"""Run benchmarks on a platform: alone or co-running, with timeouts, full reaping,
atomic results and provenance.

A co-run starts the background jobs (an ImpactB probe, a CompressionB or
load-generator background, a second application), waits until each has
finished its warm-up (``--ready-file``), runs the measured job, then tells
the background jobs to stop (``--stop-file``) and waits for them. Any job
failing, a background job ending early, or a timeout fails the whole co-run:
its results never appear.

What differs between platforms, the platform says (netnoise.platform): how the
jobs are launched (one launch each, or one for all where a co-run is one
simulation) and by which clock the run is timed. In simulated time the jobs
keep the same order among themselves, without the runner: the measured job's
timed part starts once the background has created its ready file, and the
background stops once the measured job has created its end file; the host's
cores enter no result, so the run's CPU record does not apply.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from netnoise import counters as counter_tools
from netnoise import lifeline, provenance, waiting
from netnoise.atomic import atomic_path, write_csv
from netnoise.cpu import CpuLimits, CpuLoad, JobLoad
from netnoise.cpusets import CoreSets, JobCgroup, format_cpu_list
from netnoise.external import ExternalProgram
from netnoise.filewatch import DirectoryWatch
from netnoise.io import BenchmarkFormatError, read_benchmark
from netnoise.platform import Platform
from netnoise.platform.base import WALL, Program


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

    def program_on(self, platform: Platform, flags: list[str]) -> Program:
        """What ``platform`` launches for this job with the run's ``flags`` (output,
        stop, ready): a third-party program without them (netnoise.external passes
        them on); its ranks wait as ``platform.wait`` says unless the job's ``env``
        says otherwise."""
        env = {**waiting.environment(platform.settings.wait.as_config()), **self.env}
        sets = platform.core_sets()
        if self.binds_by_role and sets is not None and sets.disjoint:
            env["NN_CPUS_MEASURED"] = format_cpu_list(sets.measured)
            env["NN_CPUS_OTHER"] = format_cpu_list(sets.others)
        argv = self.program if self.external is not None else [*self.program, *flags]
        return Program(argv, self.ranks, list(self.nodes or []), env)


#: What a run's provenance records of the config: the sections (as the config
#: gives them) and choices the run depends on.
ConfigRecord = Mapping[str, object]


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
    config: ConfigRecord | None = None,
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
    platform's, :meth:`Platform.cpu_limits`) is discarded and tried again, at most
    ``cpu.attempts`` times; then the co-run fails. A launch in which a job
    exits before its warm-up ends is tried again apart from those, up to
    :data:`LAUNCH_ATTEMPTS` times. Every job's
    output appears, with its provenance sidecar, only if every job succeeded.
    """
    if counters is not None and counters_output is None:
        raise ValueError("counters need counters_output")
    if counters_output is not None and counters is None and not platform.reads_counters_in_run:
        raise ValueError("counters_output needs counters, unless the platform's runs read them")
    limits = cpu or platform.cpu_limits()
    platform.check()
    log_path = Path(log)
    log_path.parent.mkdir(parents=True, exist_ok=True)
    log_offset = log_path.stat().st_size if log_path.exists() else 0
    start = provenance.now()
    rejected = []
    attempt, launches_lost = 1, 0
    while True:
        try:
            outcome = _run_once(
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
    judged = limits.judged and platform.clock == WALL
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


@dataclass
class _Handshake:
    """The files by which a co-run's jobs agree on the measured job's timed part:
    each background job's options, the measured job's, the background's ready
    files the runner waits for, the measured job's files the runner holds (none
    where the jobs hold the handshake among themselves) and the file that stops
    the background once the measured job has ended."""

    background: list[list[str]]
    measured: list[str]
    ready: list[Path]
    held: dict[str, Path]
    stop: Path

    @classmethod
    def held_by_runner(cls, scratch: Path, background: int) -> _Handshake:
        """In wall time: the runner opens its windows (CPU sampling, counters) once
        every job has warmed up, tells the measured job to start, and closes them
        when its timed part ends."""
        stop = scratch / "stop"
        ready = [scratch / f"ready-{i}" for i in range(background)]
        held = {name: scratch / f"measured-{name}" for name in HANDSHAKE}
        return cls(
            [["--stop-file", str(stop), "--ready-file", str(r)] for r in ready],
            [word for name, path in held.items() for word in (f"--{name}-file", str(path))],
            ready,
            held,
            stop,
        )

    @classmethod
    def held_by_jobs(cls, scratch: Path, background: int) -> _Handshake:
        """In simulated time, where the runner cannot take part: the measured job
        starts its timed part once the background is ready, and its end stops it."""
        ready, end = scratch / "background-ready", scratch / "measured-end"
        if not background:
            return cls([], [], [], {}, end)
        return cls(
            [["--ready-file", str(ready), "--stop-file", str(end)]] * background,
            ["--start-file", str(ready), "--end-file", str(end)],
            [],
            {},
            end,
        )


def _launches(
    platform: Platform,
    jobs: Sequence[Job],
    flags: Sequence[list[str]],
    places: Sequence[JobCgroup | None],
) -> list[tuple[Job, list[str], dict[str, str]]]:
    """(job, argv, environment) of every process of the co-run, the measured job's
    last: one per job, or, where the platform starts a co-run in one launch, one
    for all, named after the measured job."""
    for job in jobs:
        if job.external is not None and not platform.runs_third_party:
            raise RunFailed(f"{job.name}: a third-party program cannot run on {platform.kind!r}")
    programs = [job.program_on(platform, f) for job, f in zip(jobs, flags, strict=True)]
    launches = platform.corun_launches(programs)
    if len(launches) != len(jobs):
        (launch,) = launches
        return [(jobs[-1], launch.argv, launch.environment())]
    processes = []
    for job, job_flags, place, launch in zip(jobs, flags, places, launches, strict=True):
        argv = launch.argv
        if job.external is not None:
            argv = job.external.wrap(argv, job_flags, job.ranks, job.nodes)
        processes.append((job, place.wrap(argv) if place else argv, launch.environment()))
    return processes


def _exit_status(
    process: _Process, log: Path, offset: int, deadline: float, timeout_s: float, marker
) -> int:
    """The exit status of the measured process; 1, once it is stopped, when its log
    from ``offset`` on shows the platform's ``marker`` of a failed rank (the
    others would wait for it forever). Past the deadline the run fails."""
    while True:
        try:
            return process.proc.wait(timeout=max(min(CHECK_S, deadline - time.monotonic()), 0))
        except subprocess.TimeoutExpired:
            pass
        if marker is not None:
            with open(log, "rb") as fh:
                fh.seek(offset)
                if marker in fh.read():
                    process.kill()
                    return 1
        if time.monotonic() > deadline:
            raise RunFailed(f"{process.job.name} did not finish within {timeout_s:g} s; see {log}")


#: The CPU record of a run in simulated time.
NOT_APPLICABLE = {
    "applicable": False,
    "why": "simulated time: the host's cores enter no result, however busy they were",
}


def _timed_part(
    handshake: _Handshake,
    processes: Sequence[_Process],
    places: Sequence[JobCgroup | None],
    sets: CoreSets | None,
    limits: CpuLimits,
    counters: counter_tools.Snapshot | None,
    counter_interval_s: float,
    deadline: float,
    waits: tuple[Path, float, DirectoryWatch],
) -> tuple[CpuLoad, float, Any]:
    """The measured job's timed part as the runner holds it (processes: the
    background's, then the measured job's): once every job has warmed up the CPU
    sampling and the counters start, the job is told to start, and both stop when
    it ends. The CPU load, the timed region's length in seconds and the counters
    sampled (None without ``counters``)."""
    held = handshake.held
    try:
        _wait_for([*handshake.ready, held["ready"]], processes, deadline, "the warm-ups", *waits)
    except _JobEnded as err:
        raise _StartFailed(str(err)) from None
    last = len(processes) - 1
    job_loads = [
        JobLoad(proc.job.name, "measured" if i == last else "background", place)
        for i, (proc, place) in enumerate(zip(processes, places, strict=True))
        if place is not None
    ]
    cpu = CpuLoad(max_runnable=limits.max_runnable, jobs=job_loads)
    sampler = counter_tools.Sampler(counters, counter_interval_s) if counters is not None else None
    with _runner_on(sets.others if sets else None), sampler or contextlib.nullcontext():
        cpu.start()
        timed_from = time.monotonic()
        held["start"].touch()
        _wait_for([held["end"]], processes, deadline, "the timed part's end", *waits)
        timed_s = time.monotonic() - timed_from
        cpu.stop()
    held["release"].touch()
    return cpu, timed_s, sampler.result() if sampler is not None else None


def _run_once(
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
    by_runner = platform.clock == WALL
    if counters is not None and not by_runner:
        raise ValueError(f"platform {platform.kind!r} runs in simulated time: no counters beside")
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
        hold = _Handshake.held_by_runner if by_runner else _Handshake.held_by_jobs
        handshake = hold(scratch, len(background))
        flags = [
            ["--output", str(path), *more]
            for path, more in zip(staged, [*handshake.background, handshake.measured], strict=False)
        ]
        links = scratch / "link-counters.csv"
        if counters_output is not None and counters is None:
            flags[-1] += platform.link_counter_flags(links, counter_interval_s)
        *beside, last = _launches(platform, jobs, flags, places)
        started = time.monotonic()
        deadline = started + timeout_s
        waits = (log_path, timeout_s, watch)
        try:
            processes += [_Process(*launch, log_fh) for launch in beside]
            if not launch_together:
                _wait_for(handshake.ready, processes, deadline, "the background's warm-up", *waits)
            log_offset = log_fh.tell()
            main = _Process(*last, log_fh)
            processes.append(main)
            cpu, sampled = None, None
            if by_runner:
                cpu, timed_s, sampled = _timed_part(
                    handshake, processes, places, sets, limits, counters, counter_interval_s,
                    deadline, waits,
                )  # fmt: skip
            status = _exit_status(
                main, log_path, log_offset, deadline, timeout_s, platform.rank_failure_marker
            )
            if status != 0:
                raise RunFailed(
                    f"{measured.name} exited with status {status}; log {log_path}:\n"
                    + log_path.read_text(errors="replace")[-2000:]
                )
            if cpu is None:
                timed_s = time.monotonic() - started
            handshake.stop.touch()
            for proc in processes[:-1]:
                try:
                    code = proc.proc.wait(timeout=stop_grace_s)
                except subprocess.TimeoutExpired:
                    raise RunFailed(
                        f"background job {proc.job.name} did not stop within {stop_grace_s:g} s"
                    ) from None
                if code != 0:
                    raise RunFailed(f"background job {proc.job.name} exited with status {code}")
            if cpu is not None and limits.rejects(cpu, attempt):
                raise _Saturated(cpu.record())
            _check_outputs(jobs, staged[: len(jobs)])
            if sampled is not None:
                write_csv(staged[-1], sampled)
            elif counters_output is not None:
                write_csv(staged[-1], platform.simulated_counters(links))
        finally:
            for proc in processes:
                proc.kill()
    argv = [p.argv for p in processes] if len(processes) == len(jobs) else [main.argv] * len(jobs)
    return _Attempt(argv, cpu.record() if cpu is not None else dict(NOT_APPLICABLE), timed_s)


def run_benchmark(
    platform: Platform,
    program: list[str],
    ranks: int,
    output: str | os.PathLike[str],
    log: str | os.PathLike[str],
    timeout_s: float,
    config: ConfigRecord | None = None,
    inputs: dict[str, str | os.PathLike[str]] | None = None,
    nodes: list[str] | None = None,
    cpu: CpuLimits | None = None,
    binds_by_role: bool = False,
    env: Mapping[str, str] | None = None,
) -> Path:
    """Run one benchmark alone; its result and provenance appear only on success.
    ``binds_by_role`` and ``env`` (every rank's): as :class:`Job`'s."""
    job = Job(
        Path(program[0]).name,
        program,
        ranks,
        output,
        nodes,
        env=dict(env or {}),
        binds_by_role=binds_by_role,
    )
    corun(platform, job, log=log, timeout_s=timeout_s, config=config, inputs=inputs, cpu=cpu)
    return Path(output)
