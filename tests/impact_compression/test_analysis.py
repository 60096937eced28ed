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

import json
import math
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from netnoise import provenance
from netnoise.io import write_benchmark
from netnoise.studies.impact_compression import analysis as ic
from netnoise.studies.impact_compression import claims_table, lookup

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


def slowdown_table(measured: dict[tuple[str, str], float]) -> pd.DataFrame:
    """Measured slowdowns, a row for each (application, partner) pairing in turn."""
    rows = [(application, partner, value) for (application, partner), value in measured.items()]
    return pd.DataFrame(rows, columns=["application", "partner", "measured"])


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


def write_sidecar(result: str, command: list[str], corun: list[list[str]] | None, saturated=False):
    """The provenance fields the tidy step reads: this job's command, the co-run's
    jobs (background ones, then the measured one) and the CPU record."""
    record = {
        "schema": provenance.SCHEMA,
        "command": command,
        "corun": None if corun is None else [{"name": c[0], "command": c} for c in corun],
        "cpu": {"saturated": saturated, "mean_runnable_tasks": 1.0},
    }
    Path(f"{result}.prov.json").write_text(json.dumps(record))


IMPACTB, APP, COMPRESSIONB = ["impactb", "--iterations", "800"], ["halo3d"], ["compressionb"]


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
        "halo3d": write_result(tmp_path / "app.csv", columns, [[0, 0, 0.2, 1024, 8.0]]),
    }
    # Alone, and the measured (last) job of its co-run beside a loop: every sample timed.
    write_sidecar(files["idle"], IMPACTB, None)
    write_sidecar(files["p1_m1_b25000"], IMPACTB, [COMPRESSIONB, IMPACTB], saturated=True)
    write_sidecar(files["halo3d"], IMPACTB, [APP, IMPACTB])
    impact = ic.tidy_impact(files)
    assert impact.columns.tolist() == [
        "component", "pair", "time_s", "latency_us", "cpu_saturated",
    ]  # fmt: skip
    assert impact["component"].tolist() == ["idle", "idle", "p1_m1_b25000", "halo3d"]
    assert impact["pair"].tolist() == [0, 1, 0, 0]
    assert impact["time_s"].tolist() == [0.0, 0.1, 0.5, 0.2]
    assert impact["latency_us"].tolist() == [1.0, 2.0, 5.0, 4.0]
    assert impact["cpu_saturated"].tolist() == [False, False, True, False]


def test_tidy_impact_refuses_impactb_run_as_a_background_job(tmp_path):
    """ImpactB looping beside a measured application also samples that application's
    launch and teardown; its clock does not say when the timed region was."""
    columns = ["pair", "iteration", "time_s", "size_bytes", "rtt_us"]
    idle = write_result(tmp_path / "idle.csv", columns, [[0, 0, 0.0, 1024, 2.0]])
    app = write_result(tmp_path / "app.csv", columns, [[0, 0, 0.0, 1024, 9.0]])
    write_sidecar(idle, IMPACTB, None)
    write_sidecar(app, ["impactb", "--iterations", "0"], [["impactb", "--iterations", "0"], APP])
    with pytest.raises(ValueError, match="ImpactB ran as a background job for halo3d"):
        ic.tidy_impact({"idle": idle, "halo3d": app})
    Path(f"{app}.prov.json").unlink()
    with pytest.raises(ValueError, match=r"app\.csv: no provenance sidecar app\.csv\.prov\.json"):
        ic.tidy_impact({"idle": idle, "halo3d": app})


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
        "application", "partner_kind", "partner", "run", "runtime_s", "comm_s", "cpu_saturated",
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


def ratio_rows(table: pd.DataFrame, beside: str, ratio: str) -> pd.DataFrame:
    """The rows of a table of mean runtimes beside a ``beside`` over those alone, by
    application and ``beside``, once its columns are checked."""
    assert table.columns.tolist() == [
        "application", beside, "runs", "runtime_s", "runtime_alone_s", ratio,
        f"{ratio}_ci_low", f"{ratio}_ci_high",
    ]  # fmt: skip
    return table.set_index(["application", beside])


