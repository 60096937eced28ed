"""Run benchmarks on a platform: alone or co-running, with timeouts, full reaping,
atomic results and provenance.

A co-run starts the background jobs (an ImpactB probe, a CompressionB or
load-generator background, a second application), waits until each has
finished its warm-up (``--ready-file``), runs the measured job, then tells
the background jobs to stop (``--stop-file``) and waits for them. Any job
failing, a background job ending early, or a timeout fails the whole co-run:
its results never appear.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from netnoise import counters as counter_tools
from netnoise import provenance
from netnoise.atomic import atomic_path, write_csv
from netnoise.cpu import CpuLoad
from netnoise.external import ExternalProgram
from netnoise.io import BenchmarkFormatError, read_benchmark
from netnoise.platform import Platform


class RunFailed(RuntimeError):
    """A run failed or timed out; none of its results were written."""


@dataclass
class Job:
    """One MPI program of a run. ``program`` is a netnoise benchmark's argv
    without ``--output`` (and, for background jobs, without the stop/ready files),
    or, with ``external``, a third-party program's argv that netnoise.external wraps.
    ``env`` is given to every rank, not to the launcher: e.g. the latency
    injector's ``LD_PRELOAD`` and ``NN_LATENCY_*``."""

    name: str
    program: list[str]
    ranks: int
    output: str | os.PathLike[str]
    nodes: list[str] | None = None
    external: ExternalProgram | None = None
    env: dict[str, str] = field(default_factory=dict)

    def launch(self, platform: Platform, flags: list[str]) -> tuple[list[str], dict[str, str]]:
        """The command starting this job with the run's ``flags`` (output, stop, ready)."""
        if self.external is None:
            launch = platform.mpi_launch([*self.program, *flags], self.ranks, self.nodes, self.env)
            return launch.argv, launch.environment()
        launch = platform.mpi_launch(self.program, self.ranks, self.nodes, self.env)
        argv = self.external.wrap(launch.argv, flags, self.ranks, self.nodes)
        return argv, launch.environment()


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
    )


class _Process:
    def __init__(self, job: Job, argv: list[str], env: dict[str, str], log: IO[bytes]):
        self.job = job
        self.argv = argv
        log.write(f"$ [{job.name}] {' '.join(argv)}\n".encode())
        log.flush()
        # Own session: the launcher and everything it starts can be killed as a group.
        self.proc = subprocess.Popen(
            argv, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
        )

    def kill(self, grace_s: float = 5.0) -> None:
        for sig in (signal.SIGTERM, signal.SIGKILL):
            if self.proc.poll() is not None:
                break
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, sig)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(timeout=grace_s)
        # Stray members of the group (ranks whose launcher died first).
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, signal.SIGKILL)


def _wait_ready(
    processes: list[_Process], ready: list[Path], deadline: float, what: str = "background job"
) -> None:
    while not all(p.exists() for p in ready):
        for proc in processes:
            if proc.proc.poll() is not None:
                raise RunFailed(
                    f"{what} {proc.job.name} ended (status {proc.proc.returncode}) "
                    "before its warm-up finished"
                )
        if time.monotonic() > deadline:
            raise RunFailed(f"{what}s did not finish their warm-up in time")
        time.sleep(0.02)


@contextlib.contextmanager
def _staged(outputs: Sequence[str | os.PathLike[str]]) -> Iterator[list[Path]]:
    with contextlib.ExitStack() as stack:
        yield [stack.enter_context(atomic_path(o)) for o in outputs]


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
    counters_from_ready: bool = False,
    launch_together: bool = False,
    stop_grace_s: float = 30.0,
) -> None:
    """Run ``measured`` while ``background`` jobs load the same platform.

    Every job's output appears, with its provenance sidecar, only if every
    job succeeded. With ``counters``, network counters are sampled around
    (and every ``counter_interval_s`` during) the measured job into
    ``counters_output``: from its launch, or with ``counters_from_ready`` from
    the moment its timed part starts (the measured program gets a
    ``--ready-file``), so that start-up and warm-up traffic stay out.

    The measured job starts once the background is in full swing; with
    ``launch_together`` it is launched at once beside the background and its
    timed part waits (``--start-file``) for that, so its launch and warm-up
    overlap the background's: a co-run costs one launch time instead of two.
    """
    if counters is not None and counters_output is None:
        raise ValueError("counters need counters_output")
    platform.check()
    jobs = [*background, measured]
    log_path = Path(log)
    log_path.parent.mkdir(parents=True, exist_ok=True)
    start = provenance.now()
    processes: list[_Process] = []
    extra_outputs = [counters_output] if counters_output is not None else []
    with (
        tempfile.TemporaryDirectory(prefix="netnoise-run-") as scratch,
        open(log_path, "ab") as log_fh,
        _staged([*(j.output for j in jobs), *extra_outputs]) as staged,
    ):
        stop_file = Path(scratch) / "stop"
        try:
            ready = []
            for i, job in enumerate(background):
                ready.append(Path(scratch) / f"ready-{i}")
                flags = ["--output", str(staged[i])]
                flags += ["--stop-file", str(stop_file), "--ready-file", str(ready[-1])]
                processes.append(_Process(job, *job.launch(platform, flags), log_fh))
            deadline = time.monotonic() + timeout_s
            if not launch_together:
                _wait_ready(processes, ready, deadline)

            flags = ["--output", str(staged[len(background)])]
            started, go = Path(scratch) / "ready-measured", Path(scratch) / "start"
            if counters is not None and counters_from_ready:
                flags += ["--ready-file", str(started)]
            if launch_together:
                flags += ["--start-file", str(go)]
            argv, env = measured.launch(platform, flags)
            sampler = (
                counter_tools.Sampler(counters, counter_interval_s)
                if counters is not None
                else contextlib.nullcontext()
            )
            with CpuLoad() as cpu:
                main = _Process(measured, argv, env, log_fh)
                processes.append(main)
                if launch_together:
                    _wait_ready(processes, ready, deadline, what="job")
                    go.touch()
                if counters is not None and counters_from_ready:
                    _wait_ready([main], [started], deadline, what="measured job")
                with sampler:
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
            for job, path in zip(jobs, staged, strict=False):
                try:
                    read_benchmark(path)
                except BenchmarkFormatError as err:
                    raise RunFailed(
                        f"{job.name} exited 0 but its output is invalid: {err}"
                    ) from err
            if counters is not None:
                write_csv(staged[-1], sampler.result())
        finally:
            for proc in processes:
                proc.kill()
    end = provenance.now()
    corun_record = [
        {"name": p.job.name, "ranks": p.job.ranks, "nodes": p.job.nodes, "command": p.argv}
        for p in processes
    ]
    for job, proc in zip(jobs, processes, strict=True):
        provenance.write_sidecar(
            job.output,
            inputs=inputs,
            config=config,
            platform=platform.describe(),
            command=proc.argv,
            start=start,
            end=end,
            exit_status=0,
            extra={"cpu": cpu.record(), "corun": corun_record if background else None},
        )


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
) -> Path:
    """Run one benchmark alone; its result and provenance appear only on success."""
    job = Job(Path(program[0]).name, program, ranks, output, nodes)
    corun(platform, job, log=log, timeout_s=timeout_s, config=config, inputs=inputs)
    return Path(output)
