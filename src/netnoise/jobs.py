"""Support for the workflow's scripts: each job logs to its own file."""

from __future__ import annotations

import contextlib
import logging
import os
import traceback
from collections.abc import Iterator
from pathlib import Path


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
