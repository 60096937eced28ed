"""An emulated cluster on one machine: network namespaces as nodes, bridges as switches.

Layout for ``prefix`` "nn", 4 nodes, 2 racks::

    nn-n01  nn-n02         nn-n03  nn-n04        node namespaces, eth0 = 10.77.0.i/24
      |eth0   |eth0          |eth0   |eth0        tbf on eth0: the node's upload
    nnp01   nnp02          nnp03   nnp04          bridge ports: tbf = the node's download
      \\      /                \\      /
       nnbr1  -- nnup1 ... nnup2 -- nnbr2         rack switches (bridges)
                 nndn1      nndn2                 uplinks to the core, shaped both ways
                     \\      /
                      nncore                      core switch (only with racks > 1)

Every switch, port and uplink lives in the namespace ``<prefix>-fabric``; nodes
are ``<prefix>-nNN``. Nothing outside names starting with the prefix is ever
created, changed or removed. Bring-up first removes leftovers of a crashed run.

A run claims the testbed it uses (``claim.json``: the workflow's process, see
netnoise.lifeline). Another run is refused while that one lives, and after it
died as long as anything still runs inside the testbed: it never shares the
links with an orphan of a killed run. The state directory is readable by
anyone, so ``status`` tells the truth without root.
"""

from __future__ import annotations

import contextlib
import dataclasses
import fcntl
import json
import os
import shutil
import signal
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from netnoise import lifeline
from netnoise.atomic import atomic_open, write_json

#: An Ethernet header: a frame is the MTU and these bytes.
ETHERNET_HEADER_BYTES = 14


def frame_problems(testbed: dict[str, Any], where: str) -> list[str]:
    """A testbed layout whose token buckets cannot pass one whole frame of its MTU
    (``where`` names the layout's keys); none where it sets neither."""
    burst, mtu = testbed.get("burst_bytes"), testbed.get("mtu_bytes")
    if burst is None or mtu is None or burst >= mtu + ETHERNET_HEADER_BYTES:
        return []
    return [
        f"{where}: burst_bytes ({burst}) must hold a frame of mtu_bytes ({mtu}) with its "
        f"{ETHERNET_HEADER_BYTES}-byte header: at least {mtu + ETHERNET_HEADER_BYTES}"
    ]


STATE_ROOT = Path("/run/netnoise")
SUBNET = "10.77.0"


class TestbedError(RuntimeError):
    """The testbed cannot be brought up or used here; the message says why and what to do."""

    __test__ = False  # not a pytest test class despite the name


@dataclass(frozen=True)
class Node:
    index: int  # 1-based
    name: str  # namespace and host name
    address: str
    rack: int  # 1-based
    port: str  # bridge port in the fabric namespace


@dataclass(frozen=True)
class TestbedSpec:
    __test__ = False
    prefix: str
    nodes: int
    racks: int
    nic_mbit: float
    backbone_mbit: float
    burst_bytes: int
    queue_bytes: int
    tcp_congestion: str
    btl_tcp_links: int
    tcp_rto_min_ms: float | None = None
    socket_buffer_bytes: int | None = None
    backbone_arbitration: str = "fifo"
    mtu_bytes: int = 1500

    @classmethod
    def from_config(cls, testbed: dict[str, Any]) -> TestbedSpec:
        fields = {f.name for f in dataclasses.fields(cls)}
        spec = cls(**{k: v for k, v in testbed.items() if k in fields})
        if spec.nodes < spec.racks:
            raise TestbedError(
                f"platform.testbed.nodes ({spec.nodes}) must be at least "
                f"platform.testbed.racks ({spec.racks})"
            )
        for problem in frame_problems(spec.as_dict(), "platform.testbed"):
            raise TestbedError(problem)
        return spec

    @property
    def frame_bytes(self) -> int:
        """A full Ethernet frame with its header: what a turn of round-robin
        arbitration lets each sender put on the uplink."""
        return self.mtu_bytes + ETHERNET_HEADER_BYTES

    @property
    def fabric(self) -> str:
        return f"{self.prefix}-fabric"

    def node_list(self) -> list[Node]:
        nodes = []
        for i in range(1, self.nodes + 1):
            rack = (i - 1) * self.racks // self.nodes + 1
            nodes.append(
                Node(i, f"{self.prefix}-n{i:02d}", f"{SUBNET}.{i}", rack, f"{self.prefix}p{i:02d}")
            )
        return nodes

    def bridge(self, rack: int) -> str:
        return f"{self.prefix}br{rack}"

    def uplink(self, rack: int) -> tuple[str, str]:
        """(rack-side end, core-side end) of a rack's uplink veth pair."""
        return f"{self.prefix}up{rack}", f"{self.prefix}dn{rack}"

    @property
    def core(self) -> str:
        return f"{self.prefix}core"

    def namespaces(self) -> list[str]:
        return [self.fabric, *(n.name for n in self.node_list())]

    def as_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


