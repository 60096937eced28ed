"""Table III metrics of one run from its network counters (seed 002, Sec. III-D).

Chunduri et al. estimate, from the network counters read during one run, how
many standard deviations that run's runtime lies from the application's mean
(:mod:`netnoise.studies.variability.model`). This module computes the metrics
those estimates start from, on the counters netnoise collects, and reads a run
directory: what the campaign writes and ``netnoise variability`` reads.

Metrics (Sec. III-D, Table III) and how the Aries counters map to ours
------------------------------------------------------------------------

Aries routers have 8 processor tiles (to the nodes) and 40 network tiles (to
other routers). The paper reads the counters of the routers the job's nodes sit
on, at start and end of the run, so every statistic is over *tiles*. Our roles:

==========================================  =============================================
Aries (seed 002)                            netnoise (:mod:`netnoise.counters`)
==========================================  =============================================
processor tile: the node's link             ``node_nic`` rows of the job's nodes
proctile ``INQ_PRF_INCOMING_FLIT_VC0+VC4``  ``tx_bytes`` of the job's NICs: what the node
(flits the node injects)                    injects. A flit is a fixed-size unit of data,
                                            so bytes count the same thing
network tile (links between routers)        egress queues of ``switch_port`` (the tbf toward
                                            a job node: its download), ``uplink`` and
                                            ``core_port`` (rack ↔ core, both directions)
network tile ``INQ_PRF_INCOMING_FLIT_VC*``  ``tx_bytes`` of those ports (``qdisc_bytes`` if
                                            the port has no link counter). Each byte is
                                            counted once per queue it crosses, as a flit is
                                            once per tile
flits in the stall-to-flit ratio            ``tx_packets`` (``qdisc_packets``): stalls are
                                            counted per packet or per tick below, so the
                                            ratio is per packet, not per byte (a
                                            simulated flow model counts no packets:
                                            there per byte)
``INQ_PRF_ROWBUS_STALL_CNT`` (cycles a      ``qdisc_stall_ns`` (time the port's queue held
flit ready to forward could not move)       a packet, :mod:`netnoise.testbed.queue_time`);
                                            without it ``qdisc_overlimits`` (tbf: events, a
                                            dequeue that found a packet but no tokens) or,
                                            on InfiniBand, ``xmit_wait_ticks``
                                            (PortXmitWait: ticks with data to send and no
                                            credits, the counter the paper's artifact names);
                                            in SimGrid ``saturated_ns`` (time the link
                                            ran at its full rate: flows held back)
(none: Aries is lossless)                   ``qdisc_drops``: auxiliary metric only
(none: no gauge on Aries)                   ``qdisc_backlog_bytes`` (gauge): auxiliary
                                            summary only
==========================================  =============================================

Which rows are the job's:

- NICs: ``node_nic`` rows whose ``device`` is one of ``nodes`` or is written
  ``NODE:HCA`` / ``NODE/HCA``. Counters read on the job's own hosts (InfiniBand
  sysfs names the device after the HCA, e.g. ``mlx5_0``) name no node; when no
  ``node_nic`` device names a job node, all ``node_nic`` rows are taken as the
  job's, as the paper's per-job PAPI reads were (``nic_selection`` says which).
- network: rows of roles ``switch_port``, ``uplink``, ``core_port``; restricted to
  ``network_ports`` (``(device, port)`` pairs, e.g. from
  :func:`testbed_network_ports`) when given. The paper uses only the tiles of
  the job's own routers: the "local view" of congestion.

The per-tile statistics of the paper become per-port statistics. When the
counters were also sampled during the run (``Sampler`` with an interval), each
port contributes one value per sampling interval, scaled to the whole run
(amount × span / interval length), so the mean is the same per-port total and
the spread also covers time; with start and end samples only this reduces
exactly to the paper's per-tile values. An interval shorter than half the
median is merged into its neighbour (the snapshot taken at stop usually follows
a periodic one closely); an interval whose counter went backwards (reset) is
dropped. Summary statistics (Sec. III-D): mean, variance (population, so one
sample gives 0), 75th, 95th and 99th percentile (linear interpolation).

Table III metric → keys of :func:`run_metrics`:

- processor tile flits per second → ``injection_rate_*``: bytes a job NIC sent per
  second of ``runtime_s`` ("averaged over the runtime"), one value per NIC (and
  interval); ``injection_rate_total`` sums the NICs.
- network tile stall-to-flit ratio → ``stall_ratio_*``: stalls per packet of each
  network port (and interval) that forwarded packets.
- network-to-processor tile flit ratio → ``net_to_nic_ratio``: mean bytes per
  network port / mean bytes per job NIC over the run (the paper's "ratio of
  average networktile flits to average proctile flits"); ``net_to_nic_ratio_*``
  summarise the same ratio per sampling interval.
- network stalls → ``network_stalls_*`` per port, ``network_stalls_total``.
- network flits → ``network_bytes_*`` per port, ``network_bytes_total``.
- nodes → ``nodes`` (``node_count`` if given, else ``len(nodes)``).
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import warnings
from collections.abc import Collection, Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from netnoise import inputs
from netnoise.counters import GAUGES, csvimport

NIC_ROLES = frozenset({"node_nic"})
NETWORK_ROLES = frozenset({"switch_port", "uplink", "core_port"})
# First counter present on a port is used.
# Time counters first: the Aries counter counts stalled cycles, not events.
# saturated_ns is a simulated link's (netnoise.platform.simgrid.link_counter_rows).
STALL_COUNTERS = ("qdisc_stall_ns", "xmit_wait_ticks", "qdisc_overlimits", "saturated_ns")
# A flit is a fixed amount of data: where no packets are counted (a flow
# model's links) bytes are the units the stalls are shared over.
PACKET_COUNTERS = ("tx_packets", "qdisc_packets", "tx_bytes")
BYTE_COUNTERS = ("tx_bytes", "qdisc_bytes")
DROP_COUNTERS = ("qdisc_drops", "tx_dropped")
STATS = ("mean", "var", "p75", "p95", "p99")


def testbed_network_ports(spec: Any, nodes: Iterable[str]) -> set[tuple[str, str]]:
    """The network-side queues of a job on the testbed: its nodes' switch ports and,
    with several racks, the uplink pair of every rack it occupies (the analogue of
    the network tiles of the routers the job's nodes are on)."""
    names = set(nodes)
    job = [n for n in spec.node_list() if n.name in names]
    unknown = names - {n.name for n in job}
    if unknown:
        raise ValueError(f"not testbed nodes: {', '.join(sorted(unknown))}")
    ports = {(spec.fabric, n.port) for n in job}
    if spec.racks > 1:
        for rack in sorted({n.rack for n in job}):
            ports |= {(spec.fabric, end) for end in spec.uplink(rack)}
    return ports


def summary(values: Iterable[float], prefix: str) -> dict[str, float]:
    """The paper's summary statistics: mean, variance, 75th/95th/99th percentile."""
    v = np.asarray([x for x in values if np.isfinite(x)], dtype=float)
    if v.size == 0:
        return {f"{prefix}_{s}": math.nan for s in STATS}
    out = {f"{prefix}_mean": float(v.mean()), f"{prefix}_var": float(v.var())}
    for q in (75, 95, 99):
        out[f"{prefix}_p{q}"] = float(np.percentile(v, q))
    return out


def _nanmean(values: Any, axis: int | None = None) -> Any:
    """Mean of the finite values; NaN (without a warning) where there are none."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return np.nanmean(np.asarray(values, float), axis=axis)


def _boundaries(t: np.ndarray) -> np.ndarray:
    """Indices of the samples that delimit intervals; short intervals are merged."""
    if t.size <= 2:
        return np.arange(t.size)
    half = 0.5 * float(np.median(np.diff(t)))
    keep = [0]
    for i in range(1, t.size - 1):
        if t[i] - t[keep[-1]] >= half and t[-1] - t[i] >= half:
            keep.append(i)
    keep.append(t.size - 1)
    return np.asarray(keep)


@dataclasses.dataclass
class _Port:
    """Per-interval amounts of one port's cumulative counters."""

    amounts: dict[str, np.ndarray]  # counter → amount in each interval (NaN: unusable)
    durations: np.ndarray
    span: float

    def first(self, names: Sequence[str]) -> str | None:
        return next((c for c in names if c in self.amounts), None)

    def total(self, counter: str) -> float:
        a = self.amounts[counter]
        return float(np.nansum(a)) if np.isfinite(a).any() else math.nan

    def scaled(self, counter: str) -> np.ndarray:
        """Each interval's amount scaled to the whole span (the rate × span)."""
        return self.amounts[counter] * self.span / self.durations


def _ports(rows: pd.DataFrame) -> dict[tuple[str, str], _Port]:
    cumulative = rows[~rows["counter"].isin(GAUGES)]
    if cumulative.empty:
        return {}
    # Several readings of the same counter at the same time (several processes
    # reading one tile) are averaged, as the paper does (Sec. III-C).
    keys = [cumulative["device"].astype(str), cumulative["port"].astype(str)]
    mean = cumulative.groupby([*keys, cumulative["time_s"], cumulative["counter"]])["value"].mean()
    wide = mean.unstack("counter").sort_index()
    counters = [str(c) for c in wide.columns]
    values = wide.to_numpy(float)
    times = wide.index.get_level_values(2).to_numpy(float)
    port_of = list(zip(wide.index.get_level_values(0), wide.index.get_level_values(1), strict=True))
    starts = [i for i in range(len(port_of)) if i == 0 or port_of[i] != port_of[i - 1]]
    out: dict[tuple[str, str], _Port] = {}
    for lo, hi in zip(starts, [*starts[1:], len(port_of)], strict=True):
        t, block = times[lo:hi], values[lo:hi]
        if t.size < 2:
            continue
        keep = _boundaries(t)
        diff = np.diff(block[keep], axis=0)
        diff[diff < 0] = np.nan  # counter reset or wrap: interval unusable
        present = ~np.isnan(block).all(axis=0)  # counters this port has
        amounts = {c: diff[:, j] for j, c in enumerate(counters) if present[j]}
        out[port_of[lo]] = _Port(amounts, np.diff(t[keep]), float(t[keep][-1] - t[0]))
    return out


def _nic_rows(samples: pd.DataFrame, nodes: Sequence[str]) -> tuple[pd.DataFrame, str]:
    nics = samples[samples["role"].isin(NIC_ROLES)]
    host = nics["device"].astype(str).str.split(r"[:/]", n=1, regex=True).str[0]
    mine = host.isin(set(nodes))
    if mine.any():
        return nics[mine], "by node name"
    return nics, "all node_nic rows (no device names a job node)"


def check_job(nodes: Sequence[str] | None, node_count: int | None) -> None:
    """ValueError unless the job has a node, each with a name, and a node count of
    1 or more (None: found from the counters)."""
    if nodes is not None and (not nodes or not all(nodes)):
        raise ValueError(f"a run needs at least one node, each with a name, not {nodes[:4]!r}")
    if node_count is not None and node_count < 1:
        raise ValueError(f"a run's node count is 1 or more, not {node_count}")


def run_metrics(
    counter_samples: pd.DataFrame,
    nodes: Sequence[str],
    runtime_s: float,
    *,
    network_ports: Collection[tuple[str, str]] | None = None,
    node_count: int | None = None,
) -> dict[str, Any]:
    """Table III metrics of one run from its tidy counter samples (see module docstring)."""
    missing = {"time_s", "device", "port", "role", "counter", "value"} - set(
        counter_samples.columns
    )
    if missing:
        raise ValueError(f"counter samples lack column(s) {', '.join(sorted(missing))}")
    if not (runtime_s > 0 and math.isfinite(runtime_s)):
        raise ValueError(f"runtime_s must be a positive number, not {runtime_s!r}")
    nodes = [str(n) for n in nodes]
    check_job(nodes, node_count)
    samples = counter_samples.copy()
    samples["time_s"] = pd.to_numeric(samples["time_s"], errors="raise").astype(float)
    samples["value"] = pd.to_numeric(samples["value"], errors="raise").astype(float)

    nic_rows, nic_selection = _nic_rows(samples, nodes)
    nics = {k: p for k, p in _ports(nic_rows).items() if "tx_bytes" in p.amounts}
    if not nics:
        raise ValueError(
            "no node_nic tx_bytes counters with two or more samples: "
            "the job's injected traffic cannot be measured"
        )
    net_rows = samples[samples["role"].isin(NETWORK_ROLES)]
    if network_ports is not None:
        wanted = {(str(d), str(p)) for d, p in network_ports}
        keys = pd.MultiIndex.from_arrays(
            [net_rows["device"].astype(str), net_rows["port"].astype(str)]
        )
        net_rows = net_rows[keys.isin(list(wanted))]
    net = _ports(net_rows)

    metrics: dict[str, Any] = {
        "nodes": int(node_count) if node_count is not None else len(nodes),
        "nic_ports": len(nics),
        "network_ports": len(net),
        "nic_selection": nic_selection,
    }

    # Processor-tile flits per second.
    injection = np.concatenate([p.scaled("tx_bytes") / runtime_s for p in nics.values()])
    metrics.update(summary(injection, "injection_rate"))
    nic_totals = np.array([p.total("tx_bytes") for p in nics.values()])
    metrics["job_bytes_total"] = float(np.nansum(nic_totals))
    metrics["injection_rate_total"] = metrics["job_bytes_total"] / runtime_s

    # Network tiles: traffic, stalls, stall-to-flit ratio.
    byte_vals, stall_vals, ratio_vals, net_totals = [], [], [], []
    stall_total = drops_total = 0.0
    stall_names: set[str] = set()
    for port in net.values():
        bytes_c = port.first(BYTE_COUNTERS)
        if bytes_c is not None:
            byte_vals.append(port.scaled(bytes_c))
            net_totals.append(port.total(bytes_c))
        stall_c = port.first(STALL_COUNTERS)
        if stall_c is not None:
            stall_names.add(stall_c)
            stall_vals.append(port.scaled(stall_c))
            stall_total += np.nansum(port.amounts[stall_c])
            packets_c = port.first(PACKET_COUNTERS)
            if packets_c is not None:
                s, n = port.amounts[stall_c], port.amounts[packets_c]
                ok = n > 0  # a port that forwarded nothing has no ratio
                ratio_vals.append(s[ok] / n[ok])
        drop_c = port.first(DROP_COUNTERS)
        if drop_c is not None:
            drops_total += np.nansum(port.amounts[drop_c])
    flat = [np.concatenate(v) if v else np.array([]) for v in (byte_vals, stall_vals, ratio_vals)]
    metrics.update(summary(flat[0], "network_bytes"))
    metrics.update(summary(flat[1], "network_stalls"))
    metrics.update(summary(flat[2], "stall_ratio"))
    metrics["network_bytes_total"] = float(np.nansum(net_totals)) if net_totals else math.nan
    metrics["network_stalls_total"] = float(stall_total) if stall_names else math.nan
    metrics["network_drops_total"] = float(drops_total)
    metrics["stall_counter"] = ",".join(sorted(stall_names))

    # Network-to-processor tile flit ratio: ratio of the averages, over the run ...
    nic_mean = float(_nanmean(nic_totals))
    if net_totals and nic_mean > 0:
        metrics["net_to_nic_ratio"] = float(_nanmean(net_totals)) / nic_mean
    else:
        metrics["net_to_nic_ratio"] = math.nan
    # ... and per sampling interval when every port has the same intervals.
    lengths = {len(p.durations) for p in nics.values()} | {len(p.durations) for p in net.values()}
    per_interval: list[float] = []
    if net_totals and len(lengths) == 1:
        # Span-scaled amounts, so that start/end samples give the run-level ratio
        # even when the ports were read at slightly different times.
        nic_amount = _nanmean([p.scaled("tx_bytes") for p in nics.values()], axis=0)
        net_amount = _nanmean(
            [p.scaled(c) for p in net.values() if (c := p.first(BYTE_COUNTERS))], axis=0
        )
        with np.errstate(divide="ignore", invalid="ignore"):
            per_interval = list(np.where(nic_amount > 0, net_amount / nic_amount, np.nan))
    elif net_totals:
        per_interval = [metrics["net_to_nic_ratio"]]
    metrics.update(summary(per_interval, "net_to_nic_ratio"))
    metrics["intervals"] = max(len(p.durations) for p in nics.values())

    # Queue occupancy (gauge) of the network queues: auxiliary.
    gauges = net_rows[net_rows["counter"] == "qdisc_backlog_bytes"]["value"]
    metrics.update(summary(gauges.to_numpy(float), "network_backlog_bytes"))
    # The job's own NIC stalls (InfiniBand PortXmitWait at the HCA): auxiliary.
    nic_stalls = [np.nansum(p.amounts[c]) for p in nics.values() if (c := p.first(STALL_COUNTERS))]
    metrics["nic_stalls_total"] = float(np.sum(nic_stalls)) if nic_stalls else math.nan
    return metrics


# --------------------------------------------------------------------------- run directories

# A run directory (what ``netnoise variability`` reads and the campaign writes):
#
# - ``counters.csv``: the run's network counter samples in the tidy format of
#   :mod:`netnoise.counters`, columns ``time_s,device,port,role,counter,value``
#   (read with :func:`netnoise.counters.csvimport.read`, so ``role`` may be left
#   out and defaults to ``node_nic``). At least a sample at the start and one at
#   the end of the run; more samples in between add the time distribution.
#   Roles: ``node_nic`` (the job's NICs), ``switch_port``, ``uplink``,
#   ``core_port`` (the network queues its traffic meets). Counters: ``tx_bytes``,
#   ``tx_packets``, and a stall counter, ``qdisc_stall_ns`` or ``qdisc_overlimits``
#   (testbed) or ``xmit_wait_ticks`` (InfiniBand PortXmitWait).
# - ``run.json``: an object with ``nodes`` (required: the job's node names, as in
#   the ``device`` of their ``node_nic`` rows, or ``NODE:HCA``), ``runtime_s``
#   (required: the run's runtime in seconds), ``application`` (required to train:
#   runs are standardised per application and node count), ``node_count``
#   (optional: the job's number of nodes, if not ``len(nodes)``) and
#   ``network_ports`` (optional: ``[[device, port], ...]``, the network queues that
#   count as the job's; default every network row of the file).
RUN_FILE = "run.json"
COUNTERS_FILE = "counters.csv"


class RunDirError(ValueError):
    """A run directory that cannot be read; the message says what is wrong."""


def read_run_dir(path: str | os.PathLike[str]) -> tuple[pd.DataFrame, dict[str, Any]]:
    """The counter samples and the run description of RUN_DIR (checked)."""
    run_dir = Path(path)
    if not run_dir.is_dir():
        raise RunDirError(f"{run_dir}: not a directory")
    info_path, counters_path = run_dir / RUN_FILE, run_dir / COUNTERS_FILE
    for needed in (info_path, counters_path):
        if not needed.is_file():
            raise RunDirError(
                f"{needed}: missing (a run directory holds {RUN_FILE}, {COUNTERS_FILE})"
            )
    try:
        info = json.loads(inputs.read_bytes(info_path, inputs.MAX_CONFIG_BYTES, "run description"))
    except inputs.InputError as err:
        raise RunDirError(str(err)) from None
    except json.JSONDecodeError as err:
        raise RunDirError(f"{info_path}: not valid JSON ({err})") from err
    if not isinstance(info, dict):
        raise RunDirError(f"{info_path}: must hold a JSON object")
    nodes = info.get("nodes")
    if not isinstance(nodes, list) or not nodes or not all(isinstance(n, str) for n in nodes):
        raise RunDirError(f"{info_path}: 'nodes' must be a non-empty list of node names")
    runtime = info.get("runtime_s")
    if isinstance(runtime, bool) or not isinstance(runtime, int | float) or not runtime > 0:
        raise RunDirError(f"{info_path}: 'runtime_s' must be a positive number")
    if not math.isfinite(runtime):
        raise RunDirError(f"{info_path}: 'runtime_s' must be finite")
    count = info.get("node_count")
    if count is not None and (isinstance(count, bool) or not isinstance(count, int) or count < 1):
        raise RunDirError(f"{info_path}: 'node_count' must be a positive integer")
    ports = info.get("network_ports")
    if ports is not None and not (
        isinstance(ports, list)
        and all(
            isinstance(p, list) and len(p) == 2 and all(isinstance(x, str) for x in p)
            for p in ports
        )
    ):
        raise RunDirError(f"{info_path}: 'network_ports' must be a list of [device, port]")
    return read_counters(counters_path), info


def read_counters(path: str | os.PathLike[str]) -> pd.DataFrame:
    """The counter samples of a counters CSV (format above), checked."""
    try:
        inputs.check_file(path, inputs.MAX_TABLE_BYTES, "counters CSV")
        samples = csvimport.read(path)
    except pd.errors.EmptyDataError as err:
        raise RunDirError(f"{path}: empty file") from err
    except UnicodeDecodeError as err:
        raise RunDirError(f"{path}: not a counter CSV: not text ({err.reason})") from err
    except ValueError as err:  # csvimport's own messages, and pandas' ParserError
        raise RunDirError(f"{path}: not a counter CSV: {err}") from err
    if samples.empty:
        raise RunDirError(f"{path}: no counter rows")
    return samples


def metrics_of(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Table III metrics of the run in RUN_DIR, with its application and runtime."""
    samples, info = read_run_dir(path)
    ports = info.get("network_ports")
    try:
        metrics = run_metrics(
            samples,
            info["nodes"],
            float(info["runtime_s"]),
            network_ports=[tuple(p) for p in ports] if ports is not None else None,
            node_count=info.get("node_count"),
        )
    except ValueError as err:
        raise RunDirError(f"{path}: {err}") from err
    metrics["application"] = info.get("application")
    metrics["runtime_s"] = float(info["runtime_s"])
    return metrics


def metrics_of_counters(
    path: str | os.PathLike[str],
    *,
    nodes: Sequence[str] | None = None,
    runtime_s: float | None = None,
    node_count: int | None = None,
) -> dict[str, Any]:
    """Table III metrics of one run from its counters CSV alone.

    ``nodes``: the job's nodes (default: every device of the file's ``node_nic``
    rows, ``NODE:HCA`` read as NODE); ``runtime_s``: the run's runtime (default:
    the span of the samples, which is the runtime when they were read at the
    start and the end of the run, as the campaign reads them); ``node_count``:
    the job's number of nodes if not ``len(nodes)``. Every network row counts
    as the job's.
    """
    csv = Path(path)
    if not csv.is_file():
        raise RunDirError(f"{csv}: no such file (a counters CSV or a run directory)")
    try:
        check_job(nodes, node_count)
    except ValueError as err:
        raise RunDirError(f"{csv}: {err}") from None
    samples = read_counters(csv)
    if nodes is None:
        nics = samples.loc[samples["role"].isin(NIC_ROLES), "device"].astype(str)
        nodes = sorted(set(nics.str.split(r"[:/]", n=1, regex=True).str[0]))
        if not nodes:
            raise RunDirError(f"{csv}: no node_nic rows, so no node of the job's to measure")
    if runtime_s is None:
        times = samples["time_s"].astype(float)
        runtime_s = float(times.max() - times.min())
        if not runtime_s > 0:
            raise RunDirError(
                f"{csv}: all samples at one time; a run needs a sample at its start and at "
                "its end (or give its runtime)"
            )
    try:
        metrics = run_metrics(samples, list(nodes), runtime_s, node_count=node_count)
    except ValueError as err:
        raise RunDirError(f"{csv}: {err}") from err
    metrics["application"] = None
    metrics["runtime_s"] = float(runtime_s)
    return metrics


def training_table(run_dirs: Iterable[str | os.PathLike[str]]) -> pd.DataFrame:
    """One row of metrics per run directory, each naming its application (to train on)."""
    rows = []
    for run_dir in run_dirs:
        metrics = metrics_of(run_dir)
        if not metrics.get("application"):
            raise RunDirError(f"{run_dir}/{RUN_FILE}: 'application' is needed for training")
        rows.append(metrics)
    return pd.DataFrame(rows)