def test_degradation_is_the_mean_runtime_beside_a_configuration_over_alone():
    table = ic.degradation(RUNTIMES)
    rows = ratio_rows(table, "config", "degradation")
    assert rows["runtime_alone_s"].to_dict() == {
        ("a", "c1"): 10.0,
        ("a", "c2"): 10.0,
        ("b", "c1"): 20.0,
        ("b", "c2"): 20.0,
    }
    assert rows["degradation"].to_dict() == pytest.approx(
        {("a", "c1"): 0.10, ("a", "c2"): 0.30, ("b", "c1"): 0.05, ("b", "c2"): 0.20}
    )
    # One run beside each configuration has no spread to resample: no interval.
    assert table[["degradation_ci_low", "degradation_ci_high"]].isna().all().all()


def test_measured_slowdowns_of_every_pairing():
    table = ic.measured_slowdowns(RUNTIMES)
    # No CPU-only control was measured.
    assert table[["cpu_control", "p_vs_cpu"]].isna().all().all()
    rows = ratio_rows(table.drop(columns=["cpu_control", "p_vs_cpu"]), "partner", "measured")
    assert rows.loc[("a", "b"), "runtime_s"] == 12.5
    assert rows.loc[("a", "b"), "runs"] == 2
    # a beside b: runs of 12 and 13 s, alone 9 and 11 s. Resampled means are 12, 12.5
    # or 13 s beside and 9, 10 or 11 s alone, the extremes each with probability
    # 1/4, so the extreme ratios (1/16 each) are the interval's ends.
    interval = rows.loc[("a", "b"), ["measured_ci_low", "measured_ci_high"]]
    assert interval.tolist() == pytest.approx([12 / 11 - 1, 13 / 9 - 1])
    assert rows.loc[("a", "a"), ["measured_ci_low", "measured_ci_high"]].isna().all()
    assert rows["measured"].to_dict() == pytest.approx(
        {("a", "a"): 0.15, ("a", "b"): 0.25, ("b", "a"): 0.05, ("b", "b"): 0.25}
    )


def test_each_pairing_beside_its_applications_cpu_only_control():
    controlled = pd.concat(
        [RUNTIMES, runtime_table([("a", "cpu", "cpuhog", 10.0), ("a", "cpu", "cpuhog", 10.4)])]
    )
    rows = ic.measured_slowdowns(controlled).set_index(["application", "partner"])
    # a beside its control: 10.2 s against 10 s alone.
    assert rows.loc["a", "cpu_control"].tolist() == pytest.approx([0.02, 0.02])
    # One-sided Mann-Whitney, exact: beside b (12, 13 s) both runs are slower than
    # both control runs, 1 of the 6 orderings of two against two; beside a (11.5 s)
    # its one run is slower than both, 1 of 3.
    assert rows.loc[("a", "b"), "p_vs_cpu"] == pytest.approx(1 / 6)
    assert rows.loc[("a", "a"), "p_vs_cpu"] == pytest.approx(1 / 3)
    assert rows.loc["b", ["cpu_control", "p_vs_cpu"]].isna().all().all()
    # The control is no pairing of its own.
    assert set(rows.index.get_level_values("partner")) == {"a", "b"}


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
        "utilization_ci_low", "utilization_ci_high", "offered_load",
    ]  # fmt: skip
    assert table["offered_load"].isna().all()  # no grid swept by offered load
    assert table["samples"].to_dict() == {"idle": 4, "x": 2}
    assert table["mean_latency_us"].to_dict() == {"idle": 1.5, "x": 2.0}
    assert table.loc["idle", "std_latency_us"] == pytest.approx(math.sqrt(1 / 3))
    assert table.loc["x", "std_latency_us"] == pytest.approx(math.sqrt(0.5))
    assert table["min_latency_us"].to_dict() == {"idle": 1.0, "x": 1.5}
    assert table["utilization"].to_dict() == pytest.approx({"idle": 3 / 7, "x": 0.6})
    for component, row in table.iterrows():
        assert row["utilization_ci_low"] <= row["utilization"] <= row["utilization_ci_high"]
        assert row["utilization_ci_low"] < row["utilization_ci_high"], component


GRID = {"size": 40960, "cycle_hz": 2.6e9, "offered_loads": [0.2, 2.0], "link_mbit": None}