#: Services that live on a testbed, by the directory they keep in its state
#: directory: how to stop one before the testbed goes. A service registers
#: itself here (netnoise.testbed.slurm), so that the fabric knows none of them.
SERVICES: dict[str, Callable[[Testbed], None]] = {}


def run_command(argv: list[str], *, input: str | None = None, check: bool = True) -> str:
    """Run a host command (ip, tc, ...); its output, or a TestbedError with its message."""
    proc = subprocess.run(argv, input=input, capture_output=True, text=True, timeout=60)
    if check and proc.returncode != 0:
        raise TestbedError(f"{' '.join(argv)} failed: {proc.stderr.strip() or proc.stdout.strip()}")
    return proc.stdout


def _shorten(text: str, limit: int = 120) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _ip_batch(commands: list[str], netns: str | None = None) -> None:
    """Run many ip(8) commands in one process: set-up time is dominated by forks."""
    argv = ["ip", *(["-n", netns] if netns else []), "-batch", "-"]
    run_command(argv, input="\n".join(commands) + "\n")


def _tc_batch(commands: list[str], netns: str) -> None:
    run_command(["tc", "-n", netns, "-batch", "-"], input="\n".join(commands) + "\n")


def _tbf(dev: str, mbit: float, spec: TestbedSpec) -> str:
    return (
        f"qdisc replace dev {dev} root tbf rate {mbit:g}mbit "
        f"burst {spec.burst_bytes} limit {spec.queue_bytes}"
    )


def _backbone(dev: str, spec: TestbedSpec) -> list[str]:
    """The shaping of one uplink end. ``fifo``: one token-bucket queue in arrival order,
    as an Ethernet switch port. ``round_robin``: the link's rate shared by one queue per
    sending node, served in turn a frame each, as an InfiniBand switch arbitrates between
    its input ports: a small message waits for one frame of every other sender, not for
    the whole queue they filled."""
    if spec.backbone_arbitration == "fifo":
        return [_tbf(dev, spec.backbone_mbit, spec)]
    link = f"rate {spec.backbone_mbit:g}mbit ceil {spec.backbone_mbit:g}mbit"
    commands = [
        f"qdisc replace dev {dev} root handle 1: htb default ffff",
        f"class add dev {dev} parent 1: classid 1:1 htb {link} burst {spec.burst_bytes} "
        f"cburst {spec.burst_bytes} quantum {spec.frame_bytes}",
    ]
    # A sender's own rate is the least htb takes: every sender borrows the link's
    # rate from the parent, where the senders are served in turn, a quantum each.
    senders = [(f"{0x10 + node.index:x}", node.address) for node in spec.node_list()]
    for minor, address in [*senders, ("ffff", None)]:
        commands += [
            f"class add dev {dev} parent 1:1 classid 1:{minor} htb rate 8bit "
            f"ceil {spec.backbone_mbit:g}mbit quantum {spec.frame_bytes} burst {spec.frame_bytes} "
            f"cburst {spec.frame_bytes}",
            f"qdisc add dev {dev} parent 1:{minor} bfifo limit {spec.queue_bytes}",
        ]
        if address:
            commands.append(
                f"filter add dev {dev} parent 1: protocol ip prio 1 u32 "
                f"match ip src {address}/32 flowid 1:{minor}"
            )
    return commands


