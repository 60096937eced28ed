"""The congestion simulator of seed 001 (Sec. 3-5): topologies, routing, model, CLI."""

from __future__ import annotations

import argparse
import itertools
import json
import math
from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from netnoise.sim import congestion, patterns, routing
from netnoise.sim.topology import XGFT, SpecError, Torus, describe, parse_spec, read_ibnetdiscover
from netnoise.studies.network_noise import cli as sim_cli

DATA = Path(__file__).parent / "data"
FABRIC = DATA / "small_fabric.topo"

# Table 1 of the paper.  The PDF text drops digits ("XGFT(2,12,6)"): it prints
# XGFT(h, m_2..m_h, w_2..w_h) with m_1 = 12 and w_1 = 1 left out, i.e. XGFT(2,12,6) is
# XGFT(2; 12,12; 1,6).  That is the only reading that gives every row's counts.
TABLE1 = [
    ((12, 12), (1, 6), 144, 18),
    ((12, 24), (1, 12), 288, 36),
    ((12, 12, 8), (1, 12, 4), 1152, 240),
    ((12, 12, 16), (1, 12, 8), 2304, 480),
    ((12, 12, 24), (1, 12, 12), 3456, 720),
    ((12, 12, 12, 6), (1, 12, 12, 3), 10368, 3024),
    ((12, 12, 12, 12), (1, 12, 12, 6), 20736, 6048),
]

# Table 2 of the paper: (k, n, endpoints as printed).
TABLE2 = [(k, 2, e) for k, e in [
    (10, 100), (14, 196), (17, 289), (20, 400), (22, 484), (24, 576), (26, 676), (28, 784),
    (30, 900), (31, 961), (44, 1936), (54, 2916), (70, 4900), (77, 5929), (83, 6889),
    (89, 7921),
]] + [(k, 3, e) for k, e in [
    (4, 64), (5, 125), (6, 216), (7, 343), (8, 512), (9, 728), (10, 1000), (12, 1728),
    (14, 2744), (15, 3375), (17, 4912), (18, 5832), (19, 6859), (20, 8000),
]]  # fmt: skip
# Two printed counts are one short of k**n (9**3 = 729, 17**3 = 4913): typos in the paper.
TABLE2_TYPOS = {(9, 3), (17, 3)}


# ----------------------------------------------------------------------- topologies


@pytest.mark.parametrize(("m", "w", "endpoints", "switches"), TABLE1)
def test_table1_xgft_counts(m, w, endpoints, switches):
    spec = f"xgft:{','.join(map(str, m))}/{','.join(map(str, w))}"
    info = describe(spec)
    assert info["endpoints"] == endpoints
    assert info["switches"] == switches
    # cables: every node below the top has w_{l+1} parents
    topo = parse_spec(spec)
    expected_links = sum(topo.level_nodes[lv] * w[lv] for lv in range(len(m)))
    assert info["links"] == expected_links
    assert topo.n_channels == 2 * expected_links


def _xgft_label_edges(m, w):
    """Öhring's rule written out on labels: (level, label) pairs of every cable."""
    h = len(m)
    edges = set()
    for lv in range(h):
        # lower label digits (a_h..a_{l+1}, b_l..b_1) as tuples, most significant first
        a_ranges = [range(m[j]) for j in range(h - 1, lv - 1, -1)]  # a_h .. a_{l+1}
        b_ranges = [range(w[j]) for j in range(lv - 1, -1, -1)]  # b_l .. b_1
        for a in itertools.product(*a_ranges):
            for b in itertools.product(*b_ranges):
                for parent_b in range(w[lv]):
                    lower = (lv, a + b)
                    upper = (lv + 1, (*a[:-1], parent_b, *b))
                    edges.add((lower, upper))
    return edges


