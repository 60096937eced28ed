"""The latency injector: table and seed files, the generator, and libnnlatency.so
holding back real MPI and TCP sends (seed 004, Sec. 3)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from netnoise.io import read_benchmark
from netnoise.platform import from_config
from netnoise.platform.base import open_mpi_root_env
from netnoise.run import RunFailed
from netnoise.studies.latency_variation import bench, injector
from tests.conftest import full_platform

REPO = Path(__file__).resolve().parents[2]
D_US = 200  # the constant delay of the ping-pong tests


# ---------------------------------------------------------------- files


def test_write_table_is_512_lines_of_8(tmp_path):
    path = injector.write_table(list(range(4096)), tmp_path / "ramp.tab")
    lines = path.read_text().splitlines()
    assert len(lines) == 512
    assert lines[0] == "0 1 2 3 4 5 6 7"
    assert lines[511] == " ".join(str(v) for v in range(4088, 4096))
    assert injector.read_table(path) == list(range(4096))
    assert [p.name for p in tmp_path.iterdir()] == ["ramp.tab"]


def test_write_table_accepts_numpy_integers(tmp_path):
    values = np.full(4096, 7, dtype=np.int64)
    assert injector.read_table(injector.write_table(values, tmp_path / "t")) == [7] * 4096


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ([1] * 4095, "exactly 4096 entries, got 4095"),
        ([1] * 4097, "exactly 4096 entries, got 4097"),
        ([1] * 4095 + [-1], "table entry 4095 is -1: delays are non-negative"),
        ([1.5] + [1] * 4095, "table entry 0 is 1.5, not a non-negative integer"),
        ([True] + [1] * 4095, "table entry 0 is True, not a non-negative integer"),
        (["3"] + [1] * 4095, "table entry 0 is '3', not a non-negative integer"),
        ([60_000_000_001] + [1] * 4095, "more than the limit of 60 s per send"),
    ],
)
def test_write_table_rejects_and_leaves_nothing(tmp_path, values, message):
    with pytest.raises(ValueError, match=message):
        injector.write_table(values, tmp_path / "bad.tab")
    assert list(tmp_path.iterdir()) == []


def test_limit_depends_on_the_unit(tmp_path):
    path = injector.write_table([60_000_000] * 4096, tmp_path / "t.tab", unit="us")  # 60 s
    assert injector.read_table(path, unit="us")[0] == 60_000_000
    with pytest.raises(ValueError, match="more than the limit of 60 s"):
        injector.write_table([60_000_001] * 4096, tmp_path / "t.tab", unit="us")
    path.write_text(("60000000001 " * 8 + "\n") * 512)
    with pytest.raises(injector.TableError, match=r"t\.tab:1: value 1 '60000000001' is larger"):
        injector.read_table(path)


def _lines(value: str = "1 2 3 4 5 6 7 8", count: int = 512) -> list[str]:
    return [value] * count


@pytest.mark.parametrize(
    ("edit", "where", "problem"),
    [
        (lambda ls: ls.__setitem__(6, "1 2 3 4 5 6 7"), 7, "7 values, expected 8"),
        (lambda ls: ls.__setitem__(99, "1 2 3 4 5 6 7 8 9"), 100, "9 values, expected 8"),
        (lambda ls: ls.__setitem__(2, "1 -5 3 4 5 6 7 8"), 3, "value 2 '-5' is negative"),
        (lambda ls: ls.__setitem__(8, "1 2 3 4 5 6 7 12a"), 9, "value 8 '12a' is not a non-neg"),
        (lambda ls: ls.__setitem__(0, "+1 2 3 4 5 6 7 8"), 1, "value 1 '+1' is not a non-neg"),
        (lambda ls: ls.__setitem__(4, "1.0 2 3 4 5 6 7 8"), 5, "value 1 '1.0' is not a non-neg"),
        (lambda ls: ls.__setitem__(9, ""), 10, "0 values, expected 8"),
        (lambda ls: ls.pop(), 512, "file ends after 511 lines, expected 512"),
        (lambda ls: ls.append("1 2 3 4 5 6 7 8"), 513, "more than 512 lines"),
        (lambda ls: ls.append(""), 513, "more than 512 lines"),
    ],
)
def test_read_table_names_file_line_and_problem(tmp_path, edit, where, problem):
    lines = _lines()
    edit(lines)
    path = tmp_path / "bad.tab"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(injector.TableError) as err:
        injector.read_table(path)
    assert str(err.value).startswith(f"{path}:{where}: {problem}")
    assert err.value.line == where


def test_read_table_tolerates_what_the_library_tolerates(tmp_path):
    path = tmp_path / "loose.tab"
    body = "\r\n".join([" 1\t2  3 4 5 6 7 8 "] * 512)  # no final newline, CRLF, tabs
    path.write_bytes(body.encode())
    assert injector.read_table(path)[:8] == [1, 2, 3, 4, 5, 6, 7, 8]


def test_seed_files(tmp_path):
    path = injector.write_seed(tmp_path / "seed", 42)
    assert path.read_text() == "42\n"
    assert injector.read_seed(path) == 42
    injector.write_seed(path, 2**64 - 1)
    assert injector.read_seed(path) == 2**64 - 1
    for bad in (-1, 2**64, 1.5, True):
        with pytest.raises(ValueError):
            injector.write_seed(tmp_path / "other", bad)
    (tmp_path / "two").write_text("1\n2\n")
    with pytest.raises(injector.TableError, match=r"two:2: expected a single integer"):
        injector.read_seed(tmp_path / "two")


def test_constant_table():
    assert injector.constant_table(200) == [200] * 4096
    with pytest.raises(ValueError, match="non-negative"):
        injector.constant_table(-1)


def test_unit_is_a_name_or_positive_nanoseconds():
    assert injector.unit_ns("us") == 1000 and injector.unit_ns(250) == 250
    with pytest.raises(ValueError, match="use one of ns, us"):
        injector.unit_ns("ms")
    with pytest.raises(ValueError, match="positive"):
        injector.unit_ns(0)


def test_generator_is_pinned_and_deterministic():
    # The same values are pinned in csrc/injector/tests/test_nnlatency.c.
    assert injector.indices(1, 8) == [2461, 2034, 427, 369, 2385, 3900, 3737, 314]
    assert injector.indices(42, 8) == [3105, 627, 172, 67, 3682, 1509, 2125, 2558]
    assert injector.indices(7, 1000) == injector.indices(7, 1000)
    assert injector.indices(7, 1000) != injector.indices(8, 1000)
    draws = injector.indices(3, 4096 * 16)
    assert min(draws) == 0 and max(draws) == 4095
    assert len(set(draws)) > 4000
    ramp = list(range(4096))
    assert injector.delays(ramp, 42, 8) == injector.indices(42, 8)


def test_environment_and_exports(tmp_path):
    env = injector.environment(
        tmp_path / "t.tab", "seed.%r", level="tcp", unit="us", strict=True, report="r.%r"
    )
    assert env == {
        "NN_LATENCY_TABLE": str(tmp_path / "t.tab"),
        "NN_LATENCY_SEED": os.path.abspath("seed.%r"),
        "NN_LATENCY_LEVEL": "tcp",
        "NN_LATENCY_UNIT": "us",
        "NN_LATENCY_STRICT": "1",
        "NN_LATENCY_WAIT": "spin",
        "NN_LATENCY_REPORT": os.path.abspath("r.%r"),
    }
    env = injector.environment("t", "s", library="lib/libnnlatency.so")
    assert env["LD_PRELOAD"] == os.path.abspath("lib/libnnlatency.so")
    assert env["NN_LATENCY_STRICT"] == "0" and "NN_LATENCY_REPORT" not in env
    assert injector.mpirun_exports({"A": "1", "B": "x y"}) == ["-x", "A=1", "-x", "B=x y"]
    with pytest.raises(ValueError, match="level 'ib'"):
        injector.environment("t", "s", level="ib")
    with pytest.raises(ValueError, match="unit 'ms'"):
        injector.environment("t", "s", unit="ms")
    assert injector.environment("t", "s", wait="sleep")["NN_LATENCY_WAIT"] == "sleep"
    with pytest.raises(ValueError, match="wait 'yield': expected one of spin, sleep"):
        injector.environment("t", "s", wait="yield")
    assert "NN_LATENCY_SLEEP_MARGIN_US" not in env
    margin = injector.environment("t", "s", wait="sleep", sleep_margin_us=20)
    assert margin["NN_LATENCY_SLEEP_MARGIN_US"] == "20"
    for bad in (-1, 10001, 20.5, True):
        with pytest.raises(ValueError, match=r"sleep_margin_us .*0 to 10000"):
            injector.environment("t", "s", wait="sleep", sleep_margin_us=bad)


def test_read_report(tmp_path):
    path = tmp_path / "report"
    path.write_text(
        "format=nnlatency-report-1\nlevel=mpi\nenabled=1\nrank=unknown\ndelays=3\nmean_ns=2.5\n"
    )
    assert injector.read_report(path) == {
        "format": "nnlatency-report-1",
        "level": "mpi",
        "enabled": 1,
        "rank": "unknown",
        "delays": 3,
        "mean_ns": 2.5,
    }
    path.write_text("format=nnlatency-report-1\nno equals sign\n")
    with pytest.raises(injector.TableError, match=r"report:2: 'no equals sign' is not key=value"):
        injector.read_report(path)


# ---------------------------------------------------------------- the library


@pytest.fixture(scope="module", params=bench.LEVELS)
def measured(request, tmp_path_factory, built_programs):
    """Two interleaved pairs of ping-pongs without and with a constant D_US delay.
    How closely the delay is kept is a timing figure: `netnoise bench injector`."""
    level = request.param
    work = tmp_path_factory.mktemp(f"constant-{level}")
    return level, bench.measure(level, built_programs, work, 2, 500, D_US)


@pytest.mark.mpi
def test_constant_delay_holds_every_send(measured):
    """What no load can change: every round trip waits >= 2 D, every wait lasts >= D,
    the waits that kept their core end within the report's threshold, and the reports
    count the sends made. How far above 2 D the round trips rise is a timing figure
    that load moves either way (a busy machine slows the runs without the injector
    too): `netnoise bench injector` prints it."""
    level, pairs = measured
    # Both sends of every round trip wait >= D: no round trip is faster than 2 D.
    assert min(p.injected.min() for p in pairs) >= 2 * D_US
    for report in (r for p in pairs for r in p.reports):
        assert report["level"] == level and report["enabled"] == 1
        assert report["drawn_mean_ns"] == report["table_mean_ns"] == D_US * 1000
        assert report["mean_ns"] >= D_US * 1000  # a busy wait never ends early
        # A wait is late when it overshoots by more than the threshold (it lost its
        # core); the others lasted D to D + threshold, however busy the machine.
        assert 0 <= report["late_delays"] <= report["delays"]
        if report["late_delays"] < report["delays"]:
            ontime = report["ontime_mean_ns"]
            assert D_US * 1000 <= ontime <= D_US * 1000 + report["late_threshold_ns"]
        # 100 warm-up + 500 timed ping-pong sends per rank.
        if level == "mpi":
            # Exactly one delay per MPI_Send: collectives are not intercepted.
            assert report["delays"] == 600
        else:
            # One writev per eager message: the ping-pong sends, one per MPI_Allreduce
            # of each timed iteration, and a few for setup and teardown.
            assert 600 + 500 <= report["delays"] <= 600 + 500 + 50


def test_injector_benchmark_judges_the_rise_on_its_confidence_interval():
    def pair(rise: float, late: int, runnable: float = 2.0) -> bench.Pair:
        base = np.full(5, 1.0)
        cpu = {"mean_runnable_tasks": runnable, "cores": 2}
        return bench.Pair(base, base + rise, [{"late_delays": late, "delays": 100}] * 2, [cpu, cpu])

    steady = [pair(404, 0), pair(405, 1), pair(406, 2)]
    assert bench.verdict(bench.rise_interval(steady), D_US) == "within"
    low = [pair(200, 0), pair(201, 0), pair(199, 0)]  # one delay per round trip, not two
    assert bench.verdict(bench.rise_interval(low), D_US) == "OUTSIDE"
    busy = [*steady[:2], pair(900, 30), pair(950, 40)]  # the busy pairs do not count
    assert bench.rise_interval(busy) is None
    # Waits on time, but the ranks lost their cores between them (measured: 13
    # runnable tasks on 2 cores, a 4-5 ms rise): crowded pairs do not count either.
    crowded = [*steady[:2], pair(3909, 0, 13.0), pair(5458, 1, 12.7)]
    assert [p.undisturbed for p in crowded] == [True, True, False, False]
    assert bench.rise_interval(crowded) is None
    assert bench.rise_interval([*steady, pair(5458, 1, 12.7)]) == bench.rise_interval(steady)
    # The two spinning ranks fill the 2 cores; a task coming and going is no disturbance.
    assert pair(405, 0, 2.3).undisturbed and not pair(405, 0, 2.6).undisturbed
    assert "too busy" in bench.verdict(None, D_US)
    noisy = [pair(300, 0), pair(420, 0), pair(540, 0)]  # wide: overlaps the range
    assert bench.verdict(bench.rise_interval(noisy), D_US) == "within"


@pytest.mark.mpi
def test_disabled_injector_warns_once_and_costs_nothing(tmp_path, built_programs):
    lib = str(built_programs / injector.LIBRARY)
    report = tmp_path / "off.%r"
    _, log = bench.pingpong(
        built_programs,
        tmp_path,
        "off",
        ["-x", f"LD_PRELOAD={lib}", "-x", f"NN_LATENCY_REPORT={report}"],
        50,
    )
    assert log.count("warning: latency injection disabled: NN_LATENCY_TABLE is not set") == 1
    for rank in (0, 1):
        off = injector.read_report(tmp_path / f"off.{rank}")
        assert off["enabled"] == 0 and off["delays"] == 0
        assert off["disabled_reason"] == "NN_LATENCY_TABLE is not set"

    # Per call, inside one process (immune to scheduling): MPI_Send through the
    # disabled wrapper against PMPI_Send, both to MPI_PROC_NULL.
    wrapcost = tmp_path / "wrapcost"
    subprocess.run(
        ["mpicc", "-O2", "-o", str(wrapcost), str(REPO / "csrc/injector/tests/wrapcost.c")],
        check=True,
        timeout=120,
    )
    platform = from_config(full_platform({"kind": "localhost", "timeout_s": 60}))
    launch = platform.mpi_launch(["-x", f"LD_PRELOAD={lib}", str(wrapcost)], 1)
    out = subprocess.run(
        launch.argv, env=launch.environment(), capture_output=True, text=True, timeout=60
    ).stdout
    print(out.strip())
    fields = dict(f.split("=") for f in out.split()[1:])
    assert abs(float(fields["overhead_ns"])) < 5

    # On the ping-pong's median RTT. Shared-memory round trips take ~0.4 us, but
    # whole runs differ by up to 0.6 us with where the scheduler puts the ranks:
    # interleave runs, compare the best run medians. A wrapper that cost something
    # on every send would slow every run.
    # These runs spin (--mpi-wait spin), as MPI does by default: a sleeping wait
    # would add its wake-up to the sub-microsecond differences compared here.
    def median_rtt(name: str, preload: list[str]) -> float:
        out = tmp_path / f"{name}.csv"
        argv = ["mpirun", "-n", "2", "--oversubscribe", "--bind-to", "none", *preload]
        argv += [str(built_programs / "pingpong"), "--mpi-wait", "spin", "--iterations", "5000"]
        argv += ["--output", str(out)]
        env = {**os.environ, **open_mpi_root_env()}
        env["OMPI_MCA_btl_vader_single_copy_mechanism"] = "none"
        subprocess.run(argv, env=env, check=True, capture_output=True, timeout=60)
        return float(np.median(read_benchmark(out).data["rtt_us"]))

    base, disabled = [], []
    for i in range(5):
        base.append(median_rtt(f"b{i}", []))
        disabled.append(median_rtt(f"d{i}", ["-x", f"LD_PRELOAD={lib}"]))
    print(f"run medians without LD_PRELOAD: {base} us; preloaded but disabled: {disabled} us")
    print(f"best: {min(base):.3f} us vs {min(disabled):.3f} us")
    difference = min(disabled) - min(base)
    spread = max(max(base) - min(base), max(disabled) - min(disabled))
    if abs(difference) >= 0.1 and spread > 0.2:
        pytest.skip(f"runs too noisy to compare medians: they spread over {spread:.2f} us")
    assert abs(difference) < 0.1


@pytest.mark.mpi
def test_strict_mode_rejects_a_malformed_table(tmp_path, built_programs):
    lines = ["100 100 100 100 100 100 100 100"] * 512
    lines[6] = "100 100 100 100 100 100 100"
    table = tmp_path / "bad.tab"
    table.write_text("\n".join(lines) + "\n")
    seed = injector.write_seed(tmp_path / "seed", 1)
    env = injector.environment(table, seed, strict=True, library=built_programs / injector.LIBRARY)
    with pytest.raises(RunFailed, match="exited with status"):
        bench.pingpong(built_programs, tmp_path, "strict", injector.mpirun_exports(env), 10)
    log = (tmp_path / "strict.log").read_text()
    assert f"error: distribution table {table}:7: 7 values, expected 8" in log
    assert not (tmp_path / "strict.csv").exists()

    # Not strict: the same table disables the injector, with the same diagnosis.
    env["NN_LATENCY_STRICT"] = "0"
    _, log = bench.pingpong(built_programs, tmp_path, "lax", injector.mpirun_exports(env), 10)
    assert log.count(f"disabled: distribution table {table}:7: 7 values, expected 8") == 1


def _python_with_injector(script, tmp_path, built_programs, table, seed, report):
    """Run a Python ``script`` in ``tmp_path`` with the injector at the tcp level."""
    env = injector.environment(
        table, seed, level="tcp", report=report, library=built_programs / injector.LIBRARY
    )
    return subprocess.run(
        [sys.executable, "-c", script],
        env={**os.environ, **env},
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )


SENDS = """
import socket
srv = socket.socket(); srv.bind(("127.0.0.1", 0)); srv.listen(1)
cli = socket.create_connection(srv.getsockname()); conn, _ = srv.accept()
for _ in range(300):
    cli.send(b"x"); conn.recv(1)
