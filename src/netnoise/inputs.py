"""Input files read within bounds, before any parser sees them.

A parser given a FIFO waits for a writer that never comes; given ``/dev/zero``
or a file of gigabytes it reads until memory runs out. Every file a user names
(a config, a result file, a pattern) is therefore read through
:func:`read_bytes`: a regular file only, refused above a size its kind never
reaches, so a bad path gives a one-line error at once instead of a hang.
"""

from __future__ import annotations

import os
import reprlib
import stat

#: Bytes of a config file: the largest shipped one holds 27 kB.
MAX_CONFIG_BYTES = 256 << 10
#: Bytes of a benchmark result file or an input table (a pattern, counters).
MAX_TABLE_BYTES = 256 << 20
#: Characters of a value an error message quotes.
QUOTED_CHARS = 60


class InputError(ValueError):
    """An input file is not a regular file or is larger than its kind may be."""


#: ``SHORT.repr(value)``: a value as a message shows it, huge or deeply nested ones
#: cut short (two levels, four items each, 60 characters of a text).
SHORT = reprlib.Repr()
SHORT.maxlevel, SHORT.maxstring, SHORT.maxother = 2, QUOTED_CHARS, QUOTED_CHARS
SHORT.maxlist = SHORT.maxdict = SHORT.maxtuple = SHORT.maxset = 4


def quoted(value: object, limit: int = QUOTED_CHARS) -> str:
    """``repr(value)``, cut to its first ``limit`` characters (computed from no more
    of the value than that, however large it is)."""
    text = repr(value[: limit + 1]) if isinstance(value, str | bytes) else SHORT.repr(value)
    return text if len(text) <= limit else f"{text[:limit]}..."


def check_file(path: str | os.PathLike[str], limit: int, what: str = "file") -> None:
    """What :func:`read_bytes` checks, for a reader that opens ``path`` itself
    (pandas, numpy, zipfile): told from its metadata, without opening it."""
    mode_size = os.stat(path)
    _check_mode(path, mode_size.st_mode, what)
    if mode_size.st_size > limit:
        raise InputError(f"{path}: larger than a {what} may be ({limit} bytes at most)")


def _check_mode(path: str | os.PathLike[str], mode: int, what: str) -> None:
    if stat.S_ISDIR(mode):
        raise InputError(f"{path}: is a directory, not a {what}")
    if not stat.S_ISREG(mode):
        raise InputError(f"{path}: not a regular file (a device, FIFO or socket); give a {what}")


def read_bytes(path: str | os.PathLike[str], limit: int, what: str = "file") -> bytes:
    """The content of regular file ``path`` of at most ``limit`` bytes.

    A directory, device, FIFO or socket, or a larger file, is an InputError
    naming the path and ``what`` was expected; a missing or unreadable file is
    the OSError of opening it."""
    # O_NONBLOCK: opening a FIFO does not wait for a writer.
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        _check_mode(path, os.fstat(fd).st_mode, what)
        with os.fdopen(os.dup(fd), "rb") as fh:
            data = fh.read(limit + 1)
    finally:
        os.close(fd)
    if len(data) > limit:
        raise InputError(f"{path}: larger than a {what} may be ({limit} bytes at most)")
    return data


def read_text(path: str | os.PathLike[str], limit: int, what: str = "file") -> str:
    """:func:`read_bytes` decoded as UTF-8 (a leading byte-order mark dropped);
    an InputError when it is not text."""
    data = read_bytes(path, limit, what)
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        raise InputError(
            f"{path}: not a text file (byte {err.start} is not UTF-8); give a {what}"
        ) from None
