"""Static, destination-based routing of many messages at once.

The paper (Sec. 3-5) routes with OpenSM: the fat-tree optimised ``ftree`` engine on the
generated XGFTs, dimension-order routing (DOR) on the tori and the routes the real
fabrics had.  Here:

* XGFT: d-mod-k (Zahavi's formulation of the balanced destination-based fat-tree
  routing that OpenSM's ftree also implements).  A message from ``s`` to ``d`` climbs to
  the lowest level ``L`` at which both are in the same subtree (``s // M_L == d // M_L``)
  and then descends along the unique down path.  At level ``l`` it takes up-port
  ``c_l(d) = (d // WP_l) mod (w_{l+1} p_{l+1})`` with ``WP_l = prod_{j<=l} w_j p_j``; the
  descent uses the same port numbers, so every switch's choice depends on ``d`` only.
  On a full-bisection XGFT a shift permutation then loads every channel at most once.
* Torus: DOR, dimension 0 first; per dimension the shorter way round the ring, ``+1``
  on a tie (half-way round on an even ring).
* Fabric: OpenSM-style ``minhop``: for every destination endpoint (in order) each switch
  takes, among its ports on a shortest path to the destination's switch, the one that
  carries the fewest destinations so far.  A multi-port HCA is reached through its
  lowest-numbered connected port.

Every message occupies every channel it passes (endpoint -> switch, switch -> switch,
switch -> endpoint).  :func:`route` returns one row per message, the channel ids in path
order, padded on the right with ``-1``; :func:`route_columns` is the column-major form the
congestion model uses (padding with the ``n_channels`` sentinel, optionally without the
endpoint channels).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse
import scipy.sparse.csgraph

from netnoise.sim.topology import XGFT, Fabric, Topology, Torus


class RoutingError(ValueError):
    """A topology on which some endpoint cannot reach another."""


def _as_nodes(
    topo: Topology, src: np.ndarray, dst: np.ndarray, check: bool = True
) -> tuple[np.ndarray, np.ndarray]:
    src = np.asarray(src, dtype=np.int64).ravel()
    dst = np.asarray(dst, dtype=np.int64).ravel()
    if src.shape != dst.shape:
        raise ValueError(f"src and dst differ in length: {src.size} != {dst.size}")
    n = topo.n_endpoints
    if not check or not src.size:
        return src, dst
    if src.min() < 0 or dst.min() < 0 or src.max() >= n or dst.max() >= n:
        raise ValueError(f"endpoint ids must be in 0..{n - 1}")
    return src, dst


def max_hops(topo: Topology, endpoint_links: bool = True) -> int:
    """Width of :func:`route_columns`' output: the longest possible path."""
    empty = np.zeros(0, np.int64)
    return route_columns(topo, empty, empty, endpoint_links).shape[0]


def route_columns(
    topo: Topology,
    src: np.ndarray,
    dst: np.ndarray,
    endpoint_links: bool = True,
    check: bool = True,
) -> np.ndarray:
    """Channel ids of the paths ``src[i] -> dst[i]``, shape ``(max_hops, n)``.

    Column ``i`` is message ``i``'s path; unused slots hold ``topo.n_channels``.  With
    ``endpoint_links=False`` the first and last channel (endpoint -> switch, switch ->
    endpoint) are left out.  A message to itself has an empty path.  ``check=False`` skips
    the range check of the endpoint ids (for callers that drew them from the topology).
    """
    src, dst = _as_nodes(topo, src, dst, check)
    if isinstance(topo, XGFT):
        return _xgft_columns(topo, src, dst, endpoint_links)
    if isinstance(topo, Torus):
        return _torus_columns(topo, src, dst, endpoint_links)
    if isinstance(topo, Fabric):
        return _fabric_columns(topo, src, dst, endpoint_links)
    raise TypeError(f"no router for {type(topo).__name__}")


def route(topo: Topology, src: np.ndarray, dst: np.ndarray) -> np.ndarray:
    """Paths as rows: ``(n, max_hops)`` channel ids in path order, padded with ``-1``."""
    cols = route_columns(topo, src, dst)
    rows = cols.T.copy()
    # Compact each row so the path is contiguous from the left (XGFT and the fabric pad in
    # the middle of their fixed layout).
    valid = rows != topo.n_channels
    order = np.argsort(~valid, axis=1, kind="stable")
    rows = np.take_along_axis(rows, order, axis=1)
    rows[~np.take_along_axis(valid, order, axis=1)] = -1
    return rows


def paths(topo: Topology, src: np.ndarray, dst: np.ndarray) -> list[np.ndarray]:
    """Unpadded per-message paths (for inspection and tests)."""
    return [row[row >= 0] for row in route(topo, src, dst)]


