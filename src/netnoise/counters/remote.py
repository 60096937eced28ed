"""Counters of a job's nodes on a cluster, read by a sampler on each node.

The runner of a measurement sits on one node of its job; the counters of the
others are read where they are, by one small sampler per node started as a step
of the job that overlaps the measured ranks (:meth:`Slurm.node_step`). Runner
and samplers talk through files in a directory on the shared file system:

- each sampler writes ``ready-<node>`` once it has read its ports;
- for snapshot k the runner writes ``request-<k>``; every sampler answers with
  ``<node>-<k>.json`` (its rows, written under another name, then renamed);
- ``stop`` ends the samplers.

The runner stamps every row of snapshot k with the time it asked for it, so
the rows of all nodes share its clock. A sampler notices a request at once
where inotify sees other hosts' files (a local file system: the testbed's Slurm
cluster), within its 50 ms recheck elsewhere (NFS).

What a node reads: its network interfaces and their queues
(:mod:`netnoise.counters.netdev`) and its InfiniBand ports
(:mod:`netnoise.counters.infiniband`), those named in ``ports`` (every one but
loopback when empty). From a node the switches' own counters are out of reach
(reading them needs root), so the network side of a job is the far end of each
of its links (:func:`link_view`).
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from netnoise.atomic import write_json
from netnoise.counters import infiniband, netdev, now
from netnoise.filewatch import DirectoryWatch

# How often a waiting side rechecks the directory (what inotify may not report).
CHECK_S = 0.05
# A node's rows that describe what crosses its link from the network's side: the
# switch port facing the node sends what the node receives ...
FAR_END = {"rx_bytes": "tx_bytes", "rx_packets": "tx_packets", "rx_dropped": "tx_dropped"}
# ... and pushes back on what the node sends: InfiniBand's PortXmitWait (ticks the
# port had data but no credit from the switch) and the node's queue on the link
# (tbf overlimits on the testbed; where a driver's ring was full elsewhere).
PUSHBACK = ("xmit_wait_ticks", "qdisc_overlimits", "qdisc_drops", "qdisc_backlog_bytes")
# What the node itself injects.
NEAR_END = ("tx_bytes", "tx_packets", "tx_dropped")


class SamplerFailed(RuntimeError):
    """A node's sampler did not start or did not answer; the message says which."""


def node_name() -> str:
    """This node's name as Slurm knows it (in a step), else its short host name."""
    return os.environ.get("SLURMD_NODENAME") or socket.gethostname().split(".")[0]


def read_ports(node: str, ports: Sequence[str] = ()) -> list[dict[str, Any]]:
    """One reading of this node's ports (network interfaces and InfiniBand HCAs
    named in ``ports``; all but loopback when empty)."""
    wanted = set(ports) or None
    rows = netdev.snapshot_rows(node, wanted)
    if infiniband.SYSFS.is_dir():
        rows += infiniband.snapshot_rows(node=node, wanted=wanted)
    if not rows:
        raise SamplerFailed(
            f"{node}: no network port to read"
            + (f" among {', '.join(ports)}" if ports else "")
            + f" ({', '.join(netdev.interfaces()) or 'no interfaces'} in {netdev.SYSFS})"
        )
    return rows


