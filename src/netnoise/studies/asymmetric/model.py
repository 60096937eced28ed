"""The asymmetric communication model of hierarchical Ethernet (seed 003, Secs. 4-7).

A *pattern* is a set of point-to-point transfers ``src -> dst`` of ``bytes``
that all start together (the links of ``p2p_concurrent``). The platform is a
set of racks of nodes: every node has one full-duplex NIC, racks are joined by
a full-duplex backbone, and a link between two nodes of the same rack does
not use the backbone. Units: MB = 10^6 bytes, Mbps = 10^6 bit/s, rates in bit/s.

Resources and congestion factors (Sec. 4.4)
-------------------------------------------
A link ``a -> b`` uses, *with the flow*, the backbone leaving rack(a) (only
when it leaves the rack), the sending NIC of a, the receiving NIC of b (and,
for more than two racks, the backbone entering rack(b)): the vector S of
eq. 1, each entry the set of links sharing that resource in the same
direction. Its *contra-flow* vector S̄ (eq. 3) holds the links using the same
physical resources in the reverse direction. With β the inverse rate of each
resource, k = max β[i]·|S[i]| (eq. 2) and k̄ = max β[i]·|S̄[i]| (eq. 4). With
two racks the backbone entering rack(b) holds the same links as the one
leaving rack(a), so the extra entry changes nothing there; it is what a
star of racks (Grid5000's switches on one router, Sec. 3.2.2) needs.

Algorithm 1 (inverse bandwidths, Sec. 6.1), as read here
--------------------------------------------------------
Links are popped from a priority queue in descending order of
⟨max(k, k̄), k, k̄⟩ (eq. 7); ties go to the earlier link of the pattern.

- ``k >= k̄`` (with-flow congestion, lines 7-10): on every resource i with
  β[i]·|S[i]| == k, the link gets the capacity left by the links already
  computed there, shared fairly by the links not yet computed
  (``inverseBandwidth``: |E''| / (β̂⁻¹ − k')); over several such resources the
  most restrictive value (line 10's max of inverse bandwidths). Line 32's
  ``max(β_E, ·)`` caps a link at the rate of one NIC: in the paper β_E (1 Gb
  copper) and β_N are the same 940 Mbps, and eq. 5 gives an unsaturated
  10 Gb backbone's links β_E, i.e. the NIC rate.
- ``k < k̄`` (contra-flow congestion, lines 11-20): the extracted text writes
  S in lines 12-19 where the test against k̄ only makes sense for S̄ (a
  product of S equals k̄ > k = max over S never), so S̄ is read there. On every
  resource i with β[i]·|S̄[i]| == k̄, if the contra-flow links already computed
  saturate it (sum of their rates reaches its capacity; line 16's ``==`` is
  read as "reaches", as a heuristic over-allocation is no less saturated),
  the link takes min β of those links, i.e. the fastest of them (line 17:
  the asymmetric property of Sec. 5.2, δ⁺ = 2, δ⁻ = 1 gives all three links
  470 Mbps). Otherwise that entry of S̄ is emptied (line 19) and the link is
  queued again with its new k̄ (line 20). The pseudo-code may both set β and
  re-queue when several resources tie; here a saturated one settles the link
  (the most restrictive if more than one), and it is re-queued only when
  none is saturated. The key order guarantees that the contra-flow links of
  the bottleneck (their k is at least k̄) are computed before the link.
- Resource left to a link can be zero or negative when earlier links were
  given more than a fair share (the contra-flow rule and the ordering are
  heuristics); the paper does not say what then happens. The link then gets
  the plain fair share of eq. 5 on that resource instead of a division by
  zero. It was not seen on random two-rack patterns of Sec. 7.1; it is rare
  with three racks (the fairness-model case in tests/test_asymmetric.py).

The *fairness* model (eq. 5, the ε'' baseline of Table II) is Algorithm 1
without the contra-flow branch: k̄ is taken as 0, so every link gets its
fair share at its with-flow bottleneck and a full-duplex NIC or backbone
carries both directions independently.

Algorithm 2 (progressive completion, Sec. 6.2) recomputes Algorithm 1 over
the links still running, advances time to the next completion and repeats;
each round is a *step* (Table I has two, Table II averages them). All rates,
sizes and times are exact fractions, so the algorithms' equality tests
(lines 9, 13, 16 and ``m == 0``) are exact; outputs are floats.
"""