with open("plain-file", "w") as fh:  # not a socket: never delayed
    fh.write("x")
"""


@pytest.mark.mpi
def test_tcp_level_draws_the_predicted_delays(tmp_path, built_programs):
    """300 sends on a TCP socket draw exactly the delays the injector module predicts."""
    ramp = list(range(4096))  # entry i: i ns
    table = injector.write_table(ramp, tmp_path / "ramp.tab")
    seed = injector.write_seed(tmp_path / "seed", 42)
    _python_with_injector(SENDS, tmp_path, built_programs, table, seed, tmp_path / "report")
    report = injector.read_report(tmp_path / "report")
    assert report["level"] == "tcp" and report["delays"] == 300
    assert report["drawn_total_ns"] == sum(injector.delays(ramp, 42, 300))


FORK = """
import os, socket
srv = socket.socket(); srv.bind(("127.0.0.1", 0)); srv.listen(1)
cli = socket.create_connection(srv.getsockname()); conn, _ = srv.accept()
for _ in range(10):
    cli.send(b"p")
pid = os.fork()
if pid == 0:
    for _ in range(5):
        cli.send(b"c")
    raise SystemExit(0)  # a normal exit: the library's destructor writes the report
os.waitpid(pid, 0)
print(pid)
"""


@pytest.mark.mpi
def test_forked_child_reports_only_its_own_delays(tmp_path, built_programs):
    table = injector.write_table(injector.constant_table(1000), tmp_path / "c.tab")
    seed = injector.write_seed(tmp_path / "seed", 1)
    out = _python_with_injector(FORK, tmp_path, built_programs, table, seed, tmp_path / "report.%p")
    child = int(out.stdout)
    reports = {p.name: injector.read_report(p) for p in tmp_path.glob("report.*")}
    assert reports[f"report.{child}"]["delays"] == 5
    parent = [r for name, r in reports.items() if name != f"report.{child}"]
    assert [r["delays"] for r in parent] == [10]
