"""Seed 002's measurement campaign: one seeded random background per run.

Chunduri et al. ran each application 200-500 times in Theta's production
workload, so every run met a different mix of other jobs, and read the Aries
counters of the job's routers at its start and end (Sec. II-C, II-D). On the
testbed a run draws its own "production" conditions from a seed of its own:

- placement: which nodes the measured job gets (any nodes, any racks; rank i
  on the i-th drawn node), as a scheduler scattering jobs over dragonfly
  groups;
- which of the job's nodes also carry background traffic (0 to all, drawn
  uniformly): each is paired with a free node, so that traffic crosses the
  job's own NIC, its switch port and, between racks, the uplinks, as other
  jobs' traffic crosses the Aries routers of a Theta job;
- how many pairs of free nodes carry load besides (0 to all, uniformly);
- the intensity of its campaign's load generator.

Two campaigns draw production runs, each with its own generator:

- ``production``: ``loadgen``, steady leaky-bucket traffic between node pairs at
  a share of the link rate uniform in ``load``, the same from before the timed
  part to its end. This is the paper's regime: on Theta the interfering traffic
  came from other jobs running for minutes to hours, steady over one run and
  different from run to run, so a run's counters describe what it met. The
  model is trained and its claims judged on this campaign.
- ``bursty``: ``compressionb``, bursts of messages around a ring of the loaded
  nodes, then a pause: messages per burst uniform in ``compression_messages``,
  the pause log-uniform in ``compression_sleep_cycles`` (2.5e6-2.5e8 cycles at
  2.6 GHz: 1-100 ms). The background changes faster than the counters are
  sampled, so what met the job's messages is partly hidden from run-level
  counters: the harder case, evaluated beside the first.

Loadgen pairs ranks (0, 1), (2, 3)... and the loaded nodes are listed as those
pairs (a job node and its free partner, then free pairs in random order), so a
pair crosses the backbone or not by chance. Background ranks on a job node share
its NIC, not its cores' time: waiting ranks sleep (csrc/common/nn_wait.h). Because the draw
depends only on (seed, campaign, application, node count, run index), a run
keeps its background whatever the batching of runs into jobs.

The two controlled extremes of Sec. III-F:

- ``dedicated``: no other load and the job on the first nodes (one rack when
  it fits), as the paper's dedicated-access runs in a contiguous partition;
- ``maximal``: every other node runs loadgen at ``maximal_load`` of the link
  rate, pairs across racks, and the job spread evenly over the racks, so that
  its traffic meets the most background traffic on the backbone (the paper
  ran copies of its most communication-intensive application on the whole
  machine). The pairs fill the rack uplinks well below the full link rate;
  more load only costs the shared cores more packets.

A run is one co-run: the application (``warmup`` untimed runs, then
``iterations`` timed runs, seconds in all) is launched beside its background,
and its timed part starts once the background is in full swing; its runtime is
that of the whole timed part, the window the counters cover.

Every run is a directory that ``netnoise variability`` reads (see
:mod:`netnoise.studies.variability.metrics`): ``counters.csv`` (the counters
of the job's NICs and of the network, sampled from the start of the timed run
to its end), ``run.json`` (nodes, runtime, application, the network ports the
job sees, and the draw), ``application.csv`` and, with load,
``background.csv``, each with its provenance sidecar.

Where runs are placed and their counters read is a :class:`Machine`:

- the testbed (:func:`machine_of_testbed`): all its nodes and racks; the counters
  of the job's NICs and of every switch port and uplink, read over netlink, and
  (``variability.queue_time``) the time the fabric's queues held packets
  (:mod:`netnoise.testbed.queue_time`);
- the testbed's layout in SimGrid (:func:`simgrid_machine`): the same racks of
  named hosts in simulated time; the measured program reads every link's bytes
  and the time it ran at full rate over its timed part (SimGrid's link-load
  plugin, csrc/simgrid/link_counters.c), with the same port names. These
  counters see exactly what the flow model shares the links by, and nothing
  else slows a simulated run: a model's fit there is an upper bound on what
  counters can explain, not a reproduction of the paper's;
- a Slurm job's allocation (:func:`cluster_machine`): a production campaign on
  a cluster is a series of Slurm jobs spread over time under the machine's own
  background, each a batch of runs. A run draws its placement within the
  allocation and, where the allocation has nodes beyond the measured job's
  (``variability.slurm.background_nodes``), a synthetic background on them as on
  the testbed; racks are the allocation's leaf switches. Its counters are read on
  its nodes by samplers started as a step beside it
  (:mod:`netnoise.counters.remote`): each node's NICs, and the far end of each
  link as the job's network ports.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import tempfile
import zlib
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, ExitStack
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from netnoise.atomic import write_json
from netnoise.counters import Snapshot, remote
from netnoise.io import read_benchmark
from netnoise.platform import Platform, PlatformUnavailable
from netnoise.platform.simgrid import SimgridPlatform, rack_network_ports
from netnoise.platform.slurm import Slurm, allocation_nodes, leaf_switches
from netnoise.run import Job, corun
from netnoise.studies.variability.metrics import COUNTERS_FILE, RUN_FILE, testbed_network_ports
from netnoise.testbed import counters as testbed_counters
from netnoise.testbed.fabric import TestbedSpec
from netnoise.testbed.queue_time import QueueTime

#: The campaigns of production runs, each with the load generator of its background.
PRODUCTION_GENERATORS = {"production": "loadgen", "bursty": "compressionb"}
CONTROLLED_CAMPAIGNS = ("dedicated", "maximal")
CAMPAIGNS = (*PRODUCTION_GENERATORS, *CONTROLLED_CAMPAIGNS)
APPLICATION_FILE = "application.csv"
BACKGROUND_FILE = "background.csv"
# The C programs take seeds in [0, 2^31).
SEED_LIMIT = 2**31


@dataclasses.dataclass(frozen=True)
class BackgroundSettings:
    """Ranges the production background is drawn from, and the generators' fixed sizes."""

    load: tuple[float, float] = (0.1, 1.0)
    maximal_load: float = 0.6
    compression_messages: tuple[int, int] = (1, 4)
    compression_sleep_cycles: tuple[float, float] = (2.5e6, 2.5e8)
    cycle_hz: float = 2.6e9
    loadgen_size: int = 65536
    compression_size: int = 40960

    def __post_init__(self) -> None:
        for name in ("load", "compression_messages", "compression_sleep_cycles"):
            low, high = getattr(self, name)
            if not 0 < low <= high:
                raise ValueError(f"background {name}: need 0 < low <= high, got [{low}, {high}]")
        if self.load[1] > 1:
            raise ValueError(
                f"background load: a share of the link rate, at most 1, not {self.load}"
            )
        if not 0 < self.maximal_load <= 1:
            raise ValueError(
                "background maximal_load: a share of the link rate in (0, 1], "
                f"not {self.maximal_load}"
            )

    @classmethod
    def from_config(cls, background: Mapping[str, Any]) -> BackgroundSettings:
        fields = {f.name for f in dataclasses.fields(cls)}
        values = {k: tuple(v) if isinstance(v, list) else v for k, v in background.items()}
        return cls(**{k: v for k, v in values.items() if k in fields})


