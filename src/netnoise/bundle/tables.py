"""The tables of a bundle, checked a line at a time as the review's readers
(pandas, then the models) will take them.

Every table: UTF-8 text, a header of distinct, non-empty column names, no
blank line, every row as wide as the header, within :data:`~layout.MAX_LINE_BYTES`
per line and :data:`~layout.MAX_TABLE_ROWS` rows (so a member of gigabytes of
line ends costs a check no memory). A column whose name carries a unit
(``rtt_us``: :func:`netnoise.io.column_unit`) holds finite numbers, or nothing
where a value was not measured; in a benchmark result file (``#@format=``
preamble) every one of its samples is a finite number >= 0, as
:func:`netnoise.io.read_benchmark` requires. A table the review fits and
draws from (:data:`SCHEMAS`) also holds finite numbers in the columns its
schema names, and a value in every row of its required ones: text, NaN or an
infinity there would be read as a number column gone wrong, and stop a job
halfway through a review.
"""

from __future__ import annotations

import csv
import math
import re
from dataclasses import dataclass

from netnoise.bundle import layout
from netnoise.inputs import quoted
from netnoise.io import column_unit


@dataclass(frozen=True)
class TableSchema:
    """Columns of a table that hold finite numbers besides the unit columns
    (``numbers``), and the columns every row fills (``required``). Columns it
    does not name are free, so a version that adds a column reads older
    bundles and newer ones alike."""

    numbers: tuple[str, ...] = ()
    required: tuple[str, ...] = ()


def _schema(numbers: str = "", required: str = "") -> TableSchema:
    return TableSchema(tuple(numbers.split()), tuple(required.split()))


_CPU = "cpu_mean_runnable cpu_busy_share cpu_stall_share cpu_job_runnable cpu_job_stall_share"
_LINKS = "trial link bytes links delta_in delta_out"
_COUNTERS = "injection_rate network_bytes network_stalls stall_ratio net_to_nic_ratio"
_COUNTER_STATS = " ".join(
    f"{name}_{stat}"
    for name in (*_COUNTERS.split(), "network_backlog_bytes")
    for stat in ("mean", "var", "p75", "p95", "p99")
)

#: The tables the review's analysis reads, by their path under
#: ``results/<platform>/``: the measured data each study fits and draws.
SCHEMAS = {
    "tidy/baseline_latency.csv": _schema(
        f"pair iteration rep seed ranks {_CPU}", "pair iteration size_bytes rtt_us"
    ),
    "tidy/impact_compression/impact.csv": _schema("pair", "time_s latency_us"),
    "tidy/impact_compression/runtimes.csv": _schema("run", "runtime_s"),
    "tidy/latency_variation/characterization.csv": _schema(
        "level pair iteration", "iteration rtt_us"
    ),
    "tidy/latency_variation/injected_runtimes.csv": _schema("level run", "runtime_s"),
    "tidy/latency_variation/injected_samples.csv": _schema("level sample", "value_us"),
    "tidy/latency_variation/injector_reports.csv": _schema(
        "level enabled rank pid strict seed delays", "delays"
    ),
    "tidy/latency_variation/load.csv": _schema("level rank", "achieved_mbps"),
    "tidy/network_noise/benchmark.csv": _schema(
        f"split application_ranks perturbing_ranks perturbed rep ratio allocation seed ranks "
        f"{_CPU}",
        "split ratio time_us",
    ),
    "tidy/variability/runs.csv": _schema(
        "nodes index seed loaded_nodes load messages sleep_cycles racks_spanned nic_ports "
        "network_ports injection_rate_total network_stalls_total network_drops_total "
        f"net_to_nic_ratio intervals nic_stalls_total {_COUNTER_STATS}",
        "nodes runtime_s",
    ),
    "tidy/asymmetric/link_errors.csv": _schema(
        f"{_LINKS} nodes d pattern iterations finish_step steps eps abs_eps",
        "time_pred_s time_meas_s eps",
    ),
    "tidy/asymmetric/mpi_links.csv": _schema(f"{_LINKS} nodes d pattern iterations", "time_s"),
    "tidy/asymmetric/mpi_trials.csv": _schema("trial iterations", "makespan_s"),
    "tidy/asymmetric/tcp_links.csv": _schema(f"{_LINKS} retransmits", "rate_mbit"),
    "models/latency_variation/distributions.csv": _schema("level shape", "mean_us std_us"),
    "models/latency_variation/fits.csv": _schema(
        "level n shape loglik shape_scale25 shape_scale50 shape_scale75", "mean_us std_us"
    ),
}

# A number as pandas reads one into a column of floats: no spaces, no digit
# separators, no words (nan, inf); the finite ones are checked apart.
_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")


def schema_of(name: str) -> TableSchema | None:
    """The schema of bundle member ``name`` (``results/<platform>/...``), or None."""
    parts = name.split("/", 2)
    return SCHEMAS.get(parts[2]) if len(parts) == 3 and parts[0] == "results" else None