class Testbed:
    """Lifecycle and state of one emulated cluster."""

    __test__ = False

    def __init__(self, spec: TestbedSpec, state_root: Path = STATE_ROOT):
        self.spec = spec
        self.state_root = state_root
        self.state_dir = state_root / spec.prefix
        self.agent = self.state_dir / "agent"
        self.state_file = self.state_dir / "state.json"
        self.claim_file = self.state_dir / "claim.json"

    # ------------------------------------------------------------ checks
    @staticmethod
    def check_host() -> None:
        """Raise TestbedError unless this host can run a testbed."""
        if os.geteuid() != 0:
            raise TestbedError(
                "the testbed platform needs root (it creates network namespaces); "
                "run as root, or set platform.kind: localhost to run every rank on this host"
            )
        missing = [t for t in ("ip", "tc", "unshare", "mpirun") if shutil.which(t) is None]
        if missing:
            raise TestbedError(
                f"the testbed platform needs {', '.join(missing)} on PATH (make setup installs "
                "iproute2, util-linux and Open MPI), or set platform.kind: localhost"
            )

    # ------------------------------------------------------------ lifecycle
    def existing_namespaces(self) -> list[str]:
        out = run_command(["ip", "netns", "list"])
        names = [line.split()[0] for line in out.splitlines() if line.strip()]
        return sorted(n for n in names if n.startswith(f"{self.spec.prefix}-"))

    def up(self) -> dict[str, Any]:
        """Bring the testbed up from scratch (removing any leftovers first)."""
        self.check_host()
        self.down()
        started = time.monotonic()
        try:
            self._create()
        except BaseException:
            self.down()
            raise
        state = {
            "spec": self.spec.as_dict(),
            "created": time.time(),
            "setup_s": round(time.monotonic() - started, 3),
        }
        for directory in (self.state_root, self.state_dir):
            directory.mkdir(parents=True, exist_ok=True)
            directory.chmod(0o755)
        self._write_agent()
        self._write_public(self.state_file, state)
        return state

    def ensure_up(self) -> None:
        """Bring the testbed up unless it is already up with this very spec, and claim it
        for this run; refuse it while another run (alive, or dead with processes left
        inside) holds it.

        Serialised by a lock, so concurrent jobs never tear down each other's testbed."""
        self.check_host()
        me = lifeline.owner()
        self.state_root.mkdir(parents=True, exist_ok=True)
        lock = self.state_root / f"{self.spec.prefix}.lock"
        with open(lock, "w") as fh:
            fcntl.flock(fh, fcntl.LOCK_EX)
            holder = self.claim()
            if holder not in (None, me) and holder.alive():
                raise TestbedError(
                    f"testbed {self.spec.prefix} is in use by another run (pid {holder.pid}: "
                    f"{_shorten(holder.command())}); wait for it to end, or stop it and run "
                    f"'netnoise testbed down'"
                )
            if not self.is_up():
                self.up()
            elif holder != me:
                left = self.processes_inside()
                if left:
                    whose = f"of a run that is gone (pid {holder.pid})" if holder else "no run owns"
                    raise TestbedError(
                        f"testbed {self.spec.prefix} still runs {len(left)} process(es) {whose} "
                        f"(pids {', '.join(map(str, left[:10]))}); a measurement beside them "
                        f"would share their links. 'sudo .venv/bin/netnoise testbed down' "
                        f"kills them and removes the testbed; then run again"
                    )
            self._write_public(self.claim_file, me.as_dict())

    def claim(self) -> lifeline.Owner | None:
        """The run that last claimed the testbed, or None."""
        try:
            return lifeline.Owner.from_dict(json.loads(self.claim_file.read_text()))
        except FileNotFoundError:
            return None
        except (ValueError, KeyError, TypeError):  # a claim cut short: nobody's
            return None

    def processes_inside(self) -> list[int]:
        """Every process in one of the testbed's namespaces (needs root; a process this
        user may not inspect, such as a container's init, is not counted)."""
        namespaces = set()
        for ns in self.existing_namespaces():
            with contextlib.suppress(FileNotFoundError):
                info = os.stat(f"/run/netns/{ns}")
                namespaces.add((info.st_dev, info.st_ino))
        inside = []
        for entry in os.scandir("/proc"):
            if entry.name.isdigit():
                with contextlib.suppress(OSError):
                    info = os.stat(f"/proc/{entry.name}/ns/net")
                    if (info.st_dev, info.st_ino) in namespaces:
                        inside.append(int(entry.name))
        return sorted(inside)

    def is_up(self) -> bool:
        return self._up_or_why()[0] is True

    def _up_or_why(self) -> tuple[bool | None, str | None]:
        """(True or False, None), or (None, why it cannot tell)."""
        try:
            state = json.loads(self.state_file.read_text())
            agent = self.agent.exists()
        except PermissionError as err:
            return None, f"{err.filename}: permission denied (run as root)"
        except (OSError, ValueError):
            return False, None
        if state.get("spec") != self.spec.as_dict() or not agent:
            return False, None
        return self.existing_namespaces() == sorted(self.spec.namespaces()), None

    @staticmethod
    def _write_public(path: Path, data: Any) -> None:
        write_json(path, data)
        path.chmod(0o644)

    def down(self) -> list[str]:
        """Kill everything running inside the testbed and remove it (its Slurm
        cluster first, if it has one); return what was removed.

        Without root it refuses, unless there is nothing to remove."""
        removed = self.existing_namespaces()
        try:
            anything = bool(removed) or self.state_dir.exists()
        except PermissionError:
            anything = True
        if anything and os.geteuid() != 0:
            raise TestbedError(
                f"removing testbed {self.spec.prefix} needs root (it kills what runs inside "
                "and deletes network namespaces): run it as root, e.g. "
                "'sudo .venv/bin/netnoise testbed down'"
            )
        self._stop_services()
        for ns in removed:
            self._kill_namespace_processes(ns)
        for ns in removed:
            run_command(["ip", "netns", "delete", ns], check=False)
        shutil.rmtree(self.state_dir, ignore_errors=True)
        left = self.existing_namespaces()
        if left:
            raise TestbedError(f"could not remove namespaces {left}")
        return removed

    def _stop_services(self) -> None:
        """Stop what runs on the testbed and keeps its state in a directory of the
        testbed's own (a Slurm cluster), before its namespaces go."""
        for name, stop in SERVICES.items():
            if (self.state_dir / name).exists():
                stop(self)

    @staticmethod
    def _kill_namespace_processes(ns: str) -> None:
        for _ in range(5):
            pids = [int(p) for p in run_command(["ip", "netns", "pids", ns], check=False).split()]
            if not pids:
                return
            for pid in pids:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            time.sleep(0.05)

    def _create(self) -> None:
        spec = self.spec
        nodes = spec.node_list()
        _ip_batch([f"netns add {ns}" for ns in spec.namespaces()])
        fabric = ["link set lo up"]
        for rack in range(1, spec.racks + 1):
            fabric += [
                f"link add {spec.bridge(rack)} mtu {spec.mtu_bytes} type bridge stp_state 0 "
                "forward_delay 0",
                f"link set {spec.bridge(rack)} up",
            ]
        if spec.racks > 1:
            fabric += [
                f"link add {spec.core} mtu {spec.mtu_bytes} type bridge stp_state 0 "
                "forward_delay 0",
                f"link set {spec.core} up",
            ]
            for rack in range(1, spec.racks + 1):
                up, down = spec.uplink(rack)
                fabric += [
                    f"link add {up} mtu {spec.mtu_bytes} type veth peer name {down} "
                    f"mtu {spec.mtu_bytes}",
                    f"link set {up} master {spec.bridge(rack)} up",
                    f"link set {down} master {spec.core} up",
                ]
        for node in nodes:
            fabric += [
                f"link add {node.port} mtu {spec.mtu_bytes} type veth peer name eth0 "
                f"netns {node.name} mtu {spec.mtu_bytes}",
                f"link set {node.port} master {spec.bridge(node.rack)} up",
            ]
        _ip_batch(fabric, spec.fabric)
        for node in nodes:
            setup = ["link set lo up", f"addr add {node.address}/24 dev eth0", "link set eth0 up"]
            if spec.tcp_rto_min_ms is not None:
                # The route to the other nodes carries the floor of every TCP
                # retransmission timeout between them; the host keeps its own.
                setup.append(
                    f"route replace {SUBNET}.0/24 dev eth0 proto kernel scope link "
                    f"src {node.address} rto_min {spec.tcp_rto_min_ms:g}ms"
                )
            if spec.backbone_arbitration == "round_robin":
                # Arbitration takes turns by the frame: the kernel's segmentation
                # offload would queue 8-16 kB aggregates as one, a turn 6 to 11
                # frames long.
                setup.append("link set eth0 gso_max_segs 1")
            _ip_batch(setup, node.name)
            _tc_batch([_tbf("eth0", spec.nic_mbit, spec)], node.name)
        shaping = [_tbf(node.port, spec.nic_mbit, spec) for node in nodes]
        if spec.racks > 1:
            for rack in range(1, spec.racks + 1):
                shaping += [cmd for end in spec.uplink(rack) for cmd in _backbone(end, spec)]
        _tc_batch(shaping, spec.fabric)

    def _write_agent(self) -> None:
        """The rsh agent mpirun uses: maps a node address to its namespace and host name."""
        cases = "\n".join(f"  {n.address}) ns={n.name} ;;" for n in self.spec.node_list())
        script = f"""#!/bin/sh
# netnoise testbed launch agent for mpirun (--mca plm_rsh_agent): called as
# "agent [options] HOST COMMAND...", runs COMMAND inside HOST's namespace
# with the node's own host name.
while [ $# -gt 0 ]; do case "$1" in -*) shift ;; *) break ;; esac; done
host=$1
shift
case "$host" in
{cases}
  *) echo "netnoise testbed agent: unknown host '$host'" >&2; exit 255 ;;
esac
exec ip netns exec "$ns" unshare --uts sh -c 'hostname "$0" && exec sh -c "$1"' "$ns" "$*"
"""
        with atomic_open(self.agent) as fh:
            fh.write(script)
        self.agent.chmod(0o755)

    # ------------------------------------------------------------ use
    def node(self, name_or_index: str | int) -> Node:
        for node in self.spec.node_list():
            if name_or_index in (node.name, node.index, str(node.index)):
                return node
        raise TestbedError(
            f"no testbed node {name_or_index!r}; nodes are "
            f"{', '.join(n.name for n in self.spec.node_list())}"
        )

    def exec_argv(self, node: Node, argv: list[str]) -> list[str]:
        """Run ``argv`` on ``node``: in its network namespace, with its host name."""
        return [
            "ip",
            "netns",
            "exec",
            node.name,
            "unshare",
            "--uts",
            "sh",
            "-c",
            'hostname "$0" && exec "$@"',
            node.name,
            *argv,
        ]

    def status(self) -> dict[str, Any]:
        """What anyone may know: ``up`` is None (and ``unknown`` says why) when this
        user cannot tell; ``processes_inside`` is None without root."""
        spec = self.spec
        links = {"nic_mbit": spec.nic_mbit}
        if spec.racks > 1:
            links["backbone_mbit"] = spec.backbone_mbit
            links["backbone_arbitration"] = spec.backbone_arbitration
        up, unknown = self._up_or_why()
        try:
            holder = self.claim()
        except PermissionError:
            holder = None
        return {
            "up": up,
            **({"unknown": unknown} if unknown else {}),
            "claimed_by": holder and {**holder.as_dict(), "alive": holder.alive()},
            "processes_inside": len(self.processes_inside()) if os.geteuid() == 0 else None,
            "prefix": spec.prefix,
            "namespaces_present": self.existing_namespaces(),
            "racks": spec.racks,
            "links": links,
            "queue_bytes": spec.queue_bytes,
            "burst_bytes": spec.burst_bytes,
            "mtu_bytes": spec.mtu_bytes,
            "tcp_congestion": spec.tcp_congestion,
            "tcp_rto_min_ms": spec.tcp_rto_min_ms,
            "socket_buffer_bytes": spec.socket_buffer_bytes,
            "nodes": [
                {"name": n.name, "address": n.address, "rack": n.rack} for n in spec.node_list()
            ],
        }