def _xgft_index(topo, level, label):
    """Node id of a label under the numbering documented in XGFT."""
    h = topo.h
    a = label[: h - level][::-1]  # a_{l+1} .. a_h, least significant first
    b = label[h - level :][::-1]  # b_1 .. b_l
    A = 0
    for digit, radix in reversed(list(zip(a, topo.m[level:], strict=True))):
        A = A * radix + digit
    B = 0
    for digit, radix in reversed(list(zip(b, topo.w[:level], strict=True))):
        B = B * radix + digit
    return topo.node_offset[level] + B + topo.W[level] * A


@pytest.mark.parametrize(("m", "w"), [((3, 2, 2), (1, 2, 3)), ((2, 3), (2, 2)), ((4,), (1,))])
def test_xgft_wiring_follows_ohring_rule(m, w):
    topo = XGFT(m, w)
    expected = {
        (_xgft_index(topo, *lo), _xgft_index(topo, *up)) for lo, up in _xgft_label_edges(m, w)
    }
    up_channels = np.concatenate(
        [np.arange(o, o + n) for o, n in zip(topo.up_offset, topo.level_edges, strict=True)]
    )
    got = set(
        zip(
            topo.channel_src[up_channels].tolist(),
            topo.channel_dst[up_channels].tolist(),
            strict=True,
        )
    )
    assert got == expected
    assert len(got) == topo.n_links  # no parallel cables in a plain XGFT
    # every down channel reverses an up channel
    down = np.setdiff1d(np.arange(topo.n_channels), up_channels)
    reverse = zip(topo.channel_dst[down].tolist(), topo.channel_src[down].tolist(), strict=True)
    assert set(reverse) == got


def test_pgft_parallel_cables():
    topo = parse_spec("xgft:12,12/1,6/1,2")  # 24-port switches, full bisection
    assert topo.describe() == {"endpoints": 144, "switches": 18, "links": 144 + 12 * 12}
    ports = np.bincount(topo.channel_src, minlength=topo.n_nodes)[topo.n_endpoints :]
    assert (ports == 24).all()  # every leaf and spine uses all 24 ports


@pytest.mark.parametrize(("k", "n", "printed"), TABLE2)
def test_table2_torus_counts(k, n, printed):
    info = describe("torus:" + "x".join([str(k)] * n))
    assert info["endpoints"] == k**n
    if (k, n) in TABLE2_TYPOS:
        assert printed == k**n - 1
    else:
        assert info["endpoints"] == printed
    assert info["switches"] == k**n
    assert info["links"] == k**n + n * k**n  # endpoint cables + n ring cables per vertex


