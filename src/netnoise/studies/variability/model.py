"""Statistics-based model of network-induced runtime variability (seed 002).

Chunduri et al. estimate, from the network counters read during one run, how
many standard deviations that run's runtime lies from the application's mean:
the *Variability Estimate* z ± bound. This module rebuilds each step on the
counters netnoise collects.

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
                                            ratio is per packet, not per byte
``INQ_PRF_ROWBUS_STALL_CNT`` (a flit        ``qdisc_overlimits`` (tbf: a dequeue found a
ready to forward could not move)            packet ready but no tokens to send it) or, on
                                            InfiniBand, ``xmit_wait_ticks`` (PortXmitWait:
                                            ticks with data to send and no credits, the
                                            counter the paper's artifact names)
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

Model (Sec. IV-V)
-----------------

Seven features (:data:`FEATURES`, the paper's order of importance), RobustScaler
(median, IQR) + SVR with an RBF kernel, C and γ by ``GridSearchCV`` with 10-fold
CV on R²; target: runtime z-score per application and node count. A random
forest gives the error bound: the standard deviation of its trees' predictions
(Fig. 11, "the predicted standard deviation including all the estimators"). The
combined model (Sec. V-D) reports SVR ± RF bound when ``|SVR − RF| ≤ bound``
and no prediction otherwise.

Reading of garbled passages: Table III lists five metrics × five statistics
("twenty-five total statistics"); the feature list of Sec. IV-A is taken in the
printed order 1-7. The percentage "90% of the predicted SVR values fall within
the RF estimation intervals" and "9.8% ... not within" are the coverage this
module reports (``coverage``), and "96.1%" is ``containment``: the share of
covered runs whose true z lies within SVR ± bound.
"""

from __future__ import annotations

import dataclasses
import math
import os
import warnings
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Any

import joblib
import numpy as np
import pandas as pd
import sklearn
from sklearn.ensemble import RandomForestRegressor
from sklearn.manifold import TSNE
from sklearn.metrics import r2_score
from sklearn.model_selection import GridSearchCV, KFold, cross_val_score, learning_curve
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import RobustScaler
from sklearn.svm import SVR
from threadpoolctl import threadpool_limits

from netnoise.atomic import atomic_path
from netnoise.counters import GAUGES

NIC_ROLES = frozenset({"node_nic"})
NETWORK_ROLES = frozenset({"switch_port", "uplink", "core_port"})
# First counter present on a port is used.
STALL_COUNTERS = ("qdisc_overlimits", "xmit_wait_ticks")
PACKET_COUNTERS = ("tx_packets", "qdisc_packets")
BYTE_COUNTERS = ("tx_bytes", "qdisc_bytes")
DROP_COUNTERS = ("qdisc_drops", "tx_dropped")
STATS = ("mean", "var", "p75", "p95", "p99")

# Sec. IV-A, most important first (the order the paper's random forest gave).
FEATURES = (
    "net_to_nic_ratio",  # 1) ratio of average networktile flits to average proctile flits
    "injection_rate_mean",  # 2) average proctile flits per second
    "stall_ratio_p75",  # 3) 75th percentile of ratio of networktile stalls to flits
    "network_stalls_p95",  # 4) 95th percentile of networktile stalls
    "network_bytes_mean",  # 5) average networktile flits
    "network_stalls_mean",  # 6) average networktile stalls
    "nodes",  # 7) number of nodes
)
RUN_COLUMNS = ("application", "nodes", "runtime_s")

# Small on purpose: 6 combinations × 10 folds train in seconds on a few hundred
# runs (C = 100 with small γ is the slowest to converge). The paper does not
# print its grid; pass ``grid=`` for a finer one.
DEFAULT_GRID: dict[str, list[float]] = {
    "C": [1.0, 10.0, 100.0],
    "gamma": [0.03, 0.3],
    "epsilon": [0.1],
}
MODEL_FORMAT = "netnoise-variability/1"


# --------------------------------------------------------------------------- metrics


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
    if not nodes:
        raise ValueError("a run needs at least one node")
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


