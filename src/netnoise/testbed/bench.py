"""``netnoise bench testbed``: what the emulated cluster's links carry, printed.

How close a shaped link comes to its rate, and how long a small message waits
beside a bulk flow, depend on what else the machine runs: the tests check
only what no load changes (no link carries more than its rate, the backbone's
queue is arbitrated as configured), and this benchmark prints the figures,
with the CPU load they were measured under, for a reader to judge.

It brings up testbeds of its own (prefix ``nnbtb``) and takes them down:
- one rack of two nodes, 50 Mbit/s NICs: iperf3's rate over a NIC link
  (expected: at least 95 % of 50 Mbit/s on a quiet machine);
- two racks, 50 Mbit/s NICs, a 20 Mbit/s backbone: the rate within a rack and
  across the backbone (expected: 50 and 20 Mbit/s), the bytes the uplink
  carried;
- the same racks with a FIFO backbone and a round-robin one: the median round
  trip of 8-byte tcpping probes between the racks beside an iperf3 flow that
  keeps the backbone busy (expected: tens of ms behind the FIFO's 100 kB queue;
  about 1.2 ms, one frame each way, served in turn).
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from netnoise import config as netnoise_config
from netnoise import cpu
from netnoise.build import build_programs
from netnoise.io import read_benchmark
from netnoise.platform.testbed import TestbedPlatform
from netnoise.testbed.validation import iperf3_links, link_checks

PREFIX = "nnbtb"
#: A platform.cpu that judges no run: the figures are printed with the load.
UNJUDGED = {"max_runnable": 1000, "quiet_wait_s": 5}


def _platform(**testbed: Any) -> TestbedPlatform:
    platform = netnoise_config.validate_platform(
        {"platform": {"testbed": {"prefix": PREFIX, **testbed}, "cpu": UNJUDGED}}
    )
    return TestbedPlatform(platform)


def _load() -> str:
    """The machine's load over one second: runnable tasks and busy share."""
    with cpu.CpuLoad() as load:
        time.sleep(1)
    return f"{load.mean_runnable:.2f} runnable tasks, {100 * load.busy_fraction:.0f} % busy"


def links(seconds: float) -> None:
    for layout in ({"nodes": 2}, {"nodes": 8, "racks": 2, "nic_mbit": 50, "backbone_mbit": 20}):
        platform = _platform(**layout)
        try:
            platform.check()
            print(f"layout {layout}, before: {_load()}")
            checks = link_checks(platform.testbed, seconds=seconds, attempts=1)
            for _, row in checks.iterrows():
                print(
                    f"  {row['path']}: {row['measured_mbit']:.1f} of {row['configured_mbit']:.0f}"
                    f" Mbit/s ({100 * row['share']:.0f} %)"
                )
        finally:
            platform.testbed.down()


def probe_rtt_us(platform: TestbedPlatform, programs: Path, scratch: Path) -> tuple[float, float]:
    """Median round trip of 8-byte messages between the racks (node 2 to 4) beside
    an iperf3 flow from node 1 to 3 on the same uplink, and that flow's rate."""
    from netnoise.run import run_benchmark

    spec = platform.testbed.spec
    out = scratch / f"{spec.backbone_arbitration}.csv"
    probe = [str(programs / "tcpping"), "--size", "8", "--iterations", "500"]
    probe += ["--gap-us", "2000", "--duration", "3"]
    with ThreadPoolExecutor(1) as pool:
        bulk = pool.submit(iperf3_links, platform.testbed, [(1, 3)], 6)
        time.sleep(2)  # past the flow's slow start
        run_benchmark(platform, probe, 2, out, scratch / f"{out.stem}.log", 60,
                      nodes=[f"{spec.prefix}-n02", f"{spec.prefix}-n04"])  # fmt: skip
        rate = bulk.result()[0]["mbit"]
    return float(read_benchmark(out).data["rtt_us"].median()), rate


def arbitration(programs: Path) -> None:
    layout = {"nodes": 4, "racks": 2, "nic_mbit": 50, "backbone_mbit": 20}
    with tempfile.TemporaryDirectory(prefix="netnoise-bench-testbed-") as scratch:
        for kind in ("fifo", "round_robin"):
            platform = _platform(**layout, backbone_arbitration=kind)
            try:
                platform.check()
                rtt, rate = probe_rtt_us(platform, programs, Path(scratch))
                print(
                    f"backbone {kind}: probe round trip {rtt / 1000:.2f} ms (median) beside a "
                    f"{rate:.1f} Mbit/s flow; load {_load()}"
                )
            finally:
                platform.testbed.down()


def run(args: argparse.Namespace) -> int:
    if os.geteuid() != 0:
        print("netnoise: bench testbed brings up network namespaces: run it as root")
        return 2
    links(args.seconds)
    with tempfile.TemporaryDirectory(prefix="netnoise-bench-testbed-build-") as build:
        programs = Path(args.bin) if args.bin else Path(build) / "bin"
        if not args.bin:
            scratch = Path(build)
            build_programs(
                netnoise_config.CSRC, programs, mpicc="mpicc", cflags="-O2",
                log=scratch / "build.log", build_dir=scratch / "objects",
            )  # fmt: skip
        arbitration(programs)
    return 0


def _seconds(text: str) -> float:
    try:
        seconds = float(text)
    except ValueError:
        seconds = 0.0
    if not 1 <= seconds <= 600:
        raise argparse.ArgumentTypeError(f"{text!r}: give 1 to 600 seconds")
    return seconds


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--seconds", type=_seconds, default=5, help="recorded seconds per iperf3 run (1 to 600)"
    )
    parser.add_argument("--bin", help="built programs (default: build them into a scratch dir)")
