"""Network topologies for the congestion simulator (seed 001, Sec. 3-5).

Every topology numbers its *nodes* with endpoints first (``0 .. n_endpoints-1``)
and switches after them, and its *channels* (directed links) with integers
``0 .. n_channels-1``; ``channel_src[c]`` and ``channel_dst[c]`` are the nodes a
channel leaves and enters.  ``links`` counts cables (undirected), endpoint-to-switch
and switch-to-switch alike; each cable carries two channels.

Three kinds:

* :class:`XGFT` -- extended generalized fat-trees XGFT(h; m1..mh; w1..wh) built by the
  recursive rule of Öhring et al. [25], optionally with parallel cables between a node
  and each parent (``p1..ph``, the PGFT generalisation; ``p = 1`` everywhere is the plain
  XGFT of the paper).
* :class:`Torus` -- k-ary n-cubes and tori with per-dimension sizes ``K1 x K2 x ...``.
* :class:`Fabric` -- a real InfiniBand fabric read from ``ibnetdiscover`` output.

:func:`parse_spec` turns the command line's SPEC strings into one of them;
:func:`check_spec` checks a generated one's SPEC and size without building it.
"""

from __future__ import annotations

import math
import os
import re
from pathlib import Path
from typing import Any

import numpy as np

from netnoise import inputs

SPEC_FORMS = (
    "xgft:M1,...,Mh/W1,...,Wh (e.g. xgft:12,12/1,6), "
    "optionally /P1,...,Ph parallel cables per level (e.g. xgft:12,12/1,6/1,2); "
    "torus:K1xK2[xK3...] (e.g. torus:16x16, each K >= 2); "
    "fabric:PATH (an ibnetdiscover topology file)"
)


#: The largest generated topology the simulator builds, 50 times the endpoints of the
#: paper's largest (XGFT(4; 12,12,12,12; 1,12,12,6): 20736): its arrays and routing
#: tables then take a few GB; beyond, memory grows past what a machine has.
MAX_ENDPOINTS = 2**20
MAX_LINKS = 2**22


class SpecError(ValueError):
    """A topology SPEC or topology file that cannot be used."""


class Topology:
    """What the router and the congestion model need from every topology."""

    kind: str = "topology"
    spec: str
    n_endpoints: int
    n_switches: int
    n_links: int
    channel_src: np.ndarray
    channel_dst: np.ndarray

    def __init__(self) -> None:
        # Routing tables and other derived arrays, filled lazily by netnoise.sim.routing.
        self.cache: dict[str, Any] = {}

    @property
    def n_channels(self) -> int:
        return int(self.channel_src.size)

    @property
    def n_nodes(self) -> int:
        return self.n_endpoints + self.n_switches

    def describe(self) -> dict[str, int]:
        return {
            "endpoints": int(self.n_endpoints),
            "switches": int(self.n_switches),
            "links": int(self.n_links),
        }

    def __repr__(self) -> str:
        d = self.describe()
        return (
            f"<{type(self).__name__} {self.spec}: {d['endpoints']} endpoints, "
            f"{d['switches']} switches, {d['links']} links>"
        )


# --------------------------------------------------------------------------- XGFT


def _prod(values: Any) -> int:
    return int(math.prod(int(v) for v in values))


def _xgft_levels(
    m: tuple[int, ...], w: tuple[int, ...], p: tuple[int, ...]
) -> tuple[list[int], list[int]]:
    """Nodes of every level 0..h and cables between level l and l+1 of an XGFT."""
    nodes = [_prod(w[:lv]) * _prod(m[lv:]) for lv in range(len(m) + 1)]
    return nodes, [nodes[lv] * w[lv] * p[lv] for lv in range(len(m))]