# --------------------------------------------------------------------------- features, target


def features(metrics_table: pd.DataFrame | Mapping[str, Any]) -> pd.DataFrame:
    """The seven features of Sec. IV-A, in the paper's order, one row per run."""
    table = pd.DataFrame([metrics_table]) if isinstance(metrics_table, Mapping) else metrics_table
    missing = [f for f in FEATURES if f not in table.columns]
    if missing:
        raise ValueError(f"metrics lack feature column(s): {', '.join(missing)}")
    return table.loc[:, list(FEATURES)].apply(pd.to_numeric, errors="coerce").astype(float)


def zscore_target(runs: pd.DataFrame) -> pd.Series:
    """Runtime z-score within each (application, node count): (t − mean) / std.

    Population std, as the paper's "removing the mean and scaling to unit
    variance" (StandardScaler) does; a group with one run or no spread gives NaN.
    """
    missing = [c for c in RUN_COLUMNS if c not in runs.columns]
    if missing:
        raise ValueError(f"runs lack column(s): {', '.join(missing)}")
    grouped = runs.groupby(["application", "nodes"], sort=False)["runtime_s"]
    mean = grouped.transform("mean")
    std = grouped.transform(lambda s: s.std(ddof=0))
    z = (runs["runtime_s"] - mean) / std.where(std > 0)
    return z.rename("z")


def dataset(table: pd.DataFrame) -> tuple[pd.DataFrame, pd.Series]:
    """Features and z-score target of the runs where both are defined."""
    X, y = features(table), zscore_target(table)
    ok = X.notna().all(axis=1) & y.notna()
    return X[ok], y[ok]


def rank_features(
    X: pd.DataFrame, y: Sequence[float], *, seed: int = 0, n_estimators: int = 200, n_jobs: int = 1
) -> pd.Series:
    """Random-forest impurity-reduction importance (Sec. IV-A), highest first."""
    forest = RandomForestRegressor(n_estimators=n_estimators, random_state=seed, n_jobs=n_jobs)
    forest.fit(X.to_numpy(float), np.asarray(y, float))
    importance = pd.Series(forest.feature_importances_, index=list(X.columns), name="importance")
    return importance.sort_values(ascending=False, kind="stable")


# --------------------------------------------------------------------------- SVR


def svr_pipeline(params: Mapping[str, float] | None = None) -> Pipeline:
    """RobustScaler (median, IQR) + SVR with an RBF kernel."""
    pipe = Pipeline([("scale", RobustScaler()), ("svr", SVR(kernel="rbf"))])
    if params:
        pipe.set_params(**{f"svr__{k}": v for k, v in params.items()})
    return pipe


def folds(cv: int, seed: int) -> KFold:
    return KFold(n_splits=cv, shuffle=True, random_state=seed)


def grid_search(
    X: pd.DataFrame,
    y: Sequence[float],
    *,
    grid: Mapping[str, Sequence[float]] | None = None,
    cv: int = 10,
    seed: int = 0,
    n_jobs: int = 1,
) -> tuple[dict[str, float], float]:
    """C, γ (and ε) of the SVR by GridSearchCV on R²; returns (params, best CV R²)."""
    grid = DEFAULT_GRID if grid is None else grid
    search = GridSearchCV(
        svr_pipeline(),
        {f"svr__{k}": list(v) for k, v in grid.items()},
        scoring="r2",
        cv=folds(cv, seed),
        n_jobs=n_jobs,
    )
    search.fit(X, np.asarray(y, float))
    params = {k.removeprefix("svr__"): float(v) for k, v in search.best_params_.items()}
    return params, float(search.best_score_)


def cv_r2(
    X: pd.DataFrame,
    y: Sequence[float],
    params: Mapping[str, float],
    *,
    cv: int = 10,
    seed: int = 0,
    n_jobs: int = 1,
) -> np.ndarray:
    """R² of each of the ``cv`` folds with fixed hyperparameters (paper: 0.91 for 10 folds)."""
    return cross_val_score(
        svr_pipeline(params),
        X,
        np.asarray(y, float),
        scoring="r2",
        cv=folds(cv, seed),
        n_jobs=n_jobs,
    )