def link_view(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """A node's readings as the two ends of each of its links: ``node_nic`` (port
    as read: what the node injects) and ``switch_port`` (port ``switch:<port>``:
    what the network delivers to the node and how it pushed back on it)."""
    out = []
    for row in rows:
        counter = row["counter"]
        if counter in NEAR_END:
            out.append({**row, "role": "node_nic"})
        far = FAR_END.get(counter, counter if counter in PUSHBACK else None)
        if far is not None:
            out.append(
                {**row, "role": "switch_port", "port": f"switch:{row['port']}", "counter": far}
            )
    return out


def network_ports(rows: Sequence[dict[str, Any]]) -> set[tuple[str, str]]:
    """The (device, port) of every switch-side row of :func:`link_view`."""
    return {(r["device"], r["port"]) for r in rows if r["role"] == "switch_port"}


def serve(directory: str | os.PathLike[str], node: str, ports: Sequence[str] = ()) -> None:
    """The sampler on one node: answer every request in ``directory`` until ``stop``."""
    directory = Path(directory)
    read_ports(node, ports)
    (directory / f"ready-{node}").touch()
    index = 0
    with DirectoryWatch(directory) as watch:
        while not (directory / "stop").exists():
            if (directory / f"request-{index}").exists():
                write_json(directory / f"{node}-{index}.json", read_ports(node, ports))
                index += 1
                continue
            watch.wait(CHECK_S)


class RemoteCounters:
    """A snapshot function (call it) over samplers on ``nodes``: a context manager
    that starts them through ``launch`` (the argv that starts one sampler per node,
    given the sampler's own argv) and stops them when the run is over."""

    def __init__(
        self,
        nodes: Sequence[str],
        directory: str | os.PathLike[str],
        launch: Any,
        *,
        ports: Sequence[str] = (),
        log: str | os.PathLike[str],
        timeout_s: float = 60,
    ):
        self.nodes = list(nodes)
        self.directory = Path(directory)
        self.launch = launch
        self.ports = list(ports)
        self.log = Path(log)
        self.timeout_s = timeout_s
        self.index = 0
        self.proc: subprocess.Popen | None = None

    def sampler_argv(self) -> list[str]:
        argv = [sys.executable, "-m", "netnoise.counters.remote", str(self.directory)]
        return [*argv, *(["--ports", ",".join(self.ports)] if self.ports else [])]

    def __enter__(self) -> RemoteCounters:
        self.directory.mkdir(parents=True, exist_ok=True)
        argv = self.launch(self.sampler_argv())
        with open(self.log, "ab") as log:
            log.write(f"$ [counters] {' '.join(argv)}\n".encode())
            log.flush()
            self.proc = subprocess.Popen(
                argv, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
            )
        try:
            self._wait([f"ready-{n}" for n in self.nodes], "the samplers to start")
        except BaseException:
            self.close()
            raise
        return self

    def __call__(self) -> list[dict[str, Any]]:
        t = now()
        (self.directory / f"request-{self.index}").touch()
        answers = [f"{n}-{self.index}.json" for n in self.nodes]
        self._wait(answers, f"snapshot {self.index}")
        self.index += 1
        rows = []
        for answer in answers:
            rows += [{**r, "time_s": t} for r in json.loads((self.directory / answer).read_text())]
        return link_view(rows)

    def _wait(self, names: Sequence[str], what: str) -> None:
        deadline = time.monotonic() + self.timeout_s
        with DirectoryWatch(self.directory) as watch:
            while not all((self.directory / n).exists() for n in names):
                if self.proc is not None and self.proc.poll() is not None:
                    raise SamplerFailed(
                        f"the counter samplers exited with status {self.proc.returncode} "
                        f"while the runner waited for {what}; see {self.log}"
                    )
                if time.monotonic() > deadline:
                    missing = [n for n in names if not (self.directory / n).exists()]
                    raise SamplerFailed(
                        f"no answer within {self.timeout_s:g} s while waiting for {what} "
                        f"({', '.join(missing)}); see {self.log}"
                    )
                watch.wait(CHECK_S)

    def close(self) -> None:
        if self.proc is None:
            return
        (self.directory / "stop").touch()
        try:
            self.proc.wait(timeout=self.timeout_s)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.proc = None

    def __exit__(self, *exc: object) -> None:
        self.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m netnoise.counters.remote",
        description="Answer a runner's counter snapshot requests in DIRECTORY (one per node).",
    )
    parser.add_argument("directory")
    parser.add_argument("--ports", default="", help="interfaces and HCAs to read (default: all)")
    args = parser.parse_args(argv)
    serve(args.directory, node_name(), [p for p in args.ports.split(",") if p])
    return 0


if __name__ == "__main__":
    sys.exit(main())
