"""What a bundle's members hold, read as the review's jobs will read them: each
file is refused unless its reader would take it as what its suffix says."""

from __future__ import annotations

import csv
import io
import json
import math
import zipfile

from netnoise import config as netnoise_config
from netnoise import provenance
from netnoise.bundle.layout import MAX_ARRAY_ELEMENTS, MAX_COLUMNS


def data_problem(name: str, data: bytes) -> str | None:
    """Why a file is not what its suffix says, as its reader in a review job would
    find (JSON; a provenance sidecar the provenance table can read; YAML of plain
    data; a table whose rows have its header's columns; an .npz of arrays of plain
    numbers, which numpy reads without unpickling, no larger than its bytes), or None."""
    try:
        if name.endswith(provenance.SIDECAR_SUFFIX):
            return provenance.sidecar_problem(json.loads(data))
        if name.endswith(".json"):
            json.loads(data)
        elif name.endswith(".yaml"):
            netnoise_config.parse_yaml(name, data, "YAML data")
        elif name.endswith((".csv", ".tsv")):
            return table_problem(data, "\t" if name.endswith(".tsv") else ",")
        elif name.endswith(".npz"):
            return npz_problem(data)
    except RecursionError:
        return "nested too deeply"
    except netnoise_config.ConfigError as err:
        return str(err)
    except ValueError as err:
        return f"not JSON ({err})"
    return None


def table_problem(data: bytes, delimiter: str) -> str | None:
    """Why ``data`` is not a table of at most :data:`MAX_COLUMNS` columns whose every
    row has the header's (lines starting with ``#``, a result file's preamble and
    comments, aside), or None."""
    try:
        lines = data.decode("utf-8").splitlines()
    except UnicodeDecodeError as err:
        return f"not a text table (byte {err.start} is not UTF-8)"
    numbered = [(n, line) for n, line in enumerate(lines, start=1) if not line.startswith("#")]
    if not numbered:
        return "empty: a table needs its header line"
    # The header alone first: a line of a million fields is refused before csv splits it.
    if numbered[0][1].count(delimiter) >= MAX_COLUMNS:
        return f"more than {MAX_COLUMNS} columns; a table of a run has far fewer"
    try:
        rows = csv.reader((line for _, line in numbered), delimiter=delimiter, strict=True)
        header = next(rows)
        for (lineno, _), row in zip(numbered[1:], rows, strict=False):
            if row and len(row) != len(header):
                return f"line {lineno} has {len(row)} fields, the header {len(header)}"
    except csv.Error as err:
        return f"not a table ({err})"
    return None


def npz_problem(data: bytes) -> str | None:
    """Read from the array headers alone: every member an array without objects."""
    import numpy as np

    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
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
                if elements > MAX_ARRAY_ELEMENTS:
                    return f"{member} declares {elements} elements, more than {MAX_ARRAY_ELEMENTS}"
                stored = archive.getinfo(member).file_size - header_bytes
                if elements * dtype.itemsize != stored:
                    return (
                        f"{member} declares {elements} elements of {dtype.itemsize} bytes but "
                        f"holds {stored} bytes"
                    )
    except (ValueError, OSError, EOFError, zipfile.BadZipFile) as err:
        return f"not an archive of arrays ({err})"
    return None
