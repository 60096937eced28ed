"""Read the benchmarks' output format into tidy pandas frames.

A result file is a ``#@key=value`` preamble, then one CSV header line whose
column names carry their unit as a suffix (``rtt_us``, ``size_bytes``), then
one row per sample. Other lines starting with ``#`` are comments.
"""

from __future__ import annotations

import csv
import os
import re
from dataclasses import dataclass, field

import pandas as pd

from netnoise.provenance import cpu_columns

FORMAT = "netnoise-1"
REQUIRED_META = ("format", "tool", "version", "git_sha", "argv", "seed", "ranks", "hosts", "date")
# Preamble keys copied into every tidy row: enough to tell runs apart.
TIDY_META = ("tool", "version", "git_sha", "seed", "ranks", "hosts", "mpi_library", "date")
UNITS = {
    "ns": "ns",
    "us": "µs",
    "ms": "ms",
    "s": "s",
    "bytes": "bytes",
    "bps": "bit/s",
    "mbps": "Mbit/s",
    "cycles": "cycles",
    "pct": "%",
    "count": "count",
}
_COLUMN = re.compile(r"^[a-z][a-z0-9_]*$")


class BenchmarkFormatError(ValueError):
    """A result file does not follow the format; names the file and the line."""

    def __init__(self, path: str | os.PathLike[str], line: int | None, problem: str):
        where = f"{path}:{line}" if line is not None else str(path)
        super().__init__(f"{where}: {problem}")
        self.path = str(path)
        self.line = line


@dataclass
class BenchmarkResult:
    path: str
    meta: dict[str, str]
    data: pd.DataFrame = field(repr=False)


def read_benchmark(path: str | os.PathLike[str]) -> BenchmarkResult:
    """Parse one result file; every defect is a BenchmarkFormatError."""
    meta: dict[str, str] = {}
    header: list[str] | None = None
    header_line = 0
    rows: list[list[str]] = []
    with open(path, newline="") as fh:
        for lineno, raw in enumerate(fh, start=1):
            line = raw.rstrip("\r\n")
            if line.startswith("#@"):
                if header is not None:
                    raise BenchmarkFormatError(path, lineno, "preamble line after the header")
                key, sep, value = line[2:].partition("=")
                if not sep or not key:
                    raise BenchmarkFormatError(path, lineno, f"preamble line '{line}' has no key=")
                meta[key] = value
            elif line.startswith("#") or not line.strip():
                continue
            elif header is None:
                header = next(csv.reader([line]))
                header_line = lineno
                bad = [c for c in header if not _COLUMN.match(c)]
                if bad:
                    raise BenchmarkFormatError(
                        path, lineno, f"bad column name(s) {bad}: expected lower_case_unit"
                    )
            else:
                fields = next(csv.reader([line]))
                if len(fields) != len(header):
                    raise BenchmarkFormatError(
                        path, lineno, f"{len(fields)} fields, the header has {len(header)}"
                    )
                rows.append(fields)
    missing = [k for k in REQUIRED_META if k not in meta]
    if missing:
        raise BenchmarkFormatError(path, None, f"preamble lacks {', '.join(missing)}")
    if meta["format"] != FORMAT:
        raise BenchmarkFormatError(path, None, f"format '{meta['format']}', expected '{FORMAT}'")
    if header is None:
        raise BenchmarkFormatError(path, None, "no header line: the run wrote no samples")
    data = pd.DataFrame(rows, columns=header)
    for column in header:
        try:
            data[column] = pd.to_numeric(data[column])
        except (ValueError, TypeError):
            bad_row = next(i for i, v in enumerate(data[column]) if not _is_number(v))
            if _is_measurement(column):
                raise BenchmarkFormatError(
                    path,
                    header_line + 1 + bad_row,
                    f"column {column} expects a number, got '{data[column][bad_row]}'",
                ) from None
    return BenchmarkResult(path=str(path), meta=meta, data=data)


def _is_number(value: str) -> bool:
    try:
        float(value)
    except ValueError:
        return False
    return True


def _is_measurement(column: str) -> bool:
    return column_unit(column) is not None


def column_unit(column: str) -> str | None:
    """The unit a column name carries as suffix (``rtt_us`` → ``µs``), or None."""
    suffix = column.rsplit("_", 1)[-1]
    return UNITS.get(suffix) if "_" in column else None


def tidy(result: BenchmarkResult, **identifiers: object) -> pd.DataFrame:
    """One row per sample with the run's identifiers and key preamble fields."""
    frame = result.data.copy()
    for key, value in identifiers.items():
        frame[key] = value
    for key in TIDY_META:
        if key in result.meta and key not in frame.columns:
            frame[key] = result.meta[key]
    return frame


def read_tidy(paths: list[str | os.PathLike[str]], **identifiers: list[object]) -> pd.DataFrame:
    """Concatenate several result files, tagging each with its identifiers and
    the CPU record of its provenance sidecar (``provenance.CPU_COLUMNS``).

    ``identifiers`` maps a column name to one value per path.
    """
    for name, values in identifiers.items():
        if len(values) != len(paths):
            raise ValueError(f"{name}: {len(values)} values for {len(paths)} paths")
    frames = [
        tidy(read_benchmark(p), **{k: v[i] for k, v in identifiers.items()}, **cpu_columns(p))
        for i, p in enumerate(paths)
    ]
    return pd.concat(frames, ignore_index=True)
