"""What a bundle's members hold, read as the review's jobs will read them: each
file is refused unless its reader would take it as what its suffix says.

A member is fed to its check in chunks as the archive is read (:func:`check_for`),
so no check holds more than its kind needs: a table one line
(:class:`~netnoise.bundle.tables.TableCheck`), a JSON or YAML document itself
(at most :data:`~layout.MAX_DOCUMENT_BYTES`), an array archive its bytes on disk.
"""

from __future__ import annotations

import codecs
import json
import math
import tempfile
import zipfile
from typing import IO, Any, Protocol

from netnoise import config as netnoise_config
from netnoise import provenance
from netnoise.bundle import layout
from netnoise.bundle.tables import TableCheck
from netnoise.inputs import quoted


class Check(Protocol):
    def feed(self, chunk: bytes) -> None: ...

    def finish(self) -> str | None: ...


def strict_json(data: bytes) -> Any:
    """JSON as RFC 8259 has it: UTF-8, each key of an object once, no NaN or
    Infinity; ValueError naming what is wrong."""

    def unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        seen: dict[str, Any] = {}
        for key, value in pairs:
            if key in seen:
                raise ValueError(f"key {quoted(key)} is given twice in one object")
            seen[key] = value
        return seen

    def constant(name: str) -> Any:
        raise ValueError(f"{name} is not a JSON number")

    return json.loads(data.decode("utf-8"), object_pairs_hook=unique, parse_constant=constant)


class Document:
    """A JSON or YAML member, held whole (it is read whole) up to its bound;
    ``data`` once fed, and ``record`` what it holds once parsed (``parse``)."""

    def __init__(
        self, name: str, limit: int = layout.MAX_DOCUMENT_BYTES, *, parse: bool = True
    ) -> None:
        self.name = name
        self.limit = limit
        self.parse = parse
        self.parts: list[bytes] = []
        self.size = 0
        self.record: Any = None

    def feed(self, chunk: bytes) -> None:
        self.size += len(chunk)
        if self.size <= self.limit:
            self.parts.append(chunk)

    @property
    def data(self) -> bytes:
        return b"".join(self.parts)

    def finish(self) -> str | None:
        if self.size > self.limit:
            return f"larger than a document of a bundle may be ({self.limit} bytes at most)"
        if not self.parse:
            return None
        try:
            if self.name.endswith(".json"):
                self.record = strict_json(self.data)
                if self.name.endswith(provenance.SIDECAR_SUFFIX):
                    return provenance.sidecar_problem(self.record)
            elif self.name.endswith(".yaml"):
                self.record = netnoise_config.parse_yaml(self.name, self.data, "YAML data")
        except RecursionError:
            return "nested too deeply"
        except netnoise_config.ConfigError as err:
            return str(err)
        except UnicodeDecodeError as err:
            return f"not UTF-8 text (byte {err.start})"
        except ValueError as err:
            return f"not JSON ({err})"
        return None


class Text:
    """A text member: UTF-8, lines within :data:`~layout.MAX_LINE_BYTES`."""

    def __init__(self) -> None:
        self.decoder = codecs.getincrementaldecoder("utf-8")()
        self.offset = 0
        self.line = 0
        self.problem: str | None = None

    def feed(self, chunk: bytes) -> None:
        if self.problem:
            return
        try:
            self.decoder.decode(chunk)
        except UnicodeDecodeError as err:
            self.problem = f"not UTF-8 text (byte {self.offset + err.start})"
        end = chunk.rfind(b"\n")
        self.line = len(chunk) - end - 1 + (self.line if end < 0 else 0)
        if self.line > layout.MAX_LINE_BYTES:
            self.problem = f"a line is longer than {layout.MAX_LINE_BYTES} bytes"
        self.offset += len(chunk)

    def finish(self) -> str | None:
        if not self.problem:
            try:
                self.decoder.decode(b"", final=True)
            except UnicodeDecodeError:
                self.problem = "not UTF-8 text (it ends inside a character)"
        return self.problem


class Arrays:
    """An .npz member, spooled to disk beyond a few megabytes (zipfile seeks)."""

    def __init__(self) -> None:
        self.file = tempfile.SpooledTemporaryFile(max_size=8 << 20)  # noqa: SIM115 (closed by finish)

    def feed(self, chunk: bytes) -> None:
        self.file.write(chunk)

    def finish(self) -> str | None:
        try:
            self.file.seek(0)
            return npz_problem(self.file)
        finally:
            self.file.close()


def check_for(name: str) -> Check:
    """The check of bundle member ``name``, by its suffix."""
    if name.endswith((".csv", ".tsv")):
        return TableCheck(name, "\t" if name.endswith(".tsv") else ",")
    if name.endswith(".npz"):
        return Arrays()
    if name.endswith(".txt"):
        return Text()
    return Document(name)


def npz_problem(archive_file: IO[bytes]) -> str | None:
    """Read from the array headers alone: every member an array of plain numbers
    (numpy reads it without unpickling), no larger than its bytes."""
    import numpy as np

    try:
        with zipfile.ZipFile(archive_file) as archive:
            for member in archive.namelist():
                if not member.endswith(".npy"):
                    return f"{member} is not an array"
                with archive.open(member) as fh:
                    version = np.lib.format.read_magic(fh)
                    read_header = (
                        np.lib.format.read_array_header_1_0
                        if version == (1, 0)
                        else np.lib.format.read_array_header_2_0
                    )
                    shape, _, dtype = read_header(fh)
                    header_bytes = fh.tell()
                if dtype.hasobject:
                    return f"{member} holds Python objects (a pickle), not numbers"
                elements = math.prod(shape)
                if elements > layout.MAX_ARRAY_ELEMENTS:
                    return (
                        f"{member} declares {elements} elements, more than "
                        f"{layout.MAX_ARRAY_ELEMENTS}"
                    )
                stored = archive.getinfo(member).file_size - header_bytes
                if elements * dtype.itemsize != stored:
                    return (
                        f"{member} declares {elements} elements of {dtype.itemsize} bytes but "
                        f"holds {stored} bytes"
                    )
    except (ValueError, OSError, EOFError, zipfile.BadZipFile) as err:
        return f"not an archive of arrays ({err})"
    return None
