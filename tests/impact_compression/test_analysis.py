"""Seed 000's analysis on small inputs whose answers are worked out by hand.

Degradation and slowdown are (runtime beside something) / (runtime alone) - 1
from mean runtimes (Sec. III-D, Table I): 10 s alone and 12 s paired is 20 %.
The queue utilisation inverts the Pollaczek-Khinchine formula (Sec. IV-B) with
µ = 1 / min(idle latency) and Var(S) the idle latencies' variance: the idle
samples 1, 1, 2, 2 µs give µ = 1 and Var(S) = 1/3, for which eq. 3 reduces to
ρ = (W - 1) / (W - 1/3): ρ = 3/7 at the idle mean W = 1.5, 0.6 at W = 2,
0.75 at W = 3.
"""

from __future__ import annotations

import math
import re

import numpy as np
import pandas as pd
import pytest

from netnoise.io import write_benchmark
from netnoise.studies.impact_compression import analysis as ic

IDLE = [1.0, 1.0, 2.0, 2.0]
# Two CompressionB configurations and two applications; each application's
# ImpactB samples equal one configuration's and lie far from the other's.
LATENCIES = {
    "idle": IDLE,
    "c1": [1.9, 2.0, 2.1],
    "c2": [2.9, 3.0, 3.1],
    "a": [1.9, 2.0, 2.1],
    "b": [2.9, 3.0, 3.1],
}


def impact_table(latencies: dict[str, list[float]]) -> pd.DataFrame:
    return pd.DataFrame(
        [{"component": c, "latency_us": v} for c, values in latencies.items() for v in values]
    )


def runtime_table(runs: list[tuple[str, str, str, float]]) -> pd.DataFrame:
    return pd.DataFrame(runs, columns=["application", "partner_kind", "partner", "runtime_s"])


# a: 10 s alone (mean of 9 and 11), b: 20 s alone.
RUNTIMES = runtime_table(
    [
        ("a", "none", "", 9.0),
        ("a", "none", "", 11.0),
        ("b", "none", "", 20.0),
        ("a", "compression", "c1", 11.0),  # +10 %
        ("a", "compression", "c2", 13.0),  # +30 %
        ("b", "compression", "c1", 21.0),  # +5 %
        ("b", "compression", "c2", 24.0),  # +20 %
        ("a", "application", "a", 11.5),  # +15 %
        ("a", "application", "b", 12.0),  # +25 % (mean of 12 and 13)
        ("a", "application", "b", 13.0),
        ("b", "application", "a", 21.0),  # +5 %
        ("b", "application", "b", 25.0),  # +25 %
    ]
)


def write_result(path, columns: list[str], rows: list[list[object]]) -> str:
    """A result file in the benchmarks' format."""
    meta = {
        "tool": path.stem,
        "version": "0",
        "git_sha": "0",
        "argv": path.stem,
        "seed": "0",
        "ranks": "4",
        "hosts": "n1,n2,n3,n4",
        "date": "2026-01-01T00:00:00Z",
    }
    write_benchmark(path, meta, pd.DataFrame(rows, columns=columns))
    return str(path)


def test_config_id_names_a_configuration_and_parses_back():
    assert ic.config_id(4, 10, 2.5e6) == "p4_m10_b2500000"
    assert ic.config_id(1, 1, 2499999.6) == "p1_m1_b2500000"  # B rounded to whole cycles
    assert ic.parse_config_id("p4_m10_b2500000") == {
        "partners": 4,
        "messages": 10,
        "sleep_cycles": 2500000.0,
    }
    for name in ["p1_m1_b25000", "p17_m10_b25000000"]:
        assert ic.config_id(**ic.parse_config_id(name)) == name
        assert re.fullmatch(ic.CONFIG_PATTERN, name)
    assert not re.fullmatch(ic.CONFIG_PATTERN, "halo3d")


def test_tidy_impact_halves_the_round_trip_and_tags_the_component(tmp_path):
    columns = ["pair", "iteration", "time_s", "size_bytes", "rtt_us"]
    files = {
        "idle": write_result(
            tmp_path / "idle.csv", columns, [[0, 0, 0.0, 1024, 2.0], [1, 0, 0.1, 1024, 4.0]]
        ),
        "p1_m1_b25000": write_result(tmp_path / "cb.csv", columns, [[0, 0, 0.5, 1024, 10.0]]),
    }
    impact = ic.tidy_impact(files)
    assert impact.columns.tolist() == ["component", "pair", "time_s", "latency_us"]
    assert impact["component"].tolist() == ["idle", "idle", "p1_m1_b25000"]
    assert impact["pair"].tolist() == [0, 1, 0]
    assert impact["time_s"].tolist() == [0.0, 0.1, 0.5]
    assert impact["latency_us"].tolist() == [1.0, 2.0, 5.0]


