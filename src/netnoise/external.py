"""Third-party programs: real applications and reference benchmarks.

netnoise ships none of them. The user names a source (a directory, an archive
or the URL of one) and a build command; :func:`build_external` builds a fresh
copy and installs the binary. At run time :func:`main` wraps the MPI launch of
such a program so that it behaves like a netnoise benchmark: warm-up and timed
runs, a ready file after warm-up, a stop file for background use, and one
result file in the benchmark format (wall-clock runtime of every launch,
plus the figure of merit the program prints, or the rows of a known output
format such as Netgauge's).

Run as ``python -m netnoise.external [options] -- LAUNCH...``.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
import urllib.parse
import urllib.request
import zipfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from netnoise import __version__, provenance, studies
from netnoise.atomic import atomic_path
from netnoise.io import write_benchmark

URL_SCHEMES = ("http", "https", "ftp", "file")


def table_parsers() -> dict[str, Callable[[str], pd.DataFrame]]:
    """Output parsers for programs whose output is a table, by name, as the
    studies give them (``STUDY.table_parsers``)."""
    return {name: parse for study in studies.STUDIES for name, parse in study.table_parsers.items()}


class ExternalError(RuntimeError):
    """A third-party source, build or run failed; the message says which and why."""


@dataclass(frozen=True)
class ExternalProgram:
    """How to wrap a third-party program's launch (see :func:`main`)."""

    tool: str
    version: str = "unknown"
    iterations: int = 1
    warmup: int = 0
    fom: str | None = None
    fom_unit: str = ""
    table: str | None = None

    def wrap(
        self, launch: list[str], flags: list[str], ranks: int, nodes: list[str] | None
    ) -> list[str]:
        """The wrapper's command line around ``launch``; ``flags`` are the run's
        ``--output``/``--stop-file``/``--ready-file``."""
        argv = [sys.executable, "-m", "netnoise.external", "--tool", self.tool]
        argv += ["--version", self.version, "--ranks", str(ranks)]
        argv += ["--hosts", ",".join(nodes) if nodes else "unknown"]
        argv += ["--iterations", str(self.iterations), "--warmup", str(self.warmup)]
        if self.fom is not None:
            argv += ["--fom", self.fom, "--fom-unit", self.fom_unit]
        if self.table is not None:
            argv += ["--table", self.table]
        return [*argv, *flags, "--", *launch]


def _is_url(source: str) -> bool:
    return urllib.parse.urlparse(source).scheme in URL_SCHEMES


def _extract(archive: Path, dest: Path, source: str) -> None:
    if tarfile.is_tarfile(archive):
        with tarfile.open(archive) as tar:
            tar.extractall(dest, filter="data")
    elif zipfile.is_zipfile(archive):
        with zipfile.ZipFile(archive) as zf:
            zf.extractall(dest)
    else:
        raise ExternalError(f"{source}: not a tar or zip archive")
    entries = list(dest.iterdir())
    # Release archives wrap everything in one top-level directory: unwrap it.
    if len(entries) == 1 and entries[0].is_dir():
        inner = entries[0]
        for child in inner.iterdir():
            child.rename(dest / child.name)
        inner.rmdir()


def fetch_source(source: str, dest: str | os.PathLike[str]) -> Path:
    """Copy ``source`` (directory, archive file or URL of an archive) into ``dest``.

    ``dest`` must not exist; it is created with the source tree at its top.
    """
    dest = Path(dest)
    if _is_url(source):
        with tempfile.TemporaryDirectory(prefix="netnoise-fetch-") as tmp:
            archive = Path(tmp) / "archive"
            try:
                with urllib.request.urlopen(source, timeout=120) as response:
                    archive.write_bytes(response.read())
            except OSError as err:
                raise ExternalError(f"cannot download {source}: {err}") from err
            dest.mkdir(parents=True)
            _extract(archive, dest, source)
        return dest
    path = Path(source).expanduser()
    if path.is_dir():
        shutil.copytree(path, dest, symlinks=True)
    elif path.is_file():
        dest.mkdir(parents=True)
        _extract(path, dest, source)
    else:
        raise ExternalError(
            f"source {source!r} is neither a directory, an archive file nor a URL "
            f"({', '.join(URL_SCHEMES)})"
        )
    return dest


