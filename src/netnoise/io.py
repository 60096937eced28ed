"""Read and write the benchmarks' output format; read it into tidy pandas frames.

A result file is a ``#@key=value`` preamble, then one CSV header line whose
column names carry their unit as a suffix (``rtt_us``, ``size_bytes``), then
one row per sample, then the end-of-data line ``#@end=<rows>``. Other lines
starting with ``#`` are comments. A file without the end-of-data line, or
whose row count differs from it, was cut short and is refused; so is a sample
of a unit column (a time, a size, a rate, a count) that is empty, not a finite
number, or negative.
"""

from __future__ import annotations

import contextlib
import csv
import math
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field

import pandas as pd

from netnoise import inputs
from netnoise.atomic import atomic_open
from netnoise.provenance import cpu_columns

FORMAT = "netnoise-2"
END = "end"
REQUIRED_META = ("format", "tool", "version", "git_sha", "argv", "seed", "ranks", "hosts", "date")
# Preamble keys copied into every tidy row: enough to tell runs apart.
TIDY_META = ("tool", "version", "git_sha", "seed", "ranks", "hosts", "mpi_library", "date")
# Every unit is a magnitude: no column carrying one can hold a negative sample.
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
_COLUMN = re.compile(r"[a-z][a-z0-9_]*")
_END = re.compile(rf"#@{END}=(\d+)")


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


def _lines(path: str | os.PathLike[str]) -> list[str]:
    try:
        data = inputs.read_bytes(path, inputs.MAX_TABLE_BYTES, "result file")
        return data.decode("utf-8").splitlines(keepends=True)
    except UnicodeDecodeError as err:
        raise BenchmarkFormatError(
            path, None, f"not a text file (byte {err.start} is not UTF-8)"
        ) from None
    except inputs.InputError as err:
        raise BenchmarkFormatError(path, None, str(err).removeprefix(f"{path}: ")) from None
    except OSError as err:
        raise BenchmarkFormatError(path, None, f"cannot read: {err.strerror or err}") from None


def _fields(path: str | os.PathLike[str], lineno: int, line: str) -> list[str]:
    try:
        return next(csv.reader([line]))
    except csv.Error as err:
        raise BenchmarkFormatError(path, lineno, f"not a CSV line: {err}") from None


def read_benchmark(path: str | os.PathLike[str]) -> BenchmarkResult:
    """Parse one result file; every defect is a BenchmarkFormatError."""
    meta: dict[str, str] = {}
    header: list[str] | None = None
    rows: list[list[str]] = []
    row_lines: list[int] = []
    end: int | None = None
    lines = _lines(path)
    for lineno, raw in enumerate(lines, start=1):
        line = raw.rstrip("\r\n")
        if end is not None:
            if line.strip():
                raise BenchmarkFormatError(path, lineno, "data after the end-of-data line")
            continue
        if line.startswith("#@"):
            if header is not None:
                end = _end_of_data(path, lineno, raw, len(rows))
                continue
            key, sep, value = line[2:].partition("=")
            if not sep or not key:
                raise BenchmarkFormatError(
                    path, lineno, f"preamble line {inputs.quoted(line)} has no key="
                )
            meta[key] = value
        elif line.startswith("#") or not line.strip():
            continue
        elif header is None:
            header = _header(path, lineno, _fields(path, lineno, line))
        else:
            fields = _fields(path, lineno, line)
            if len(fields) != len(header):
                raise BenchmarkFormatError(
                    path, lineno, f"{len(fields)} fields, the header has {len(header)}"
                )
            empty = [c for c, v in zip(header, fields, strict=True) if not v.strip()]
            if empty:
                raise BenchmarkFormatError(
                    path, lineno, f"empty field in column {', '.join(empty)}: a cut row?"
                )
            rows.append(fields)
            row_lines.append(lineno)
    missing = [k for k in REQUIRED_META if k not in meta]
    if missing:
        raise BenchmarkFormatError(path, None, f"preamble lacks {', '.join(missing)}")
    if meta["format"] != FORMAT:
        earlier = meta["format"] == "netnoise-1"
        hint = " (results of an earlier netnoise: measure them again)" if earlier else ""
        raise BenchmarkFormatError(
            path, None, f"format '{meta['format']}', expected '{FORMAT}'{hint}"
        )
    if header is None:
        raise BenchmarkFormatError(path, None, "no header line: the run wrote no samples")
    if end is None:
        raise BenchmarkFormatError(
            path,
            len(lines),
            f"no end-of-data line '#@{END}=<rows>' after {len(rows)} rows: the file was cut short",
        )
    data = pd.DataFrame(rows, columns=header)
    for column in header:
        if _is_measurement(column):
            _check_samples(path, column, data[column].tolist(), row_lines)
            data[column] = pd.to_numeric(data[column])
        else:
            # Identifiers (pair, rank, link, checksum) are numbers where they can be.
            with contextlib.suppress(ValueError, TypeError):
                data[column] = pd.to_numeric(data[column])
    return BenchmarkResult(path=str(path), meta=meta, data=data)