@dataclasses.dataclass(frozen=True)
class Draw:
    """The conditions of one run: where the job runs and what loads the other nodes."""

    campaign: str
    seed: int
    job_nodes: tuple[str, ...]
    generator: str  # "none", "loadgen" or "compressionb"
    loaded_nodes: tuple[str, ...]
    parameters: dict[str, float]
    shared_nodes: int = 0  # job nodes that carry background traffic too

    def background_args(self, settings: BackgroundSettings, nic_mbit: float) -> list[str]:
        """Arguments of the background program (without the co-run's stop/ready files)."""
        p = self.parameters
        if self.generator == "loadgen":
            args = ["--load", f"{p['load']:.4f}", "--link-mbit", f"{nic_mbit:g}"]
            args += ["--size", str(settings.loadgen_size)]
        elif self.generator == "compressionb":
            args = ["--partners", "1", "--messages", str(int(p["messages"]))]
            args += ["--sleep-cycles", f"{p['sleep_cycles']:.0f}"]
            args += ["--cycle-hz", f"{settings.cycle_hz:.0f}", "--size"]
            args += [str(settings.compression_size), "--iterations", "0"]
        else:
            raise ValueError(f"run {self.seed}: no background to start")
        return [*args, "--seed", str(self.seed)]

    def as_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def run_seed(seed: int, campaign: str, application: str, node_count: int, index: int) -> int:
    """The seed of one run: a function of what identifies it, never of the batching."""
    key = [seed, zlib.crc32(campaign.encode()), zlib.crc32(application.encode())]
    state = np.random.SeedSequence([*key, node_count, index]).generate_state(1)
    return int(state[0]) % SEED_LIMIT