def test_tidy_runtimes_tags_each_run_and_leaves_untimed_communication_empty(tmp_path):
    proxy = write_result(
        tmp_path / "halo3d.csv", ["run", "runtime_s", "comm_s"], [[0, 1.5, 0.5], [1, 1.7, 0.6]]
    )
    # A real application through netnoise.external writes no comm_s.
    real = write_result(tmp_path / "lulesh.csv", ["run", "runtime_s"], [[0, 30.0]])
    runtimes = ic.tidy_runtimes(
        [("halo3d", "none", "", proxy), ("lulesh", "application", "halo3d", real)]
    )
    assert runtimes.columns.tolist() == [
        "application", "partner_kind", "partner", "run", "runtime_s", "comm_s",
    ]  # fmt: skip
    assert runtimes["application"].tolist() == ["halo3d", "halo3d", "lulesh"]
    assert runtimes["partner_kind"].tolist() == ["none", "none", "application"]
    assert runtimes["partner"].tolist() == ["", "", "halo3d"]
    assert runtimes["run"].tolist() == [0, 1, 0]
    assert runtimes["runtime_s"].tolist() == [1.5, 1.7, 30.0]
    assert runtimes["comm_s"].tolist()[:2] == [0.5, 0.6]
    assert math.isnan(runtimes["comm_s"].iloc[2])
    with pytest.raises(ValueError, match="no application runs"):
        ic.tidy_runtimes([])


def test_degradation_is_the_mean_runtime_beside_a_configuration_over_alone():
    table = ic.degradation(RUNTIMES)
    assert table.columns.tolist() == [
        "application", "config", "runtime_s", "runtime_alone_s", "degradation",
    ]  # fmt: skip
    rows = table.set_index(["application", "config"])
    assert rows["runtime_alone_s"].to_dict() == {
        ("a", "c1"): 10.0,
        ("a", "c2"): 10.0,
        ("b", "c1"): 20.0,
        ("b", "c2"): 20.0,
    }
    assert rows["degradation"].to_dict() == pytest.approx(
        {("a", "c1"): 0.10, ("a", "c2"): 0.30, ("b", "c1"): 0.05, ("b", "c2"): 0.20}
    )


def test_measured_slowdowns_of_every_pairing():
    table = ic.measured_slowdowns(RUNTIMES)
    assert table.columns.tolist() == [
        "application", "partner", "runtime_s", "runtime_alone_s", "measured",
    ]  # fmt: skip
    rows = table.set_index(["application", "partner"])
    assert rows.loc[("a", "b"), "runtime_s"] == 12.5
    assert rows["measured"].to_dict() == pytest.approx(
        {("a", "a"): 0.15, ("a", "b"): 0.25, ("b", "a"): 0.05, ("b", "b"): 0.25}
    )


def test_slowdowns_need_a_run_alone():
    no_baseline = RUNTIMES[RUNTIMES["partner_kind"] != "none"]
    with pytest.raises(ValueError, match="no runs of the applications alone"):
        ic.measured_slowdowns(no_baseline)
    b_never_alone = RUNTIMES[~((RUNTIMES["application"] == "b") & (RUNTIMES["partner"] == ""))]
    with pytest.raises(ValueError, match=r"no runs alone of \['b'\]"):
        ic.degradation(b_never_alone)


def test_utilization_table_of_each_component():
    impact = impact_table({"idle": IDLE, "x": [1.5, 2.5]})
    table = ic.utilization_table(impact).set_index("component")
    assert table.columns.tolist() == [
        "samples", "mean_latency_us", "std_latency_us", "min_latency_us", "utilization",
    ]  # fmt: skip
    assert table["samples"].to_dict() == {"idle": 4, "x": 2}
    assert table["mean_latency_us"].to_dict() == {"idle": 1.5, "x": 2.0}
    assert table.loc["idle", "std_latency_us"] == pytest.approx(math.sqrt(1 / 3))
    assert table.loc["x", "std_latency_us"] == pytest.approx(math.sqrt(0.5))
    assert table["min_latency_us"].to_dict() == {"idle": 1.0, "x": 1.5}
    assert table["utilization"].to_dict() == pytest.approx({"idle": 3 / 7, "x": 0.6})