def test_torus_wiring():
    topo = Torus((5, 4, 2))
    N = topo.n_endpoints
    assert topo.describe() == {"endpoints": 40, "switches": 40, "links": 40 + 40 + 40 + 20}
    torus = np.arange(2 * N, topo.n_channels)
    a, b = topo.channel_src[torus] - N, topo.channel_dst[torus] - N
    v = np.arange(N)
    coords = np.stack([v // s % k for s, k in zip(topo.strides, topo.dims, strict=True)])
    diff = coords[:, a] - coords[:, b]
    # every torus channel joins vertices that differ by +-1 (mod K) in exactly one dimension
    dims = np.array(topo.dims)[:, None]
    ring = (np.mod(diff, dims) == 1) | (np.mod(-diff, dims) == 1)
    assert ((diff != 0).sum(axis=0) == 1).all()
    assert ring[diff != 0].all()
    # each switch has its endpoint plus two ring neighbours per dimension (one when K = 2)
    degree = np.bincount(topo.channel_src, minlength=topo.n_nodes)[N:]
    assert (degree == 1 + 2 + 2 + 2).all()  # the K = 2 ring's -1 channels exist, unused


@pytest.mark.parametrize(
    "spec",
    ["xgft:12,12", "xgft:12,12/1", "xgft:0,4/1,2", "xgft:a,b/1,2", "torus:1x8",
     "torus:8by8", "mesh:4x4", "fabric:", "nonsense", "fabric:/no/such/file.topo"],
)  # fmt: skip
def test_bad_specs_are_rejected(spec):
    with pytest.raises(SpecError, match="bad topology SPEC"):
        parse_spec(spec)


# --------------------------------------------------------------------------- fabric


def test_ibnetdiscover_fixture():
    fabric = read_ibnetdiscover(FABRIC)
    assert fabric.describe() == {"endpoints": 6, "switches": 4, "links": 11}
    assert fabric.endpoint_names[0] == "H-0002c90300c00c01"
    assert fabric.switch_names == [
        "S-0002c90200a00a01",
        "S-0002c90200a00a02",
        "S-0002c90200b00b01",
        "S-0002c90200b00b02",
    ]
    assert fabric.descriptions["H-0002c90300c00c0b"] == "node06 HCA-1"
    # the dual-ported HCA is reached through its port 1 (on leaf2), not port 2 (on leaf1)
    t = routing._fabric_tables(fabric)
    assert fabric.switch_names[t["attach"][5]] == "S-0002c90200b00b02"
    # leaf1 -> leaf2 traffic is spread over both spines
    loads = routing.channel_loads(fabric, np.array([0, 1, 2]), np.array([3, 4, 5]))
    spine_in = loads[np.isin(fabric.channel_dst, [6, 7])]
    assert spine_in.max() == 2 and spine_in.sum() == 3
    assert parse_spec(f"fabric:{FABRIC}").describe() == fabric.describe()


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ('Switch\t4 "S-1"\t\t# "s"\n[1]\t"H-9"[1]\n', "no Switch/Ca block"),
        (
            'Switch\t4 "S-1"\n[1]\t"H-1"[1]\n\nCa\t1 "H-1"\n[1]\t"S-1"[2]\n',
            "linked to both",
        ),
        ('Switch\t4 "S-1"\n[1]\tH-1 port 1\n', "cannot parse link line"),
        ("vendid=0x2c9\n", "no Switch or Ca blocks"),
    ],
)
def test_ibnetdiscover_errors(tmp_path, text, problem):
    path = tmp_path / "bad.topo"
    path.write_text(text)
    with pytest.raises(SpecError, match=problem):
        read_ibnetdiscover(path)


# -------------------------------------------------------------------------- routing

SMALL = [
    "xgft:4,4/1,4",
    "xgft:3,4,2/2,3,2",
    "xgft:4,4/1,2/1,2",
    "xgft:2,3,4/1,2,3/2,1,2",
    "torus:4x4",
    "torus:5x3x2",
    "torus:6x5",
    f"fabric:{FABRIC}",
]


