"""Support for the workflow's scripts: each job logs to its own file, and a
co-run's jobs come as the rules' params give them."""

from __future__ import annotations

import contextlib
import logging
import os
import traceback
from collections.abc import Iterator
from pathlib import Path
from typing import TypedDict

from netnoise.external import ExternalProgram
from netnoise.run import Job


@contextlib.contextmanager
def logged(log: str | os.PathLike[str]) -> Iterator[logging.Logger]:
    """Send stdout, stderr, logging and any traceback of the block to ``log``."""
    Path(log).parent.mkdir(parents=True, exist_ok=True)
    with (
        open(log, "a") as fh,
        contextlib.redirect_stdout(fh),
        contextlib.redirect_stderr(fh),
    ):
        logging.basicConfig(
            stream=fh, level=logging.INFO, format="%(asctime)s %(message)s", force=True
        )
        try:
            yield logging.getLogger("netnoise")
        except BaseException:
            traceback.print_exc(file=fh)
            raise


def expose_package(src: str | os.PathLike[str]) -> None:
    """Make the package in ``src`` importable by every job this process starts.

    Jobs that run in their own conda environment have their own Python,
    which does not see the venv's editable installation of netnoise.
    """
    paths = [str(src), *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))]
    os.environ["PYTHONPATH"] = os.pathsep.join(dict.fromkeys(paths))


class JobSpec(TypedDict, total=False):
    """A job as a rule's params give it (``benchmark_job``, ``application_job`` of
    workflow/rules/common.smk): every key but ``external``, ``env`` and
    ``binds_by_role``, which only some jobs have."""

    name: str
    program: str
    args: list[object]
    ranks: int
    nodes: list[str] | None
    output: str
    external: dict[str, object]
    env: dict[str, str]
    binds_by_role: bool


def job_from_spec(spec: JobSpec) -> Job:
    """The Job of a workflow job spec."""
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