class TableCheck:
    """A table fed in chunks (:meth:`feed`), judged at its end (:meth:`finish`):
    the first problem found, or None. Holds one line at a time."""

    def __init__(self, name: str, delimiter: str) -> None:
        self.delimiter = delimiter
        self.schema = schema_of(name) or TableSchema()
        self.problem: str | None = None
        self.lineno = 0
        self.rows = 0
        self.result_file = False
        self.header: list[str] | None = None
        self.numbers: list[tuple[int, str, bool]] = []
        self._partial = b""
        self._record: list[str] = []
        self._record_line = 0

    def feed(self, chunk: bytes) -> None:
        if self.problem:
            return
        lines = (self._partial + chunk).split(b"\n")
        self._partial = lines.pop()
        if len(self._partial) > layout.MAX_LINE_BYTES:
            self.problem = (
                f"line {self.lineno + len(lines) + 1} is longer than {layout.MAX_LINE_BYTES} "
                "bytes; a table of a run has far shorter ones"
            )
            return
        for line in lines:
            self._line(line)
            if self.problem:
                return

    def finish(self) -> str | None:
        if self._partial and not self.problem:
            self._line(self._partial)
        if not self.problem and self._record:
            self.problem = f"line {self._record_line}: a quoted field is never closed"
        if not self.problem and self.header is None:
            self.problem = "empty: a table needs its header line"
        return self.problem

    def _line(self, raw: bytes) -> None:
        self.lineno += 1
        try:
            line = raw.removesuffix(b"\r").decode("utf-8")
        except UnicodeDecodeError as err:
            self.problem = f"line {self.lineno} is not UTF-8 text (byte {err.start})"
            return
        if "\0" in line:
            self.problem = f"line {self.lineno} holds a NUL byte; a table is text"
        elif self._record:
            self._record.append(line)
            self._take_record()
        elif line.startswith("#"):
            # A result file's preamble, its end-of-data line, or a comment.
            self.result_file |= self.header is None and line.startswith("#@format=")
        elif not line:
            self.problem = f"line {self.lineno} is blank; a table has none"
        else:
            self._record, self._record_line = [line], self.lineno
            self._take_record()

    def _take_record(self) -> None:
        """Parse the record begun on ``_record_line`` once its quotes are closed."""
        text = "\n".join(self._record)
        if text.count('"') % 2:
            if len(text) > layout.MAX_LINE_BYTES:
                self.problem = f"line {self._record_line}: a quoted field is never closed"
            return
        self._record = []
        try:
            fields = (
                next(csv.reader([text], delimiter=self.delimiter, strict=True))
                if '"' in text
                else text.split(self.delimiter)
            )
        except csv.Error as err:
            self.problem = f"line {self._record_line}: not a table row ({err})"
            return
        if self.header is None:
            self._begin(fields)
        else:
            self._row(fields)

    def _begin(self, header: list[str]) -> None:
        if len(header) > layout.MAX_COLUMNS:
            self.problem = f"more than {layout.MAX_COLUMNS} columns; a table of a run has fewer"
            return
        if not all(name.strip() for name in header):
            self.problem = f"line {self._record_line}: a column has no name"
            return
        twice = sorted({name for name in header if header.count(name) > 1})
        if twice:
            shown = ", ".join(quoted(name) for name in twice[:5])
            self.problem = f"column {shown} appears more than once in the header"
            return
        self.header = header
        required = set(self.schema.required)
        self.numbers = [
            (index, name, name in required or (self.result_file and bool(column_unit(name))))
            for index, name in enumerate(header)
            if column_unit(name) or name in self.schema.numbers or name in required
        ]

    def _row(self, fields: list[str]) -> None:
        assert self.header is not None
        self.rows += 1
        if self.rows > layout.MAX_TABLE_ROWS:
            self.problem = f"more than {layout.MAX_TABLE_ROWS} rows; a table of a run has fewer"
            return
        if len(fields) != len(self.header):
            self.problem = (
                f"line {self._record_line} has {len(fields)} fields, the header {len(self.header)}"
            )
            return
        for index, name, required in self.numbers:
            value = fields[index]
            problem = _number_problem(value, required, self.result_file)
            if problem:
                self.problem = f"line {self._record_line}: column {name} {problem}"
                return


def _number_problem(value: str, required: bool, sample: bool) -> str | None:
    """Why a cell of a number column is not what the column holds, or None."""
    if not value:
        return "is empty; every row gives it" if required else None
    if not _NUMBER.fullmatch(value) or not math.isfinite(float(value)):
        return f"holds {quoted(value)}, not a finite number"
    if sample and float(value) < 0:
        return f"holds {quoted(value)}: a sample is a finite number >= 0"
    return None