def test_offered_load_of_a_configuration_inverts_its_sleep():
    # One 40 KiB message, then 32.768 ms of sleep (85,196,800 cycles at 2.6 GHz):
    # 327,680 bits per 32.768 ms is 10 Mbit/s, a fifth of a 50 Mbit/s link.
    assert ic.offered_load("p1_m1_b85196800", GRID, 50) == pytest.approx(0.2)
    # Four messages per partner in a tenth of that sleep: 40 times the load.
    assert ic.offered_load("p3_m4_b8519680", GRID, 50) == pytest.approx(8.0)
    impact = impact_table({"idle": IDLE, "p1_m1_b85196800": [1.5, 2.5], "a": [2.0]})
    table = ic.utilization_table(impact, GRID, 50).set_index("component")
    assert table.loc["p1_m1_b85196800", "offered_load"] == pytest.approx(0.2)
    assert table[["offered_load"]].drop("p1_m1_b85196800").isna().all().all()


def test_predictions_of_every_method_beside_the_measurements():
    table = ic.predictions(impact_table(LATENCIES), RUNTIMES)
    assert list(table["method"].unique()) == [
        "average", "average_stdev", "pdf", "queue", "zero", "partner_mean",
    ]  # fmt: skip
    # a looks like c1 (utilisation 0.6), b like c2 (0.75): every method predicts
    # A beside B from A's degradation beside B's look-alike configuration (the
    # monotone p_A through (0, 0) passes through both points of each application).
    model = {("a", "a"): 0.10, ("a", "b"): 0.30, ("b", "a"): 0.05, ("b", "b"): 0.20}
    measured = {("a", "a"): 0.15, ("a", "b"): 0.25, ("b", "a"): 0.05, ("b", "b"): 0.25}
    # A's mean slowdown beside its other partner, never the one it predicts.
    partner_mean = {("a", "a"): 0.25, ("a", "b"): 0.15, ("b", "a"): 0.25, ("b", "b"): 0.05}
    expected = {m: model for m in ("average", "average_stdev", "pdf", "queue")}
    expected |= {"zero": dict.fromkeys(model, 0.0), "partner_mean": partner_mean}
    for method, rows in table.groupby("method"):
        rows = rows.set_index(["application", "partner"])
        predicted = expected[method]
        assert rows["predicted"].to_dict() == pytest.approx(predicted), method
        assert rows["measured"].to_dict() == pytest.approx(measured), method
        error = {pair: measured[pair] - predicted[pair] for pair in measured}
        assert rows["error"].to_dict() == pytest.approx(error), method
        assert rows.loc[("a", "b"), "measured_ci_low"] == pytest.approx(12 / 11 - 1)
        if method == "queue":
            assert rows["partner_utilization"].to_dict() == pytest.approx(
                {("a", "a"): 0.6, ("a", "b"): 0.75, ("b", "a"): 0.6, ("b", "b"): 0.75}
            )
        elif method in lookup.METHODS:
            assert rows["config"].to_dict() == {
                ("a", "a"): "c1",
                ("a", "b"): "c2",
                ("b", "a"): "c1",
                ("b", "b"): "c2",
            }, method


def test_baselines_predict_zero_and_the_leave_one_out_mean():
    measured = slowdown_table({("a", "a"): 0.1, ("a", "b"): 0.2, ("a", "c"): 0.6, ("b", "a"): 0.3})
    table = ic.baseline_predictions(measured)
    assert table[table["method"] == "zero"]["predicted"].tolist() == [0.0] * 4
    means = table[table["method"] == "partner_mean"].set_index(["application", "partner"])
    means = means["predicted"]
    assert means[("a", "a")] == pytest.approx(0.4)  # (0.2 + 0.6) / 2
    assert means[("a", "b")] == pytest.approx(0.35)
    assert means[("a", "c")] == pytest.approx(0.15)
    assert math.isnan(means[("b", "a")])  # b has no other partner to learn from


