"""Results appear under their final name only when complete.

Every writer goes through a temporary file in the destination directory
and an ``os.replace`` on success, so a crash, a kill or an exception never
leaves a partial file that looks like a valid result.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike[str]) -> Iterator[Path]:
    """Yield a temporary path next to ``path``; rename it into place on success.

    Whatever else was written beside it under its name (a writer's own
    temporary ``<tmp>.tmp.<pid>``, left by a killed program) is removed too.
    """
    final = Path(path)
    final.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{final.name}.", suffix=".tmp", dir=final.parent)
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        yield tmp
        if not tmp.exists():
            raise FileNotFoundError(f"nothing was written to the temporary file for {final}")
        os.replace(tmp, final)
    finally:
        tmp.unlink(missing_ok=True)
        for leftover in tmp.parent.glob(f"{tmp.name}.*"):
            leftover.unlink(missing_ok=True)


@contextlib.contextmanager
def atomic_open(path: str | os.PathLike[str], mode: str = "w") -> Iterator[IO[Any]]:
    """Open a temporary file for writing; fsync and rename it on success."""
    with atomic_path(path) as tmp, open(tmp, mode) as fh:
        yield fh
        fh.flush()
        os.fsync(fh.fileno())


def write_json(path: str | os.PathLike[str], data: Any) -> None:
    with atomic_open(path) as fh:
        json.dump(data, fh, indent=2, sort_keys=True, default=str)
        fh.write("\n")


def write_csv(path: str | os.PathLike[str], frame: Any) -> None:
    """Write a pandas frame as CSV atomically."""
    with atomic_open(path) as fh:
        frame.to_csv(fh, index=False)