def learning_curve_table(
    X: pd.DataFrame,
    y: Sequence[float],
    params: Mapping[str, float],
    *,
    train_sizes: Sequence[float] = (0.1, 0.25, 0.5, 0.75, 1.0),
    cv: int = 10,
    seed: int = 0,
    n_jobs: int = 1,
) -> pd.DataFrame:
    """Training and cross-validation R² against the number of training runs (Fig. 8)."""
    sizes, train, test = learning_curve(
        svr_pipeline(params),
        X,
        np.asarray(y, float),
        train_sizes=np.asarray(train_sizes),
        cv=folds(cv, seed),
        scoring="r2",
        shuffle=True,  # else the smallest subsets hold the first applications only
        random_state=seed,
        n_jobs=n_jobs,
    )
    return pd.DataFrame(
        {
            "n_train": sizes,
            "train_r2": train.mean(axis=1),
            "train_r2_std": train.std(axis=1),
            "cv_r2": test.mean(axis=1),
            "cv_r2_std": test.std(axis=1),
        }
    )


def _split(n: int, train_fraction: float, rng: np.random.Generator) -> tuple[np.ndarray, ...]:
    order = rng.permutation(n)
    cut = max(2, min(n - 2, round(train_fraction * n)))
    return np.sort(order[:cut]), np.sort(order[cut:])


def train_fraction_r2(
    X: pd.DataFrame,
    y: Sequence[float],
    params: Mapping[str, float],
    *,
    fractions: Sequence[float] = (0.75, 0.5, 0.25, 0.10),
    repeats: int = 5,
    seed: int = 0,
) -> pd.DataFrame:
    """Test R² when a fraction of the runs trains the model (Sec. V-A: 0.91/0.83/0.79/0.62).

    The paper reports one split per fraction; ``r2`` here is the mean over
    ``repeats`` seeded random splits (``r2_std`` their spread).
    """
    y = np.asarray(y, float)
    rows = []
    for fraction in fractions:
        rng = np.random.default_rng([seed, round(fraction * 1000)])
        scores = []
        for _ in range(repeats):
            train, test = _split(len(y), fraction, rng)
            model = svr_pipeline(params).fit(X.iloc[train], y[train])
            scores.append(r2_score(y[test], model.predict(X.iloc[test])))
        rows.append(
            {
                "train_fraction": fraction,
                "n_train": len(train),
                "n_test": len(test),
                "r2": float(np.mean(scores)),
                "r2_std": float(np.std(scores)),
            }
        )
    return pd.DataFrame(rows)


def predicted_vs_true(
    table: pd.DataFrame,
    params: Mapping[str, float],
    *,
    test_application: str | None = None,
    added: int = 0,
    train_fraction: float = 0.75,
    seed: int = 0,
) -> pd.DataFrame:
    """Predicted against true z of test runs (Fig. 7: random split; Fig. 9/10: one
    application held out, ``added`` of its runs moved into the training set).

    ``region`` is Fig. 7's shading: ``light`` (both below the mean), ``heavy``
    (both above) or ``mismatch``. ``attrs["r2"]`` holds the test R².
    """
    X, y = dataset(table)
    meta = table.loc[X.index]
    rng = np.random.default_rng([seed, added])
    if test_application is None:
        train_i, test_i = _split(len(y), train_fraction, rng)
        train, test = X.index[train_i], X.index[test_i]
    else:
        target = meta.index[meta["application"] == test_application]
        if len(target) == 0:
            raise ValueError(f"no usable runs of application {test_application!r}")
        if added >= len(target) - 1:
            raise ValueError(
                f"{test_application}: {len(target)} runs, cannot add {added} and still test"
            )
        moved = target[np.sort(rng.choice(len(target), size=added, replace=False))]
        test = target.difference(moved)
        train = meta.index[meta["application"] != test_application].union(moved)
    model = svr_pipeline(params).fit(X.loc[train], y.loc[train])
    pred = model.predict(X.loc[test])
    out = pd.DataFrame(
        {
            "application": meta.loc[test, "application"].to_numpy(),
            "nodes": meta.loc[test, "nodes"].to_numpy(),
            "runtime_s": meta.loc[test, "runtime_s"].to_numpy(),
            "z_true": y.loc[test].to_numpy(),
            "z_pred": pred,
        },
        index=test,
    )
    out["region"] = np.select(
        [(out.z_true < 0) & (out.z_pred < 0), (out.z_true > 0) & (out.z_pred > 0)],
        ["light", "heavy"],
        "mismatch",
    )
    out.attrs["r2"] = float(r2_score(out["z_true"], out["z_pred"]))
    out.attrs["n_train"] = len(train)
    return out


