from __future__ import annotations

import json

import pandas as pd
import pytest

from netnoise import provenance
from netnoise.atomic import atomic_open, atomic_path, write_csv, write_json


def test_atomic_open_leaves_nothing_when_the_block_fails(tmp_path):
    target = tmp_path / "out" / "result.csv"
    with pytest.raises(RuntimeError), atomic_open(target) as fh:
        fh.write("partial")
        raise RuntimeError("killed mid-way")
    assert not target.exists()
    assert list(target.parent.iterdir()) == []


def test_atomic_path_replaces_only_on_success(tmp_path):
    target = tmp_path / "result.json"
    write_json(target, {"v": 1})
    with pytest.raises(ValueError), atomic_path(target) as tmp:
        tmp.write_text('{"v": 2')
        raise ValueError("bad")
    assert json.loads(target.read_text()) == {"v": 1}


def test_write_csv_round_trips(tmp_path):
    frame = pd.DataFrame({"a": [1, 2], "b": ["x", "y"]})
    write_csv(tmp_path / "t.csv", frame)
    assert pd.read_csv(tmp_path / "t.csv").equals(frame)


def test_sidecar_records_checksums_config_and_environment(tmp_path):
    result = tmp_path / "r.csv"
    result.write_text("x_us\n1\n")
    program = tmp_path / "prog"
    program.write_bytes(b"\x7fELF")
    path = provenance.write_sidecar(
        result,
        inputs={"program": program},
        config={"baseline": {"sizes": [8]}},
        platform={"kind": "localhost"},
        command=["mpirun", "-n", "2", "prog"],
        start="2026-01-01T00:00:00+00:00",
        end="2026-01-01T00:00:01+00:00",
        exit_status=0,
    )
    assert path == tmp_path / "r.csv.prov.json"
    record = provenance.read_sidecar(result)
    assert record["result"]["sha256"] == provenance.sha256(result)
    assert record["inputs"]["program"]["sha256"] == provenance.sha256(program)
    assert record["config"] == {"baseline": {"sizes": [8]}}
    assert record["exit_status"] == 0
    assert record["software"]["python"]
    assert record["software"]["packages"]["numpy"] == __import__("numpy").__version__
    assert set(record["git"]) == {"sha", "dirty"}


def test_sidecar_has_hwloc_topology_when_lstopo_exists():
    import shutil

    if shutil.which("lstopo") is None:
        pytest.skip("hwloc not installed")
    xml = provenance.hwloc_topology()
    assert xml is not None and "<topology" in xml


def test_read_sidecar_rejects_other_schemas(tmp_path):
    result = tmp_path / "r.csv"
    result.write_text("")
    provenance.sidecar_path(result).write_text('{"schema": "other"}')
    with pytest.raises(ValueError, match="expected netnoise-provenance-1"):
        provenance.read_sidecar(result)


def test_summary_table_has_one_row_per_result(tmp_path):
    for name, status in (("a.csv", 0), ("b.csv", 3)):
        result = tmp_path / name
        result.write_text("x_us\n1\n")
        provenance.write_sidecar(
            result,
            platform={"kind": "testbed", "nodes": [{"name": "n1"}, {"name": "n2"}]},
            start="2026-01-01T00:00:00+00:00",
            end="2026-01-01T00:00:02.500+00:00",
            exit_status=status,
        )
    table = provenance.summary_table(sorted(tmp_path.glob("*.prov.json")), root=tmp_path)
    assert table["result"].tolist() == ["a.csv", "b.csv"]
    assert table["exit_status"].tolist() == [0, 3]
    assert table["duration_s"].tolist() == [2.5, 2.5]
    assert (table["nodes"] == 2).all() and (table["platform"] == "testbed").all()
    assert table["result_sha256"].iloc[0] == provenance.sha256(tmp_path / "a.csv")[:16]


def test_cpu_summary_gives_the_busy_share_of_saturated_results_apart():
    pd = pytest.importorskip("pandas")
    table = pd.DataFrame(
        {
            "result": ["raw/a/1.csv", "raw/a/2.csv", "raw/a/3.csv", "raw/b/1.csv", "tables/t.csv"],
            "study": ["a", "a", "a", "b", "platform"],
            "exit_status": [0, 0, 0, 2, 0],
            "cpu_mean_runnable": [1.0, 3.0, 4.0, 0.5, None],
            "cpu_busy_share": [0.2, 0.5, 0.7, 0.1, None],
            "cpu_saturated": [False, True, True, None, None],
            "cpu_rejected_attempts": [0, 1, 0, 0, None],
        }
    )
    summary = provenance.cpu_summary(table).set_index("study")
    assert summary.index.tolist() == ["a", "b"]
    a, b = summary.loc["a"], summary.loc["b"]
    assert (a["results"], a["saturated"], a["rejected_attempts"]) == (3, 2, 1)
    assert a["saturated_share"] == pytest.approx(2 / 3)
    assert a["runnable_median"] == 3.0 and a["runnable_max"] == 4.0
    assert a["busy_median"] == pytest.approx(0.5)
    assert a["saturated_busy_median"] == pytest.approx(0.6)
    assert (b["saturated"], b["failures"], b["busy_median"]) == (0, 1, pytest.approx(0.1))
    assert pd.isna(b["saturated_busy_median"])


def test_results_in_simulated_time_have_a_cpu_record_that_does_not_apply():
    pd = pytest.importorskip("pandas")
    from netnoise.claims_summary import cpu_record

    table = pd.DataFrame(
        {
            "result": ["raw/a/1.csv", "raw/a/2.csv", "raw/s/1.csv", "raw/s/2.csv"],
            "study": ["a", "a", "s", "s"],
            "exit_status": [0, 0, 0, 0],
            "cpu_mean_runnable": [1.0, 3.0, None, None],
            "cpu_busy_share": [0.2, 0.5, None, None],
            "cpu_saturated": [False, True, None, None],
            "cpu_applicable": [True, True, False, False],
            "cpu_rejected_attempts": [0, 0, 0, 0],
        }
    )
    summary = provenance.cpu_summary(table).set_index("study")
    assert summary["results"].tolist() == [2, 2] and summary["simulated"].tolist() == [0, 2]
    assert cpu_record(summary.loc["s"]) == (
        "CPU record: not applicable, all 2 results in simulated time"
    )
    assert cpu_record(summary.loc["a"]) == (
        "CPU record: 1 of 2 measured results CPU-saturated, median 2 runnable tasks"
    )


def test_summary_table_names_the_testbeds_core_mode_and_no_mode_elsewhere(tmp_path):
    for name, platform in (
        ("testbed.csv", {"kind": "testbed", "cores": {"mode": "per_job", "measured": "0"}}),
        ("localhost.csv", {"kind": "localhost", "cores": 2}),
    ):
        result = tmp_path / name
        result.write_text("x_us\n1\n")
        provenance.write_sidecar(
            result,
            platform=platform,
            start="2026-01-01T00:00:00+00:00",
            end="2026-01-01T00:00:01+00:00",
            exit_status=0,
        )
    table = provenance.summary_table(sorted(tmp_path.glob("*.prov.json")), root=tmp_path)
    cores = table.set_index("result")["cores"]
    assert cores["testbed.csv"] == "per_job" and pd.isna(cores["localhost.csv"])
