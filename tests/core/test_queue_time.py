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


def test_an_answer_gives_the_totals_printed_between_its_own_markers():
    earlier = [_printf("snapshot 7"), _map("qdisc_stall_ns", {"up1": 1}), _printf("end 7")]
    answer = [
        _printf("snapshot 8"),
        _map("qdisc_stall_ns", {"up1": 2_000, "p03": 5}),
        _map("qdisc_sojourn_ns", {"up1": 9_000}),
        _printf("end 8"),
    ]
    assert parse_answer(earlier + answer, 8) == {
        "qdisc_stall_ns": {"up1": 2_000, "p03": 5},
        "qdisc_sojourn_ns": {"up1": 9_000},
    }


def test_an_answer_before_any_queueing_reads_empty_maps():
    assert parse_answer([_printf("snapshot 3"), _printf("end 3")], 3) == {
        "qdisc_stall_ns": {},
        "qdisc_sojourn_ns": {},
    }


def test_an_answer_cut_short_is_an_error():
    with pytest.raises(QueueTimeError, match="snapshot 4 is incomplete"):
        parse_answer([_printf("snapshot 4"), _map("qdisc_stall_ns", {"up1": 1})], 4)


def test_a_missing_tracer_names_its_package(monkeypatch, tmp_path):
    monkeypatch.setattr(queue_time, "namespace_inode", lambda _name: 1)
    with pytest.raises(QueueTimeError, match="Debian package bpftrace"):
        QueueTime("fabric", bpftrace=str(tmp_path / "no-bpftrace"))


def test_an_unknown_namespace_is_named():
    with pytest.raises(QueueTimeError, match="network namespace nn-nowhere-fabric"):
        QueueTime("nn-nowhere-fabric")
