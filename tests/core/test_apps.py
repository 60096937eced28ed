"""The proxy applications of csrc/apps, run through the localhost platform and
parsed with netnoise.io: format, one row per application run, determinism,
the documented traffic, the compute modes, and the co-run stop protocol."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import scipy.stats as st

from netnoise.io import read_benchmark, tidy
from netnoise.platform import from_config
from netnoise.run import Job, corun, run_benchmark
from tests.conftest import full_platform

APPS = [
    "fft_transpose",
    "fft_overlap",
    "halo3d",
    "cg_solver",
    "lu_wavefront",
    "monte_carlo",
    "multigrid",
]
COLUMNS = [
    "run",
    "runtime_s",
    "comm_s",
    "comm_mean_s",
    "compute_s",
    "sent_bytes",
    "messages_count",
    "checksum",
]
# Per-application options for quick 2-rank runs in arith mode.
SMALL = {
    "fft_transpose": ["--size", "64", "--steps", "3"],
    "fft_overlap": ["--size", "64", "--steps", "2"],
    "halo3d": ["--size", "16", "--steps", "5"],
    "cg_solver": ["--size", "6", "--steps", "8"],
    "lu_wavefront": ["--size", "8", "--planes", "8", "--steps", "3"],
    "monte_carlo": ["--size", "1000", "--steps", "4"],
    "multigrid": ["--size", "16", "--steps", "3"],
}


@pytest.fixture(scope="module")
def platform():
    # More ranks than cores here: waiting ranks sleep in the wait layer.
    return from_config(full_platform({"kind": "localhost", "timeout_s": 120}))


def run_app(platform, bindir: Path, tmp_path: Path, app: str, args: list[str], ranks: int = 2):
    """Run one application alone; return its parsed result."""
    runs = sorted(tmp_path.glob(f"{app}-*.csv"))
    out = tmp_path / f"{app}-{len(runs)}.csv"
    run_benchmark(
        platform,
        [str(bindir / app), *args],
        ranks=ranks,
        output=out,
        log=tmp_path / f"{app}.log",
        timeout_s=120,
    )
    return read_benchmark(out)


@pytest.mark.mpi
@pytest.mark.parametrize("app", APPS)
def test_app_output_and_determinism(app, built_programs, platform, tmp_path):
    args = [*SMALL[app], "--compute", "arith", "--warmup", "0", "--iterations"]
    first = run_app(platform, built_programs, tmp_path, app, [*args, "2", "--seed", "7"])
    again = run_app(platform, built_programs, tmp_path, app, [*args, "1", "--seed", "7"])
    other = run_app(platform, built_programs, tmp_path, app, [*args, "1", "--seed", "8"])

    frame = tidy(first, app=app, mode="arith")
    assert list(frame.columns[: len(COLUMNS)]) == COLUMNS
    assert list(frame["run"]) == [0, 1]
    assert (frame["app"] == app).all()
    assert (frame["tool"] == app).all()
    assert (frame["ranks"] == "2").all()
    assert (frame["seed"] == "7").all()
    assert (frame["runtime_s"] > 0).all()
    assert (frame["compute_s"] > 0).all()
    assert (frame["comm_s"] >= frame["comm_mean_s"]).all()
    assert (frame["runtime_s"] >= frame["compute_s"]).all()
    assert (frame["sent_bytes"] > 0).all()
    assert (frame["messages_count"] > 0).all()
    assert first.meta["compute"] == "arith"
    assert first.meta["size"] == SMALL[app][1]

    # Every run starts from the same data: one checksum per seed, whichever run.
    assert frame["checksum"].nunique() == 1
    assert again.data["checksum"][0] == first.data["checksum"][0]
    assert again.data["sent_bytes"][0] == first.data["sent_bytes"][0]
    assert other.data["checksum"][0] != first.data["checksum"][0]


@pytest.mark.mpi
@pytest.mark.parametrize("app", APPS)
def test_sleep_compute_adds_runtime(app, built_programs, platform, tmp_path):
    steps = 4
    base = ["--steps", str(steps), "--compute", "sleep", "--warmup", "0", "--iterations", "2"]
    quick = run_app(platform, built_programs, tmp_path, app, [*base, "--compute-us", "0"])
    slow = run_app(platform, built_programs, tmp_path, app, [*base, "--compute-us", "25000"])
    asked = steps * 0.025
    # Sleep overshoot is paid back within the run: the total stays close to what was asked.
    assert slow.data["compute_s"].min() >= 0.95 * asked
    assert slow.data["compute_s"].max() <= 2.0 * asked
    assert (slow.data["runtime_s"] >= slow.data["compute_s"]).all()
    added = slow.data["runtime_s"].median() - quick.data["runtime_s"].median()
    assert added >= 0.5 * asked
    # The compute mode changes neither the messages nor the data they carry.
    assert list(slow.data["sent_bytes"]) == list(quick.data["sent_bytes"])
    assert list(slow.data["checksum"]) == list(quick.data["checksum"])


@pytest.mark.mpi
def test_compute_jitter_draws_each_phase_and_leaves_the_messages(
    built_programs, platform, tmp_path
):
    # monte_carlo computes once a step: with one step, a run's compute time is its draw.
    base = ["--steps", "1", "--compute", "sleep", "--compute-us", "100000", "--warmup", "0"]
    base += ["--iterations", "6"]
    exact = run_app(platform, built_programs, tmp_path, "monte_carlo", base)
    jittered = run_app(
        platform, built_programs, tmp_path, "monte_carlo", [*base, "--compute-jitter", "0.9"]
    )
    assert jittered.meta["compute_jitter"] == "0.9"
    assert np.ptp(exact.data["compute_s"]) < 0.01
    # Draws from (0.01, 0.19) s: the runs differ by far more than a sleep's overshoot.
    assert np.ptp(jittered.data["compute_s"]) > 0.02
    assert jittered.data["compute_s"].between(0.01, 0.2).all()
    assert list(jittered.data["sent_bytes"]) == list(exact.data["sent_bytes"])
    assert list(jittered.data["checksum"]) == list(exact.data["checksum"])


def ci_share(runtimes: pd.Series) -> float:
    """Width of the 95 % confidence interval of the mean, as a share of the mean."""
    n = len(runtimes)
    half = st.t.ppf(0.975, n - 1) * runtimes.std(ddof=1) / np.sqrt(n)
    return 2 * half / runtimes.mean()


def assert_stopped_by_the_rule(runtimes: pd.Series, width: float, least: int, most: int):
    """The runs ended where the stopping rule, applied to the recorded runtimes
    themselves, ends them: at the first run from ``least`` on whose interval is
    within ``width``, else at ``most``. Whatever the timings were (a busy host
    slows some runs), the decision is checked against them, not against a count."""
    n = len(runtimes)
    assert least <= n <= most
    # The C rule's t quantiles are rounded to 3 digits: 1 % slack either way.
    if n < most:
        assert ci_share(runtimes) <= 1.01 * width, f"stopped imprecise after {n} runs"
    for k in range(least, n):
        assert ci_share(runtimes[:k]) > 0.99 * width, f"precise after {k} runs, ran {n}"


@pytest.mark.mpi
def test_precision_stop_ends_at_the_first_precise_run(built_programs, platform, tmp_path):
    width, least, most = 0.02, 3, 60
    args = ["--steps", "4", "--compute", "sleep", "--compute-us", "2000", "--warmup", "0"]
    args += ["--iterations", str(most), "--ci-width", str(width)]
    args += ["--min-iterations", str(least)]
    result = run_app(platform, built_programs, tmp_path, "halo3d", args)
    assert result.meta["ci_width"] == str(width)
    assert result.meta["min_iterations"] == str(least)
    assert_stopped_by_the_rule(result.data["runtime_s"], width, least, most)


@pytest.mark.mpi
@pytest.mark.parametrize(("width", "runs"), [("0", 6), ("1e-9", 6)])
def test_precision_stop_off_or_unreachable_runs_every_iteration(
    width, runs, built_programs, platform, tmp_path
):
    """0 turns the rule off; a width of 1e-9 no timed run reaches runs --iterations."""
    args = ["--steps", "2", "--compute", "sleep", "--compute-us", "2000", "--warmup", "1"]
    args += ["--iterations", "6", "--min-iterations", "4"]
    result = run_app(platform, built_programs, tmp_path, "halo3d", [*args, "--ci-width", width])
    assert len(result.data) == runs


@pytest.mark.mpi
def test_precision_stop_of_a_loose_width_never_stops_before_the_minimum(
    built_programs, platform, tmp_path
):
    """The loosest width (1, the mean) stops at --min-iterations when those runs are
    that precise, later when a busy host made one of them slow: the rule, applied to
    the recorded runtimes, says which."""
    args = ["--steps", "2", "--compute", "sleep", "--compute-us", "2000", "--warmup", "1"]
    args += ["--iterations", "6", "--min-iterations", "4", "--ci-width", "1"]
    result = run_app(platform, built_programs, tmp_path, "halo3d", args)
    assert_stopped_by_the_rule(result.data["runtime_s"], 1.0, 4, 6)


@pytest.mark.mpi
@pytest.mark.parametrize("app", APPS)
def test_default_run_on_four_ranks(app, built_programs, platform, tmp_path):
    result = run_app(platform, built_programs, tmp_path, app, ["--iterations", "2"], ranks=4)
    data = result.data
    assert len(data) == 2
    assert result.meta["compute"] == "sleep"
    assert result.meta["ranks"] == "4"
    steps = int(result.meta["steps"])
    compute_us = float(result.meta["compute_us"])
    # Defaults stay well under a second on localhost (one of the runs, in case
    # the machine is busy).
    assert data["runtime_s"].min() < 1.0
    assert (data["runtime_s"] >= 0.95 * steps * compute_us * 1e-6).all()
    if app == "monte_carlo":
        # By design little traffic: below a kilobyte per rank and step.
        assert (data["sent_bytes"] < 4 * steps * 2048).all()
    else:
        # On 4 ranks every rank has the same neighbours, so the documented
        # per-rank volume of rank 0 accounts for all traffic (halo3d's meta leaves
        # out its 8-byte allreduce every 5 steps).
        per_step = float(result.meta["bytes_per_step_rank0"])
        assert per_step > 16 * 1024
        assert data["sent_bytes"].iloc[0] == pytest.approx(4 * steps * per_step, rel=1e-3)


@pytest.mark.mpi
def test_fft_result_does_not_depend_on_rank_count(built_programs, platform, tmp_path):
    args = ["--size", "64", "--steps", "2", "--compute", "arith", "--iterations", "1"]
    two = run_app(platform, built_programs, tmp_path, "fft_transpose", args, ranks=2)
    four = run_app(platform, built_programs, tmp_path, "fft_transpose", args, ranks=4)
    assert two.meta["fft"] == "radix-2"
    assert four.data["checksum"][0] == pytest.approx(two.data["checksum"][0], rel=1e-9)
    # In sleep mode the data only travels: each step transposes and transposes
    # back, so the matrix (and its checksum) is the initial one whatever the
    # step and rank counts, and differs from the transformed one.
    sleep = ["--size", "64", "--compute", "sleep", "--compute-us", "0", "--iterations", "1"]
    one_step = run_app(
        platform, built_programs, tmp_path, "fft_transpose", [*sleep, "--steps", "1"], ranks=4
    )
    three_steps = run_app(
        platform, built_programs, tmp_path, "fft_transpose", [*sleep, "--steps", "3"], ranks=2
    )
    initial = one_step.data["checksum"][0]
    assert three_steps.data["checksum"][0] == pytest.approx(initial, rel=1e-12)
    assert two.data["checksum"][0] != pytest.approx(initial, rel=1e-6)


@pytest.mark.mpi
def test_rank_constraint_is_a_failed_run(built_programs, platform, tmp_path):
    from netnoise.run import RunFailed

    with pytest.raises(RunFailed, match="exited with status 2"):
        run_app(platform, built_programs, tmp_path, "fft_transpose", ["--size", "100"], ranks=3)
    log = (tmp_path / "fft_transpose.log").read_text()
    assert "--size 100 must be divisible by the number of ranks 3" in log
    assert not list(tmp_path.glob("fft_transpose-*.csv"))


@pytest.mark.mpi
def test_app_as_corun_background(built_programs, platform, tmp_path):
    """A background application runs whole application runs until the measured
    job has finished, then stops through the stop file with a valid result."""
    background = Job(
        "background",
        [str(built_programs / "cg_solver"), "--iterations", "0", "--warmup", "1"],
        ranks=2,
        output=tmp_path / "bg.csv",
    )
    measured = Job(
        "measured",
        [str(built_programs / "halo3d"), "--iterations", "3"],
        ranks=2,
        output=tmp_path / "fg.csv",
    )
    corun(platform, measured, [background], log=tmp_path / "corun.log", timeout_s=120)
    bg = read_benchmark(tmp_path / "bg.csv")
    fg = read_benchmark(tmp_path / "fg.csv")
    assert len(fg.data) == 3
    assert len(bg.data) >= 1
    assert list(bg.data["run"]) == list(range(len(bg.data)))
    assert bg.data["checksum"].nunique() == 1


@pytest.mark.mpi
def test_counters_are_read_in_the_timed_run_only(built_programs, platform, tmp_path):
    """Launched together, the measured job's timed part waits for the background's
    warm-up; every counter reading comes after its own warm-up and before the end
    of its timed part."""
    log = tmp_path / "run.log"
    seen = []

    def flag(job: str, option: str) -> Path:
        command = next(line for line in log.read_text().splitlines() if line.startswith(job))
        return Path(command.split(f"{option} ")[1].split()[0])

    def snapshot():
        seen.append(
            (
                flag("$ [app]", "--ready-file").exists(),
                flag("$ [load]", "--ready-file").exists(),
                flag("$ [app]", "--release-file").exists(),
            )
        )
        row = {"time_s": time.monotonic(), "device": "host", "port": "p", "role": "node_nic"}
        return [row | {"counter": "tx_bytes", "value": len(seen)}]

    halo3d = str(built_programs / "halo3d")
    corun(
        platform,
        Job("app", [halo3d, "--warmup", "2", "--iterations", "1"], 2, tmp_path / "app.csv"),
        [Job("load", [halo3d, "--iterations", "0", "--warmup", "3"], 2, tmp_path / "load.csv")],
        log=log,
        timeout_s=120,
        counters=snapshot,
        counters_output=tmp_path / "counters.csv",
        counter_interval_s=0.02,
        launch_together=True,
    )
    assert len(seen) >= 2
    assert all(measured and load and not released for measured, load, released in seen)
    assert "--start-file" in next(line for line in log.read_text().splitlines() if "[app]" in line)
    assert len(pd.read_csv(tmp_path / "counters.csv")) == len(seen)
    assert len(read_benchmark(tmp_path / "load.csv").data) >= 1
