"""The simgrid platform: MPI programs in SimGrid's SMPI, in simulated time.

Every rank runs inside one ``smpirun`` process on a platform file generated
from the config (``platform.simgrid``): the testbed's racks and backbone, a
fat-tree or torus named as the congestion simulator names them
(``netnoise.sim.topology``), or a dragonfly. The programs are built for it
with ``smpicc`` without the wait layer (csrc/Makefile, ``FLAVOUR=smpi``): SMPI's clock is
simulated, so a rank waiting costs no time and no core, and a run's times
come from the platform's latencies, rates and network model, never from the
host's CPU. A rank's own computation is not simulated
(``smpi/simulate-computation:no``): the programs' sleeps and busy waits take
simulated time, their arithmetic none. Each smpirun is a simulation of its
own, so the jobs of a co-run run in one: the dispatcher ``corun`` (built with
the programs, csrc/simgrid/corun.c) gives each its share of the ranks, every
job's rank i on host i, as a co-run's jobs share the testbed's nodes.
"""

from __future__ import annotations

import hashlib
import re
import shutil
import subprocess
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any
from xml.sax.saxutils import quoteattr

import numpy as np
import pandas as pd

from netnoise import counters
from netnoise.atomic import atomic_open
from netnoise.platform.base import (
    SIMULATED,
    Launch,
    Platform,
    PlatformUnavailable,
    Program,
    one_node_per_rank,
)
from netnoise.settings import PlatformSettings, TestbedSettings
from netnoise.sim.topology import XGFT, SpecError, Torus, parse_spec

#: Where generated platform and host files go, relative to the working
#: directory (the workflow's results/<platform.kind>).
PLATFORM_DIR = Path("results/simgrid/platform")

#: SimGrid's network model for each ``platform.simgrid.network_model``.
NETWORK_MODELS = {"flow": "CM02", "packet": "ns-3"}

#: Settings every run gets. The flow model is CM02 without SimGrid's reverse
#: traffic of TCP acknowledgements (``network/crosstraffic``), so a link moves
#: data at the configured rate. Every send is synchronous
#: (``smpi/send-is-detached-thresh:0``): with SMPI's default eager sends below
#: 64 KiB the receiver of a ping-pong's answer saw it one route latency late
#: (a 1-byte round trip over one 50 us link took 150.4 us, synchronous 100.3).
#: The speed SMPI assumes of this host is the simulated hosts' (1 Gflop/s), so
#: that a rank's busy wait (nn_spin_ns) computes on its host for as long.
SMPI_SETTINGS = (
    "smpi/simulate-computation:no",
    "smpi/host-speed:1Gf",
    "smpi/send-is-detached-thresh:0",
    "smpi/display-timing:yes",
    "network/crosstraffic:0",
)

#: Settings of the flow model only: SimGrid's link-load plugin, which counts
#: each link's bytes for a program's --link-counters (csrc/simgrid/link_counters.c).
#: It counts the flow model's load; the packet model's links have none.
FLOW_SETTINGS = ("plugin:link_load",)

#: The co-run dispatcher, beside the programs it runs.
CORUN = "corun"

#: The header of a program's --link-counters file.
LINK_COUNTER_COLUMNS = ["time_s", "link", "bytes", "saturated_s"]
#: The link SimGrid adds for a host's messages to itself.
LOOPBACK = "__loopback__"

_SIMULATED = re.compile(r"Simulated time: ([0-9.eE+-]+) seconds")
_WALL = re.compile(r"The simulation took ([0-9.eE+-]+) seconds")


@dataclass(frozen=True)
class GeneratedPlatform:
    """A platform file's text and the host names, in the order ranks take them."""

    xml: str
    hosts: list[str]
    description: str

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.xml.encode()).hexdigest()


def _link(link_id: str, mbit: float, latency_us: float) -> str:
    """A full-duplex link: ``mbit`` Mbit/s each way."""
    return (
        f'    <link id="{link_id}" bandwidth="{mbit:g}Mbps" latency="{latency_us:g}us" '
        'sharing_policy="SPLITDUPLEX"/>'
    )


def _document(body: list[str]) -> str:
    return "\n".join(
        [
            "<?xml version='1.0'?>",
            '<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">',
            '<platform version="4.1">',
            *body,
            "</platform>",
            "",
        ]
    )