def _header(path: str | os.PathLike[str], lineno: int, header: list[str]) -> list[str]:
    bad = [c for c in header if not _COLUMN.fullmatch(c)]
    if bad:
        raise BenchmarkFormatError(
            path, lineno, f"bad column name(s) {bad}: expected lower_case_unit"
        )
    repeated = sorted({c for c in header if header.count(c) > 1})
    if repeated:
        raise BenchmarkFormatError(path, lineno, f"column(s) {', '.join(repeated)} repeated")
    return header


def _end_of_data(path: str | os.PathLike[str], lineno: int, raw: str, rows: int) -> int:
    """The row count of an end-of-data line, checked against the rows read."""
    match = _END.fullmatch(raw.rstrip("\r\n"))
    if match is None:
        raise BenchmarkFormatError(
            path, lineno, f"preamble line after the header (the only one allowed: '#@{END}=<rows>')"
        )
    if not raw.endswith("\n"):
        raise BenchmarkFormatError(path, lineno, "the end-of-data line is cut short")
    count = int(match.group(1))
    if count != rows:
        raise BenchmarkFormatError(
            path, lineno, f"the end-of-data line counts {count} rows, the file has {rows}"
        )
    return count


def _check_samples(
    path: str | os.PathLike[str], column: str, values: list[str], row_lines: list[int]
) -> None:
    """Every sample of a unit column is a finite number >= 0."""
    for value, lineno in zip(values, row_lines, strict=True):
        try:
            sample = float(value)
        except ValueError:
            raise BenchmarkFormatError(
                path, lineno, f"column {column} expects a number, got '{value}'"
            ) from None
        if not math.isfinite(sample) or sample < 0:
            raise BenchmarkFormatError(
                path,
                lineno,
                f"column {column} holds {value.strip()}: a sample in {column_unit(column)} "
                "must be a finite number >= 0",
            )


def write_benchmark(
    path: str | os.PathLike[str], meta: Mapping[str, object], table: pd.DataFrame
) -> None:
    """Write ``table`` in the benchmark format, atomically: the ``format`` line, the
    preamble ``meta`` (every key of :data:`REQUIRED_META` but ``format``), the rows
    and the end-of-data line."""
    missing = [k for k in REQUIRED_META if k != "format" and k not in meta]
    if missing:
        raise ValueError(f"the preamble needs {', '.join(missing)}")
    with atomic_open(path) as fh:
        fh.write(f"#@format={FORMAT}\n")
        for key, value in meta.items():
            if key != "format":
                fh.write(f"#@{key}={' '.join(str(value).splitlines())}\n")
        table.to_csv(fh, index=False, lineterminator="\n")
        fh.write(f"#@{END}={len(table)}\n")


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
