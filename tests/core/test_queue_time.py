"""The queue-time tracer's answers and its errors (the tracer itself runs in
tests/core/test_testbed.py, which needs root)."""

from __future__ import annotations

import json

import pytest

from netnoise.testbed import queue_time
from netnoise.testbed.queue_time import QueueTime, QueueTimeError, parse_answer


def _printf(text: str) -> str:
    return json.dumps({"type": "printf", "data": f"{text}\n"})


def _map(name: str, values: dict[str, int]) -> str:
    return json.dumps({"type": "map", "data": {f"@{name}": values}})


def test_an_answer_names_each_qdisc_and_adds_the_qdiscs_of_one_interface():
    earlier = [_printf("snapshot nnqt7"), _map("qdisc_stall_ns", {"11": 1}), _printf("end nnqt7")]
    names = {"11": "up1", "12": "p03", "13": "up1"}
    answer = [
        _printf("snapshot nnqt8"),
        json.dumps({"type": "map", "data": {"@port": names}}),
        _map("qdisc_stall_ns", {"11": 2_000, "12": 5, "13": 1_000}),
        _map("qdisc_sojourn_ns", {"11": 9_000}),
        _printf("end nnqt8"),
    ]
    assert parse_answer(earlier + answer, "nnqt8") == {
        "qdisc_stall_ns": {"up1": 3_000, "p03": 5},
        "qdisc_sojourn_ns": {"up1": 9_000},
    }


def test_an_answer_before_any_queueing_reads_empty_maps():
    assert parse_answer([_printf("snapshot nnqt3"), _printf("end nnqt3")], "nnqt3") == {
        "qdisc_stall_ns": {},
        "qdisc_sojourn_ns": {},
    }


def test_a_total_of_an_unnamed_qdisc_is_an_error():
    lines = [_printf("snapshot nnqt5"), _map("qdisc_stall_ns", {"11": 1}), _printf("end nnqt5")]
    with pytest.raises(QueueTimeError, match="unnamed qdisc 11"):
        parse_answer(lines, "nnqt5")


def test_an_answer_cut_short_is_an_error():
    with pytest.raises(QueueTimeError, match="snapshot nnqt4 is incomplete"):
        parse_answer([_printf("snapshot nnqt4"), _map("qdisc_stall_ns", {"11": 1})], "nnqt4")


def test_a_missing_tracer_names_its_package(monkeypatch, tmp_path):
    monkeypatch.setattr(queue_time, "namespace_inode", lambda _name: 1)
    with pytest.raises(QueueTimeError, match="Debian package bpftrace"):
        QueueTime("fabric", bpftrace=str(tmp_path / "no-bpftrace"))


def test_an_unknown_namespace_is_named():
    with pytest.raises(QueueTimeError, match="network namespace nn-nowhere-fabric"):
        QueueTime("nn-nowhere-fabric")


def test_without_the_hosts_tracefs_the_tracer_mounts_its_own(tmp_path):
    launcher = queue_time.tracefs_launcher(tmp_path)
    assert launcher[:4] == ["unshare", "--mount", "--propagation", "private"]
    assert f"mount -t tracefs tracefs {tmp_path} && exec" in launcher[-1]
    (tmp_path / "events").mkdir()
    assert queue_time.tracefs_launcher(tmp_path) == []