def test_predictions_of_every_method_beside_the_measurements():
    table = ic.predictions(impact_table(LATENCIES), RUNTIMES)
    assert list(table["method"].unique()) == ["average", "average_stdev", "pdf", "queue"]
    # a looks like c1 (utilisation 0.6), b like c2 (0.75): every method predicts
    # A beside B from A's degradation beside B's look-alike configuration.
    predicted = {("a", "a"): 0.10, ("a", "b"): 0.30, ("b", "a"): 0.05, ("b", "b"): 0.20}
    measured = {("a", "a"): 0.15, ("a", "b"): 0.25, ("b", "a"): 0.05, ("b", "b"): 0.25}
    for method, rows in table.groupby("method"):
        rows = rows.set_index(["application", "partner"])
        assert rows["predicted"].to_dict() == pytest.approx(predicted), method
        assert rows["measured"].to_dict() == pytest.approx(measured), method
        error = {pair: measured[pair] - predicted[pair] for pair in measured}
        assert rows["error"].to_dict() == pytest.approx(error), method
        if method == "queue":
            assert rows["partner_utilization"].to_dict() == pytest.approx(
                {("a", "a"): 0.6, ("a", "b"): 0.75, ("b", "a"): 0.6, ("b", "b"): 0.75}
            )
        else:
            assert rows["config"].to_dict() == {
                ("a", "a"): "c1",
                ("a", "b"): "c2",
                ("b", "a"): "c1",
                ("b", "b"): "c2",
            }, method


def test_error_summary_per_method_in_slowdown_points():
    errors = {"average": [-0.05, 0.05, 0.0, 0.05], "queue": [0.3, -0.15, 0.05, 0.0]}
    table = pd.DataFrame([{"method": m, "error": e} for m, es in errors.items() for e in es])
    summary = ic.error_summary(table).set_index("method")
    assert summary["label"].to_dict() == {"average": "AverageLT", "queue": "Queue model"}
    assert summary["pairings"].to_dict() == {"average": 4, "queue": 4}
    assert summary["mean_abs_error"].to_dict() == pytest.approx(
        {"average": 0.15 / 4, "queue": 0.5 / 4}
    )
    assert summary["within_10pct"].to_dict() == {"average": 1.0, "queue": 0.5}
    assert summary["within_20pct"].to_dict() == {"average": 1.0, "queue": 0.75}
    # Quartiles interpolate linearly between the sorted errors -0.05, 0, 0.05, 0.05.
    quartiles = summary.loc["average", ["min", "q1", "median", "q3", "max"]]
    assert quartiles.tolist() == pytest.approx([-0.05, -0.0125, 0.025, 0.05, 0.05])
    assert summary.loc["queue", ["min", "max"]].tolist() == pytest.approx([-0.15, 0.3])


def test_slowdown_matrix_in_percent_rows_and_columns_sorted():
    measured = pd.DataFrame(
        {
            "application": ["b", "a", "b", "a"],
            "partner": ["b", "b", "a", "a"],
            "measured": [0.25, 0.25, 0.05, 0.15],
        }
    )
    matrix = ic.slowdown_matrix(measured)
    assert matrix.index.tolist() == ["a", "b"]
    assert matrix.columns.tolist() == ["a", "b"]
    assert matrix.to_numpy() == pytest.approx(np.array([[15.0, 25.0], [5.0, 25.0]]))


def test_fit_lines_of_degradation_against_utilization():
    utilization = pd.DataFrame({"component": ["c1", "c2", "c3"], "utilization": [0.2, 0.5, 0.8]})
    degradation = pd.DataFrame(
        {
            "application": ["a", "a", "a", "b"],
            "config": ["c1", "c2", "c3", "c2"],
            "degradation": [0.2, 0.35, 0.5, 0.07],  # a: 0.1 + 0.5 u
        }
    )
    lines = ic.fit_lines(degradation, utilization).set_index("application")
    assert lines.loc["a", "slope"] == pytest.approx(0.5)
    assert lines.loc["a", "intercept"] == pytest.approx(0.1)
    # One point fixes no slope: the line is flat at its degradation.
    assert math.isnan(lines.loc["b", "slope"])
    assert lines.loc["b", "intercept"] == pytest.approx(0.07)