def build_external(
    name: str,
    *,
    source: str,
    command: str,
    binary: str,
    work_dir: str | os.PathLike[str],
    dest: str | os.PathLike[str],
    env: dict[str, str],
    log: str | os.PathLike[str],
) -> dict[str, Any]:
    """Build ``name`` from a fresh copy of ``source`` and install ``binary`` as ``dest``.

    ``command`` runs under ``bash -eo pipefail`` at the top of the source tree
    with ``env`` added to the environment; ``binary`` is relative to that top.
    Returns the build record (source, command, checksum of the result).
    """
    work_dir = Path(work_dir).resolve()
    if work_dir.exists():
        shutil.rmtree(work_dir)
    work_dir.parent.mkdir(parents=True, exist_ok=True)
    tree = fetch_source(source, work_dir)
    start = provenance.now()
    with open(log, "a") as log_fh:
        log_fh.write(f"$ cd {tree} && {command}\n")
        log_fh.flush()
        result = subprocess.run(
            ["bash", "-eo", "pipefail", "-c", command],
            cwd=tree,
            env={**os.environ, **env},
            stdout=log_fh,
            stderr=subprocess.STDOUT,
        )
    if result.returncode != 0:
        raise ExternalError(
            f"building {name}: '{command}' exited with status {result.returncode}; see {log}"
        )
    built = tree / binary
    if not (built.is_file() and os.access(built, os.X_OK)):
        raise ExternalError(
            f"building {name}: the build succeeded but {binary!r} is not an executable "
            f"file under {tree}"
        )
    with atomic_path(dest) as staged:
        shutil.copy2(built, staged)
    return {
        "name": name,
        "source": source,
        "command": command,
        "binary": binary,
        "sha256": provenance.sha256(dest),
        "environment": env,
        "start": start,
        "end": provenance.now(),
    }


def figure_of_merit(output: str, pattern: str) -> float:
    """The number the first group of ``pattern`` captures in the program's output (last match)."""
    matches = re.findall(pattern, output, flags=re.MULTILINE)
    if not matches:
        raise ExternalError(f"figure-of-merit pattern {pattern!r} matched nothing in the output")
    last = matches[-1]
    text = last[0] if isinstance(last, tuple) else last
    try:
        return float(text)
    except ValueError:
        raise ExternalError(
            f"figure-of-merit pattern {pattern!r} captured {text!r}, not a number"
        ) from None


class _Launch:
    """One launch of the wrapped program; stops it early when the stop file appears."""

    def __init__(self, argv: Sequence[str], stop_file: Path | None):
        self.argv = list(argv)
        self.stop_file = stop_file

    def run(self) -> tuple[int | None, str, float]:
        """Exit status (None if stopped), combined output and wall time in seconds."""
        with tempfile.TemporaryFile() as out:
            start = time.monotonic()
            # Same process group as the wrapper: whoever kills the wrapper's group
            # (netnoise.run on a timeout) kills the launch too.
            proc = subprocess.Popen(self.argv, stdout=out, stderr=subprocess.STDOUT)
            status: int | None = None
            try:
                while (status := proc.poll()) is None:
                    if self.stop_file is not None and self.stop_file.exists():
                        break
                    time.sleep(0.05)
            finally:
                if proc.poll() is None:
                    proc.terminate()
                    try:
                        proc.wait(timeout=5)
                    except subprocess.TimeoutExpired:
                        proc.kill()
                        proc.wait()
                    status = None
            elapsed = time.monotonic() - start
            out.seek(0)
            text = out.read().decode(errors="replace")
        sys.stdout.write(text)
        sys.stdout.flush()
        return status, text, elapsed


def _rows(args: argparse.Namespace, run: int, text: str, elapsed: float) -> pd.DataFrame:
    row: dict[str, Any] = {"run": run, "runtime_s": elapsed}
    if args.fom:
        row["figure_of_merit"] = figure_of_merit(text, args.fom)
    if args.table is None:
        return pd.DataFrame([row])
    try:
        table = table_parsers()[args.table](text)
    except ValueError as err:
        raise ExternalError(f"run {run}: {err}") from err
    if table.empty:
        raise ExternalError(f"no {args.table} rows in the output of run {run}")
    return pd.concat([pd.DataFrame([row] * len(table)), table], axis=1)


