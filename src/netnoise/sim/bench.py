"""Wall-clock time of the simulator on the paper's two largest fat-trees.

``python -m netnoise.sim.bench [--runs N] [--seed S]`` times XGFT(4; 12,12,12,6; 1,12,12,3)
(10,368 endpoints) and XGFT(4; 12,12,12,12; 1,12,12,6) (20,736 endpoints): binomial
broadcast, perturbation ratio 1/2, 1000 runs, and prints the seconds of each case.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

from netnoise.sim.congestion import simulate, summarize
from netnoise.sim.topology import parse_spec

CASES = (
    ("XGFT(4; 12,12,12,6; 1,12,12,3)", "xgft:12,12,12,6/1,12,12,3"),
    ("XGFT(4; 12,12,12,12; 1,12,12,6)", "xgft:12,12,12,12/1,12,12,6"),
)
TARGET_S = 30.0  # for the 20,736-endpoint case on a 2-core machine


def run(runs: int = 1000, seed: int = 1) -> list[dict[str, float | str]]:
    results = []
    for name, spec in CASES:
        t0, c0 = time.perf_counter(), time.process_time()
        topo = parse_spec(spec)
        frame = simulate(topo, "bcast", 0.5, runs, seed)
        seconds, cpu = time.perf_counter() - t0, time.process_time() - c0
        slow = summarize(frame["slowdown"])
        results.append(
            {
                "case": name,
                "spec": spec,
                "endpoints": topo.n_endpoints,
                "runs": runs,
                "seconds": seconds,
                "cpu_seconds": cpu,
                "mean_slowdown": slow["mean"],
            }
        )
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m netnoise.sim.bench", description=__doc__)
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(
        f"binomial broadcast, ratio 0.5, {args.runs} runs, {os.cpu_count()} CPUs "
        f"(load average before: {load}; target <= {TARGET_S:.0f} s for 20,736 endpoints)"
    )
    for r in run(args.runs, args.seed):
        print(
            f"{r['case']:<34} {r['endpoints']:>6} endpoints: {r['seconds']:7.2f} s wall, "
            f"{r['cpu_seconds']:7.2f} s CPU (mean slowdown {r['mean_slowdown']:.3f})"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