def test_error_summary_per_method_in_slowdown_points():
    measured = [0.1, 0.2, 0.3, 0.4]
    errors = {
        "average": [-0.05, 0.05, 0.0, 0.05],
        "queue": [0.3, -0.15, 0.05, 0.0],
        "zero": measured,
        "partner_mean": [0.05, -0.05, 0.25, None],  # the last pairing: no other partner
    }
    table = pd.DataFrame(
        [
            {"method": m, "measured": v, "error": e, "predicted": None if e is None else v - e}
            for m, es in errors.items()
            for v, e in zip(measured, es, strict=True)
        ]
    )
    published = pd.DataFrame(
        [
            {"method": "queue", "quantity": "within_10pct", "relation": ">", "value": 0.75},
            {"method": "zero", "quantity": "within_10pct", "relation": "=", "value": 5 / 6},
        ]
    )
    summary = ic.error_summary(table, published).set_index("method")
    assert summary.index.tolist() == ["average", "queue", "zero", "partner_mean"]  # METHODS order
    assert summary["label"].to_dict() == {
        "average": "AverageLT",
        "queue": "Queue model",
        "zero": "Predict 0",
        "partner_mean": "A's mean (leave-one-out)",
    }
    assert summary["kind"].tolist() == ["model", "model", "baseline", "baseline"]
    assert summary["pairings"].to_dict() == {"average": 4, "queue": 4, "zero": 4, "partner_mean": 3}
    assert summary["mean_abs_error"].to_dict() == pytest.approx(
        {"average": 0.15 / 4, "queue": 0.5 / 4, "zero": 0.25, "partner_mean": 0.35 / 3}
    )
    assert summary["within_10pct"].tolist() == [1.0, 0.5, 0.0, 2 / 3]  # 0.1 is not < 0.1
    assert summary["within_20pct"].tolist() == [1.0, 0.75, 0.25, 2 / 3]
    # Predicted 0.15, 0.15, 0.3, 0.35 (ranks 1.5, 1.5, 3, 4) against ranks 1-4: 3/sqrt(10);
    # the queue model swaps the middle two: 1 - 6 * 2 / (4 * 15) = 0.8; a constant
    # prediction has no rank correlation.
    assert summary.loc["average", "spearman"] == pytest.approx(3 / math.sqrt(10))
    assert summary.loc["queue", "spearman"] == pytest.approx(0.8)
    assert math.isnan(summary.loc["zero", "spearman"])
    # Quartiles interpolate linearly between the sorted errors -0.05, 0, 0.05, 0.05.
    quartiles = summary.loc["average", ["min", "q1", "median", "q3", "max"]]
    assert quartiles.tolist() == pytest.approx([-0.05, -0.0125, 0.025, 0.05, 0.05])
    assert summary.loc["queue", ["min", "max"]].tolist() == pytest.approx([-0.15, 0.3])
    # The paper's values beside ours: a bound it states, a score computed on its Table I.
    assert summary["paper_within_10pct"].to_dict() == {
        "average": "",
        "queue": "> 0.75",
        "zero": "0.833",
        "partner_mean": "",
    }
    assert "paper_within_10pct" not in ic.error_summary(table).columns


def test_mae_intervals_pair_the_methods_on_each_replicate():
    # No spread in any set of samples: every replicate is the measurement itself,
    # so each interval closes on its point and the queue model's lead is the same
    # sign in every replicate (a tie counts as not better).
    constant = {c: [values[1]] * 3 for c, values in LATENCIES.items()}
    constant["idle"] = [1.0] * 4
    runs = RUNTIMES.assign(runtime_s=RUNTIMES.groupby(ic.RUN_KEYS)["runtime_s"].transform("mean"))
    intervals = ic.mae_intervals(impact_table(constant), runs, count=20).set_index("method")
    mae = ic.error_summary(ic.predictions(impact_table(constant), runs)).set_index("method")[
        "mean_abs_error"
    ]
    assert set(intervals.index) == set(mae.index)
    assert intervals["mean_abs_error_ci_low"].to_dict() == pytest.approx(mae.to_dict())
    assert intervals["mean_abs_error_ci_high"].to_dict() == pytest.approx(mae.to_dict())
    others = intervals.drop("queue")
    lead = (mae["queue"] - mae.drop("queue")).to_dict()
    assert others["queue_mae_minus"].to_dict() == pytest.approx(lead)
    assert others["queue_mae_minus_ci_low"].to_dict() == pytest.approx(lead)
    assert others["queue_mae_minus_ci_high"].to_dict() == pytest.approx(lead)
    assert others["queue_not_better"].to_dict() == {m: float(v >= -1e-12) for m, v in lead.items()}
    assert intervals.loc["queue", ["queue_mae_minus", "queue_not_better"]].isna().all()