Racks = Sequence[Sequence[str]]


@dataclasses.dataclass(frozen=True)
class Machine:
    """Where a campaign's runs go: the node names of each rack (switch), in order;
    the rate of a node link (Mbit/s, what loadgen's load is a share of);
    ``counters(job_nodes, run_dir)``, a context manager giving the snapshot function
    of a run's counters; ``network_ports(job_nodes, samples)``, the network queues
    among the samples that count as the job's."""

    racks: tuple[tuple[str, ...], ...]
    nic_mbit: float
    # None: the simulation reads the counters itself (Platform.link_counter_flags).
    counters: Callable[[Sequence[str], Path], AbstractContextManager[Snapshot | None]]
    network_ports: Callable[[Sequence[str], pd.DataFrame], set[tuple[str, str]]]


def racks_of_testbed(spec: TestbedSpec) -> tuple[tuple[str, ...], ...]:
    nodes = spec.node_list()
    return tuple(tuple(n.name for n in nodes if n.rack == r) for r in range(1, spec.racks + 1))


def machine_of_testbed(spec: TestbedSpec, queue_time: QueueTime | None = None) -> Machine:
    """The testbed: every node; counters of the job's NICs and of the whole fabric,
    with the fabric's queue times when ``queue_time`` (its running tracer) is given."""
    return Machine(
        racks_of_testbed(spec),
        spec.nic_mbit,
        lambda nodes, _run_dir: testbed_counters.Counters(spec, nodes, queue_time),
        lambda nodes, _samples: testbed_network_ports(spec, nodes),
    )


def cluster_machine(
    platform: Slurm, nic_mbit: float | None, ports: Sequence[str], log: str | os.PathLike[str]
) -> Machine:
    """The allocation of the Slurm job this runs in, its nodes grouped by leaf switch
    (one rack where the cluster has no tree topology); counters read on the job's
    nodes by samplers beside it, reading ``ports`` (all but loopback when empty)."""
    nodes = allocation_nodes()
    mine = set(nodes)
    racks = [tuple(n for n in members if n in mine) for members in leaf_switches().values()]
    racks = [rack for rack in racks if rack]
    placed = {n for rack in racks for n in rack}
    racks += [tuple(n for n in nodes if n not in placed)] if len(placed) < len(nodes) else []

    @contextlib.contextmanager
    def counters(job_nodes: Sequence[str], run_dir: Path) -> Iterator[Snapshot]:
        run_dir.parent.mkdir(parents=True, exist_ok=True)
        with (
            tempfile.TemporaryDirectory(
                prefix=f".{run_dir.name}.counters-", dir=run_dir.parent
            ) as scratch,
            remote.RemoteCounters(
                job_nodes,
                scratch,
                lambda argv: platform.node_step(argv, list(job_nodes)).argv,
                ports=ports,
                log=log,
            ) as snapshot,
        ):
            yield snapshot

    return Machine(
        tuple(racks),
        nic_mbit or 0.0,
        counters,
        lambda _nodes, samples: remote.network_ports(samples.to_dict("records")),
    )


def simgrid_machine(platform: SimgridPlatform) -> Machine:
    """The testbed's layout simulated (``platform.simgrid.topology: testbed``): its
    racks of hosts named as the testbed's nodes, their links counted inside the
    simulation by the measured program (SimGrid's link-load plugin). Those
    counters see exactly the load the flow model shares the links by, none of the
    noise of a real network's counters."""
    racks = platform.racks
    if racks is None:
        raise PlatformUnavailable(
            f"variability on simgrid needs platform.simgrid.topology testbed (racks of "
            f"named hosts, as the testbed's), not {platform.simgrid.topology!r}; set "
            "variability.simgrid.topology: testbed"
        )
    return Machine(
        racks,
        platform.settings.testbed.nic_mbit,
        lambda _nodes, _run_dir: contextlib.nullcontext(),
        lambda nodes, _samples: rack_network_ports(racks, nodes),
    )


