"""Dependency-based congestion model of a collective under network noise (Sec. 3).

One simulated run:

1. Random mapping: a random order of all endpoints; application process ``i`` runs on
   node ``mapping[i]`` (``i < P``) and the next ``Q`` nodes are the perturbing ones.
2. Perturbation: every perturbing node sends one message to another perturbing node (a
   random derangement, :func:`netnoise.sim.patterns.perturbation_pairs`); the same
   messages are present in every level of the collective (the paper: "the perturbation
   communication remains constant").
3. Per level ``k`` of the collective, every channel's *congestion* is the number of
   messages routed over it in that level (the level's application messages plus all
   perturbation messages; without perturbation: the level's application messages only).
   Each application message costs the maximum congestion along its path.
4. Dependencies: a message leaves its sender when the sender has received everything sent
   to it in earlier levels, so ``t[dst] = max(t[dst], t[src] + cost)`` level by level, all
   ``t = 0`` at the start.  The collective's time is ``max_p t[p]``, the longest path
   through the dependency graph (the paper's BFS over Fig. 10, which finds 0-1-3-7 with
   total congestion 5 in its example, 3 without perturbation; with d-mod-k routing the
   same mapping and perturbation give 4 and 3, and the 0->4 message the paper's cost 2).
   A sender's successive sends are not serialised: only received data delays a send,
   which is how the paper's example "absorbs" the congestion of the root's last message.
5. The same run is evaluated without perturbation (same mapping).  Per run we report
   ``t_unperturbed``, ``t_perturbed``, the paper's *overhead* ``t_perturbed -
   t_unperturbed`` ("the congestion of the unperturbed run can be simply subtracted")
   and the *slowdown* ``t_perturbed / t_unperturbed`` (1 = no effect; the figures'
   "slowdown relative to unperturbed run" is ``100 * slowdown`` per cent, and Sec. 5's
   "delay ... by up to 12 times" is this ratio).  Averages are over runs (the paper: 1000).

Speed: runs are processed in batches; each batch routes all its messages in one call and
counts channel loads with ``np.bincount`` on ``run * (n_channels + 1) + channel`` ids.  When
no process sends or receives twice in a level (true for all collectives here) and the
perturbation is a permutation, an endpoint's own links carry at most one message per level,
so they are left out of the counting and the cost is ``max(1, congestion elsewhere)``:
exactly what counting them would give.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import nullcontext
from dataclasses import dataclass

import numpy as np
import pandas as pd

from netnoise.sim import patterns
from netnoise.sim.routing import max_hops, route_columns
from netnoise.sim.topology import Topology, parse_spec

# Budget for one batch: channel-load slots (keeps the load arrays cache-sized) and path ids.
_BATCH_SLOTS = 2_000_000
_BATCH_IDS = 4_000_000
# Levels with fewer path ids than this fraction of the batch's slots are counted by sorting.
_SORT_FRACTION = 0.01
#: Runs of one simulation at most: 1000 times the paper's; their results alone take 16 MB
#: per million runs, and the largest topologies need hours for that many.
MAX_RUNS = 1_000_000


@dataclass(frozen=True)
class Layout:
    """How many endpoints run the application and how many perturb."""

    endpoints: int
    processes: int
    perturbers: int

    @property
    def idle(self) -> int:
        return self.endpoints - self.processes - self.perturbers


def perturber_count(endpoints: int, ratio: float) -> int:
    """Perturbing endpoints for a perturbation ratio: ``round(ratio * endpoints)``."""
    return math.floor(ratio * endpoints + 0.5)


def layout(endpoints: int, ratio: float, processes: int | None = None) -> Layout:
    """The paper's split of the machine (Sec. 2 and 4.1).

    The perturbation ratio is the fraction of the machine's endpoints that perturb,
    ``Q = round(ratio * N)``.  By default the application runs on all the others,
    ``P = N - Q`` ("application runs on half of the nodes ... while the other half
    communicates randomly" at ratio 1/2).  A smaller ``processes`` leaves ``N - Q - P``
    endpoints idle.
    """
    if not 0 <= ratio < 1:
        raise ValueError(f"the perturbation ratio must be in [0, 1), got {ratio}")
    q = perturber_count(endpoints, ratio)
    p = endpoints - q if processes is None else int(processes)
    if p < 2:
        raise ValueError(
            f"the application needs at least 2 processes; {endpoints} endpoints at ratio "
            f"{ratio} leave {endpoints - q}"
        )
    if p + q > endpoints:
        raise ValueError(
            f"{p} processes and {q} perturbing endpoints (ratio {ratio}) do not fit on "
            f"{endpoints} endpoints"
        )
    return Layout(endpoints, p, q)


class _Counter:
    """Channel loads of many runs at once: slot ``run * (C + 1) + channel``."""

    def __init__(self, n_channels: int, runs: int) -> None:
        self.stride = n_channels + 1  # the last slot of a run is the padding sentinel
        self.size = self.stride * runs

    def offsets(self, runs: int, per_run: int) -> np.ndarray:
        return np.repeat(np.arange(runs, dtype=np.int64) * self.stride, per_run)

    def dense(self, ids: np.ndarray) -> np.ndarray:
        load = np.bincount(ids.ravel(), minlength=self.size)
        load[self.stride - 1 :: self.stride] = 0
        return load

    def at(self, ids: np.ndarray) -> np.ndarray:
        """Each id's own load (the number of times it occurs), padding ids 0."""
        flat = ids.ravel()
        if flat.size >= _SORT_FRACTION * self.size:
            return self.dense(flat)[flat].reshape(ids.shape)
        uniq, inverse, counts = np.unique(flat, return_inverse=True, return_counts=True)
        counts[uniq % self.stride == self.stride - 1] = 0
        return counts[inverse].reshape(ids.shape)


def batch_times(
    topo: Topology,
    levels: Sequence[np.ndarray],
    mappings: np.ndarray,
    pert_src: np.ndarray,
    pert_dst: np.ndarray,
    endpoint_links: bool | None = None,
    return_costs: bool = False,
) -> dict[str, np.ndarray | list[np.ndarray]]:
    """Collective times of ``B`` runs with given mappings and perturbation messages.

    ``mappings``: ``(B, P)`` node of each application process; ``pert_src``/``pert_dst``:
    ``(B, Q)`` perturbation messages (``Q`` may be 0).  Returns ``t_unperturbed`` and
    ``t_perturbed`` (``(B,)`` each) and, with ``return_costs``, the per-level message costs
    ``cost_unperturbed``/``cost_perturbed`` (lists of ``(B, m_k)`` arrays).
    """
    mappings = np.asarray(mappings, dtype=np.int64)
    B, P = mappings.shape
    pert_src = np.asarray(pert_src, dtype=np.int64).reshape(B, -1)
    pert_dst = np.asarray(pert_dst, dtype=np.int64).reshape(B, -1)
    if endpoint_links is None:
        endpoint_links = not patterns.one_message_per_endpoint(list(levels))
    counter = _Counter(topo.n_channels, B)

    # Perturbation load per run, fixed across levels.
    Q = pert_src.shape[1]
    if Q:
        ids = route_columns(topo, pert_src.ravel(), pert_dst.ravel(), endpoint_links, check=False)
        ids += counter.offsets(B, Q)[None, :]
        pert_load = counter.dense(ids)
        del ids
    else:
        pert_load = np.zeros(counter.size, dtype=np.int64)

    t_u = np.zeros((B, P), dtype=np.int64)
    t_p = np.zeros((B, P), dtype=np.int64)
    costs_u: list[np.ndarray] = []
    costs_p: list[np.ndarray] = []
    floor = 0 if endpoint_links else 1
    for level in levels:
        src_p, dst_p = level[:, 0], level[:, 1]
        m = src_p.size
        if m == 0:
            continue
        distinct = np.unique(dst_p).size == m
        s = mappings[:, src_p].ravel()
        d = mappings[:, dst_p].ravel()
        ids = route_columns(topo, s, d, endpoint_links, check=False)
        ids += counter.offsets(B, m)[None, :]
        app = counter.at(ids)
        cost_u = app.max(axis=0, initial=floor).reshape(B, m)
        app += pert_load[ids]
        cost_p = app.max(axis=0, initial=floor).reshape(B, m)
        for t, cost in ((t_u, cost_u), (t_p, cost_p)):
            arrival = t[:, src_p] + cost
            if distinct:
                t[:, dst_p] = np.maximum(t[:, dst_p], arrival)
            else:
                rows = np.broadcast_to(np.arange(B)[:, None], arrival.shape)
                np.maximum.at(t, (rows, np.broadcast_to(dst_p, arrival.shape)), arrival)
        if return_costs:
            costs_u.append(cost_u)
            costs_p.append(cost_p)
    out: dict[str, np.ndarray | list[np.ndarray]] = {
        "t_unperturbed": t_u.max(axis=1),
        "t_perturbed": t_p.max(axis=1),
    }
    if return_costs:
        out["cost_unperturbed"] = costs_u
        out["cost_perturbed"] = costs_p
    return out


def _batch_size(topo: Topology, plan: Layout, levels: Sequence[np.ndarray]) -> int:
    width = max_hops(topo)
    largest = max([plan.perturbers] + [lvl.shape[0] for lvl in levels])
    by_slots = _BATCH_SLOTS // (topo.n_channels + 1)
    by_ids = _BATCH_IDS // max(1, largest * max(width, 1))
    return max(1, min(by_slots, by_ids))


def _workers() -> int:
    """Threads for :func:`simulate_levels`: ``NETNOISE_SIM_THREADS`` or up to 2 CPUs."""
    env = os.environ.get("NETNOISE_SIM_THREADS")
    if env:
        return max(1, int(env))
    return max(1, min(2, os.cpu_count() or 1))


def simulate_levels(
    topo: Topology,
    levels: Sequence[np.ndarray],
    plan: Layout,
    runs: int,
    seed: int,
    batch_runs: int | None = None,
    workers: int | None = None,
    progress: Callable[[int], None] | None = None,
) -> dict[str, np.ndarray]:
    """``runs`` random runs of a collective; per-run times as arrays.

    Run ``i`` draws its mapping and perturbation from its own generator,
    ``SeedSequence(seed).spawn(runs)[i]``, so a run's result does not depend on how many
    runs there are, how they are batched or how many threads share the batches (numpy
    releases the GIL in the heavy array operations). ``progress`` is called with the
    number of runs done after every batch.
    """
    if not 1 <= runs <= MAX_RUNS:
        raise ValueError(f"runs must be in [1, {MAX_RUNS}], got {runs}")
    if plan.endpoints != topo.n_endpoints:
        raise ValueError("the layout was made for another topology")
    batch = batch_runs or _batch_size(topo, plan, levels)
    endpoint_links = not patterns.one_message_per_endpoint(list(levels))
    route_columns(topo, np.zeros(0, np.int64), np.zeros(0, np.int64))  # fill the route cache
    P, Q = plan.processes, plan.perturbers
    q = Q if Q >= 2 else 0
    t_u = np.empty(runs, dtype=np.int64)
    t_p = np.empty(runs, dtype=np.int64)

    def one_batch(start: int) -> None:
        stop = min(runs, start + batch)
        B = stop - start
        maps = np.empty((B, P), dtype=np.int64)
        ps = np.empty((B, q), dtype=np.int64)
        pd_ = np.empty((B, q), dtype=np.int64)
        for j, run in enumerate(range(start, stop)):
            # The generator of spawn(runs)[run], made when needed.
            child = np.random.SeedSequence(seed, spawn_key=(run,))
            maps[j], pairs = patterns.draw_run(np.random.default_rng(child), plan.endpoints, P, Q)
            ps[j], pd_[j] = pairs[:, 0], pairs[:, 1]
        res = batch_times(topo, levels, maps, ps, pd_, endpoint_links)
        t_u[start:stop] = res["t_unperturbed"]
        t_p[start:stop] = res["t_perturbed"]
        return B

    starts = range(0, runs, batch)
    threads = min(workers or _workers(), len(starts))
    done = 0
    with ThreadPoolExecutor(max_workers=threads) if threads > 1 else nullcontext() as pool:
        for finished in (pool.map if pool else map)(one_batch, starts):
            done += finished
            if progress is not None:
                progress(done)
    return {"t_unperturbed": t_u, "t_perturbed": t_p}


def simulate(
    topology: str | Topology,
    collective: str,
    ratio: float,
    runs: int,
    seed: int,
    processes: int | None = None,
    progress: Callable[[int], None] | None = None,
) -> pd.DataFrame:
    """Per-run rows of the network-noise simulation (what the workflow calls).

    ``topology`` is a SPEC (``xgft:...``, ``torus:...``, ``fabric:PATH``) or a topology;
    ``collective`` one of ``bcast``, ``reduce``, ``allreduce``; ``ratio`` the perturbation
    ratio (fraction of all endpoints that perturb); ``processes`` defaults to all other
    endpoints (see :func:`layout`).
    """
    topo = parse_spec(topology) if isinstance(topology, str) else topology
    plan = layout(topo.n_endpoints, ratio, processes)
    levels = patterns.collective_levels(collective, plan.processes)
    res = simulate_levels(topo, levels, plan, runs, seed, progress=progress)
    t_u, t_p = res["t_unperturbed"], res["t_perturbed"]
    return pd.DataFrame(
        {
            "topology": topo.spec,
            "collective": collective,
            "ratio": float(ratio),
            "endpoints": plan.endpoints,
            "processes": plan.processes,
            "perturbers": plan.perturbers,
            "levels": len(levels),
            "seed": int(seed),
            "run": np.arange(runs),
            "t_unperturbed": t_u,
            "t_perturbed": t_p,
            "overhead": t_p - t_u,
            "slowdown": t_p / t_u,
        }
    )


def summarize(values: np.ndarray | pd.Series) -> dict[str, float]:
    """Mean, median, the central 95 % of runs and a 95 % confidence interval of the mean."""
    x = np.asarray(values, dtype=float)
    lo, hi = np.percentile(x, [2.5, 97.5])
    half = 1.959964 * x.std(ddof=1) / math.sqrt(x.size) if x.size > 1 else math.nan
    return {
        "mean": float(x.mean()),
        "median": float(np.median(x)),
        "p2.5": float(lo),
        "p97.5": float(hi),
        "mean_ci_low": float(x.mean() - half),
        "mean_ci_high": float(x.mean() + half),
        "runs": int(x.size),
    }
