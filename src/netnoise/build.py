"""Compile the C benchmarks and record what compiled them."""

from __future__ import annotations

import os
import shlex
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from netnoise import lifeline, provenance
from netnoise.atomic import write_json


class BuildFailed(RuntimeError):
    pass


def _tool_output(argv: list[str]) -> str | None:
    try:
        out = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return (out.stdout or out.stderr).strip() if out.returncode == 0 else None


def list_programs(
    csrc: str | os.PathLike[str], flavour: str = "native", listing: str = "list-programs"
) -> list[str]:
    """The programs ``csrc/Makefile`` builds in ``flavour`` (``listing``: the make target
    naming them, ``list-ns3-programs`` for the ns-3 ones)."""
    out = subprocess.run(
        [
            "make",
            "-s",
            "--no-print-directory",
            "-C",
            str(csrc),
            f"FLAVOUR={flavour}",
            listing,
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    return out.stdout.split()


def build_programs(
    csrc: str | os.PathLike[str],
    bindir: str | os.PathLike[str],
    *,
    mpicc: str,
    cflags: str,
    log: str | os.PathLike[str],
    build_dir: str | os.PathLike[str],
    flavour: str = "native",
    target: str = "install",
) -> dict[str, Any]:
    """Build every program of ``csrc`` in ``flavour`` that make's ``target`` installs
    (``install``: the C benchmarks, ``install-ns3``: the ns-3 programs) into ``bindir``;
    return the build record.

    Objects go to ``build_dir`` so the source tree stays clean; programs are
    staged and renamed into ``bindir`` only after the whole build succeeded.
    """
    bindir = Path(bindir).resolve()
    bindir.mkdir(parents=True, exist_ok=True)
    build_dir = Path(build_dir).resolve()
    start = provenance.now()
    with tempfile.TemporaryDirectory(dir=bindir, prefix=".staging-") as staging:
        argv = [
            "make",
            "-C",
            str(csrc),
            f"FLAVOUR={flavour}",
            f"MPICC={mpicc}",
            f"CFLAGS={cflags}",
            f"BUILD={build_dir}",
            f"PREFIX={staging}",
            target,
        ]
        with open(log, "a") as log_fh:
            log_fh.write(f"$ {shlex.join(argv)}\n")
            log_fh.flush()
            result = subprocess.run(argv, stdout=log_fh, stderr=subprocess.STDOUT)
        if result.returncode != 0:
            raise BuildFailed(f"make exited with status {result.returncode}; see {log}")
        programs = sorted(os.listdir(staging))
        lifeline.check(f"installing the programs into {bindir}")
        for name in programs:
            os.replace(Path(staging) / name, bindir / name)
    return {
        "programs": {name: provenance.sha256(bindir / name) for name in programs},
        "flavour": flavour,
        "target": target,
        "mpicc": mpicc,
        "cflags": cflags,
        "compiler": _tool_output([mpicc, "--version"]),
        "mpicc_showme": _tool_output([mpicc, "--showme"]),
        "mpirun": _tool_output(["mpirun", "--version"]),
        "git": provenance.git_state(),
        "start": start,
        "end": provenance.now(),
    }


def write_build_info(path: str | os.PathLike[str], info: dict[str, Any]) -> None:
    write_json(path, info)