@pytest.mark.parametrize("spec", SMALL)
def test_routes_are_valid_paths(spec):
    topo = parse_spec(spec)
    n = topo.n_endpoints
    s, d = (x.ravel() for x in np.meshgrid(np.arange(n), np.arange(n)))
    for si, di, path in zip(s, d, routing.paths(topo, s, d), strict=True):
        if si == di:
            assert path.size == 0
            continue
        assert topo.channel_src[path[0]] == si
        assert topo.channel_dst[path[-1]] == di
        np.testing.assert_array_equal(topo.channel_dst[path[:-1]], topo.channel_src[path[1:]])
        assert len(set(path.tolist())) == path.size
        if isinstance(topo, XGFT):  # up to the lowest common level and down again
            L = next(lv for lv in range(topo.h + 1) if si // topo.M[lv] == di // topo.M[lv])
            assert path.size == 2 * L
        elif isinstance(topo, Torus):  # minimal: ring distances plus the two endpoint links
            ring = sum(
                min((a - b) % k, (b - a) % k)
                for a, b, k in (
                    (si // st % k, di // st % k, k)
                    for st, k in zip(topo.strides, topo.dims, strict=True)
                )
            )
            assert path.size == ring + 2


@pytest.mark.parametrize("spec", SMALL)
def test_routing_is_destination_based(spec):
    """Every switch forwards all traffic for one destination through the same channel."""
    topo = parse_spec(spec)
    n = topo.n_endpoints
    s, d = (x.ravel() for x in np.meshgrid(np.arange(n), np.arange(n)))
    out_of = {}
    for di, path in zip(d, routing.paths(topo, s, d), strict=True):
        for ch in path[1:]:
            key = (int(topo.channel_src[ch]), int(di))
            assert out_of.setdefault(key, int(ch)) == ch


@pytest.mark.parametrize(
    "spec", ["xgft:4,4/1,4", "xgft:4,4,4/1,4,4", "xgft:3,3,2/1,3,3", "xgft:4,4/1,2/1,2"]
)
def test_dmodk_shift_permutations_are_contention_free(spec):
    topo = parse_spec(spec)
    assert topo.full_bisection()
    n = topo.n_endpoints
    src = np.arange(n)
    for shift in range(1, n):
        assert routing.channel_loads(topo, src, (src + shift) % n).max() == 1


def test_dmodk_contention_without_full_bisection():
    topo = parse_spec("xgft:4,4/1,2")  # 4 endpoints share 2 up-links per leaf
    assert not topo.full_bisection()
    src = np.arange(16)
    assert routing.channel_loads(topo, src, (src + 4) % 16).max() == 2


def test_single_switch_has_no_uplink_congestion():
    topo = parse_spec("xgft:16/1")
    rng = np.random.default_rng(3)
    order = rng.permutation(16)
    pert = patterns.perturbation_pairs(rng, order[8:])
    for level in patterns.binomial_bcast(8):
        src = np.concatenate([order[level[:, 0]], pert[:, 0]])
        dst = np.concatenate([order[level[:, 1]], pert[:, 1]])
        loads = routing.channel_loads(topo, src, dst)
        assert loads[: topo.level_edges[0]].max() == 1  # endpoint -> switch
        assert loads.max() == 1
    frame = congestion.simulate("xgft:16/1", "bcast", 0.5, runs=20, seed=4)
    assert (frame["overhead"] == 0).all() and (frame["slowdown"] == 1).all()


# ------------------------------------------------------------------------- patterns


@pytest.mark.parametrize("P", [2, 3, 5, 8, 13, 64, 100])
def test_binomial_bcast_and_reduce(P):
    levels = patterns.binomial_bcast(P)
    assert len(levels) == math.ceil(math.log2(P))
    informed = {0}
    for level in levels:
        assert set(level[:, 0].tolist()) <= informed  # only informed processes send
        assert not set(level[:, 1].tolist()) & informed
        informed |= set(level[:, 1].tolist())
    assert informed == set(range(P))
    reduce = patterns.binomial_reduce(P)
    holds = {p: {p} for p in range(P)}
    for level in reduce:
        for s, d in level.tolist():
            holds[d] |= holds.pop(s)  # a process sends its partial result once, then is done
    assert holds == {0: set(range(P))}


@pytest.mark.parametrize("P", [2, 3, 6, 8, 12, 64, 100])
def test_recursive_doubling_allreduce(P):
    levels = patterns.recursive_doubling_allreduce(P)
    p2 = 1 << (P.bit_length() - 1)
    assert len(levels) == int(math.log2(p2)) + (0 if p2 == P else 2)
    data = [{p} for p in range(P)]
    for level in levels:
        new = [set(x) for x in data]
        for s, d in level.tolist():
            new[d] |= data[s]
        data = new
    assert all(x == set(range(P)) for x in data)
    assert patterns.one_message_per_endpoint(levels)


def test_paper_figure7_levels():
    levels = patterns.binomial_bcast(8)
    assert [sorted(map(tuple, lv.tolist())) for lv in levels] == [
        [(0, 1)],
        [(0, 2), (1, 3)],
        [(0, 4), (1, 5), (2, 6), (3, 7)],
    ]


@pytest.mark.parametrize("n", [2, 3, 7, 50])
def test_perturbation_is_a_derangement(n):
    for seed in range(20):
        nodes = np.arange(100, 100 + n)
        pairs = patterns.perturbation_pairs(np.random.default_rng(seed), nodes)
        assert sorted(pairs[:, 0].tolist()) == nodes.tolist()
        assert sorted(pairs[:, 1].tolist()) == nodes.tolist()
        assert (pairs[:, 0] != pairs[:, 1]).all()
    assert patterns.perturbation_pairs(np.random.default_rng(0), np.array([5])).shape == (0, 2)


def test_draw_run_splits_the_machine():
    mapping, pert = patterns.draw_run(np.random.default_rng(0), 64, 40, 20)
    assert mapping.size == 40 and pert.shape == (20, 2)
    assert not set(mapping.tolist()) & set(pert[:, 0].tolist())
    assert len(set(mapping.tolist()) | set(pert[:, 0].tolist())) == 60  # 4 endpoints idle
    # a single perturbing endpoint has no peer: no perturbation, no overhead
    frame = congestion.simulate("xgft:4,4/1,4", "bcast", 0.05, runs=5, seed=0)
    assert (frame["perturbers"] == 1).all() and (frame["overhead"] == 0).all()


def test_layout_defaults():
    plan = congestion.layout(256, 0.25)
    assert (plan.processes, plan.perturbers, plan.idle) == (192, 64, 0)
    assert congestion.layout(256, 0.5, processes=100).idle == 28
    with pytest.raises(ValueError, match="do not fit"):
        congestion.layout(16, 0.5, processes=9)
    with pytest.raises(ValueError, match=r"\[0, 1\)"):
        congestion.layout(16, 1.0)


# ------------------------------------------------------------------------ the model


def test_paper_section3_example():
    """Sec. 3: 16 nodes, 8-port switches, mapping pi and perturbation C from the paper."""
    topo = parse_spec("xgft:4,4/1,4")
    levels = patterns.binomial_bcast(8)
    pi = np.array([[3, 6, 5, 13, 7, 9, 0, 10]])
    C = np.array([(1, 4), (2, 11), (4, 15), (8, 12), (11, 14), (12, 1), (14, 8), (15, 2)])
    res = congestion.batch_times(topo, levels, pi, C[None, :, 0], C[None, :, 1], return_costs=True)
    level3 = {
        tuple(p): c for p, c in zip(levels[2].tolist(), res["cost_perturbed"][2][0], strict=True)
    }
    assert level3[(0, 4)] == 2  # "a maximum congestion of 2 along the path (on the up-link)"
    assert res["t_unperturbed"][0] == 3  # "the congestion of the unperturbed run (3 ...)"
    # The paper's routing gives 5 on 0-1-3-7; d-mod-k routes 0->1 (node 3->6) around the
    # perturbation, so the longest path here is 0-4 / 1-3-7 with 4.
    assert res["t_perturbed"][0] == 4


def _reference_times(topo, levels, mapping, pert):
    """Straightforward per-message version of the model, endpoint links included."""
    pert_load = Counter()
    for path in routing.paths(topo, pert[:, 0], pert[:, 1]):
        pert_load.update(path.tolist())
    t_u = dict.fromkeys(range(len(mapping)), 0)
    t_p = dict(t_u)
    for level in levels:
        app_paths = routing.paths(topo, mapping[level[:, 0]], mapping[level[:, 1]])
        app_load = Counter()
        for path in app_paths:
            app_load.update(path.tolist())
        arrivals = []
        for (s, d), path in zip(level.tolist(), app_paths, strict=True):
            cu = max(app_load[c] for c in path)
            cp = max(app_load[c] + pert_load[c] for c in path)
            arrivals.append((d, t_u[s] + cu, t_p[s] + cp))
        for d, au, ap in arrivals:
            t_u[d], t_p[d] = max(t_u[d], au), max(t_p[d], ap)
    return max(t_u.values()), max(t_p.values())


@pytest.mark.parametrize(
    ("spec", "collective", "P", "Q"),
    [
        ("xgft:4,4/1,2", "bcast", 9, 7),
        ("xgft:3,4,2/2,3,2", "reduce", 11, 10),
        ("xgft:4,4,2/1,2,2", "allreduce", 12, 16),
        ("torus:5x4", "bcast", 10, 10),
        ("torus:4x3x2", "allreduce", 7, 15),
        (f"fabric:{FABRIC}", "bcast", 3, 3),
    ],
)
def test_vectorised_model_matches_reference(spec, collective, P, Q):
    topo = parse_spec(spec)
    levels = patterns.collective_levels(collective, P)
    rng = np.random.default_rng(11)
    runs = []
    for _ in range(6):
        order = rng.permutation(topo.n_endpoints)
        runs.append((order[:P], patterns.perturbation_pairs(rng, order[P : P + Q])))
    maps = np.stack([m for m, _ in runs])
    ps = np.stack([p[:, 0] for _, p in runs])
    pd_ = np.stack([p[:, 1] for _, p in runs])
    fast = congestion.batch_times(topo, levels, maps, ps, pd_)
    full = congestion.batch_times(topo, levels, maps, ps, pd_, endpoint_links=True)
    for i, (mapping, pert) in enumerate(runs):
        ref = _reference_times(topo, levels, mapping, pert)
        assert (fast["t_unperturbed"][i], fast["t_perturbed"][i]) == ref
        assert (full["t_unperturbed"][i], full["t_perturbed"][i]) == ref


@pytest.mark.parametrize("spec", ["xgft:8,8/1,4", "torus:6x6"])
@pytest.mark.parametrize("collective", patterns.COLLECTIVES)
def test_ratio_zero_gives_zero_overhead(spec, collective):
    frame = congestion.simulate(spec, collective, 0.0, runs=30, seed=5)
    assert (frame["perturbers"] == 0).all()
    assert (frame["overhead"] == 0).all()
    assert (frame["slowdown"] == 1.0).all()
    # every message costs at least 1: no run beats the longest dependency chain
    t = np.zeros(frame["processes"].iloc[0], dtype=int)
    for level in patterns.collective_levels(collective, t.size):
        t[level[:, 1]] = np.maximum(t[level[:, 1]], t[level[:, 0]] + 1)
    assert (frame["t_unperturbed"] >= t.max()).all()
    assert (frame["t_unperturbed"] > t.max()).any()  # app messages also contend


def test_seed_reproducibility():
    a = congestion.simulate("xgft:8,8/1,4", "bcast", 0.5, runs=40, seed=7)
    b = congestion.simulate("xgft:8,8/1,4", "bcast", 0.5, runs=40, seed=7)
    c = congestion.simulate("xgft:8,8/1,4", "bcast", 0.5, runs=40, seed=8)
    pd.testing.assert_frame_equal(a, b)
    assert not np.array_equal(a["t_perturbed"], c["t_perturbed"])
    # run i does not depend on the number of runs or on batching
    head = congestion.simulate("xgft:8,8/1,4", "bcast", 0.5, runs=10, seed=7)
    np.testing.assert_array_equal(head["t_perturbed"], a["t_perturbed"][:10])
    topo = parse_spec("xgft:8,8/1,4")
    plan = congestion.layout(64, 0.5)
    levels = patterns.binomial_bcast(plan.processes)
    for batch_runs, workers in ((1, 1), (3, 2), (40, 1)):
        res = congestion.simulate_levels(topo, levels, plan, 40, 7, batch_runs, workers)
        np.testing.assert_array_equal(res["t_perturbed"], a["t_perturbed"])
        np.testing.assert_array_equal(res["t_unperturbed"], a["t_unperturbed"])


def test_noise_grows_with_ratio_and_hurts_2d_tori_more():
    means = [
        congestion.simulate("xgft:8,8/1,4", "bcast", r, runs=100, seed=1)["slowdown"].mean()
        for r in (0.25, 0.5, 0.75)
    ]
    assert 1 < means[0] < means[1] < means[2]
    two_d = congestion.simulate("torus:16x16", "bcast", 0.5, runs=100, seed=1)
    three_d = congestion.simulate("torus:8x8x4", "bcast", 0.5, runs=100, seed=1)
    assert two_d["slowdown"].mean() > three_d["slowdown"].mean() > 1


def test_summarize():
    stats = congestion.summarize(np.arange(1, 101, dtype=float))
    assert stats["mean"] == 50.5 and stats["median"] == 50.5
    assert stats["p2.5"] == pytest.approx(3.475) and stats["p97.5"] == pytest.approx(97.525)
    assert stats["mean_ci_low"] < 50.5 < stats["mean_ci_high"]


# ------------------------------------------------------------------------------ CLI


def _cli(argv, capsys):
    parser = argparse.ArgumentParser(prog="netnoise")
    sim_cli.register(parser.add_subparsers(dest="command", required=True))
    try:
        args = parser.parse_args(argv)
        code = args.func(args)
    except SystemExit as exc:
        code = exc.code
    out = capsys.readouterr()
    return code, out.out, out.err


def test_cli_describe_json(capsys):
    code, out, _ = _cli(["topology", "describe", "xgft:12,12/1,6", "--json"], capsys)
    assert code == 0
    assert json.loads(out) == {"endpoints": 144, "switches": 18, "links": 216}
    code, out, _ = _cli(["topology", "describe", f"fabric:{FABRIC}", "--json"], capsys)
    assert json.loads(out) == {"endpoints": 6, "switches": 4, "links": 11}
    code, out, _ = _cli(["topology", "describe", "torus:4x4x4"], capsys)
    assert code == 0 and "64 endpoints" in out


@pytest.mark.parametrize("spec", ["xgft:12,12/1", "mesh:4x4", "torus:0x4", "fabric:/nope"])
def test_cli_bad_spec(spec, capsys):
    code, out, err = _cli(["topology", "describe", spec, "--json"], capsys)
    assert code == 2 and out == ""
    assert "bad topology SPEC" in err and "allowed forms" in err and "xgft:" in err
    code, _, err = _cli(
        ["simulate", "--topology", spec, "--collective", "bcast", "--ratio", "0.5"], capsys
    )
    assert code == 2 and "bad topology SPEC" in err


def test_cli_simulate_prints_summary_and_writes_rows(tmp_path, capsys):
    out_file = tmp_path / "sub" / "runs.csv"
    argv = ["simulate", "--topology", "xgft:8,8/1,4", "--collective", "allreduce"]
    argv += ["--ratio", "0.5", "--runs", "25", "--seed", "3", "--out", str(out_file)]
    code, out, _ = _cli(argv, capsys)
    assert code == 0
    line = next(x for x in out.splitlines() if x.startswith("slowdown"))
    assert "mean" in line and "median" in line and "95% interval" in line
    rows = pd.read_csv(out_file)
    assert len(rows) == 25
    assert set(rows.columns) >= {"run", "t_unperturbed", "t_perturbed", "overhead", "slowdown"}
    assert f"{rows['slowdown'].mean():.3f}" in line
    assert not list(out_file.parent.glob(".*tmp*"))  # atomic write left nothing behind


def test_cli_simulate_rejects_impossible_settings(capsys):
    base = ["simulate", "--topology", "xgft:4,4/1,4", "--collective", "bcast"]
    code, _, err = _cli([*base, "--ratio", "1.5"], capsys)
    assert code == 2 and "--ratio" in err
    code, _, err = _cli([*base, "--ratio", "0.5", "--processes", "12"], capsys)
    assert code == 2 and "do not fit" in err
    code, _, err = _cli([*base, "--ratio", "0.5", "--collective", "scan"], capsys)
    assert code == 2 and "invalid choice" in err