def graph_platform(
    hosts: list[str], routers: list[str], cables: list[tuple[str, str, float]], latency_us: float
) -> list[str]:
    """The body of a platform given as a graph, as SimGrid's ns-3 binding needs it:
    hosts and routers (switches) joined by ``cables`` (end, end, Mbit/s), each a
    one-hop route; ns-3 routes over the graph, SimGrid's own model by shortest
    paths (Floyd)."""
    body = ['  <zone id="network" routing="Floyd">']
    body += [f'    <host id="{name}" speed="1Gf"/>' for name in hosts]
    body += [f'    <router id="{name}"/>' for name in routers]
    # The DTD wants every link before the first route.
    body += [
        f'    <link id="cable-{i}" bandwidth="{mbit:g}Mbps" latency="{latency_us:g}us"/>'
        for i, (_, _, mbit) in enumerate(cables)
    ]
    body += [
        f'    <route src="{a}" dst="{b}"><link_ctn id="cable-{i}"/></route>'
        for i, (a, b, _) in enumerate(cables)
    ]
    body.append("  </zone>")
    return body


def rack_hosts(testbed: TestbedSettings) -> tuple[tuple[str, ...], ...]:
    """The host names of each rack of the testbed's layout (``platform.testbed``),
    as :func:`racks_platform` names them: the testbed's own node names."""
    nodes, racks = testbed.nodes, testbed.racks
    per_rack = -(-nodes // racks)
    names = [f"{testbed.prefix}-n{i + 1:02d}" for i in range(nodes)]
    return tuple(tuple(names[r * per_rack : (r + 1) * per_rack]) for r in range(racks))


def racks_platform(
    testbed: TestbedSettings, latency_us: float, packets: bool = False
) -> GeneratedPlatform:
    """The testbed's layout (``platform.testbed``: nodes, racks, nic_mbit,
    backbone_mbit): each node's link to its rack switch and, between racks,
    each rack's uplink to the core, full duplex, every link ``latency_us`` long;
    with ``packets`` as a graph for ns-3 (graph_platform). Ranks take the racks
    in turn, as the testbed's studies place allocations, so an allocation's
    traffic crosses the backbone."""
    nodes, racks = testbed.nodes, testbed.racks
    per_rack = -(-nodes // racks)
    names = [name for rack in rack_hosts(testbed) for name in rack]
    nic, backbone = testbed.nic_mbit, testbed.backbone_mbit
    order = testbed.rack_interleaved_nodes(nodes)
    description = f"{nodes} nodes in {racks} rack(s), {nic:g} Mbit/s node links" + (
        f", {backbone:g} Mbit/s rack uplinks" if racks > 1 else ""
    )
    if packets:
        switches = [f"switch-r{r + 1}" for r in range(racks)]
        cables = [(name, switches[i // per_rack], nic) for i, name in enumerate(names)]
        if racks > 1:
            cables += [(switch, "core", backbone) for switch in switches]
            switches.append("core")
        body = graph_platform(names, switches, cables, latency_us)
        return GeneratedPlatform(_document(body), order, description)
    body = ['  <zone id="racks" routing="Full">']
    body += [f'    <host id="{name}" speed="1Gf"/>' for name in names]
    body += [_link(f"nic-{name}", nic, latency_us) for name in names]
    if racks > 1:
        body += [_link(f"uplink-r{r + 1}", backbone, latency_us) for r in range(racks)]
    for i, src in enumerate(names):
        for j, dst in enumerate(names):
            if i == j:
                continue
            links = [("nic-" + src, "UP")]
            if racks > 1 and i // per_rack != j // per_rack:
                links += [(f"uplink-r{i // per_rack + 1}", "UP")]
                links += [(f"uplink-r{j // per_rack + 1}", "DOWN")]
            links += [("nic-" + dst, "DOWN")]
            ctn = "".join(f'<link_ctn id="{lid}" direction="{d}"/>' for lid, d in links)
            body.append(f'    <route src="{src}" dst="{dst}" symmetrical="NO">{ctn}</route>')
    body.append("  </zone>")
    return GeneratedPlatform(_document(body), order, description)


def topology_graph(spec: str, link_gbit: float, latency_us: float) -> GeneratedPlatform:
    """An XGFT or torus SPEC of netnoise.sim.topology as a graph for ns-3
    (graph_platform): its endpoints as hosts, its switches as routers, each of its
    cables a link, parallel cables of an XGFT as one link of their summed rate."""
    topology = parse_spec(spec)
    if not isinstance(topology, XGFT | Torus):
        raise SpecError(f"{spec!r}: a SimGrid platform is generated for xgft: and torus: only")
    ends = np.stack([topology.channel_src, topology.channel_dst])
    pairs, channels = np.unique(np.sort(ends, axis=0), axis=1, return_counts=True)
    # Each cable is two channels; a torus ring of 2 has one cable and four channels.
    parallel = channels // 2 if isinstance(topology, XGFT) else np.ones_like(channels)
    endpoints = topology.n_endpoints

    def name(node: int) -> str:
        return f"node-{node}" if node < endpoints else f"switch-{node - endpoints}"

    cables = [
        (name(int(a)), name(int(b)), float(link_gbit * 1000 * p))
        for (a, b), p in zip(pairs.T, parallel, strict=True)
    ]
    hosts = [name(i) for i in range(endpoints)]
    routers = [name(endpoints + i) for i in range(topology.n_switches)]
    body = graph_platform(hosts, routers, cables, latency_us)
    description = f"{spec}: {endpoints} hosts, {link_gbit:g} Gbit/s links, as a graph"
    return GeneratedPlatform(_document(body), hosts, description)


def cluster_platform(spec: str, link_gbit: float, latency_us: float) -> GeneratedPlatform:
    """An XGFT or torus SPEC of netnoise.sim.topology as a SimGrid cluster: SimGrid's
    FAT_TREE is the same PGFT(h; m; w; p) and routes up and down it; its TORUS puts
    a host on every vertex and routes dimension by dimension. Every cable has
    ``link_gbit`` each way and ``latency_us``."""
    topology = parse_spec(spec)
    if isinstance(topology, XGFT):
        kind = "FAT_TREE"
        params = ";".join(
            [
                str(topology.h),
                *(",".join(map(str, v)) for v in (topology.m, topology.w, topology.p)),
            ]
        )
    elif isinstance(topology, Torus):
        kind, params = "TORUS", ",".join(map(str, topology.dims))
    else:
        raise SpecError(f"{spec!r}: a SimGrid platform is generated for xgft: and torus: only")
    return _cluster(spec, topology.kind, kind, params, topology.n_endpoints, link_gbit, latency_us)


def _cluster(
    spec: str, name: str, kind: str, params: str, count: int, link_gbit: float, latency_us: float
) -> GeneratedPlatform:
    """SimGrid cluster ``name`` of ``count`` hosts in its topology ``kind`` with
    ``params``, every cable ``link_gbit`` each way and ``latency_us``."""
    body = [
        f'  <cluster id="{name}" prefix="node-" radical="0-{count - 1}" suffix="" '
        f'speed="1Gf" bw="{link_gbit:g}Gbps" lat="{latency_us:g}us" '
        f'topology="{kind}" topo_parameters={quoteattr(params)} sharing_policy="SPLITDUPLEX"/>'
    ]
    hosts = [f"node-{i}" for i in range(count)]
    description = f"{spec}: {count} hosts, {link_gbit:g} Gbit/s links"
    return GeneratedPlatform(_document(body), hosts, description)


#: ``dragonfly:`` and SimGrid's own DRAGONFLY parameters (groups, chassis,
#: routers: each a count and the cables joining two of them; hosts a router).
DRAGONFLY = "dragonfly:"


def dragonfly_platform(spec: str, link_gbit: float, latency_us: float) -> GeneratedPlatform:
    """A dragonfly ``dragonfly:G,g;C,c;R,r;N`` as a SimGrid DRAGONFLY cluster: G
    groups of C chassis of R routers with N hosts each, every cable ``link_gbit``
    each way and ``latency_us``; SimGrid routes minimally (local, global, local)."""
    params = spec[len(DRAGONFLY) :]
    (groups, _), (chassis, _), (routers, _), (per_router,) = (
        tuple(int(v) for v in part.split(",")) for part in params.split(";")
    )
    count = groups * chassis * routers * per_router
    return _cluster(spec, "dragonfly", "DRAGONFLY", params, count, link_gbit, latency_us)


def generate(settings: PlatformSettings) -> GeneratedPlatform:
    """The platform file of the validated ``platform`` section (kind simgrid)."""
    simgrid = settings.simgrid
    topology = simgrid.topology
    # SimGrid's ns-3 binding takes one-hop routes only: a graph of hosts and switches.
    packets = simgrid.network_model == "packet"
    if topology == "testbed":
        return racks_platform(settings.testbed, simgrid.latency_us, packets)
    if topology.startswith(DRAGONFLY):
        if packets:
            raise PlatformUnavailable(
                f"platform.simgrid.topology {topology!r}: a dragonfly is generated for the "
                "flow model only (platform.simgrid.network_model: flow); the packet model "
                "takes xgft:, torus: or testbed"
            )
        return dragonfly_platform(topology, simgrid.link_gbit, simgrid.latency_us)
    generator = topology_graph if packets else cluster_platform
    try:
        return generator(topology, simgrid.link_gbit, simgrid.latency_us)
    except SpecError as err:
        raise PlatformUnavailable(f"platform.simgrid.topology: {err}") from None


def rack_network_ports(
    racks: Sequence[Sequence[str]], nodes: Iterable[str]
) -> set[tuple[str, str]]:
    """The network ports of a job on the racks platform, as
    :func:`link_counter_rows` names them: its nodes' switch ports and, with
    several racks, both ends of the uplink of every rack it occupies (as
    ``netnoise.studies.variability.metrics.testbed_network_ports`` on the
    testbed)."""
    rack_of = {name: r + 1 for r, rack in enumerate(racks) for name in rack}
    names = set(nodes)
    unknown = names - rack_of.keys()
    if unknown:
        raise PlatformUnavailable(f"not hosts of the racks platform: {', '.join(sorted(unknown))}")
    ports = {(f"switch-r{rack_of[n]}", n) for n in names}
    if len(racks) > 1:
        for rack in {rack_of[n] for n in names}:
            ports |= {(f"switch-r{rack}", "uplink"), ("core", f"r{rack}")}
    return ports


def link_counter_rows(
    readings: pd.DataFrame, racks: Sequence[Sequence[str]] | None
) -> pd.DataFrame:
    """The tidy counters (:mod:`netnoise.counters`) of a program's --link-counters
    readings: ``tx_bytes`` and ``saturated_ns`` (the time the link ran at its full
    rate) of every link. On the racks platform (``racks``: its host names per
    rack) each direction of a link is the port that sends into it, named as on
    the testbed: a node's link up is its NIC (``node_nic``), down the switch's
    port toward it (``switch_port``); a rack's uplink up is the switch's
    ``uplink``, down the core's port toward the rack (``core_port``). Other
    platforms' links keep SimGrid's names, role ``link``."""
    missing = set(LINK_COUNTER_COLUMNS) - set(readings.columns)
    if missing:
        raise ValueError(f"link counter readings lack column(s) {', '.join(sorted(missing))}")
    ports: dict[str, tuple[str, str, str]] = {}
    if racks is not None:
        for r, rack in enumerate(racks, start=1):
            for node in rack:
                ports[f"nic-{node}_UP"] = (node, "nic", "node_nic")
                ports[f"nic-{node}_DOWN"] = (f"switch-r{r}", node, "switch_port")
            ports[f"uplink-r{r}_UP"] = (f"switch-r{r}", "uplink", "uplink")
            ports[f"uplink-r{r}_DOWN"] = ("core", f"r{r}", "core_port")
    rows = []
    for reading in readings.itertuples(index=False):
        link = str(reading.link)
        if link == LOOPBACK:
            continue
        if racks is None:
            device, port, role = link, "", "link"
        elif link in ports:
            device, port, role = ports[link]
        else:
            raise ValueError(f"link {link!r} is none of the racks platform's")
        for counter, value in (
            ("tx_bytes", float(reading.bytes)),
            ("saturated_ns", round(float(reading.saturated_s) * 1e9)),
        ):
            rows.append((float(reading.time_s), device, port, role, counter, value))
    return pd.DataFrame(rows, columns=counters.COLUMNS)


def run_times(output: str) -> dict[str, float] | None:
    """The simulated and the wall time (seconds) smpirun printed last in ``output``,
    or None when it printed none (the run failed first)."""
    simulated, wall = _SIMULATED.findall(output), _WALL.findall(output)
    if not simulated or not wall:
        return None
    sim_s, wall_s = float(simulated[-1]), float(wall[-1])
    return {
        "simulated_s": sim_s,
        "wall_s": wall_s,
        "simulated_per_wall": round(sim_s / wall_s, 6) if wall_s > 0 else None,
    }


class SimgridPlatform(Platform):
    """Every rank in one smpirun on a generated platform, in simulated time."""

    kind = "simgrid"
    clock = SIMULATED
    corun_in_one_launch = True
    # In a co-run the other program would wait for the failed one forever.
    rank_failure_marker = b"SMPI process did not return 0"
    runs_third_party = False
    build_flavour = "smpi"

    def __init__(self, settings: PlatformSettings, directory: str | Path = PLATFORM_DIR):
        super().__init__(settings)
        self.simgrid = settings.simgrid
        self.launcher = self.simgrid.smpirun
        self.directory = Path(directory)

    @property
    def has_counters(self) -> bool:
        """The flow model's links are counted (SimGrid's link-load plugin); the
        packet model's are not."""
        return self.simgrid.network_model == "flow"

    @property
    def reads_counters_in_run(self) -> bool:
        """The measured program counts the links (flow model only: link_counter_flags)."""
        return True

    @property
    def mpi_over_tcp(self) -> bool:
        return False

    @property
    def tcp_sockets(self) -> bool:
        return False

    @property
    def supports_ns3(self) -> bool:
        return self.simgrid.network_model == "packet"

    def mpicc(self, configured: str) -> str:
        return self.simgrid.smpicc

    def facts(self) -> tuple[str, list[tuple[str, str]]]:
        """The simulator, the network and its links."""
        simgrid = self.simgrid
        network = (
            "the testbed's racks (platform.testbed)" if self.racks is not None else simgrid.topology
        )
        return "This run's platform (from its config)", [
            ("Simulator", "SimGrid's SMPI: every rank simulated, in simulated time"),
            ("Network", network),
            ("Model", f"{simgrid.network_model} (flow: CM02; packet: ns-3)"),
            ("Links", f"{simgrid.link_gbit:g} Gbit/s, {simgrid.latency_us:g} µs each"),
        ]

    @cached_property
    def generated(self) -> GeneratedPlatform:
        return generate(self.settings)

    def _written(self, name: str, text: str) -> Path:
        """``text`` in file ``name`` of this directory, written once (names carry
        their content's checksum)."""
        path = self.directory / name
        if not path.exists():
            with atomic_open(path) as fh:
                fh.write(text)
        return path

    def files(self, hosts: list[str] | None = None) -> tuple[Path, Path]:
        """The platform file and a host file of ``hosts`` (default: every host, in
        the order ranks take them), under names of their content."""
        stem = f"platform-{self.generated.sha256[:16]}"
        names = self.generated.hosts if hosts is None else hosts
        hostfile = "".join(f"{name}\n" for name in names)
        digest = hashlib.sha256(hostfile.encode()).hexdigest()[:16]
        return self._written(f"{stem}.xml", self.generated.xml), self._written(
            f"{stem}-{digest}.hosts", hostfile
        )

    @property
    def smpi_settings(self) -> list[str]:
        """The ``--cfg`` settings of every smpirun."""
        flow = self.simgrid.network_model == "flow"
        model = NETWORK_MODELS[self.simgrid.network_model]
        return [*SMPI_SETTINGS, *(FLOW_SETTINGS if flow else ()), f"network/model:{model}"]

    def _smpirun(
        self, program: list[str], ranks: int, hosts: list[str] | None, env: dict[str, str]
    ) -> Launch:
        platform_file, hostfile = self.files(hosts)
        settings = self.smpi_settings
        argv = [
            self.launcher,
            "-np",
            str(ranks),
            "-platform",
            str(platform_file),
            "-hostfile",
            str(hostfile),
            *(f"--cfg={setting}" for setting in settings),
            "--log=xbt_cfg.thres:warning",
            *program,
        ]
        # smpirun runs every rank in its own process: the ranks' variables are its own.
        return Launch(argv, env)

    def rank_hosts(self, ranks: int, nodes: list[str]) -> list[str]:
        """The host of every rank: without ``nodes`` rank i on the platform's host
        i; with them, on the named hosts in turn (or one named per rank)."""
        if not nodes:
            hosts = len(self.generated.hosts)
            if ranks > hosts:
                raise PlatformUnavailable(
                    f"platform.simgrid.topology {self.simgrid.topology!r} has {hosts} "
                    f"hosts; a run of {ranks} ranks needs at least as many"
                )
            return self.generated.hosts[:ranks]
        unknown = sorted(set(nodes) - set(self.generated.hosts))
        if unknown:
            raise PlatformUnavailable(
                f"not hosts of the simulated platform ({self.generated.description}): "
                + ", ".join(unknown[:8])
            )
        one_node_per_rank(nodes, ranks)
        return [nodes[i % len(nodes)] for i in range(ranks)]

    def build_launch(
        self, program: list[str], ranks: int, nodes: list[str], env: dict[str, str]
    ) -> Launch:
        return self._smpirun(program, ranks, self.rank_hosts(ranks, nodes), env)

    def corun_launch(self, programs: Sequence[Program]) -> Launch:
        """The programs (background first) in one simulation: alone, as
        :meth:`mpi_launch` runs it; beside one background program, through the
        dispatcher. Every rank shares the simulation's environment, so the programs'
        variables must agree."""
        if len(programs) > 2:
            raise PlatformUnavailable(
                f"a co-run in simulated time takes one background job, got {len(programs) - 1}"
            )
        env = {name: value for program in programs for name, value in program.env.items()}
        if any(program.env.items() - env.items() for program in programs):
            raise PlatformUnavailable(
                "the jobs of a co-run in simulated time share one process's environment, "
                "and theirs differ: " + "; ".join(str(program.env) for program in programs)
            )
        if len(programs) == 1:
            (alone,) = programs
            return self.mpi_launch(alone.argv, alone.ranks, alone.nodes, env)
        dispatcher = Path(programs[0].argv[0]).parent / CORUN
        if not dispatcher.exists():
            raise PlatformUnavailable(
                f"a co-run on simgrid needs {dispatcher}, built with the programs "
                "(rule build_programs)"
            )
        words: list[str] = []
        hosts: list[str] = []
        for program in programs:
            words += [*([":"] if words else []), "-np", str(program.ranks), *program.argv]
            hosts += self.rank_hosts(program.ranks, program.nodes)
        return self._smpirun([str(dispatcher), *words], len(hosts), hosts, env)

    @property
    def racks(self) -> tuple[tuple[str, ...], ...] | None:
        """The host names of each rack on the racks platform (topology
        ``testbed``); None on the others."""
        if self.simgrid.topology != "testbed":
            return None
        return rack_hosts(self.settings.testbed)

    def link_counter_flags(self, path: Path, interval_s: float) -> list[str]:
        """The measured program's options that make it write the links' counters
        over its timed part to ``path`` (csrc/simgrid/link_counters.c)."""
        if self.simgrid.network_model != "flow":
            raise PlatformUnavailable(
                "link counters need platform.simgrid.network_model flow: SimGrid's "
                "link-load plugin counts the flow model's load, the packet model has none"
            )
        return ["--link-counters", str(path), "--link-counter-interval", f"{interval_s:g}"]

    def simulated_counters(self, path: Path) -> pd.DataFrame:
        return link_counter_rows(pd.read_csv(path), self.racks)

    def check(self) -> None:
        if shutil.which(self.launcher) is None:
            raise PlatformUnavailable(
                f"platform 'simgrid': {self.launcher!r} is not on PATH; install SimGrid "
                "(make setup installs Debian's libsimgrid-dev; conda: envs/build.yaml)"
            )

    def version(self) -> str | None:
        try:
            out = subprocess.run(
                [self.launcher, "--version"], capture_output=True, text=True, timeout=60
            )
        except (OSError, subprocess.TimeoutExpired):
            return None
        lines = (out.stdout or out.stderr).strip().splitlines()
        return lines[0] if lines else None

    def describe(self) -> dict[str, Any]:
        generated = self.generated
        return {
            "kind": self.kind,
            "simgrid": self.version(),
            "network_model": self.simgrid.network_model,
            "simgrid_network_model": NETWORK_MODELS[self.simgrid.network_model],
            "topology": self.simgrid.topology,
            "network": generated.description,
            "latency_us": self.simgrid.latency_us,
            "platform_sha256": generated.sha256,
            "settings": self.smpi_settings,
            "computation": (
                "not simulated: a rank's sleeps take simulated time, its arithmetic none"
            ),
        }

    def run_record(self, output: str) -> dict[str, Any] | None:
        return run_times(output)