def test_mae_intervals_widen_with_the_spread_of_runs_and_latencies():
    intervals = ic.mae_intervals(impact_table(LATENCIES), RUNTIMES, count=200)
    intervals = intervals.set_index("method")
    mae = ic.error_summary(ic.predictions(impact_table(LATENCIES), RUNTIMES))
    mae = mae.set_index("method")["mean_abs_error"]
    # a's runs alone (9 and 11 s) move every slowdown of a, predicted or measured.
    assert (intervals["mean_abs_error_ci_high"] > intervals["mean_abs_error_ci_low"]).all()
    # "Predict 0" misses by the whole slowdown (mean 17.5 points), the models by
    # a few points: no replicate reverses that.
    assert intervals.loc["zero", "mean_abs_error_ci_low"] > mae["queue"]
    assert intervals.loc["zero", "queue_mae_minus_ci_high"] < 0
    assert intervals.loc["zero", "queue_not_better"] == 0.0
    summary = ic.error_summary(
        ic.predictions(impact_table(LATENCIES), RUNTIMES), intervals=intervals.reset_index()
    ).set_index("method")
    assert summary.loc["zero", "queue_not_better"] == 0.0
    assert summary["mean_abs_error_ci_low"].to_dict() == pytest.approx(
        intervals["mean_abs_error_ci_low"].to_dict()
    )


def test_relativity_violations_order_every_pair_of_partners_by_utilisation():
    # No spread: every interval closes on its point. Idle 1 µs (µ = 1, Var(S) = 0):
    # a at 2 µs is 2/3 utilised, the configuration c1 at 2.5 µs 0.75, b at 3 µs 0.8.
    latencies = {"idle": [1.0] * 4, "a": [2.0] * 3, "b": [3.0] * 3, "c1": [2.5] * 3}
    runs = runtime_table(
        [
            ("a", "none", "", 10.0),
            ("a", "application", "a", 11.0),  # +10 %
            ("a", "application", "b", 10.5),  # +5 %: less beside the busier b
            ("a", "compression", "c1", 10.8),  # +8 %
            ("b", "none", "", 20.0),
            ("b", "application", "a", 21.0),  # +5 %
            ("b", "application", "b", 23.0),  # +15 %
            ("b", "compression", "c1", 22.0),  # +10 %
        ]
    )
    table = ic.relativity_violations(impact_table(latencies), runs, count=10)
    assert table[["application", "higher", "lower", "verdict"]].values.tolist() == [
        ["a", "b", "a", "violated"],
        ["b", "b", "a", "holds"],
        ["mean", "b", "a", "holds"],
        ["a", "b", "c1", "violated"],
        ["b", "b", "c1", "holds"],
        ["mean", "b", "c1", "holds"],
        ["a", "c1", "a", "violated"],
        ["b", "c1", "a", "holds"],
        ["mean", "c1", "a", "holds"],
    ]
    assert table["slowdown_minus"].tolist() == pytest.approx(
        [-0.05, 0.10, 0.025, -0.03, 0.05, 0.01, -0.02, 0.05, 0.015]
    )
    assert table["slowdown_minus_ci_low"].tolist() == pytest.approx(
        table["slowdown_minus"].tolist()
    )
    assert table["utilization_minus"].iloc[[0, 3, 6]].tolist() == pytest.approx(
        [0.8 - 2 / 3, 0.05, 0.75 - 2 / 3]
    )
    claims = pd.DataFrame(claims_table._relativity_claims(table)).set_index("scope")
    assert claims["value"].to_dict() == {"applications": 3, "mean": 0}
    assert claims.loc["applications", "detail"] == (
        "of 6 partner pairs whose utilisations differ beyond doubt (paired bootstrap);"
        " 3 hold beyond doubt; largest: a beside b minus beside a: utilisation +13.3"
        " points (+13.3 to +13.3), slowdown -5.00 points (-5.00 to -5.00)"
    )
    assert claims.loc["mean", "detail"] == (
        "of 3 partner pairs whose utilisations differ beyond doubt (paired bootstrap);"
        " 3 hold beyond doubt"
    )


