"""A bundle's archive read once, in order, to its very end.

A bundle is one gzip stream of one tar archive and nothing else: the stream is
inflated as it is read (a few megabytes at a time, whatever a member unpacks to),
each member's header is checked before a byte of its data is inflated (its name,
type, size, and the count and total so far: :data:`~layout.MAX_FILES`,
:data:`~layout.MAX_FILE_BYTES`, :data:`~layout.MAX_BYTES`), and after the tar's
end-of-archive blocks only the zeros that pad its last record may follow, then
the end of the gzip stream (its checksum and length checked), then the end of
the file. Data anywhere beyond, which ``tar`` and ``gzip`` would skip or read as
more, is refused: what a bundle holds is exactly what its archive lists.
"""

from __future__ import annotations

import hashlib
import os
import stat
import tarfile
import zlib
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO

from netnoise.bundle import layout
from netnoise.bundle.layout import DATA_SUFFIXES, BundleError, safe_name

#: What may follow the tar's end-of-archive blocks: the zeros padding its
#: last record (``tar`` writes records of :data:`tarfile.RECORDSIZE` bytes).
PADDING_BYTES = 2 * tarfile.RECORDSIZE


def open_regular(bundle: Path) -> IO[bytes]:
    """``bundle`` opened for reading; BundleError unless it is a regular file
    (a FIFO is opened without waiting for a writer, and refused)."""
    try:
        fd = os.open(bundle, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        raise BundleError(f"{bundle}: no such bundle") from None
    except IsADirectoryError:
        raise BundleError(f"{bundle}: is a directory, not a bundle") from None
    except OSError as err:
        raise BundleError(f"{bundle}: cannot read the bundle: {err.strerror}") from None
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        kind = (
            "a directory" if stat.S_ISDIR(mode) else "not a regular file (a FIFO, device or socket)"
        )
        raise BundleError(f"{bundle}: {kind}, not a bundle (a .tar.gz file)")
    os.set_blocking(fd, True)
    return os.fdopen(fd, "rb")


class Inflated:
    """The bytes of the one gzip stream of ``packed``, inflated as they are read;
    ``digest`` is the SHA-256 of the packed bytes read so far, ``position`` the
    inflated bytes handed out, ``data_end`` where the last non-zero one of them ends."""

    def __init__(self, bundle: Path, packed: IO[bytes]) -> None:
        self.bundle = bundle
        self.packed = packed
        self.inflate = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)
        self.digest = hashlib.sha256()
        self.pending = b""
        self.offset = 0
        self.position = 0
        self.data_end = 0

    def _fill(self) -> None:
        while self.offset == len(self.pending) and not self.inflate.eof:
            data = self.inflate.unconsumed_tail
            if not data:
                data = self.packed.read(layout.CHUNK_BYTES)
                self.digest.update(data)
                if not data:
                    raise BundleError(
                        f"{self.bundle}: damaged or not a bundle (the file ends inside its "
                        "compressed stream: truncated)"
                    )
            self.pending, self.offset = self.inflate.decompress(data, layout.CHUNK_BYTES), 0

    def read(self, size: int = -1) -> bytes:
        self._fill()
        end = len(self.pending) if size < 0 else min(len(self.pending), self.offset + size)
        out = self.pending[self.offset : end]
        self.offset = end
        nonzero = len(out.rstrip(b"\0"))
        if nonzero:
            self.data_end = self.position + nonzero
        self.position += len(out)
        return out

    def end(self, archive_end: int) -> None:
        """Read what follows the tar's end (at ``archive_end``) to the end of the file."""
        while self.read(layout.CHUNK_BYTES):
            if self.position - archive_end > PADDING_BYTES:
                break
        if self.data_end > archive_end or self.position - archive_end > PADDING_BYTES:
            raise BundleError(
                f"{self.bundle}: damaged or not a bundle (data after the end of its archive, "
                "which no reader of a bundle sees)"
            )
        if self.inflate.unused_data or self.packed.read(1):
            raise BundleError(
                f"{self.bundle}: damaged or not a bundle (data after the end of its "
                "compressed stream, which no reader of a bundle sees)"
            )


def member_problem(member: tarfile.TarInfo, seen: Counter[str], total: int) -> str | None:
    """Why a member is refused from its header alone (``seen``: the names before
    it, ``total``: their bytes), or None."""
    name = member.name
    if not safe_name(name):
        return f"unsafe member name {name!r}"
    if not member.isfile():
        return f"{name!r} is not a regular file"
    if seen[name]:
        return f"{name!r} appears {seen[name] + 1} times"
    if not name.endswith(DATA_SUFFIXES):
        return f"{name!r} is not a data format a bundle may carry ({', '.join(DATA_SUFFIXES)})"
    if member.size > layout.MAX_FILE_BYTES:
        return f"{name!r} unpacks to {member.size} bytes, more than {layout.MAX_FILE_BYTES}"
    if total + member.size > layout.MAX_BYTES:
        return f"its files unpack to more than {layout.MAX_BYTES} bytes"
    if sum(seen.values()) >= layout.MAX_FILES:
        return f"more than {layout.MAX_FILES} files; a run's bundle has fewer"
    return None


Visit = Callable[[tarfile.TarInfo, Iterator[bytes]], None]


def read(bundle: Path, visit: Visit) -> str:
    """Read ``bundle`` to its end, calling ``visit(member, chunks)`` on each member
    in archive order with an iterator of its data (which it may leave unread);
    return the file's SHA-256. BundleError on the first problem."""
    with open_regular(bundle) as packed:
        stream = Inflated(bundle, packed)
        try:
            with tarfile.open(fileobj=stream, mode="r|") as tar:  # type: ignore[call-overload]
                seen: Counter[str] = Counter()
                total = 0
                for member in tar:
                    problem = member_problem(member, seen, total)
                    if problem:
                        raise BundleError(f"{bundle}: {problem}")
                    seen[member.name] += 1
                    total += member.size
                    visit(member, _chunks(tar.extractfile(member)))
                stream.end(tar.offset)
        except (tarfile.TarError, EOFError, zlib.error) as err:
            raise BundleError(
                f"{bundle}: damaged or not a bundle ({err or type(err).__name__})"
            ) from None
        except OSError as err:
            raise BundleError(f"{bundle}: cannot read the bundle: {err.strerror or err}") from None
        return stream.digest.hexdigest()


def _chunks(data: IO[bytes] | None) -> Iterator[bytes]:
    while data is not None and (chunk := data.read(layout.CHUNK_BYTES)):
        yield chunk
