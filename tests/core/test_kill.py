"""SIGKILL of snakemake in the middle of a measurement on the testbed: the job and
every process it launched end within seconds, no result appears, and after
``snakemake --unlock`` (README: After a kill) the rerun completes clean."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest
import yaml

from netnoise.config import validate
from netnoise.io import read_benchmark
from netnoise.provenance import read_sidecar
from netnoise.testbed.fabric import Testbed, TestbedSpec
from tests.conftest import REPO, UNJUDGED_CPU, VENV_BIN, snakemake

pytestmark = [
    pytest.mark.root,
    pytest.mark.slow,
    pytest.mark.skipif(os.geteuid() != 0, reason="network namespaces need root"),
]

PREFIX = "nkt"
# A hang guard, not a figure: how long the tests wait at most for what comes at
# the machine's pace.
HANG_S = 300
RESULT = "results/testbed/raw/baseline/pingpong_size65536_rep0.csv"
# 300 round trips of 64 KiB on 50 Mbit/s links: about 6 s of measurement.
CONFIG = {
    "platform": {
        "kind": "testbed",
        "timeout_s": 120,
        "testbed": {"prefix": PREFIX, "nodes": 2},
        "cpu": UNJUDGED_CPU,
    },
    "baseline": {"sizes": [65536], "iterations": 300, "warmup": 2, "repetitions": 1},
    "impact_compression": {"enabled": False},
    "network_noise": {"enabled": False, "benchmark": {"enabled": False}},
    "asymmetric": {"enabled": False},
    "variability": {"enabled": False},
    "latency_variation": {"enabled": False},
}


def _mentioning(text: str) -> list[str]:
    """Running processes whose command line mentions ``text``."""
    found = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cmdline = Path(entry.path, "cmdline").read_bytes().replace(b"\0", b" ").decode()
            state = Path(entry.path, "stat").read_text().rsplit(")", 1)[1].split()[0]
        except (FileNotFoundError, ProcessLookupError):
            continue
        if text in cmdline and state != "Z":
            found.append(f"{entry.name}: {cmdline[:200]}")
    return found


@pytest.fixture
def testbed():
    testbed = Testbed(TestbedSpec.from_config(validate(CONFIG)["platform"]["testbed"]))
    yield testbed
    testbed.down()
    assert testbed.existing_namespaces() == []


def test_sigkill_of_snakemake_mid_measurement_leaves_nothing_and_the_rerun_is_clean(
    tmp_path, testbed, built_programs
):
    workdir = tmp_path
    (workdir / "config").mkdir()
    (workdir / "config" / "config.yaml").write_text(yaml.safe_dump(CONFIG))
    # The session's programs, newer than their sources: the workflow does not rebuild them.
    shutil.copytree(built_programs, workdir / "results/testbed/bin")

    exe = shutil.which("snakemake", path=str(VENV_BIN))
    run = subprocess.Popen(
        [exe, "--snakefile", str(REPO / "workflow" / "Snakefile"), "--cores", "1", RESULT],
        cwd=workdir,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        started = time.monotonic()
        # The ranks run on the second node once the measurement has started (a
        # hang guard only: the start comes at the machine's pace).
        while not [p for p in testbed.processes_inside() if _in_node(p, 2)]:
            assert run.poll() is None, "snakemake ended before the measurement started"
            assert time.monotonic() - started < HANG_S, "the measurement did not start"
            time.sleep(0.1)
        # Gone as soon as the lifeline acts, at the pace the machine started them
        # (the figure is printed): a deadline of the measured start, many times over.
        allowed_s = min(HANG_S, 30 + 5 * (time.monotonic() - started))
        run.send_signal(signal.SIGKILL)
        run.wait()
        killed = time.monotonic()
        while testbed.processes_inside() or _mentioning(str(workdir)):
            assert time.monotonic() - killed < allowed_s, (
                f"left {allowed_s:.0f} s after the kill: {_mentioning(str(workdir))}, "
                f"inside the testbed: {testbed.processes_inside()}"
            )
            time.sleep(0.1)
        print(f"\njob and launch gone {time.monotonic() - killed:.2f} s after the kill")
    finally:
        run.kill()
        run.wait()
    # No process of the run is left (above), so nothing can appear later either.
    raw = workdir / RESULT
    assert not raw.exists()
    assert [p.name for p in raw.parent.iterdir()] == []  # no sidecar, no temporary file
    log = (workdir / "results/testbed/logs/baseline/pingpong_size65536_rep0.log").read_text()
    assert "is gone; " in log  # the job said why it stopped

    # The killed run's testbed is still up, claimed by a process that is gone: reused.
    assert testbed.is_up() and not testbed.claim().alive()
    unlock = snakemake("--unlock", cwd=workdir)
    assert unlock.returncode == 0, unlock.stderr[-2000:]
    rerun = snakemake("--cores", "1", RESULT, cwd=workdir)
    assert rerun.returncode == 0, rerun.stderr[-3000:]
    assert len(read_benchmark(raw).data) == 300
    assert read_sidecar(raw)["exit_status"] == 0
    assert testbed.existing_namespaces() == []  # removed when the rerun ended


def _in_node(pid: int, index: int) -> bool:
    try:
        return (
            os.stat(f"/proc/{pid}/ns/net").st_ino
            == os.stat(f"/run/netns/{PREFIX}-n{index:02d}").st_ino
        )
    except FileNotFoundError:
        return False