def test_relativity_violations_pair_the_idle_switch_and_the_runs_alone():
    # The idle samples' spread moves every utilisation together: a's and b's own
    # intervals overlap (0.76-0.86 and 0.81-0.89), yet b is the busier one in
    # every replicate. a's runs alone (9 and 11 s, so a mean of 9, 10 or 11 s)
    # move both of its slowdowns together: beside a 12 s is +9 to +33 %, beside b
    # 13 s +18 to +44 %, yet their difference, 1 s over the mean alone, is
    # always positive.
    idle = [1.0, 1.0, 1.2, 1.5, 2.0, 3.0, 1.1, 1.3]
    latencies = {"idle": idle, "a": [4.0] * 3, "b": [5.0] * 3}
    runs = runtime_table(
        [
            ("a", "none", "", 9.0),
            ("a", "none", "", 11.0),
            ("a", "application", "a", 12.0),
            ("a", "application", "b", 13.0),
        ]
    )
    table = ic.relativity_violations(impact_table(latencies), runs, count=200)
    row = table.set_index("application").loc["a"]
    assert row["utilization_minus_ci_low"] > 0
    assert row["slowdown_minus"] == pytest.approx(0.1)
    assert row[["slowdown_minus_ci_low", "slowdown_minus_ci_high"]].tolist() == pytest.approx(
        [1 / 11, 1 / 9]
    )
    assert row["verdict"] == "holds"


