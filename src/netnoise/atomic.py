"""Results appear under their final name only when complete.

Every writer goes through a temporary file in the destination directory
and an ``os.replace`` on success, so a crash, a kill or an exception never
leaves a partial file that looks like a valid result; nor does a job whose
workflow was killed (netnoise.lifeline): it renames nothing.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import secrets
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from netnoise import lifeline


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike[str]) -> Iterator[Path]:
    """Yield a temporary path next to ``path``; rename it into place on success.

    Whatever else was written beside it under its name (a writer's own
    temporary ``<tmp>.tmp.<pid>``, left by a killed program) is removed too. A
    symbolic link is written through; a directory, FIFO or device is refused,
    and a failure names ``path``, never the temporary file.
    """
    # A link is written through: the file it names is replaced, the link stays.
    final = Path(os.path.realpath(path)) if os.path.islink(path) else Path(path)
    if final.is_dir():
        raise IsADirectoryError(errno.EISDIR, "is a directory, not a file to write", str(path))
    if final.exists() and not final.is_file():
        raise FileExistsError(
            errno.EEXIST, "not a regular file (a FIFO, device or socket) to write", str(path)
        )
    final.parent.mkdir(parents=True, exist_ok=True)
    try:
        tmp = _create_temporary(final)
    except OSError as err:
        raise OSError(err.errno, err.strerror, str(path)) from None
    try:
        yield tmp
        if not tmp.exists():
            raise FileNotFoundError(f"nothing was written to the temporary file for {final}")
        lifeline.check(f"writing {final}")
        os.replace(tmp, final)
    except OSError as err:
        # Named by the file the caller asked for, not by the temporary one (a
        # full disk says which file it could not write).
        if err.filename in (None, str(tmp)) and err.strerror:
            raise OSError(err.errno, err.strerror, str(path)) from None
        raise
    finally:
        tmp.unlink(missing_ok=True)
        for leftover in tmp.parent.glob(f"{tmp.name}.*"):
            leftover.unlink(missing_ok=True)


def _create_temporary(final: Path) -> Path:
    """A new empty file beside ``final``, with the permissions the umask gives any new
    file (a result readable by whoever may read its directory; mkstemp's are 0600)."""
    while True:
        tmp = final.parent / f".{final.name}.{secrets.token_hex(4)}.tmp"
        try:
            os.close(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o666))
        except FileExistsError:
            continue
        return tmp


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
