"""Communication patterns, process-to-node mappings and the perturbation (Sec. 3).

A collective is a list of *levels* (communication rounds); each level is an ``(m, 2)``
integer array of ``(src, dst)`` process pairs that communicate in that round.  The
dependency rule of the congestion model: a message leaves its sender once the sender has
received everything sent to it in earlier levels.

* Binomial broadcast (root 0, the paper's Fig. 7): in level ``k`` (``k = 0 ..
  ceil(log2 P) - 1``) every process ``r < 2**k`` sends to ``r + 2**k`` (if ``< P``).  For
  ``P = 8`` the third level is ``{(0,4), (1,5), (2,6), (3,7)}`` as in the paper.
* Binomial reduce: the broadcast's levels in reverse order with every pair reversed.
* Recursive-doubling allreduce: with ``p2`` the largest power of two ``<= P`` and
  ``r = P - p2``: a pre-level in which ``p2 + i`` sends to ``i`` (``i < r``), ``log2 p2``
  exchange levels in which ``i`` and ``i XOR 2**k`` send to each other (``i < p2``), and a
  post-level in which ``i`` sends the result back to ``p2 + i`` (MPICH's scheme).
"""

from __future__ import annotations

import math

import numpy as np

COLLECTIVES = ("bcast", "reduce", "allreduce")

Levels = list[np.ndarray]


def _check_processes(processes: int) -> int:
    processes = int(processes)
    if processes < 2:
        raise ValueError(f"a collective needs at least 2 processes, got {processes}")
    return processes


def _pairs(src: np.ndarray, dst: np.ndarray) -> np.ndarray:
    return np.column_stack([src, dst]).astype(np.int64).reshape(-1, 2)


def binomial_bcast(processes: int) -> Levels:
    """Binomial-tree broadcast from process 0: ``ceil(log2 P)`` levels."""
    P = _check_processes(processes)
    levels = []
    for k in range(math.ceil(math.log2(P))):
        src = np.arange(min(2**k, P - 2**k), dtype=np.int64)
        levels.append(_pairs(src, src + 2**k))
    return levels


def binomial_reduce(processes: int) -> Levels:
    """Binomial-tree reduction to process 0: the broadcast run backwards."""
    return [level[:, ::-1].copy() for level in reversed(binomial_bcast(processes))]


def recursive_doubling_allreduce(processes: int) -> Levels:
    """Recursive-doubling allreduce, with MPICH's fold-in/fold-out for non-powers of two."""
    P = _check_processes(processes)
    p2 = 1 << (P.bit_length() - 1)
    rest = P - p2
    extra = np.arange(rest, dtype=np.int64)
    levels = []
    if rest:
        levels.append(_pairs(p2 + extra, extra))
    core = np.arange(p2, dtype=np.int64)
    for k in range(p2.bit_length() - 1):
        levels.append(_pairs(core, core ^ (1 << k)))
    if rest:
        levels.append(_pairs(extra, p2 + extra))
    return levels


def collective_levels(collective: str, processes: int) -> Levels:
    """The levels of ``collective`` (one of :data:`COLLECTIVES`) on ``processes`` processes."""
    builders = {
        "bcast": binomial_bcast,
        "reduce": binomial_reduce,
        "allreduce": recursive_doubling_allreduce,
    }
    if collective not in builders:
        raise ValueError(
            f"unknown collective {collective!r}; choose one of {', '.join(COLLECTIVES)}"
        )
    return builders[collective](processes)


def one_message_per_endpoint(levels: Levels) -> bool:
    """True when, in every level, no process sends twice and none receives twice.

    Then an endpoint's own links never carry more than one message of a level (together
    with a perturbation that is a permutation of the other endpoints), which lets the
    congestion model skip them without changing any result.
    """
    for level in levels:
        for col in (level[:, 0], level[:, 1]):
            if np.unique(col).size != col.size:
                return False
    return True


def random_mapping(rng: np.random.Generator, n_endpoints: int) -> np.ndarray:
    """A random order of all endpoints: process ``i`` of the application runs on node
    ``mapping[i]`` and the nodes after the application's are the perturbing ones."""
    return rng.permutation(n_endpoints)


def perturbation_pairs(rng: np.random.Generator, nodes: np.ndarray) -> np.ndarray:
    """Every node sends one message to another node of the set: a random derangement.

    The paper's example (Sec. 3, ``C = {(1,4), (2,11), ..., (15,2)}``) is a permutation
    without fixed points of the perturbing nodes (each sends once, receives once), matching
    the benchmark's "random permutation pattern".  Here: a uniform random permutation whose
    fixed points are then moved (rotated among themselves, or a single one swapped with a
    random other element).  Fewer than two nodes send nothing.  Returns ``(n, 2)`` pairs.
    """
    nodes = np.asarray(nodes, dtype=np.int64)
    n = nodes.size
    if n < 2:
        return np.zeros((0, 2), dtype=np.int64)
    sigma = rng.permutation(n)
    fixed = np.flatnonzero(sigma == np.arange(n))
    if fixed.size >= 2:
        sigma[fixed] = np.roll(fixed, 1)
    elif fixed.size == 1:
        f = int(fixed[0])
        x = int(rng.integers(n - 1))
        x += x >= f  # any index but f
        sigma[f], sigma[x] = sigma[x], f
    return _pairs(nodes, nodes[sigma])


def draw_run(
    rng: np.random.Generator, n_endpoints: int, processes: int, perturbers: int
) -> tuple[np.ndarray, np.ndarray]:
    """One random run: the application's mapping ``(P,)`` and the perturbation ``(Q', 2)``.

    Process ``i`` runs on ``order[i]``; the perturbing endpoints are ``order[P : P + Q]``;
    the rest (if any) stay idle.  ``Q' = Q`` except that a single perturbing endpoint has
    no peer and sends nothing.
    """
    order = random_mapping(rng, n_endpoints)
    return order[:processes], perturbation_pairs(rng, order[processes : processes + perturbers])