def leave_one_application_out(
    table: pd.DataFrame,
    params: Mapping[str, float],
    *,
    added: Sequence[int] = (0, 20, 40),
    applications: Sequence[str] | None = None,
    seed: int = 0,
) -> pd.DataFrame:
    """Table V: R² on an application left out of training, with 0/20/40 of its runs added."""
    apps = applications or sorted(table["application"].unique())
    rows = []
    for app in apps:
        for k in added:
            result = predicted_vs_true(table, params, test_application=app, added=k, seed=seed)
            rows.append(
                {
                    "application": app,
                    "added": k,
                    "n_train": result.attrs["n_train"],
                    "n_test": len(result),
                    "r2": result.attrs["r2"],
                }
            )
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------- forest, combined


def fit_forest(
    X: pd.DataFrame,
    y: Sequence[float],
    *,
    n_estimators: int = 100,
    seed: int = 0,
    n_jobs: int = 1,
) -> RandomForestRegressor:
    forest = RandomForestRegressor(n_estimators=n_estimators, random_state=seed, n_jobs=n_jobs)
    return forest.fit(X.to_numpy(float), np.asarray(y, float))


def forest_interval(forest: RandomForestRegressor, X: pd.DataFrame) -> tuple[np.ndarray, ...]:
    """Forest prediction and the spread (std) of its trees' predictions."""
    data = X.to_numpy(np.float32)
    per_tree = np.stack([tree.predict(data) for tree in forest.estimators_])
    return per_tree.mean(axis=0), per_tree.std(axis=0)


def combine(
    svr: np.ndarray, rf: np.ndarray, spread: np.ndarray, bound_scale: float = 1.0
) -> pd.DataFrame:
    """Sec. V-D: SVR ± RF bound where |SVR − RF| ≤ bound, else no prediction (NaN)."""
    bound = bound_scale * np.asarray(spread, float)
    accepted = np.abs(np.asarray(svr) - np.asarray(rf)) <= bound
    return pd.DataFrame(
        {
            "svr": svr,
            "rf": rf,
            "bound": bound,
            "accepted": accepted,
            "z": np.where(accepted, svr, np.nan),
        }
    )


def combined_evaluation(
    X: pd.DataFrame,
    y: Sequence[float],
    params: Mapping[str, float],
    *,
    cv: int = 10,
    seed: int = 0,
    n_estimators: int = 100,
    bound_scale: float = 1.0,
    n_jobs: int = 1,
) -> tuple[pd.DataFrame, dict[str, float]]:
    """Out-of-fold combined predictions of every run and their rates.

    ``coverage``: share of runs given a prediction (paper: 90.2%);
    ``containment``: share of those whose true z is within SVR ± bound (96.1%).
    """
    y = np.asarray(y, float)
    parts = []
    for train, test in folds(cv, seed).split(X):
        svr = svr_pipeline(params).fit(X.iloc[train], y[train])
        forest = fit_forest(
            X.iloc[train], y[train], n_estimators=n_estimators, seed=seed, n_jobs=n_jobs
        )
        rf, spread = forest_interval(forest, X.iloc[test])
        part = combine(svr.predict(X.iloc[test]), rf, spread, bound_scale)
        part.index = X.index[test]
        part["z_true"] = y[test]
        parts.append(part)
    table = pd.concat(parts).loc[X.index]
    return table, rates(table)