def machine_on(
    platform: Platform, study: Mapping[str, Any], log: str | os.PathLike[str], stack: ExitStack
) -> Machine:
    """Where the study's runs go on ``platform``: the simulation's racks where its
    runs read their counters themselves, a cluster's allocation where the layout
    is the cluster's own, else the testbed (brought up here, with the fabric's
    queue-time tracer in ``stack`` where ``variability.queue_time`` asks)."""
    if platform.reads_counters_in_run:
        return simgrid_machine(platform)
    if platform.discovers_layout:
        cluster = study["slurm"]
        return cluster_machine(platform, cluster["link_mbit"], cluster["ports"], log)
    platform.check()
    spec = platform.testbed.spec
    tracer = stack.enter_context(QueueTime(spec.fabric)) if study["queue_time"] else None
    return machine_of_testbed(spec, tracer)


def _interleave(groups: Sequence[Sequence[str]]) -> list[str]:
    """One from each group in turn: consecutive names lie in different groups while they can."""
    out = []
    for i in range(max((len(g) for g in groups), default=0)):
        out += [g[i] for g in groups if i < len(g)]
    return out


def draw(
    racks: Racks,
    node_count: int,
    campaign: str,
    seed: int,
    settings: BackgroundSettings = BackgroundSettings(),
) -> Draw:
    """The conditions of the run with this seed (see the module docstring) on the
    nodes of ``racks`` (node names per rack, in order)."""
    names = [name for rack in racks for name in rack]
    if not 2 <= node_count <= len(names):
        raise ValueError(
            f"a measured job of {node_count} nodes does not fit the {len(names)} nodes "
            "(it needs at least 2)"
        )
    if campaign == "dedicated":
        return Draw(campaign, seed, tuple(names[:node_count]), "none", (), {})
    if campaign == "maximal":
        # Job nodes taken from the racks in turn, each paired with a free node of
        # the other rack; the other free nodes, in turn, pair across racks too.
        job = _interleave(racks)[:node_count]
        # Free nodes from the racks in turn, starting one rack later than the job's.
        free_by_rack = [[n for n in rack if n not in job] for rack in racks]
        free = _interleave(free_by_rack[1:] + free_by_rack[:1])
        shared = min(node_count, len(free))
        loaded = [n for pair in zip(job[:shared], free[:shared], strict=True) for n in pair]
        rest = free[shared:]
        loaded += rest[: len(rest) // 2 * 2]
        generator = "loadgen" if loaded else "none"
        parameters = {"load": settings.maximal_load} if loaded else {}
        return Draw(campaign, seed, tuple(job), generator, tuple(loaded), parameters, shared)
    if campaign not in PRODUCTION_GENERATORS:
        raise ValueError(f"unknown campaign {campaign!r}; known: {', '.join(CAMPAIGNS)}")
    rng = np.random.default_rng(seed)
    order = [names[i] for i in rng.permutation(len(names))]
    job, free = order[:node_count], order[node_count:]
    shared = int(rng.integers(0, min(node_count, len(free)) + 1))
    # Each shared job node with a free partner; then pairs of the other free nodes.
    loaded = [n for pair in zip(job[:shared], free[:shared], strict=True) for n in pair]
    rest = free[shared:]
    loaded += rest[: 2 * int(rng.integers(0, len(rest) // 2 + 1))]
    if not loaded:
        return Draw(campaign, seed, tuple(job), "none", (), {})
    generator = PRODUCTION_GENERATORS[campaign]
    if generator == "loadgen":
        parameters = {"load": float(rng.uniform(*settings.load))}
    else:
        low, high = settings.compression_messages
        cycles = np.exp(rng.uniform(*np.log(settings.compression_sleep_cycles)))
        parameters = {"messages": int(rng.integers(low, high + 1)), "sleep_cycles": float(cycles)}
    return Draw(campaign, seed, tuple(job), generator, tuple(loaded), parameters, shared)


def racks_spanned(racks: Racks, nodes: Iterable[str]) -> int:
    rack_of = {name: i for i, rack in enumerate(racks) for name in rack}
    return len({rack_of[n] for n in nodes})


# --------------------------------------------------------------------------- measurement


@dataclasses.dataclass(frozen=True)
class Measured:
    """An application a campaign measures: its program, arguments and untimed warm-up runs."""

    program: str
    args: tuple[str, ...] = ()
    warmup: int = 1
    iterations: int = 1


@dataclasses.dataclass(frozen=True, order=True)
class RunKey:
    """What identifies a run within a campaign."""

    application: str
    node_count: int
    index: int

    @property
    def name(self) -> str:
        return f"{self.application}_n{self.node_count}_run{self.index:04d}"


def run_keys(applications: Sequence[str], node_counts: Sequence[int], runs: int) -> list[RunKey]:
    """Every run of a campaign, index by index: each stretch of the list (a measurement
    job) holds every application and node count, so a slow drift of the machine's own
    load does not fall on one application."""
    return [
        RunKey(app, n, index) for index in range(runs) for app in applications for n in node_counts
    ]


def batches(keys: Sequence[RunKey], size: int) -> list[list[RunKey]]:
    """Consecutive runs, at most ``size`` per measurement job."""
    if size < 1:
        raise ValueError(f"runs per job must be at least 1, not {size}")
    return [list(keys[i : i + size]) for i in range(0, len(keys), size)]


def measure_runs(
    platform: Platform,
    machine: Machine,
    runs: Iterable[RunKey],
    applications: Mapping[str, Measured],
    *,
    campaign: str,
    seed: int,
    out_dir: str | os.PathLike[str],
    programs: Mapping[str, str],
    log: str | os.PathLike[str],
    timeout_s: float,
    counter_interval_s: float,
    settings: BackgroundSettings = BackgroundSettings(),
    config: dict[str, Any] | None = None,
) -> list[Path]:
    """Measure ``runs`` of one campaign, one co-run each, into ``out_dir/<run name>``.

    ``programs`` maps ``loadgen`` and ``compressionb`` to their binaries. Each
    run's background is started, the application launched with its warm-up
    runs, the counters of its NICs and of the network sampled every
    ``counter_interval_s`` from the start of its timed run to its end, then the
    background stopped. Every file of a run is written atomically and
    ``run.json`` last, so a run directory with ``run.json`` is complete.
    """
    out = Path(out_dir)
    done = []
    for key in runs:
        app = applications[key.application]
        run = out / key.name
        run_seed_ = run_seed(seed, campaign, key.application, key.node_count, key.index)
        conditions = draw(machine.racks, key.node_count, campaign, run_seed_, settings)
        measured = Job(
            key.application,
            [
                app.program,
                *app.args,
                *("--warmup", str(app.warmup), "--iterations", str(app.iterations)),
                *("--seed", str(conditions.seed)),
            ],
            key.node_count,
            run / APPLICATION_FILE,
            list(conditions.job_nodes),
        )
        background = []
        inputs = {"application": app.program}
        if conditions.generator != "none":
            generator = programs[conditions.generator]
            inputs["background"] = generator
            background.append(
                Job(
                    conditions.generator,
                    [generator, *conditions.background_args(settings, machine.nic_mbit)],
                    len(conditions.loaded_nodes),
                    run / BACKGROUND_FILE,
                    list(conditions.loaded_nodes),
                )
            )
        with machine.counters(conditions.job_nodes, run) as counters:
            corun(
                platform,
                measured,
                background,
                log=log,
                timeout_s=timeout_s,
                config={**(config or {}), "draw": conditions.as_dict()},
                inputs=inputs,
                counters=counters,
                counters_output=run / COUNTERS_FILE,
                counter_interval_s=counter_interval_s,
                launch_together=True,
            )
        runtime = float(read_benchmark(run / APPLICATION_FILE).data["runtime_s"].sum())
        ports = machine.network_ports(conditions.job_nodes, pd.read_csv(run / COUNTERS_FILE))
        write_json(
            run / RUN_FILE,
            {
                "application": key.application,
                "program": Path(app.program).name,
                "nodes": list(conditions.job_nodes),
                "node_count": key.node_count,
                "runtime_s": runtime,
                "network_ports": [list(p) for p in sorted(ports)],
                "campaign": campaign,
                "index": key.index,
                "racks_spanned": racks_spanned(machine.racks, conditions.job_nodes),
                "counter_interval_s": counter_interval_s,
                "draw": conditions.as_dict(),
            },
        )
        done.append(run)
    return done