def _torus_counts(dims: tuple[int, ...]) -> dict[str, int]:
    """A ring of K >= 3 vertices has K cables, a ring of 2 has one."""
    n = _prod(dims)
    ring_cables = sum(n if k >= 3 else n // 2 for k in dims)
    return {"endpoints": n, "switches": n, "links": n + ring_cables}


class XGFT(Topology):
    """XGFT(h; m1..mh; w1..wh), optionally with ``p`` parallel cables per parent.

    Öhring et al.'s recursion: XGFT(0) is a single endpoint; XGFT(s) is ``m_s`` copies of
    XGFT(s-1) plus ``w1*...*ws`` new top-level nodes, each node of level s-1 connected to
    ``w_s`` of them.  Written out, a node of level ``l`` carries the label
    ``(a_h, ..., a_{l+1}, b_l, ..., b_1)`` with ``a_j < m_j`` and ``b_j < w_j``; a node of
    level ``l`` and one of level ``l+1`` are connected iff their labels agree everywhere
    except in digit ``l+1`` (an ``a`` below, a ``b`` above).  Hence level ``l`` has
    ``N_l = (w_1...w_l)(m_{l+1}...m_h)`` nodes; level 0 are the ``m_1...m_h`` endpoints and
    levels 1..h are switches.

    Numbering.  A level-``l`` node has index ``B + W_l * A`` where ``A`` (mixed radix of the
    ``a`` digits, ``a_{l+1}`` least significant) is the number of the subtree it serves
    (``A = e // M_l`` for every endpoint ``e`` below it, ``M_l = m_1...m_l``) and ``B < W_l
    = w_1...w_l`` encodes the ``b`` digits (``b_1`` least significant).  Endpoint ``e`` is
    level-0 node ``e``.  The cables between level ``l`` and ``l+1`` are numbered
    ``e = lower_index * (w_{l+1} p_{l+1}) + c``: ``c mod w_{l+1}`` is the parent (its digit
    ``b_{l+1}``) and ``c // w_{l+1}`` the parallel copy.  Channel blocks are laid out
    ``[up_0, down_0, up_1, down_1, ...]``; up and down channels of one cable share ``e``.

    The paper's Table 1 (as extracted from the PDF) prints e.g. "XGFT(2,12,6)" and
    "XGFT(4,12,12,6,12,12,3)": it leaves out ``m_1 = 12`` and ``w_1 = 1``.  Read as
    XGFT(2; 12,12; 1,6) ... XGFT(4; 12,12,12,12; 1,12,12,6) every row gives exactly the
    printed endpoint and switch counts (``tests/test_sim.py``).  Built from single cables
    these trees are oversubscribed above the leaves (a leaf of XGFT(2; 12,12; 1,6) has 12
    endpoints and 6 up-links); the paper calls them full-bisection 24-port trees, which
    they are with parallel cables, e.g. ``xgft:12,12/1,6/1,2`` or
    ``xgft:12,12,12,12/1,12,12,6/1,1,1,2`` (same endpoint and switch counts).
    """

    kind = "xgft"

    def __init__(
        self,
        m: tuple[int, ...] | list[int],
        w: tuple[int, ...] | list[int],
        p: tuple[int, ...] | list[int] | None = None,
        spec: str | None = None,
    ) -> None:
        super().__init__()
        m, w = tuple(int(x) for x in m), tuple(int(x) for x in w)
        p = tuple(int(x) for x in p) if p is not None else (1,) * len(m)
        if not m:
            raise SpecError("an XGFT needs at least one level (h >= 1)")
        if len(w) != len(m) or len(p) != len(m):
            raise SpecError(
                f"an XGFT needs as many w (and p) values as m values: got m={list(m)}, "
                f"w={list(w)}, p={list(p)}"
            )
        if min(m) < 1 or min(w) < 1 or min(p) < 1:
            raise SpecError(f"XGFT parameters must be >= 1: m={list(m)} w={list(w)} p={list(p)}")
        self.m, self.w, self.p = m, w, p
        self.h = h = len(m)
        if spec is None:
            spec = f"xgft:{','.join(map(str, m))}/{','.join(map(str, w))}"
            if any(x != 1 for x in p):
                spec += f"/{','.join(map(str, p))}"
        self.spec = spec
        # M[l] = m_1...m_l, W[l] = w_1...w_l, WP[l] = prod_{j<=l} w_j p_j  (l = 0..h)
        self.M = [_prod(m[:lv]) for lv in range(h + 1)]
        self.W = [_prod(w[:lv]) for lv in range(h + 1)]
        self.WP = [_prod(w[j] * p[j] for j in range(lv)) for lv in range(h + 1)]
        self.level_nodes, self.level_edges = _xgft_levels(m, w, p)
        self.n_endpoints = self.level_nodes[0]
        self.n_switches = sum(self.level_nodes[1:])
        self.node_offset = [sum(self.level_nodes[:lv]) for lv in range(h + 1)]
        self.n_links = sum(self.level_edges)
        self.up_offset = [2 * sum(self.level_edges[:lv]) for lv in range(h)]
        self.down_offset = [self.up_offset[lv] + self.level_edges[lv] for lv in range(h)]
        self._build_channels()

    def _build_channels(self) -> None:
        src = np.empty(2 * self.n_links, dtype=np.int64)
        dst = np.empty_like(src)
        for lv in range(self.h):
            wp = self.w[lv] * self.p[lv]
            e = np.arange(self.level_edges[lv], dtype=np.int64)
            c = e % wp
            lower = e // wp
            b_low, a_low = lower % self.W[lv], lower // self.W[lv]
            upper = (b_low + self.W[lv] * (c % self.w[lv])) + self.W[lv + 1] * (a_low // self.m[lv])
            lower_node = self.node_offset[lv] + lower
            upper_node = self.node_offset[lv + 1] + upper
            up, down = self.up_offset[lv], self.down_offset[lv]
            n = self.level_edges[lv]
            src[up : up + n], dst[up : up + n] = lower_node, upper_node
            src[down : down + n], dst[down : down + n] = upper_node, lower_node
        self.channel_src, self.channel_dst = src, dst

    @property
    def endpoint_channel_count(self) -> int:
        """Channels ``0 .. 2*E_0-1`` join endpoints to level-1 switches."""
        return 2 * self.level_edges[0]

    def full_bisection(self) -> bool:
        """Every switch below the top has as many up cables as down cables."""
        return all(self.w[lv] * self.p[lv] == self.m[lv - 1] for lv in range(1, self.h))


# -------------------------------------------------------------------------- Torus


class Torus(Topology):
    """A torus with sizes ``dims = (K1, K2, ...)``; ``(k,)*n`` is the k-ary n-cube.

    Every torus vertex is a switch with one endpoint attached (an InfiniBand torus routed
    by OpenSM, as in the paper's Sec. 5); endpoint ``v`` sits on switch ``v`` and vertex
    ``v`` has coordinates ``x_i = (v // stride_i) % K_i`` with dimension 0 least
    significant.  Channels: ``v`` injection (endpoint -> switch), ``N + v`` ejection, then
    ``2N + (v*n + i)*2 + dir`` from vertex ``v`` to its neighbour in dimension ``i``,
    ``dir`` 0 = +1, 1 = -1 (mod ``K_i``).  A ring of ``K >= 3`` vertices has ``K`` cables;
    a ring of 2 vertices has one cable (its -1 channels exist but are never routed).
    """

    kind = "torus"

    def __init__(self, dims: tuple[int, ...] | list[int], spec: str | None = None) -> None:
        super().__init__()
        dims = tuple(int(k) for k in dims)
        if not dims or min(dims) < 2:
            raise SpecError(f"torus dimensions must all be >= 2, got {list(dims)}")
        self.dims = dims
        self.n = n = len(dims)
        self.spec = spec or "torus:" + "x".join(map(str, dims))
        counts = _torus_counts(dims)
        N = counts["endpoints"]
        self.n_endpoints = N
        self.n_switches = N
        self.strides = [_prod(dims[:i]) for i in range(n)]
        self.n_links = counts["links"]
        v = np.arange(N, dtype=np.int64)
        src = [v, N + v]
        dst = [N + v, v]
        coords = [(v // self.strides[i]) % dims[i] for i in range(n)]
        tsrc = np.empty((N, n, 2), dtype=np.int64)
        tdst = np.empty((N, n, 2), dtype=np.int64)
        for i, k in enumerate(dims):
            base = v - coords[i] * self.strides[i]
            tsrc[:, i, :] = (N + v)[:, None]
            tdst[:, i, 0] = N + base + ((coords[i] + 1) % k) * self.strides[i]
            tdst[:, i, 1] = N + base + ((coords[i] - 1) % k) * self.strides[i]
        src.append(tsrc.ravel())
        dst.append(tdst.ravel())
        self.channel_src = np.concatenate(src)
        self.channel_dst = np.concatenate(dst)

    def torus_channel(self, vertex: np.ndarray, dim: int, direction: np.ndarray) -> np.ndarray:
        return 2 * self.n_endpoints + (vertex * self.n + dim) * 2 + direction


# ------------------------------------------------------------------------- Fabric

_NODE_RE = re.compile(r'^(Switch|Ca|Rt)\s+(\d+)\s+"([^"]+)"(?:\s*#\s*"([^"]*)")?')
_LINK_RE = re.compile(
    r'^\s*\[(\d+)\](?:\[ext\s*\d+\])?(?:\([0-9a-fA-Fx]+\))?\s*"([^"]+)"\[(\d+)\]'
    r"(?:\[ext\s*\d+\])?(?:\([0-9a-fA-Fx]+\))?"
)


class Fabric(Topology):
    """An InfiniBand fabric from ``ibnetdiscover`` output.

    Host channel adapters (``Ca`` blocks) are the endpoints, ``Switch`` (and ``Rt``) blocks
    the switches, each in order of appearance.  Every ``[port] "GUID"[port]`` line of a block
    is one side of a cable; the cable list is deduplicated (each cable is printed from both
    of its ends) and a port that claims two different peers is an error.  Cable ``i`` carries
    channel ``2i`` (its first-seen end to the other) and ``2i+1`` (back).
    """

    kind = "fabric"

    def __init__(
        self,
        endpoint_names: list[str],
        switch_names: list[str],
        cables: list[tuple[int, int, int, int]],
        spec: str,
        descriptions: dict[str, str] | None = None,
    ) -> None:
        super().__init__()
        self.spec = spec
        self.endpoint_names = endpoint_names
        self.switch_names = switch_names
        self.descriptions = descriptions or {}
        self.n_endpoints = len(endpoint_names)
        self.n_switches = len(switch_names)
        self.n_links = len(cables)
        # cables: (node_a, port_a, node_b, port_b) with global node ids
        self.cables = np.asarray(cables, dtype=np.int64).reshape(-1, 4)
        a, b = self.cables[:, 0], self.cables[:, 2]
        self.channel_src = np.column_stack([a, b]).ravel()
        self.channel_dst = np.column_stack([b, a]).ravel()


def read_ibnetdiscover(path: str | os.PathLike[str], spec: str | None = None) -> Fabric:
    """Parse an ``ibnetdiscover`` topology file into a :class:`Fabric`."""
    path = Path(path)
    try:
        text = inputs.read_bytes(path, inputs.MAX_TABLE_BYTES, "topology file").decode(
            errors="replace"
        )
    except inputs.InputError as err:
        raise SpecError(str(err)) from None
    except FileNotFoundError:
        raise SpecError(f"{path}: no such topology file") from None
    except OSError as err:
        raise SpecError(f"{path}: cannot read topology file: {err}") from None

    kinds: dict[str, str] = {}
    order: list[str] = []
    descriptions: dict[str, str] = {}
    half_links: list[tuple[str, int, str, int, int]] = []
    current: str | None = None
    for lineno, raw in enumerate(text.splitlines(), start=1):
        line = raw.rstrip()
        if not line.strip():
            current = None  # blocks are separated by blank lines
            continue
        if line.lstrip().startswith("#"):
            continue
        node = _NODE_RE.match(line)
        if node:
            kind, _, name, desc = node.groups()
            if name in kinds:
                raise SpecError(f"{path}:{lineno}: node {name!r} is defined twice")
            kinds[name] = "switch" if kind in ("Switch", "Rt") else "endpoint"
            order.append(name)
            if desc:
                descriptions[name] = desc
            current = name
            continue
        link = _LINK_RE.match(line)
        if link:
            if current is None:
                raise SpecError(f"{path}:{lineno}: link line outside a Switch/Ca block")
            port, peer, peer_port = link.groups()
            half_links.append((current, int(port), peer, int(peer_port), lineno))
            continue
        if line.lstrip().startswith("["):
            raise SpecError(f"{path}:{lineno}: cannot parse link line {line.strip()!r}")
        # vendid=, devid=, sysimgguid=, switchguid=, caguid= ...: header lines of a block
        current = None
    if not order:
        raise SpecError(f"{path}: no Switch or Ca blocks (is this ibnetdiscover output?)")

    endpoints = [n for n in order if kinds[n] == "endpoint"]
    switches = [n for n in order if kinds[n] == "switch"]
    ids = {name: i for i, name in enumerate(endpoints + switches)}
    peer_of: dict[tuple[str, int], tuple[str, int]] = {}
    cables: list[tuple[int, int, int, int]] = []
    for name, port, peer, peer_port, lineno in half_links:
        if peer not in kinds:
            raise SpecError(f"{path}:{lineno}: link to {peer!r}, which has no Switch/Ca block")
        here, there = (name, port), (peer, peer_port)
        if here == there:
            raise SpecError(f"{path}:{lineno}: port {port} of {name!r} is linked to itself")
        for end, other in ((here, there), (there, here)):
            known = peer_of.get(end)
            if known is not None and known != other:
                raise SpecError(
                    f"{path}:{lineno}: port {end[1]} of {end[0]!r} is linked to both "
                    f"{known[0]!r}[{known[1]}] and {other[0]!r}[{other[1]}]"
                )
        if peer_of.get(here) == there:
            continue  # the other end already printed this cable
        peer_of[here], peer_of[there] = there, here
        cables.append((ids[name], port, ids[peer], peer_port))
    return Fabric(endpoints, switches, cables, spec or f"fabric:{path}", descriptions)


# --------------------------------------------------------------------------- SPEC

_INT_LIST = re.compile(r"\d{1,18}(,\d{1,18})*")


def _bad(spec: object, problem: str) -> SpecError:
    return SpecError(f"bad topology SPEC {spec!r}: {problem}; allowed forms: {SPEC_FORMS}")


def _ints(text: str, what: str, spec: str) -> list[int]:
    text = text.strip()
    if not _INT_LIST.fullmatch(text):
        raise _bad(
            spec, f"{what} must be comma-separated positive integers, got {inputs.quoted(text)}"
        )
    return [int(x) for x in text.split(",")]


def _parse(spec: str) -> tuple[str, tuple[Any, ...]]:
    """The kind of a SPEC and its parameters: (m, w, p), (dims,) or (path,)."""
    if not isinstance(spec, str) or ":" not in spec:
        raise _bad(spec, "missing 'kind:'")
    kind, _, rest = spec.partition(":")
    kind = kind.strip().lower()
    if kind == "xgft":
        parts = rest.split("/")
        if len(parts) not in (2, 3):
            raise _bad(spec, "xgft needs M1,...,Mh/W1,...,Wh")
        m = _ints(parts[0], "M1,...,Mh", spec)
        w = _ints(parts[1], "W1,...,Wh", spec)
        p = _ints(parts[2], "P1,...,Ph", spec) if len(parts) == 3 else [1] * len(m)
        if len(w) != len(m) or len(p) != len(m):
            raise _bad(spec, f"xgft needs as many W (and P) values as M values (h = {len(m)})")
        if 0 in m or 0 in w or 0 in p:
            raise _bad(spec, "xgft parameters must be >= 1")
        return kind, (tuple(m), tuple(w), tuple(p))
    if kind == "torus":
        if not re.fullmatch(r"\d{1,18}(x\d{1,18})*", rest.strip()):
            raise _bad(spec, "torus needs K1xK2[xK3...]")
        dims = tuple(int(k) for k in rest.strip().split("x"))
        if min(dims) < 2:
            raise _bad(spec, "every torus dimension must be >= 2")
        return kind, (dims,)
    if kind == "fabric":
        path = Path(rest.strip())
        if not rest.strip():
            raise _bad(spec, "fabric needs a PATH")
        if not path.is_file():
            raise _bad(spec, f"no such file {str(path)!r}")
        return kind, (path,)
    raise _bad(spec, f"unknown kind {kind!r}")


def check_spec(spec: str) -> dict[str, int]:
    """Endpoints, switches and links of a generated topology's SPEC (``xgft:``,
    ``torus:``), computed without building it; a SpecError when the SPEC is
    malformed, impossible or beyond :data:`MAX_ENDPOINTS` / :data:`MAX_LINKS`."""
    kind, params = _parse(spec)
    if kind == "xgft":
        nodes, edges = _xgft_levels(*params)
        counts = {"endpoints": nodes[0], "switches": sum(nodes[1:]), "links": sum(edges)}
    elif kind == "torus":
        counts = _torus_counts(*params)
    else:
        raise _bad(spec, "the size of a fabric is known only from its file")
    if counts["endpoints"] > MAX_ENDPOINTS or counts["links"] > MAX_LINKS:
        raise SpecError(
            f"topology SPEC {spec!r} has {counts['endpoints']} endpoints and "
            f"{counts['links']} links; the simulator builds at most {MAX_ENDPOINTS} endpoints "
            f"and {MAX_LINKS} links"
        )
    return counts


def parse_spec(spec: str) -> Topology:
    """Build the topology a SPEC names: ``xgft:...``, ``torus:...`` or ``fabric:PATH``
    (generated ones checked by :func:`check_spec` first)."""
    kind, params = _parse(spec)
    if kind == "fabric":
        return read_ibnetdiscover(*params, spec=spec)
    check_spec(spec)
    return XGFT(*params, spec=spec) if kind == "xgft" else Torus(*params, spec=spec)


def describe(spec_or_topology: str | Topology) -> dict[str, int]:
    """``{"endpoints": ..., "switches": ..., "links": ...}`` of a SPEC or topology."""
    topo = parse_spec(spec_or_topology) if isinstance(spec_or_topology, str) else spec_or_topology
    return topo.describe()
