"""Run a benchmark on a platform: timeout, full reaping, atomic result, provenance."""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path
from typing import Any

from netnoise import provenance
from netnoise.atomic import atomic_path
from netnoise.io import BenchmarkFormatError, read_benchmark
from netnoise.platform import Platform


class RunFailed(RuntimeError):
    """A benchmark run exited non-zero or timed out; no result was written."""


def _kill_group(proc: subprocess.Popen[bytes], grace_s: float = 5.0) -> None:
    """Stop a launcher and everything it started (they share its session)."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(timeout=grace_s)
            return
        except subprocess.TimeoutExpired:
            continue


def run_process(argv: list[str], env: dict[str, str], log: Path, timeout_s: float) -> int:
    """Run argv in its own session, output appended to ``log``; reap it whatever happens."""
    with open(log, "ab") as log_fh:
        log_fh.write(f"$ {' '.join(argv)}\n".encode())
        log_fh.flush()
        proc = subprocess.Popen(
            argv, env=env, stdout=log_fh, stderr=subprocess.STDOUT, start_new_session=True
        )
        try:
            return proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            _kill_group(proc)
            raise RunFailed(f"{argv[0]} did not finish within {timeout_s:g} s; see {log}") from None
        except BaseException:
            _kill_group(proc)
            raise


def run_benchmark(
    platform: Platform,
    program: list[str],
    ranks: int,
    output: str | os.PathLike[str],
    log: str | os.PathLike[str],
    timeout_s: float,
    config: dict[str, Any] | None = None,
    inputs: dict[str, str | os.PathLike[str]] | None = None,
) -> Path:
    """Run ``program`` (a netnoise benchmark taking ``--output``) and record provenance.

    The result appears at ``output`` only if the run succeeded; its
    provenance sidecar is written next to it.
    """
    platform.check()
    log_path = Path(log)
    log_path.parent.mkdir(parents=True, exist_ok=True)
    start = provenance.now()
    with atomic_path(output) as tmp:
        launch = platform.mpi_launch([*program, "--output", str(tmp)], ranks)
        status = run_process(launch.argv, launch.environment(), log_path, timeout_s)
        if status != 0:
            tail = log_path.read_text(errors="replace")[-2000:]
            raise RunFailed(f"{program[0]} exited with status {status}; log {log_path}:\n{tail}")
        try:
            read_benchmark(tmp)
        except BenchmarkFormatError as err:
            raise RunFailed(f"{program[0]} exited 0 but its output is not valid: {err}") from err
    end = provenance.now()
    provenance.write_sidecar(
        output,
        inputs=inputs,
        config=config,
        platform=platform.describe(),
        command=launch.argv,
        start=start,
        end=end,
        exit_status=status,
    )
    return Path(output)