def rates(table: pd.DataFrame) -> dict[str, float]:
    """Coverage, containment and R² of the predictions given, from a combined table with z_true."""
    given = table[table["accepted"]]
    inside = (given["z_true"] - given["svr"]).abs() <= given["bound"]
    return {
        "n": len(table),
        "coverage": float(table["accepted"].mean()),
        "containment": float(inside.mean()) if len(given) else math.nan,
        "r2_given": float(r2_score(given["z_true"], given["svr"])) if len(given) > 1 else math.nan,
        "r2_svr": float(r2_score(table["z_true"], table["svr"])),
    }


def tsne_coordinates(
    X: pd.DataFrame,
    applications: Sequence[str],
    *,
    seed: int = 0,
    perplexity: float = 30.0,
    max_iter: int = 1000,
    n_jobs: int = 1,
) -> pd.DataFrame:
    """2-D t-SNE embedding of the robust-scaled feature space (Fig. 5)."""
    scaled = RobustScaler().fit_transform(X.to_numpy(float))
    perplexity = min(perplexity, (len(scaled) - 1) / 3)
    tsne = TSNE(
        n_components=2,
        perplexity=perplexity,
        init="pca",
        max_iter=max_iter,
        random_state=seed,
        n_jobs=n_jobs,
    )
    # The Barnes-Hut gradient runs OpenMP threads on every core regardless of
    # n_jobs; on a busy machine their spinning costs 10x. Hold them to n_jobs.
    with threadpool_limits(limits=n_jobs, user_api="openmp"):
        xy = tsne.fit_transform(scaled)
    return pd.DataFrame(
        {"x": xy[:, 0], "y": xy[:, 1], "application": list(applications)}, index=X.index
    )


# --------------------------------------------------------------------------- trained model


@dataclasses.dataclass
class VariabilityModel:
    """SVR + random forest trained on all runs, with the rates measured out of fold."""

    svr: Pipeline
    forest: RandomForestRegressor
    params: dict[str, float]
    bound_scale: float
    cv_r2: float  # mean k-fold R² of the SVR with ``params`` (the grid's best score)
    coverage: float
    containment: float
    # Out-of-fold svr, rf, bound, accepted, z, z_true of every training run (Fig. 11).
    evaluation: pd.DataFrame = dataclasses.field(default_factory=pd.DataFrame)
    features: tuple[str, ...] = FEATURES
    applications: dict[str, int] = dataclasses.field(default_factory=dict)
    seed: int = 0
    sklearn_version: str = sklearn.__version__

    def predict(self, X: pd.DataFrame) -> pd.DataFrame:
        svr = self.svr.predict(X.loc[:, list(self.features)])
        rf, spread = forest_interval(self.forest, X.loc[:, list(self.features)])
        out = combine(svr, rf, spread, self.bound_scale)
        out.index = X.index
        return out


def train(
    table: pd.DataFrame,
    *,
    grid: Mapping[str, Sequence[float]] | None = None,
    cv: int = 10,
    seed: int = 0,
    n_estimators: int = 100,
    bound_scale: float = 1.0,
    n_jobs: int = 1,
) -> VariabilityModel:
    """Grid search, then SVR and forest on all runs; coverage and containment out of fold.

    Runs whose features or z-score are undefined (a counter missing, a single
    run of its application and node count) are left out; ``applications``
    counts the runs used.
    """
    X, y = dataset(table)
    if len(y) < 2 * cv:
        raise ValueError(f"{len(y)} usable runs: too few for {cv}-fold cross-validation")
    # The grid's best score is the k-fold R² of the chosen parameters (same folds).
    params, best = grid_search(X, y, grid=grid, cv=cv, seed=seed, n_jobs=n_jobs)
    evaluation, oof = combined_evaluation(
        X,
        y,
        params,
        cv=cv,
        seed=seed,
        n_estimators=n_estimators,
        bound_scale=bound_scale,
        n_jobs=n_jobs,
    )
    apps = table.loc[X.index, "application"].value_counts().sort_index()
    return VariabilityModel(
        svr=svr_pipeline(params).fit(X, y.to_numpy()),
        forest=fit_forest(X, y, n_estimators=n_estimators, seed=seed, n_jobs=n_jobs),
        params=params,
        bound_scale=bound_scale,
        cv_r2=best,
        coverage=oof["coverage"],
        containment=oof["containment"],
        evaluation=evaluation,
        applications={str(k): int(v) for k, v in apps.items()},
        seed=seed,
    )