from __future__ import annotations

import heapq
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np
import pandas as pd

MODELS = ("asymmetric", "fairness")
MB = 10**6  # bytes (the paper's MB: 10 MB at 313.3 Mbps takes 0.255 s in Table I)

# The paper's testbed (Sec. 3.2.1, 5.1): measured per-link TCP rate of a 1 Gb
# NIC and measured aggregate of the 10 Gb optical backbone; the copper
# backbone of the case study (Sec. 6.3) runs at the NIC rate.
PAPER_NIC_BPS = 940e6
PAPER_OPTICAL_BPS = 9.4e9
PAPER_COPPER_BPS = 940e6

PATTERN_COLUMNS = ("src", "dst", "bytes")

# Sec. 7.3: measured execution time of the Alltoallv and the two published predictions (s).
ALLTOALLV_PUBLISHED = {"measured_s": 1.095, "asymmetric_s": 1.106, "fairness_s": 0.851}

# Fig. 8's message sizes (MB) are drawn in the figure and are not in the
# extracted text. These 12 sizes (sender -> receiver on four nodes of one
# rack) are a RECONSTRUCTION, not the paper's: a random search over sizes in
# multiples of 10 MB found many all-to-all patterns whose predicted execution
# time is the paper's under both models (1.106 s asymmetric, 0.851 s
# fairness, i.e. 130 and 100 MB at 940 Mbps); this one has every pair
# exchanging data and the fewest distinct sizes. Agreement on it is a
# consistency check of this implementation, not evidence for the model; pass
# the figure's sizes to alltoallv_case(sizes_mb=...) once they are read off it.
ALLTOALLV_RECONSTRUCTED_MB = {
    ("n0", "n1"): 70,
    ("n0", "n2"): 10,
    ("n0", "n3"): 10,
    ("n1", "n0"): 20,
    ("n1", "n2"): 40,
    ("n1", "n3"): 40,
    ("n2", "n0"): 10,
    ("n2", "n1"): 20,
    ("n2", "n3"): 20,
    ("n3", "n0"): 20,
    ("n3", "n1"): 10,
    ("n3", "n2"): 40,
}


# --------------------------------------------------------------------------- platform


