"""Every benchmark runs for real on localhost and parses into a tidy table."""

from __future__ import annotations

import pytest

from netnoise.io import read_benchmark, tidy
from netnoise.run import run_benchmark

pytestmark = pytest.mark.mpi

CASES = {
    "pingpong": (2, ["--iterations", "30", "--size", "256"], 30),
    "impactb": (4, ["--iterations", "5", "--sleep-us", "2000"], 10),
    "compressionb": (
        3,
        ["--iterations", "5", "--partners", "2", "--ring", "world", "--cycle-hz", "1e9"],
        3,
    ),
    "noise": (4, ["--ratio", "0.5", "--splits", "3", "--perturb-size", "64K"], 6),
    "loadgen": (2, ["--duration", "0.5", "--load", "0.2", "--link-mbit", "100"], 2),
    "barrier": (3, ["--iterations", "25"], 25),
    "cpuhog": (2, ["--iterations", "20", "--load", "0.5", "--period-us", "2000"], 2),
}
COLUMNS = {
    "pingpong": ["pair", "iteration", "size_bytes", "rtt_us"],
    "impactb": ["pair", "iteration", "time_s", "size_bytes", "rtt_us"],
    "compressionb": [
        "rank", "ring", "ring_rank", "iterations", "sent_bytes", "received_bytes",
        "elapsed_s", "send_mbps",
    ],
    "noise": [
        "split", "application_ranks", "perturbing_ranks", "perturbed", "rep", "time_us",
    ],
    "loadgen": [
        "rank", "peer", "messages_count", "sent_bytes", "received_bytes", "elapsed_s",
        "target_mbps", "achieved_mbps",
    ],
    "barrier": ["iteration", "time_us", "rank0_us"],
    "cpuhog": ["rank", "busy_s", "elapsed_s", "busy_share"],
}  # fmt: skip


@pytest.mark.parametrize("tool", sorted(CASES))
def test_benchmark_output_parses_into_a_tidy_table(
    tool, tmp_path, built_programs, localhost_platform
):
    ranks, args, rows = CASES[tool]
    out = tmp_path / f"{tool}.csv"
    run_benchmark(
        localhost_platform,
        [str(built_programs / tool), *args, "--seed", "7"],
        ranks=ranks,
        output=out,
        log=tmp_path / "log",
        timeout_s=120,
    )
    result = read_benchmark(out)
    assert result.meta["tool"] == tool
    assert result.meta["seed"] == "7"
    assert result.meta["ranks"] == str(ranks)
    assert list(result.data.columns) == COLUMNS[tool]
    assert len(result.data) == rows
    frame = tidy(result, run="r1")
    assert (frame["run"] == "r1").all() and (frame["tool"] == tool).all()
    numeric = result.data.select_dtypes("number")
    assert list(numeric.columns) == COLUMNS[tool], "every column must be numeric"


def test_noise_perturbed_and_unperturbed_rows(tmp_path, built_programs, localhost_platform):
    out = tmp_path / "noise.csv"
    run_benchmark(
        localhost_platform,
        [str(built_programs / "noise"), "--ratio", "0.5", "--splits", "4", "--reps", "3",
         "--perturb-size", "64K", "--collective", "reduce"],
        ranks=4, output=out, log=tmp_path / "log", timeout_s=120,
    )  # fmt: skip
    result = read_benchmark(out)
    assert result.meta["phase_warmup"] == "1"  # untimed, so no row of its own
    data = result.data
    assert data.groupby("perturbed").size().to_dict() == {0: 12, 1: 12}
    assert data["split"].tolist() == sorted(data["split"].tolist())
    assert (data["application_ranks"] == 2).all() and (data["perturbing_ranks"] == 2).all()
    assert (data["time_us"] > 0).all()


def test_p2p_concurrent_summaries_match_samples(tmp_path, built_programs, localhost_platform):
    pattern = tmp_path / "pattern.csv"
    pattern.write_text("src,dst,bytes\n0,1,262144\n2,3,65536\n3,0,131072\n")
    out = tmp_path / "p2p.csv"
    run_benchmark(
        localhost_platform,
        [str(built_programs / "p2p_concurrent"), "--pattern", str(pattern),
         "--max-iterations", "40", "--min-iterations", "10"],
        ranks=4, output=out, log=tmp_path / "log", timeout_s=120,
    )  # fmt: skip
    result = read_benchmark(out)
    iterations = int(result.meta["iterations"])
    assert 10 <= iterations <= 40
    data = result.data
    assert data.groupby("link").size().tolist() == [iterations] * 3
    for link, group in data.groupby("link"):
        src, dst, size, n, mean, half = result.meta[f"link_{link}"].split()
        assert (int(src), int(dst), int(size), int(n)) == (
            group["src"].iloc[0],
            group["dst"].iloc[0],
            group["size_bytes"].iloc[0],
            iterations,
        )
        assert float(mean) == pytest.approx(group["time_s"].mean(), rel=1e-4, abs=1e-8)
        if iterations < 40:  # stopped early: the interval met the 2 % criterion
            assert 2 * float(half) <= 0.02 * float(mean) * 1.0001


def test_loadgen_reaches_its_target_rate(tmp_path, built_programs):
    """Over TCP, as on a network: a sleeping receiver reads its socket's buffer in
    bursts, where a shared-memory queue of a few fragments would hold the sender."""
    from netnoise.platform import from_config
    from tests.conftest import full_platform

    tcp = from_config(
        full_platform({"kind": "localhost", "mpirun_args": ["--mca", "btl", "tcp,self"]})
    )
    out = tmp_path / "load.csv"
    run_benchmark(
        tcp,
        [str(built_programs / "loadgen"), "--duration", "3", "--load", "0.5",
         "--link-mbit", "80", "--size", "8K", "--direction", "one"],
        ranks=2, output=out, log=tmp_path / "log", timeout_s=120,
    )  # fmt: skip
    data = read_benchmark(out).data.set_index("rank")
    assert data.loc[1, "sent_bytes"] == 0 and data.loc[1, "target_mbps"] == 0
    # 40 Mbit/s in 8 KiB messages: ~1830 exponential gaps in 3 s, so ±10 % is > 4 sigma.
    assert data.loc[0, "achieved_mbps"] == pytest.approx(40, rel=0.1)
    assert data.loc[1, "received_bytes"] == data.loc[0, "sent_bytes"]