def verdict(z: float, bound: float) -> str:
    """Run conditions read from z ± bound (Sec. VI): the interval's side of 0."""
    if z - bound > 0:
        return "congested"
    if z + bound < 0:
        return "favourable"
    return "typical"


def estimate(model: VariabilityModel, run_metrics: Mapping[str, Any]) -> dict[str, Any]:
    """Variability estimate of one run: ``z`` ± ``bound``, or ``z = None`` and ``reason``."""
    X = features(run_metrics)
    out: dict[str, Any] = {
        "z": None,
        "bound": None,
        "verdict": None,
        "svr": None,
        "rf": None,
        "rf_bound": None,
        "reason": None,
        "coverage": model.coverage,
        "containment": model.containment,
    }
    bad = [f for f in model.features if not np.isfinite(X.iloc[0][f])]
    if bad:
        out["reason"] = f"feature(s) not measurable from these counters: {', '.join(bad)}"
        return out
    row = model.predict(X).iloc[0]
    out.update(svr=float(row["svr"]), rf=float(row["rf"]), rf_bound=float(row["bound"]))
    if not row["accepted"]:
        out["reason"] = (
            f"SVR prediction {row['svr']:+.2f} lies outside the random-forest interval "
            f"{row['rf']:+.2f} ± {row['bound']:.2f}: too little training data like this run"
        )
        return out
    out.update(z=float(row["svr"]), bound=float(row["bound"]))
    out["verdict"] = verdict(out["z"], out["bound"])
    return out


def save_model(path: str | os.PathLike[str], model: VariabilityModel) -> None:
    """Write the model atomically (joblib). Load only models you trust: it is a pickle."""
    with atomic_path(path) as tmp:
        joblib.dump({"format": MODEL_FORMAT, "model": model}, tmp)


def load_model(path: str | os.PathLike[str]) -> VariabilityModel:
    try:
        data = joblib.load(path)
    except FileNotFoundError:
        raise
    except Exception as err:
        raise ValueError(f"{path}: not a variability model ({err})") from err
    if not isinstance(data, dict) or data.get("format") != MODEL_FORMAT:
        raise ValueError(f"{path}: not a {MODEL_FORMAT} model file")
    return data["model"]


# --------------------------------------------------------------------------- use cases