def _write(args: argparse.Namespace, launch: list[str], rows: list[pd.DataFrame]) -> None:
    meta = {
        "tool": args.tool,
        "version": args.version,
        "git_sha": provenance.git_state()["sha"][:12],
        "argv": " ".join(launch),
        "seed": 0,
        "mpi_library": provenance.software_versions()["mpirun"] or "unknown",
        "ranks": args.ranks,
        "hosts": args.hosts,
        "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "wrapper": f"netnoise.external {__version__}",
        "warmup": args.warmup,
    }
    if args.fom:
        meta["fom_pattern"] = args.fom
        meta["fom_unit"] = args.fom_unit
    columns = ["run", "runtime_s", *(["figure_of_merit"] if args.fom else [])]
    table = pd.concat(rows, ignore_index=True) if rows else pd.DataFrame(columns=columns)
    write_benchmark(args.output, meta, table)


def parse_args(argv: Sequence[str]) -> tuple[argparse.Namespace, list[str]]:
    argv = list(argv)
    if "--" not in argv:
        raise SystemExit("netnoise.external: give the launch command after '--'")
    split = argv.index("--")
    parser = argparse.ArgumentParser(
        prog="python -m netnoise.external",
        description="Run a third-party MPI program like a netnoise benchmark.",
    )
    parser.add_argument("--output", required=True, help="netnoise-format result file")
    parser.add_argument("--tool", required=True, help="name recorded as the tool")
    parser.add_argument("--version", default="unknown", help="the program's version or source")
    parser.add_argument("--ranks", type=int, required=True)
    parser.add_argument("--hosts", default="unknown", help="comma-separated node names")
    parser.add_argument(
        "--iterations", type=int, default=1, help="timed launches; 0: until stopped"
    )
    parser.add_argument("--warmup", type=int, default=0, help="untimed launches first")
    parser.add_argument("--ready-file", type=Path, help="created once the warm-up is over")
    parser.add_argument(
        "--start-file", type=Path, help="after the warm-up, wait for it before the timed launches"
    )
    parser.add_argument("--end-file", type=Path, help="created after the last timed launch")
    parser.add_argument(
        "--release-file", type=Path, help="after the timed launches, wait for it before writing"
    )
    parser.add_argument(
        "--stop-file", type=Path, help="stop (and drop the running launch) when it appears"
    )
    parser.add_argument("--fom", help="regular expression whose first group is the figure of merit")
    parser.add_argument("--fom-unit", default="", help="unit of the figure of merit")
    parser.add_argument(
        "--table", choices=sorted(table_parsers()), help="parse the output as this table"
    )
    args = parser.parse_args(argv[:split])
    launch = argv[split + 1 :]
    if not launch:
        parser.error("no launch command after '--'")
    if args.iterations < 0 or args.warmup < 0:
        parser.error("--iterations and --warmup must be >= 0")
    if args.iterations == 0 and args.stop_file is None:
        parser.error("--iterations 0 (until stopped) needs --stop-file")
    return args, launch


def _wait_for(path: Path | None, stop: Path | None) -> None:
    while path is not None and not path.exists() and not (stop is not None and stop.exists()):
        time.sleep(0.001)


def _warm(args: argparse.Namespace) -> None:
    """The warm-up is over: signal it, then wait for the timed part's start."""
    if args.ready_file is not None:
        args.ready_file.touch()
    _wait_for(args.start_file, args.stop_file)


def run(args: argparse.Namespace, launch: list[str]) -> int:
    stop = args.stop_file if args.iterations == 0 else None
    program = _Launch(launch, stop)
    rows: list[pd.DataFrame] = []
    done = 0
    if args.warmup == 0:
        _warm(args)
    while args.iterations == 0 or done < args.warmup + args.iterations:
        if stop is not None and stop.exists():
            break
        status, text, elapsed = program.run()
        if status is None:
            break
        if status != 0:
            print(f"netnoise.external: {args.tool} exited with status {status}", file=sys.stderr)
            return status
        if done >= args.warmup:
            rows.append(_rows(args, done - args.warmup, text, elapsed))
        done += 1
        if done == args.warmup:
            _warm(args)
    if args.end_file is not None:
        args.end_file.touch()
    _wait_for(args.release_file, args.stop_file)
    _write(args, launch, rows)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    args, launch = parse_args(sys.argv[1:] if argv is None else argv)
    try:
        return run(args, launch)
    except ExternalError as err:
        print(f"netnoise.external: {err}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
