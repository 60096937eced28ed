"""Waiting for files to appear in a directory without polling.

A co-run's runner waits for its jobs' handshake files (ready, end) while they
run; polling every millisecond would cost the emulated cluster a share of a
core through the whole timed region, polling every 50 ms would add up to
50 ms to every window. Linux's inotify wakes the waiter when a file is
created or renamed into the directory. On file systems where other hosts
create the files (NFS), inotify sees nothing: the waiter then still notices
them at its next timeout.
"""

from __future__ import annotations

import ctypes
import os
import select
from pathlib import Path

IN_CLOEXEC = 0o2000000
IN_NONBLOCK = 0o4000
IN_CREATE = 0x100
IN_MOVED_TO = 0x80
IN_ATTRIB = 0x4

_libc = ctypes.CDLL(None, use_errno=True)


class DirectoryWatch:
    """Wakes :meth:`wait` when an entry is created in ``directory``."""

    def __init__(self, directory: str | os.PathLike[str]):
        self.directory = Path(directory)
        self.fd = _libc.inotify_init1(IN_NONBLOCK | IN_CLOEXEC)
        if self.fd < 0:
            err = ctypes.get_errno()
            raise OSError(err, f"inotify_init1: {os.strerror(err)}")
        mask = IN_CREATE | IN_MOVED_TO | IN_ATTRIB
        if _libc.inotify_add_watch(self.fd, os.fsencode(self.directory), mask) < 0:
            err = ctypes.get_errno()
            os.close(self.fd)
            raise OSError(err, f"inotify_add_watch {self.directory}: {os.strerror(err)}")

    def wait(self, timeout_s: float) -> None:
        """Return when something appeared in the directory, or after ``timeout_s``."""
        readable, _, _ = select.select([self.fd], [], [], max(timeout_s, 0))
        if readable:
            try:
                while os.read(self.fd, 4096):
                    pass
            except BlockingIOError:
                pass

    def close(self) -> None:
        os.close(self.fd)

    def __enter__(self) -> DirectoryWatch:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