@dataclass(frozen=True)
class Platform:
    """Racks of nodes, one NIC per node, a backbone between racks (rates in bit/s)."""

    racks: Mapping[str, tuple[str, ...]]
    nic_bps: float
    backbone_bps: float
    rack_of: Mapping[str, str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        rack_of: dict[str, str] = {}
        if not self.racks:
            raise ValueError("platform: no racks")
        for rack, nodes in self.racks.items():
            if not nodes:
                raise ValueError(f"platform: rack {rack!r} has no nodes")
            for node in nodes:
                if node in rack_of:
                    raise ValueError(
                        f"platform: node {node!r} is in racks {rack_of[node]!r} and {rack!r}"
                    )
                rack_of[node] = rack
        for key in ("nic_bps", "backbone_bps"):
            value = getattr(self, key)
            if not (np.isfinite(value) and value > 0):
                raise ValueError(f"platform: {key} must be a positive number, got {value!r}")
        object.__setattr__(self, "rack_of", rack_of)

    @property
    def nodes(self) -> list[str]:
        return [node for nodes in self.racks.values() for node in nodes]


def as_platform(platform: Platform | Mapping) -> Platform:
    """A :class:`Platform` from itself or from a mapping ``racks, nic_bps, backbone_bps``."""
    if isinstance(platform, Platform):
        return platform
    missing = [k for k in ("racks", "nic_bps", "backbone_bps") if k not in platform]
    if missing:
        raise ValueError(f"platform: missing key(s) {', '.join(missing)}")
    racks = platform["racks"]
    if not isinstance(racks, Mapping):
        raise ValueError("platform: racks must map rack names to lists of node names")
    normalized = {}
    for rack, nodes in racks.items():
        if isinstance(nodes, str) or not isinstance(nodes, Iterable):
            raise ValueError(f"platform: rack {rack!r} must list its nodes")
        normalized[str(rack)] = tuple(str(n) for n in nodes)
    try:
        nic, backbone = float(platform["nic_bps"]), float(platform["backbone_bps"])
    except (TypeError, ValueError) as err:
        raise ValueError(f"platform: rates must be numbers ({err})") from None
    return Platform(normalized, nic, backbone)


def two_racks(
    n_nodes: int, nic_bps: float = PAPER_NIC_BPS, backbone_bps: float = PAPER_OPTICAL_BPS
) -> Platform:
    """The paper's testbed: |N| nodes, half in rack X and half in rack Y (Sec. 7.1).

    Nodes are named by their rank ``"0" .. "|N|-1"`` (rack X first), so a
    pattern is also a ``p2p_concurrent`` pattern file with one rank per node.
    """
    if n_nodes < 2 or n_nodes % 2:
        raise ValueError(f"two_racks: need an even number of nodes >= 2, got {n_nodes}")
    half = n_nodes // 2
    names = [str(i) for i in range(n_nodes)]
    return Platform({"X": tuple(names[:half]), "Y": tuple(names[half:])}, nic_bps, backbone_bps)


# --------------------------------------------------------------------------- resources

# A resource is (kind, name, direction): ("nic", node, "out") is E⁻(node)'s NIC,
# ("bb", rack, "in") the backbone entering a rack.
Resource = tuple[str, str, str]


def _reverse(resource: Resource) -> Resource:
    kind, name, direction = resource
    return (kind, name, "in" if direction == "out" else "out")


def _with_flow(src: str, dst: str, plat: Platform) -> list[Resource]:
    """The resources of S (eq. 1) in order; backbone entries only for inter-rack links."""
    ra, rb = plat.rack_of[src], plat.rack_of[dst]
    nics = [("nic", src, "out"), ("nic", dst, "in")]
    if ra == rb:
        return nics
    return [("bb", ra, "out"), *nics, ("bb", rb, "in")]


class _Links:
    """The links of one step: resources, sharing sets and exact capacities."""

    def __init__(self, links: Sequence[tuple[str, str]], plat: Platform):
        self.nic = Fraction(plat.nic_bps)
        self.backbone = Fraction(plat.backbone_bps)
        self.res = [_with_flow(s, d, plat) for s, d in links]
        self.members: dict[Resource, list[int]] = defaultdict(list)
        for e, resources in enumerate(self.res):
            for r in resources:
                self.members[r].append(e)

    def capacity(self, r: Resource) -> Fraction:
        return self.nic if r[0] == "nic" else self.backbone

    def load(self, r: Resource) -> Fraction:
        """β·|set| of resource r: its number of links over its rate."""
        return Fraction(len(self.members.get(r, ()))) / self.capacity(r)

    def k(self, e: int) -> Fraction:
        return max(self.load(r) for r in self.res[e])

    def k_bar(self, e: int, disabled: set[int]) -> Fraction:
        loads = [self.load(_reverse(r)) for i, r in enumerate(self.res[e]) if i not in disabled]
        return max(loads, default=Fraction(0))


def _algorithm1(
    links: Sequence[tuple[str, str]], plat: Platform, asymmetric: bool
) -> list[Fraction]:
    """Rates (bit/s) of concurrent links by Algorithm 1 (see the module docstring)."""
    net = _Links(links, plat)
    rate: list[Fraction | None] = [None] * len(links)
    disabled: list[set[int]] = [set() for _ in links]

    def key(e: int) -> tuple:
        k = net.k(e)
        kb = net.k_bar(e, disabled[e]) if asymmetric else Fraction(0)
        return (-max(k, kb), -k, -kb, e)

    def fair_rest(r: Resource) -> Fraction:
        """inverseBandwidth(i) as a rate: what computed links leave, shared fairly."""
        done = [rate[f] for f in net.members[r] if rate[f] is not None]
        left = net.capacity(r) - sum(done, Fraction(0))
        pending = len(net.members[r]) - len(done)
        share = left / pending if left > 0 else net.capacity(r) / len(net.members[r])
        return min(share, net.nic)

    queue = [key(e) for e in range(len(links))]
    heapq.heapify(queue)
    while queue:
        *_, e = heapq.heappop(queue)
        k = net.k(e)
        kb = net.k_bar(e, disabled[e]) if asymmetric else Fraction(0)
        if k >= kb:
            rate[e] = min(fair_rest(r) for r in net.res[e] if net.load(r) == k)
            continue
        settled: list[Fraction] = []
        for i, r in enumerate(net.res[e]):
            contra = _reverse(r)
            if i in disabled[e] or net.load(contra) != kb:
                continue
            done = [rate[f] for f in net.members[contra] if rate[f] is not None]
            if done and sum(done, Fraction(0)) >= net.capacity(r):
                settled.append(max(done))  # min of their inverse bandwidths
            else:
                disabled[e].add(i)
        if settled:
            rate[e] = min(settled)
        else:
            heapq.heappush(queue, key(e))
    if any(r is None for r in rate):  # every link leaves the queue with a rate
        raise AssertionError("Algorithm 1 left a link without a rate")
    return rate  # type: ignore[return-value]


def _algorithm2(
    links: Sequence[tuple[str, str]], bits: Sequence[int], plat: Platform, asymmetric: bool
) -> tuple[list[Fraction], list[int], int]:
    """Completion times (s), the step each link ends in, and the number of steps."""
    left = [Fraction(b) for b in bits]
    finish: list[Fraction] = [Fraction(0)] * len(links)
    finish_step = [0] * len(links)
    active = list(range(len(links)))
    t, step = Fraction(0), 0
    while active:
        step += 1
        rates = _algorithm1([links[i] for i in active], plat, asymmetric)
        dt = min(left[i] / r for i, r in zip(active, rates, strict=True))
        t += dt
        running = []
        for i, r in zip(active, rates, strict=True):
            left[i] -= dt * r
            if left[i] == 0:
                finish[i], finish_step[i] = t, step
            else:
                running.append(i)
        active = running
    return finish, finish_step, step


# --------------------------------------------------------------------------- patterns


def _check_pattern(pattern: pd.DataFrame, plat: Platform) -> None:
    missing = [c for c in PATTERN_COLUMNS if c not in pattern.columns]
    if missing:
        raise ValueError(f"pattern: missing column(s) {', '.join(missing)}")
    for pos, (src, dst, size) in enumerate(
        zip(pattern["src"], pattern["dst"], pattern["bytes"], strict=True)
    ):
        for node in (src, dst):
            if str(node) not in plat.rack_of:
                raise ValueError(f"pattern row {pos}: unknown node {node!r}")
        if str(src) == str(dst):
            raise ValueError(f"pattern row {pos}: src and dst are both {src!r}")
        if not (float(size) > 0 and float(size) == int(size)):
            raise ValueError(f"pattern row {pos}: bytes must be a positive integer, got {size!r}")


def _bidirectional(links: Sequence[tuple[str, str]], plat: Platform) -> bool:
    """Does a NIC or the backbone carry links both ways (δ⁺ ≥ 1 and δ⁻ ≥ 1)?"""
    used = {r for src, dst in links for r in _with_flow(src, dst, plat)}
    return any(_reverse(r) in used for r in used)


def bandwidths(platform, pattern: pd.DataFrame, model: str = "asymmetric") -> np.ndarray:
    """Rates (bit/s) Algorithm 1 gives the links of ``pattern`` while all run together."""
    plat = as_platform(platform)
    if model not in MODELS:
        raise ValueError(f"model {model!r}: use one of {', '.join(MODELS)}")
    _check_pattern(pattern, plat)
    links = [(str(s), str(d)) for s, d in zip(pattern["src"], pattern["dst"], strict=True)]
    rates = _algorithm1(links, plat, model == "asymmetric")
    return np.array([float(r) for r in rates])


def predict(platform, pattern: pd.DataFrame, model: str = "asymmetric") -> pd.DataFrame:
    """Predicted communication time of every link (Algorithm 2 over Algorithm 1).

    ``pattern`` has one row per link (``src, dst, bytes`` and any other
    columns, kept). With a ``trial`` column every trial is a separate
    application predicted on its own. Adds ``time_s``, ``finish_step`` (the
    step the link ends in), ``steps`` (steps of its pattern, Table II),
    ``bidirectional`` (a NIC or the backbone carries links both ways at the
    start: Sec. 7.2's "patterns with bidirectional communications on the
    shared network resources", on which Table II's ε′ and ε″ are averaged)
    and ``model``. Row order is kept; an empty pattern gives an empty frame.
    """
    plat = as_platform(platform)
    if model not in MODELS:
        raise ValueError(f"model {model!r}: use one of {', '.join(MODELS)}")
    _check_pattern(pattern, plat)
    out = pattern.copy()
    n = len(out)
    time_s, finish_step = np.zeros(n), np.zeros(n, dtype=int)
    steps, both_ways = np.zeros(n, dtype=int), np.zeros(n, dtype=bool)
    groups = (
        out.groupby("trial", sort=False).indices.values()
        if "trial" in out.columns
        else [np.arange(n)]
    )
    for positions in groups:
        rows = out.iloc[positions]
        links = [(str(s), str(d)) for s, d in zip(rows["src"], rows["dst"], strict=True)]
        bits = [8 * int(b) for b in rows["bytes"]]
        finish, step_of, n_steps = _algorithm2(links, bits, plat, model == "asymmetric")
        time_s[positions] = [float(t) for t in finish]
        finish_step[positions] = step_of
        steps[positions] = n_steps
        both_ways[positions] = _bidirectional(links, plat)
    out["time_s"] = time_s
    out["finish_step"] = finish_step
    out["steps"] = steps
    out["bidirectional"] = both_ways
    out["model"] = model
    return out


def random_pattern(
    nodes: Sequence[str], d: int, bytes: int | Sequence[int], rng: np.random.Generator
) -> pd.DataFrame:
    """A random pattern of Sec. 7.1.

    Each node in turn, d times: pick a destination uniformly among the other
    nodes and keep the link ``node -> destination`` with probability 1/2.
    ``bytes`` is the message size, or sizes to draw one from uniformly per
    kept link. The same destination may be drawn twice (two process pairs);
    the pattern may be empty. Draw order: destination, coin, (size).
    """
    nodes = [str(n) for n in nodes]
    if len(nodes) < 2:
        raise ValueError("random_pattern: need at least two nodes")
    if d < 1:
        raise ValueError(f"random_pattern: d must be >= 1, got {d}")
    sizes = np.atleast_1d(np.asarray(bytes, dtype=np.int64))
    if sizes.size == 0 or (sizes <= 0).any():
        raise ValueError("random_pattern: message sizes must be positive")
    rows = []
    for i, src in enumerate(nodes):
        for _ in range(d):
            j = int(rng.integers(len(nodes) - 1))
            dst = nodes[j + 1 if j >= i else j]  # uniform over the others
            if rng.random() < 0.5:
                size = int(sizes[0] if sizes.size == 1 else rng.choice(sizes))
                rows.append((src, dst, size))
    return pd.DataFrame(rows, columns=list(PATTERN_COLUMNS)).astype({"bytes": "int64"})


@dataclass(frozen=True)
class AlltoallvCase:
    """Sec. 7.3: an irregular Alltoallv on four nodes of one rack of the main testbed."""

    platform: Platform
    pattern: pd.DataFrame
    published: Mapping[str, float]
    sizes_source: str


def alltoallv_case(sizes_mb: Mapping[tuple[str, str], float] | None = None) -> AlltoallvCase:
    """The Alltoallv experiment of Sec. 7.3 (Fig. 8) as a platform and a pattern.

    Four nodes ``n0..n3`` of one rack (NICs at the measured 940 Mbps); every
    node sends to every other its own amount, all transfers at once; the
    execution time is the last completion. ``sizes_mb`` maps (src, dst) to MB;
    by default :data:`ALLTOALLV_RECONSTRUCTED_MB` (not the figure's values,
    which the extracted text lacks).
    """
    nodes = ("n0", "n1", "n2", "n3")
    source = "given" if sizes_mb is not None else "reconstructed (Fig. 8 sizes not in the text)"
    sizes = dict(ALLTOALLV_RECONSTRUCTED_MB if sizes_mb is None else sizes_mb)
    rows = []
    for (src, dst), mb in sizes.items():
        if src not in nodes or dst not in nodes or src == dst:
            raise ValueError(f"alltoallv_case: bad link {src!r} -> {dst!r}")
        if mb > 0:
            rows.append((src, dst, round(mb * MB)))
    platform = Platform({"rack": nodes}, PAPER_NIC_BPS, PAPER_OPTICAL_BPS)
    pattern = pd.DataFrame(rows, columns=list(PATTERN_COLUMNS))
    return AlltoallvCase(platform, pattern, dict(ALLTOALLV_PUBLISHED), source)


# --------------------------------------------------------------------------- errors


def errors(predicted: pd.DataFrame, measured: pd.DataFrame) -> pd.DataFrame:
    """Prediction error of every link.

    ``predicted`` comes from :func:`predict`; ``measured`` has the measured
    time (mean over iterations) of the same links in ``time_s``. Rows are
    matched on ``trial`` and ``link`` where both frames have them, otherwise
    by position (within each trial); ``src, dst, bytes`` must agree.

    ε = (T_pred − T_meas) / T_meas, signed as in Table I and Fig. 6 (the
    text's formula has bars, but the table prints −4.1 % and Sec. 7.2 calls
    −80 % a prediction five times too low). Columns added: ``time_pred_s``,
    ``time_meas_s``, ``eps``, ``abs_eps``, ``within_10pct``.
    """
    if "time_s" not in predicted.columns or "time_s" not in measured.columns:
        raise ValueError("errors: both frames need a time_s column")
    keys = [c for c in ("trial", "link") if c in predicted.columns and c in measured.columns]
    pred = predicted.reset_index(drop=True).rename(columns={"time_s": "time_pred_s"})
    meas = measured.reset_index(drop=True)
    if "link" not in keys:
        if len(pred) != len(meas):
            raise ValueError(f"errors: {len(pred)} predicted links but {len(meas)} measured")
        if "trial" in keys:
            pred["_pos"] = pred.groupby("trial", sort=False).cumcount()
            meas = meas.assign(_pos=meas.groupby("trial", sort=False).cumcount())
        else:
            pred["_pos"] = np.arange(len(pred))
            meas = meas.assign(_pos=np.arange(len(meas)))
        keys = [*keys, "_pos"]
    check = [c for c in PATTERN_COLUMNS if c in meas.columns]
    right = meas[[*keys, *check, "time_s"]].rename(
        columns={"time_s": "time_meas_s", **{c: f"_meas_{c}" for c in check}}
    )
    try:
        out = pred.merge(right, on=keys, how="left", validate="one_to_one", sort=False)
    except pd.errors.MergeError as err:
        raise ValueError(f"errors: links are not unique on {keys}: {err}") from None
    if out["time_meas_s"].isna().any():
        raise ValueError("errors: some predicted links have no measurement")
    for c in check:
        a, b = out[c], out[f"_meas_{c}"]
        same = (
            a.astype(float) == b.astype(float) if c == "bytes" else a.astype(str) == b.astype(str)
        )
        differs = np.flatnonzero(~same.to_numpy())
        if len(differs):
            raise ValueError(f"errors: link {differs[0]} differs in {c} between the two frames")
    out = out.drop(columns=[f"_meas_{c}" for c in check] + (["_pos"] if "_pos" in keys else []))
    if (out["time_meas_s"] <= 0).any():
        raise ValueError("errors: measured times must be positive")
    out["eps"] = (out["time_pred_s"] - out["time_meas_s"]) / out["time_meas_s"]
    out["abs_eps"] = out["eps"].abs()
    out["within_10pct"] = out["abs_eps"] <= 0.10
    return out


def _ci95_halfwidth(values: np.ndarray) -> float:
    from scipy import stats

    if len(values) < 2:
        return float("nan")
    sem = values.std(ddof=1) / np.sqrt(len(values))
    return float(stats.t.ppf(0.975, len(values) - 1) * sem)


def _pct(values: pd.Series) -> float:
    return float(100 * values.astype(float).mean()) if len(values) else float("nan")


def _bidirectional_rows(part: pd.DataFrame) -> pd.DataFrame:
    if "bidirectional" not in part.columns:
        return part.iloc[0:0]
    return part[part["bidirectional"].astype(bool)]


def summary(errs: pd.DataFrame, by: Sequence[str] | None = None) -> pd.DataFrame:
    """Table II per setting from :func:`errors` output (one or both models, concatenated).

    ``by``: setting columns (default: whichever of ``nodes``, ``d`` exist).
    Columns: ``n_links`` (Table II's N_trials, the number of links),
    ``n_patterns`` (distinct ``trial`` values, 1 without that column),
    ``steps_mean`` (mean dynamics steps per pattern), ``eps_abs_mean_pct``
    (|ε|), ``eps_mean_pct`` and ``eps_ci95_pct`` (mean signed ε and the
    half-width of its 95 % confidence interval: Table II's π(ε) is not defined
    in the extracted text, whose "within less than 0.2 % imprecision" suggests
    a precision of the mean error, so this is given under its own name),
    ``within10_pct`` (share of links with |ε| ≤ 10 %, Sec. 7.2),
    ``eps_prime_abs_mean_pct`` (|ε′|: asymmetric model, bidirectional
    patterns), ``eps_dprime_abs_mean_pct`` (|ε″|: fairness model on the same
    patterns), ``fair_eps_abs_mean_pct`` and ``fair_within10_pct`` (fairness
    model, all links). Statistics of a model absent from ``errs`` are NaN;
    rows without a ``model`` column count as the asymmetric model.
    """
    frame = errs if "model" in errs.columns else errs.assign(model="asymmetric")
    by = [c for c in ("nodes", "d") if c in frame.columns] if by is None else list(by)
    groups = frame.groupby(by, sort=True) if by else [((), frame)]
    rows = []
    for setting, group in groups:
        asym = group[group["model"] == "asymmetric"]
        fair = group[group["model"] == "fairness"]
        ref = asym if len(asym) else fair
        if "trial" in ref.columns:
            steps = ref.groupby("trial", sort=False)["steps"].first() if "steps" in ref else []
            n_patterns = ref["trial"].nunique()
        else:
            steps = ref["steps"].iloc[:1] if "steps" in ref else []
            n_patterns = int(len(ref) > 0)
        key = setting if isinstance(setting, tuple) else (setting,)
        rows.append(
            {
                **dict(zip(by, key, strict=True)),
                "n_links": len(ref),
                "n_patterns": n_patterns,
                "steps_mean": float(np.mean(steps)) if len(steps) else float("nan"),
                "eps_abs_mean_pct": _pct(asym["abs_eps"]),
                "eps_mean_pct": _pct(asym["eps"]),
                "eps_ci95_pct": 100 * _ci95_halfwidth(asym["eps"].to_numpy(float)),
                "within10_pct": _pct(asym["within_10pct"]),
                "eps_prime_abs_mean_pct": _pct(_bidirectional_rows(asym)["abs_eps"]),
                "eps_dprime_abs_mean_pct": _pct(_bidirectional_rows(fair)["abs_eps"]),
                "fair_eps_abs_mean_pct": _pct(fair["abs_eps"]),
                "fair_within10_pct": _pct(fair["within_10pct"]),
            }
        )
    return pd.DataFrame(rows)
