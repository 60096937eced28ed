"""What a results bundle is made of: its format, its fixed members, the bounds
on what it may hold, and the helpers every part of :mod:`netnoise.bundle` shares."""

from __future__ import annotations

import hashlib
import io
import tarfile
import time
from pathlib import PurePosixPath

from netnoise import project

FORMAT = "netnoise-bundle-3"
#: Bundles this version reads; format 3 records the run its results come from
#: (``run``), which ``verify`` holds the sidecars to, format 2 did not.
READABLE_FORMATS = (FORMAT, "netnoise-bundle-2")
MANIFEST = "manifest.json"
CONFIG = "config.yaml"
#: What a bundle's files may be: data that no reader executes.
DATA_SUFFIXES = (".csv", ".json", ".npz", ".tsv", ".txt", ".yaml")
#: Unpacked bytes a bundle may hold (the shipped one: 7 MB), bytes of one of its
#: files (its largest: 9 MB), and files (681).
MAX_BYTES = 1 << 30
MAX_FILE_BYTES = 256 << 20
MAX_FILES = 20_000
#: Columns of a bundled table (the widest: 56), and elements of a bundled array.
MAX_COLUMNS = 1000
MAX_ARRAY_ELEMENTS = 1 << 26
#: Bytes of one line of a bundled table (the longest: 2 kB) and rows of one table
#: (the most: 46 081); tables are checked a line at a time, so these bound the
#: memory a check takes, not the file.
MAX_LINE_BYTES = 1 << 20
MAX_TABLE_ROWS = 10_000_000
#: Bytes of a bundled JSON or YAML document, which its reader holds whole (the
#: largest: the manifest, 280 kB; a sidecar: 20 kB).
MAX_DOCUMENT_BYTES = 16 << 20
#: Bytes a check reads at a time, packed or unpacked.
CHUNK_BYTES = 1 << 20
# Where a bundle keeps the tables of its run (to compare a review with).
EXPECTED = "expected"
# What a review records in its working directory: the bundle it rebuilt (its
# path and SHA-256), which the report names as the source of its numbers.
REVIEWED = "reviewed-bundle.json"
#: The file marking a directory a review made (and so may empty); no bundle member
#: can be named so (:data:`DATA_SUFFIXES`).
WORKDIR_MARK = ".netnoise-review"
SHIPPED = project.ROOT / "resources" / "cache" / "quick-testbed.tar.gz"


class BundleError(ValueError):
    """A bundle is missing, damaged, or does not match this version of netnoise."""


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def add_member(tar: tarfile.TarFile, name: str, data: bytes) -> None:
    """Add a regular file ``name`` holding ``data`` to ``tar``, as a bundle holds it."""
    info = tarfile.TarInfo(name)
    info.size = len(data)
    info.mtime = int(time.time())
    info.mode = 0o644
    tar.addfile(info, io.BytesIO(data))


def safe_name(name: str) -> bool:
    """A relative path in normal form, without '..', that the workflow could have written."""
    path = PurePosixPath(name)
    return (
        bool(name)
        and name == str(path)
        and not path.is_absolute()
        and ".." not in path.parts
        and "\\" not in name
        and name.isprintable()
    )