def use_case_table(
    model: VariabilityModel,
    table: pd.DataFrame,
    applications: Sequence[str],
    *,
    nodes: int | None = None,
    predictions: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """Table VI: three runs per application with their variability estimates.

    Among the runs given an estimate: A has the runtime nearest the mean, B and
    C are the fastest and the slowest, swapped for every second application, so
    that (as MILC vs. MILC Reorder in the paper) run B of the second application
    is a slow one while run B of the first is a fast one.

    ``predictions`` (columns ``accepted``, ``z``, ``bound``, indexed as ``table``),
    e.g. the model's out-of-fold ``evaluation``, replace the model's own
    predictions: runs it was trained on are then judged as new runs.
    """
    z_true = zscore_target(table)
    rows = []
    for i, app in enumerate(applications):
        runs = table[table["application"] == app]
        if nodes is not None:
            runs = runs[runs["nodes"] == nodes]
        if predictions is None:
            X = features(runs)
            ok = X.notna().all(axis=1)
            pred = model.predict(X[ok])
        else:
            pred = predictions.loc[predictions.index.intersection(runs.index)]
        given = pred[pred["accepted"]]
        if len(given) < 3:
            raise ValueError(f"{app}: fewer than 3 runs with an estimate")
        t = runs.loc[given.index, "runtime_s"]
        fast, slow = t.idxmin(), t.idxmax()
        picks = {
            "A": (t - t.mean()).abs().idxmin(),
            "B": fast if i % 2 == 0 else slow,
            "C": slow if i % 2 == 0 else fast,
        }
        for label, idx in picks.items():
            z, bound = float(given.at[idx, "z"]), float(given.at[idx, "bound"])
            rows.append(
                {
                    "run": label,
                    "application": app,
                    "nodes": runs.at[idx, "nodes"],
                    "runtime_s": float(t[idx]),
                    "z_true": float(z_true[idx]),
                    "z": z,
                    "bound": bound,
                    "verdict": verdict(z, bound),
                }
            )
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------- synthetic data


def synthetic_table(
    *,
    runs_per_group: int = 40,
    applications: Mapping[str, Mapping[str, float]] | None = None,
    node_counts: Sequence[int] = (128, 256, 512),
    noise: float = 0.01,
    seed: int = 0,
) -> pd.DataFrame:
    """Runs with Table III metrics and runtimes whose z-score truth is known.

    Not data: for tests and demonstrations. Three latent conditions per run:
    congestion ``c`` (gamma), background traffic ``b`` and extreme events ``d``
    (uniform). Slowdown g = 0.6 c^1.5 + 1.5 sin(π b) + 0.5 d²; runtime =
    base × (1 + sens × g) × (1 + noise·N(0,1)). Informative features:
    ``stall_ratio_p75`` (from c, scaled by the application's ``stall_scale``),
    ``net_to_nic_ratio`` (b) and ``network_stalls_p95`` (d); ``injection_rate_mean``
    is an application constant with scatter; ``network_bytes_mean``,
    ``network_stalls_mean`` and ``nodes`` carry no information on z. Columns
    ``c``, ``b``, ``d``, ``g`` hold the truth.
    """
    apps = applications or {
        "alpha": {"base": 560.0, "sens": 0.15, "rate": 2.0e8, "stall_scale": 1.0},
        "beta": {"base": 1500.0, "sens": 0.08, "rate": 6.0e7, "stall_scale": 1.0},
        "gamma": {"base": 430.0, "sens": 0.04, "rate": 1.2e8, "stall_scale": 1.0},
        "delta": {"base": 680.0, "sens": 0.10, "rate": 3.0e8, "stall_scale": 1.0},
        "odd": {"base": 720.0, "sens": 0.06, "rate": 9.0e8, "stall_scale": 3.0},
    }
    rng = np.random.default_rng(seed)
    parts = []
    for app, p in apps.items():
        for nodes in node_counts:
            n = runs_per_group
            c = rng.gamma(2.0, 0.5, n)
            b = rng.uniform(0.0, 1.0, n)
            d = rng.uniform(0.0, 1.5, n)
            g = 0.6 * c**1.5 + 1.5 * np.sin(np.pi * b) + 0.5 * d**2
            runtime = p["base"] * (1 + p["sens"] * g) * (1 + noise * rng.standard_normal(n))
            jitter = 1 + 0.02 * rng.standard_normal((3, n))
            parts.append(
                pd.DataFrame(
                    {
                        "application": app,
                        "nodes": nodes,
                        "runtime_s": runtime,
                        "stall_ratio_p75": p["stall_scale"] * (0.02 + 0.05 * c) * jitter[0],
                        "net_to_nic_ratio": (1.0 + 3.0 * b) * jitter[1],
                        "network_stalls_p95": 1.0e5 * (0.2 + d) * jitter[2],
                        "injection_rate_mean": p["rate"] * rng.lognormal(0.0, 0.05, n),
                        "network_bytes_mean": 1.0e10 * rng.lognormal(0.0, 0.5, n),
                        "network_stalls_mean": 3.0e4 * rng.lognormal(0.0, 0.5, n),
                        "c": c,
                        "b": b,
                        "d": d,
                        "g": g,
                    }
                )
            )
    return pd.concat(parts, ignore_index=True)