def channel_loads(topo: Topology, src: np.ndarray, dst: np.ndarray) -> np.ndarray:
    """Number of messages ``src[i] -> dst[i]`` on each channel (all sent at once)."""
    cols = route_columns(topo, src, dst).ravel()
    return np.bincount(cols, minlength=topo.n_channels + 1)[: topo.n_channels]


# --------------------------------------------------------------------------- XGFT


def _xgft_tables(topo: XGFT) -> dict[str, list[np.ndarray]]:
    """Per level: subtree numbers, up-channel parts and down channels per endpoint."""
    tables = topo.cache.get("xgft")
    if tables is not None:
        return tables
    n = topo.n_endpoints
    e = np.arange(n, dtype=np.int64)
    grp, up_src, up_dst, down = [], [], [], []
    b = np.zeros(n, dtype=np.int64)  # B_l(d): the b-digits the route of d has chosen so far
    for lv in range(topo.h):
        wp = topo.w[lv] * topo.p[lv]
        c = (e // topo.WP[lv]) % wp  # d-mod-k up-port at level l
        g = e // topo.M[lv]  # subtree at level l (the a-digits above l)
        mult = topo.W[lv] * wp
        grp.append(g)
        up_src.append(topo.up_offset[lv] + g * mult)
        up_dst.append(b * wp + c)
        down.append(topo.down_offset[lv] + g * mult + b * wp + c)
        b = b + topo.W[lv] * (c % topo.w[lv])
    tables = {"grp": grp, "up_src": up_src, "up_dst": up_dst, "down": down}
    topo.cache["xgft"] = tables
    return tables


def _xgft_columns(topo: XGFT, src: np.ndarray, dst: np.ndarray, endpoint_links: bool) -> np.ndarray:
    t = _xgft_tables(topo)
    h = topo.h
    first = 0 if endpoint_links else 1
    levels = range(first, h)
    width = 2 * len(levels)
    out = np.full((width, src.size), topo.n_channels, dtype=np.int64)
    for k, lv in enumerate(levels):
        # level l is crossed iff s and d lie in different level-l subtrees
        crossed = t["grp"][lv][src] != t["grp"][lv][dst]
        up = t["up_src"][lv][src] + t["up_dst"][lv][dst]
        out[k] = np.where(crossed, up, topo.n_channels)
        out[width - 1 - k] = np.where(crossed, t["down"][lv][dst], topo.n_channels)
    return out


# -------------------------------------------------------------------------- Torus


def _torus_tables(topo: Torus) -> list[np.ndarray]:
    """Per dimension ``i``: ``table[t, 2x + dir]`` = the channel of hop ``t`` of a walk that
    starts at coordinate ``x`` and goes in direction ``dir``, for a vertex whose other
    coordinates are 0 (add ``2n * base`` for the others)."""
    tables = topo.cache.get("torus")
    if tables is not None:
        return tables
    N, n = topo.n_endpoints, topo.n
    tables = []
    for i, k in enumerate(topo.dims):
        x = np.arange(k, dtype=np.int64)[:, None]
        t = np.arange(k // 2, dtype=np.int64)[None, :]
        table = np.empty((k, 2, k // 2), dtype=np.int64)
        for direction, sign in ((0, 1), (1, -1)):
            coord = (x + sign * t) % k
            table[:, direction, :] = 2 * N + (coord * topo.strides[i] * n + i) * 2 + direction
        tables.append(np.ascontiguousarray(table.reshape(2 * k, k // 2).T))
    topo.cache["torus"] = tables
    return tables


def _torus_columns(
    topo: Torus, src: np.ndarray, dst: np.ndarray, endpoint_links: bool
) -> np.ndarray:
    N, n = topo.n_endpoints, topo.n
    sentinel = topo.n_channels
    tables = _torus_tables(topo)
    width = sum(k // 2 for k in topo.dims) + (2 if endpoint_links else 0)
    out = np.empty((width, src.size), dtype=np.int64)
    row = 0
    if endpoint_links:
        moving = src != dst
        out[0] = np.where(moving, src, sentinel)  # injection channel
        out[-1] = np.where(moving, N + dst, sentinel)  # ejection channel
        row = 1
    # Vertex before moving in dimension i: dimensions < i already corrected.
    current = src
    for i, k in enumerate(topo.dims):
        stride = topo.strides[i]
        x = (current // stride) % k
        y = (dst // stride) % k
        delta = (y - x) % k
        minus = 2 * delta > k  # the shorter way round (+1 on a tie)
        steps = np.where(minus, k - delta, delta)
        base = current - x * stride
        block = out[row : row + k // 2]
        np.take(tables[i], 2 * x + minus, axis=1, out=block)
        block += 2 * n * base
        block[np.arange(k // 2)[:, None] >= steps] = sentinel
        current = base + y * stride
        row += k // 2
    return out


# ------------------------------------------------------------------------- Fabric


def _fabric_tables(topo: Fabric) -> dict[str, np.ndarray]:
    tables = topo.cache.get("fabric")
    if tables is not None:
        return tables
    N, S = topo.n_endpoints, topo.n_switches
    csrc, cdst = topo.channel_src, topo.channel_dst
    cables = topo.cables
    # Attachment of each endpoint: its lowest-numbered port that leads to a switch.
    attach = np.full(N, -1, dtype=np.int64)
    inj = np.full(N, -1, dtype=np.int64)
    ej = np.full(N, -1, dtype=np.int64)
    best_port = np.full(N, np.iinfo(np.int64).max, dtype=np.int64)
    for i, (a, pa, b, pb) in enumerate(cables):
        for ep, port, sw, out_ch, in_ch in (
            (a, pa, b, 2 * i, 2 * i + 1),
            (b, pb, a, 2 * i + 1, 2 * i),
        ):
            if ep < N <= sw and port < best_port[ep]:
                best_port[ep], attach[ep], inj[ep], ej[ep] = port, sw - N, out_ch, in_ch
    missing = np.flatnonzero(attach < 0)
    if missing.size:
        names = ", ".join(topo.endpoint_names[i] for i in missing[:5])
        raise RoutingError(f"{topo.spec}: endpoint(s) not attached to a switch: {names}")
    # Switch-to-switch channels as padded adjacency lists.
    ss = np.flatnonzero((csrc >= N) & (cdst >= N))
    u, v = csrc[ss] - N, cdst[ss] - N
    order = np.lexsort((ss, u))
    u, v, ss = u[order], v[order], ss[order]
    degree = np.bincount(u, minlength=S)
    width = max(int(degree.max()) if degree.size else 0, 1)
    slot = np.arange(u.size) - np.repeat(np.cumsum(degree) - degree, degree)
    nbr = np.full((S, width), -1, dtype=np.int64)
    chan = np.full((S, width), -1, dtype=np.int64)
    nbr[u, slot], chan[u, slot] = v, ss
    graph = scipy.sparse.csr_matrix((np.ones(u.size), (u, v)), shape=(S, S))
    targets = np.unique(attach)
    dist = scipy.sparse.csgraph.shortest_path(graph, unweighted=True, indices=targets)
    if not np.isfinite(dist[:, targets]).all():
        raise RoutingError(f"{topo.spec}: the fabric is not connected")
    dist_to = np.full((S, S), np.inf)
    dist_to[:, targets] = dist.T  # dist_to[u, t]: hops from switch u to switch t
    # next_channel[u, d]: channel switch u uses towards endpoint d (-1 at d's own switch).
    next_channel = np.full((S, N), -1, dtype=np.int64)
    usage = np.zeros(topo.n_channels, dtype=np.int64)
    rows = np.arange(S)
    valid = nbr >= 0
    nbr_safe = np.where(valid, nbr, 0)
    chan_safe = np.where(valid, chan, 0)
    for d in range(N):
        t = attach[d]
        du = dist_to[:, t]
        candidate = valid & (du[nbr_safe] == (du - 1)[:, None]) & np.isfinite(du)[:, None]
        score = np.where(candidate, usage[chan_safe], np.iinfo(np.int64).max)
        pick = chan_safe[rows, np.argmin(score, axis=1)]
        routed = candidate.any(axis=1)  # False at t itself and at unreachable switches
        next_channel[routed, d] = pick[routed]
        usage[pick[routed]] += 1
    diameter = int(dist_to[:, targets][np.isfinite(dist_to[:, targets])].max(initial=0))
    tables = {
        "attach": attach,
        "inj": inj,
        "ej": ej,
        "next": next_channel,
        "switch_of_channel": cdst - N,
        "diameter": np.int64(diameter),
    }
    topo.cache["fabric"] = tables
    return tables


def _fabric_columns(
    topo: Fabric, src: np.ndarray, dst: np.ndarray, endpoint_links: bool
) -> np.ndarray:
    t = _fabric_tables(topo)
    sentinel = topo.n_channels
    diameter = int(t["diameter"])
    width = diameter + (2 if endpoint_links else 0)
    out = np.full((width, src.size), sentinel, dtype=np.int64)
    moving = src != dst
    row = 0
    if endpoint_links:
        out[0] = np.where(moving, t["inj"][src], sentinel)
        out[-1] = np.where(moving, t["ej"][dst], sentinel)
        row = 1
    current = t["attach"][src]
    target = t["attach"][dst]
    for hop in range(diameter):
        active = moving & (current != target)
        ch = t["next"][current, dst]
        out[row + hop] = np.where(active, ch, sentinel)
        current = np.where(active, t["switch_of_channel"][np.where(active, ch, 0)], current)
    return out