def test_slowdown_matrix_in_percent_rows_and_columns_sorted():
    measured = slowdown_table(
        {("b", "b"): 0.25, ("a", "b"): 0.25, ("b", "a"): 0.05, ("a", "a"): 0.15}
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


REFERENCE = Path(__file__).resolve().parents[2] / "resources" / "reference" / "impact_compression"


def published() -> tuple[pd.DataFrame, pd.DataFrame]:
    table1 = pd.read_csv(REFERENCE / "table1.csv")
    return table1, ic.published_scores(table1, pd.read_csv(REFERENCE / "claims.csv"))


def test_published_scores_hold_the_claims_and_the_baselines_on_table_i():
    """On the paper's Table I (36 slowdowns summing to 242 %), predicting 0 errs by
    the slowdown itself: 6.72 points on average, 30 of 36 below 10 points (all but
    45, 11, 12, 25, 12, 14), 34 of 36 below 20."""
    table1, scores = published()
    computed = scores[scores["relation"] == "="].set_index(["method", "quantity"])["value"]
    assert computed[("zero", "mean_abs_error")] == pytest.approx(2.42 / 36)
    assert computed[("zero", "within_10pct")] == pytest.approx(30 / 36)
    assert computed[("zero", "within_20pct")] == pytest.approx(34 / 36)
    assert ("zero", "spearman") not in computed.index  # a constant has no rank correlation
    # FFTW beside itself: its other partners' mean (5 + 3 + 11 + 12 + 7) / 5 = 7.6 %.
    base = ic.baseline_predictions(table1.assign(measured=table1["slowdown_pct"] / 100))
    fftw = base[(base["method"] == "partner_mean") & (base["application"] == "FFTW")]
    assert fftw["predicted"].iloc[0] == pytest.approx(0.076)
    claims = scores[scores["relation"] != "="]
    assert len(claims) == 6 and set(claims["method"]) == {
        "queue",
        "average",
        "average_stdev",
        "pdf",
    }
    assert ic.paper_text(scores, "queue", "within_10pct", 100) == "> 75"
    assert ic.paper_text(scores, "zero", "mean_abs_error", 100) == "6.72"


def test_saturated_share_counts_result_files_and_knows_when_nothing_recorded_it():
    impact = pd.DataFrame(
        {"component": ["idle", "idle", "c1"], "cpu_saturated": [False] * 2 + [True]}
    )
    runtimes = pd.DataFrame(
        {
            "application": ["a", "a", "a"],
            "partner_kind": ["none", "none", "application"],
            "partner": ["", "", "a"],
            # Read back with keep_default_na=False, as the analysis step reads runtimes.
            "cpu_saturated": ["False", "False", ""],
        }
    )
    # Files: idle (no), c1 (yes), a alone (no); a beside a recorded nothing.
    assert ic.saturated_share(impact, runtimes) == pytest.approx(1 / 3)
    old = impact.drop(columns="cpu_saturated"), runtimes.drop(columns="cpu_saturated")
    assert math.isnan(ic.saturated_share(*old))


def test_claims_state_each_target_and_the_papers_value():
    table1, scores = published()
    slowdowns = slowdown_table(
        {("a", "a"): 0.05, ("a", "b"): 0.10, ("b", "a"): 0.20, ("b", "b"): 0.40}
    ).assign(
        measured_ci_low=[0.04, 0.075, 0.10, 0.372], measured_ci_high=[0.06, 0.129, 0.21, 0.428]
    )
    summary = pd.DataFrame(
        {
            "method": ["average", "queue", "zero"],
            "label": ["AverageLT", "Queue model", "Predict 0"],
            "mean_abs_error": [0.12, 0.05, 0.1875],
            "within_10pct": [0.5, 0.75, 0.5],
            "within_20pct": [0.75, 1.0, 0.5],
            "spearman": [0.4, 0.8, np.nan],
            "queue_mae_minus_ci_low": [-0.09, np.nan, -0.16],
            "queue_mae_minus_ci_high": [-0.05, np.nan, -0.12],
            "queue_not_better": [0.012, np.nan, 0.0],
        }
    )
    table = claims_table.claims(
        slowdowns,
        summary,
        scores,
        table1,
        utilization=pd.DataFrame(
            {
                "component": ["idle", "p1_m1_b100", "p1_m1_b10", "p1_m1_b1", "a", "b"],
                "utilization": [0.0, 0.2, 0.3, 0.9, 0.4, 0.5],
                "utilization_ci_low": [0.0, 0.1, 0.2, 0.8, 0.39, 0.3],
                "utilization_ci_high": [0.0, 0.3, 0.4, 1.0, 0.41, 0.55],
            }
        ),
        idle_far_out=(10, 400),
        discordant=(3, 66),
        relativity=pd.DataFrame(
            columns=["application", "utilization_minus_ci_low", "verdict", "slowdown_minus"]
        ),
        saturated=0.0,
    ).set_index(["claim", "scope"])
    # Half-widths 1, 2.9, 10, 2.8 points: three within ±3 points (median 2.85, max 10).
    assert table.loc[("pairings", "measured"), ["value", "meets", "paper"]].tolist() == [
        4, False, "36",
    ]  # fmt: skip
    assert table.loc[("pairings_ci_within_3pts", "measured"), "value"] == 3
    assert table.loc[("median_ci_half_width", "measured"), "value"] == pytest.approx(2.85)
    assert table.loc[("median_ci_half_width", "measured"), "meets"]
    assert table.loc[("max_ci_half_width", "measured"), "value"] == pytest.approx(10)
    assert table.loc[("mean_slowdown", "measured"), ["value", "paper"]].tolist() == [
        pytest.approx(18.75), "6.72",
    ]  # fmt: skip
    assert table.loc[("max_slowdown", "measured"), "paper"] == "45"
    within = table.loc[("within_10pct", "queue")]
    assert (within["value"], within["relation"], within["target"], within["meets"]) == (
        0.75, ">=", 0.75, True,
    )  # fmt: skip
    assert within["paper"] == "> 0.75"
    mae = table.loc[("mean_abs_error", "queue")]
    assert (mae["value"], mae["meets"], mae["paper"]) == (pytest.approx(5), True, "< 10")
    beats = table.xs("queue_mae_minus")
    assert beats["value"].to_dict() == pytest.approx({"average": -7, "zero": -13.75})
    assert beats["meets"].tolist() == [True, True]
    assert beats.loc["zero", "paper"] == "queue MAE < 10; Predict 0 MAE 6.72"
    assert beats.loc["average", "detail"] == (
        "queue model's MAE minus AverageLT's; 95 % interval -9.00 to -5.00;"
        " not lower in 1.2% of replicates"
    )
    assert table.loc[("p_a_discordant_pairs", "compression"), "detail"].startswith("of 66 pairs")
    assert table.loc[("cpu_saturated_share", "runs"), "meets"]
    # CompressionB at 20, 30, 90 %: the widest gap is 30 to 90; b's interval the loosest.
    assert table.loc[("utilization_min", "compression"), ["value", "paper"]].tolist() == [
        pytest.approx(20), "26 (Fig. 6)",
    ]  # fmt: skip
    assert table.loc[("utilization_max", "compression"), "value"] == pytest.approx(90)
    gap = table.loc[("utilization_widest_gap", "compression")]
    assert (gap["value"], gap["detail"]) == (pytest.approx(60), "between 30 and 90 %")
    half = table.loc[("utilization_ci_half_width", "applications")]
    assert half["value"] == pytest.approx(20)
    assert half["detail"].startswith("largest, b;")
    assert table.loc[("relativity_violations", "applications"), "value"] == 0
    assert table.loc[("relativity_violations", "mean"), "detail"].startswith("of 0 partner")
    assert table["meets"].isna().sum() == 13  # the rows stated without a target
