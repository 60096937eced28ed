"""Seed 003 in the workflow: patterns, process layout, tidying, fitted platform, evaluation."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from netnoise.config import ConfigError, validate
from netnoise.platform import PlatformUnavailable
from netnoise.platform.testbed import TestbedPlatform
from netnoise.studies.asymmetric import model as am
from netnoise.studies.asymmetric import study
from tests.conftest import REPO, snakemake

REFERENCE = REPO / "resources" / "reference"
# A prefix of these tests' own: nothing else (workflow, other tests) uses it.
TEST_PREFIX = "nas3"


def resolved(**asymmetric) -> dict:
    return validate({"platform": {"testbed": {"prefix": "na"}}, "asymmetric": asymmetric})


@pytest.fixture(scope="module")
def config() -> dict:
    return resolved()


@pytest.fixture(scope="module")
def rack_nodes(config) -> dict[str, list[str]]:
    return study.racks(study.study_platform(config["platform"], config["asymmetric"])["testbed"])


# --------------------------------------------------------------------------- testbed


def test_study_platform_replaces_only_the_study_keys(config):
    merged = study.study_platform(config["platform"], config["asymmetric"], "bbr")
    testbed = merged["testbed"]
    assert testbed["prefix"] == "nar"  # its own, beside the main testbed "na"
    assert (testbed["nodes"], testbed["racks"]) == (32, 2)
    assert (testbed["nic_mbit"], testbed["backbone_mbit"]) == (20, 200)
    assert testbed["tcp_congestion"] == "bbr" and testbed["btl_tcp_links"] == 1
    assert testbed["burst_bytes"] == config["platform"]["testbed"]["burst_bytes"]
    assert config["platform"]["testbed"]["prefix"] == "na"  # the shared config is untouched
    named = resolved(testbed={"prefix": "nax"})
    assert (
        study.study_platform(named["platform"], named["asymmetric"])["testbed"]["prefix"] == "nax"
    )


def test_racks_split_the_nodes_in_order(rack_nodes):
    assert list(rack_nodes) == ["1", "2"]
    assert rack_nodes["1"] == [f"nar-n{i:02d}" for i in range(1, 17)]
    assert rack_nodes["2"] == [f"nar-n{i:02d}" for i in range(17, 33)]


def test_paper_bytes_keep_the_papers_transfer_times():
    # 10 MB at 940 Mbit/s take 85.1 ms; so do 212766 bytes at 20 Mbit/s.
    size = study.paper_bytes(10, 20)
    assert size == 212766
    assert 8 * size / 20e6 == pytest.approx(8 * 10 * am.MB / am.PAPER_NIC_BPS, rel=1e-5)


@pytest.mark.parametrize(
    ("asymmetric", "message"),
    [
        ({"testbed": {"nodes": 31}}, "do not split evenly"),
        ({"properties": {"nic_links": [2, 4]}}, "must include 1"),
        ({"properties": {"backbone_links": [17]}}, "17 links need 17 nodes per rack"),
        ({"properties": {"backbone_degrees": [[4, 20]]}}, "[4, 20] needs 20 nodes per rack"),
        ({"properties": {"nic_degrees": [[0, 0]]}}, "[0, 0] has no link"),
        ({"random": {"nodes": [9]}}, "asymmetric.random.nodes: 9 must be a multiple"),
        ({"random": {"congestion_controls": ["reno"]}}, "reno not in asymmetric.congestion"),
        ({"iterations": {"min": 20, "max": 10}}, "asymmetric.iterations.min: 20 exceeds"),
        ({"testbed": {"prefix": "na"}}, "the study's testbed needs its own"),
        ({"testbed": {"nodes": 8, "racks": 4}}, "the Alltoallv needs 4"),
    ],
)
def test_config_errors_name_the_key(asymmetric, message):
    with pytest.raises(ConfigError, match="asymmetric") as err:
        resolved(**asymmetric)
    assert message in str(err.value)


def test_a_disabled_study_is_not_checked():
    resolved(enabled=False, properties={"nic_links": [2]})


# --------------------------------------------------------------------------- patterns


def test_property_patterns_place_the_links_of_fig4(config, rack_nodes):
    patterns = study.property_patterns(config["asymmetric"], rack_nodes)
    assert patterns["trial"].nunique() == study.trial_count("properties", config["asymmetric"])
    assert (patterns["bytes"] == study.paper_bytes(20, 20)).all()
    a, b = rack_nodes["1"][:2]
    nic4 = patterns[(patterns["experiment"] == "nic_unidirectional") & (patterns["links"] == 4)]
    assert list(zip(nic4["src"], nic4["dst"], strict=True)) == [(a, b)] * 4
    bb = patterns[(patterns["experiment"] == "backbone_unidirectional") & (patterns["links"] == 16)]
    assert list(bb["src"]) == rack_nodes["1"] and list(bb["dst"]) == rack_nodes["2"]
    two_one = patterns[
        (patterns["experiment"] == "nic_bidirectional")
        & (patterns["delta_in"] == 2)
        & (patterns["delta_out"] == 1)
    ]
    assert list(zip(two_one["src"], two_one["dst"], two_one["direction"], strict=True)) == [
        (b, a, "in"),
        (b, a, "in"),
        (a, b, "out"),
    ]
    backbone = patterns[
        (patterns["experiment"] == "backbone_bidirectional") & (patterns["delta_out"] == 2)
    ]
    incoming = backbone[backbone["direction"] == "in"]
    outgoing = backbone[backbone["direction"] == "out"]
    assert len(incoming) == 16 and len(outgoing) == 2
    assert set(incoming["src"]) == set(rack_nodes["2"]) and set(incoming["dst"]) == set(
        rack_nodes["1"]
    )
    assert set(outgoing["src"]) <= set(rack_nodes["1"]) and set(outgoing["dst"]) <= set(
        rack_nodes["2"]
    )


def test_random_patterns_are_balanced_deterministic_and_never_empty(config, rack_nodes):
    asym = config["asymmetric"]
    patterns = study.random_patterns(asym, rack_nodes)
    assert patterns["trial"].nunique() == study.trial_count("random", asym) == 12
    assert patterns.groupby("trial").size().min() >= 1
    used = set(patterns["src"]) | set(patterns["dst"])
    assert used <= set(rack_nodes["1"][:5]) | set(rack_nodes["2"][:5])
    assert set(patterns["bytes"]) <= {study.paper_bytes(10, 20), study.paper_bytes(20, 20)}
    assert (patterns["src"] != patterns["dst"]).all()
    assert study.random_patterns(asym, rack_nodes).equals(patterns)
    # Each pattern has its own generator: a larger grid keeps the first patterns.
    more = dict(asym, random={**asym["random"], "patterns": 6})
    bigger = study.random_patterns(more, rack_nodes)
    first = bigger[(bigger["d"] == 1) & (bigger["pattern"] == 0)].drop(columns="trial")
    mine = patterns[(patterns["d"] == 1) & (patterns["pattern"] == 0)].drop(columns="trial")
    assert first.reset_index(drop=True).equals(mine.reset_index(drop=True))
    # d draws per node with probability 1/2: about |N| d / 2 links per pattern.
    mean_links = patterns.groupby(["d", "trial"]).size().groupby("d").mean()
    assert mean_links.loc[3] > mean_links.loc[1]


def test_alltoallv_pattern_is_the_reconstructed_case_on_rack_one(config, rack_nodes):
    pattern = study.alltoallv_pattern(config["asymmetric"], rack_nodes)
    assert len(pattern) == 12
    assert set(pattern["src"]) == set(rack_nodes["1"][:4]) == set(pattern["dst"])
    expected = sorted(study.paper_bytes(mb, 20) for mb in am.ALLTOALLV_RECONSTRUCTED_MB.values())
    assert sorted(pattern["bytes"]) == expected


def test_rank_layout_gives_every_link_its_own_process_pair():
    links = pd.DataFrame({"src": ["a", "a", "b"], "dst": ["b", "b", "a"], "bytes": [5, 6, 7]})
    ranks, nodes = study.rank_layout(links)
    assert ranks.values.tolist() == [[0, 1, 5], [2, 3, 6], [4, 5, 7]]
    assert nodes == ["a", "b", "a", "b", "b", "a"]


def test_testbed_launch_places_every_rank_on_its_node(config):
    platform = TestbedPlatform(study.study_platform(config["platform"], config["asymmetric"]))
    argv = platform.mpi_launch(
        ["./p2p_concurrent"], 4, ["nar-n01", "nar-n02", "nar-n01", "nar-n17"]
    ).argv
    i = argv.index("--host")
    assert argv[i + 1 : i + 4] == ["10.77.0.1,10.77.0.2,10.77.0.1,10.77.0.17", "--map-by", "seq"]
    # Distinct nodes keep the spread-over-nodes launch of the other studies.
    argv = platform.mpi_launch(["./pingpong"], 4, ["nar-n01", "nar-n02"]).argv
    i = argv.index("--host")
    assert argv[i + 1 : i + 4] == ["10.77.0.1:2,10.77.0.2:2", "--map-by", "node"]
    with pytest.raises(PlatformUnavailable, match="one node per rank"):
        platform.mpi_launch(["./p2p_concurrent"], 3, ["nar-n01", "nar-n01"])


# --------------------------------------------------------------------------- tidy and models


def write_p2p_result(path: Path, links: pd.DataFrame, times: np.ndarray) -> None:
    """A p2p_concurrent result file: times[iteration, link]."""
    lines = [
        "#@format=netnoise-1",
        "#@tool=p2p_concurrent",
        "#@version=test",
        "#@git_sha=test",
        "#@argv=p2p_concurrent",
        "#@seed=1",
        f"#@ranks={2 * len(links)}",
        "#@hosts=test",
        "#@date=today",
        "link,src,dst,size_bytes,iteration,time_s",
    ]
    for link, size in enumerate(links["bytes"]):
        for it in range(times.shape[0]):
            lines.append(f"{link},{2 * link},{2 * link + 1},{size},{it},{times[it, link]:.9f}")
    path.write_text("\n".join(lines) + "\n")


def synthetic_runs(tmp_path, trials, platform, model, family, congestion, noise=None):
    """Result files whose every iteration takes the model's time (times (1 + noise))."""
    paths = []
    predicted = am.predict(platform, trials, model)
    for trial, group in predicted.groupby("trial", sort=True):
        times = np.tile(group["time_s"].to_numpy(), (5, 1))
        if noise is not None:
            times = times * (1 + noise[group.index.to_numpy()])
        path = tmp_path / f"{family}_{congestion}_{trial}.csv"
        write_p2p_result(path, group, times)
        paths.append(path)
    return study.tidy_mpi(paths, trials, family, congestion)


@pytest.fixture(scope="module")
def fitted(config, rack_nodes) -> dict:
    testbed = study.study_platform(config["platform"], config["asymmetric"])["testbed"]
    return {
        "racks": {f"rack{r}": n for r, n in rack_nodes.items()},
        "nic_bps": 19e6,
        "backbone_bps": 190e6,
        "testbed": testbed,
    }


def test_tidy_mpi_gives_means_intervals_rates_and_completion(tmp_path):
    trials = pd.DataFrame(
        {"trial": [0, 0], "link": [0, 1], "src": ["a", "b"], "dst": ["b", "a"]}
        | {"bytes": [1000, 2000], "experiment": "random"}
    )
    times = np.array([[1.0, 2.0], [3.0, 1.0], [2.0, 3.0]])
    write_p2p_result(tmp_path / "t.csv", trials, times)
    links, summary = study.tidy_mpi([tmp_path / "t.csv"], trials, "random", "bbr")
    assert links["time_s"].tolist() == [2.0, 2.0]
    assert links["iterations"].tolist() == [3, 3]
    assert links["rate_mbit"].tolist() == pytest.approx([8 * 1000 / 2 / 1e6, 8 * 2000 / 2 / 1e6])
    assert links["ci95_s"].iloc[0] == pytest.approx(4.303 * 1.0 / np.sqrt(3), rel=1e-3)
    assert summary["makespan_s"].iloc[0] == pytest.approx((2 + 3 + 3) / 3)
    with pytest.raises(ValueError, match="message sizes differ"):
        study.tidy_mpi([tmp_path / "t.csv"], trials.assign(bytes=[1000, 5]), "random", "bbr")
    with pytest.raises(ValueError, match="2 trials but 1 result files"):
        study.tidy_mpi(
            [tmp_path / "t.csv"], pd.concat([trials, trials.assign(trial=1)]), "random", "bbr"
        )


def test_fit_platform_takes_the_rate_of_one_link_alone(rack_nodes, fitted):
    links = pd.DataFrame(
        {
            "experiment": ["nic_unidirectional", "nic_unidirectional", "nic_unidirectional"],
            "links": [1, 2, 2],
            "bytes": [1_000_000] * 3,
            "time_s": [0.4, 0.9, 0.9],
        }
    )
    platform = study.fit_platform(links, rack_nodes, fitted["testbed"])
    assert platform["nic_bps"] == pytest.approx(20e6)
    assert platform["backbone_bps"] == pytest.approx(200e6)
    assert platform["racks"]["rack2"] == rack_nodes["2"]
    am.as_platform(platform)  # what the CLI and the models read
    with pytest.raises(ValueError, match="needs 1"):
        study.fit_platform(links[links["links"] == 2], rack_nodes, fitted["testbed"])


def test_evaluation_recovers_a_model_that_is_right(tmp_path, config, rack_nodes, fitted):
    """Measurements that follow the asymmetric model exactly: ε = 0 for it, and on the
    bidirectional patterns the fairness model predicts too short times."""
    platform = {k: fitted[k] for k in ("racks", "nic_bps", "backbone_bps")}
    asym = config["asymmetric"]
    random = study.random_patterns(asym, rack_nodes)
    props = study.property_patterns(asym, rack_nodes)
    rand_links, _ = synthetic_runs(tmp_path, random, platform, "asymmetric", "random", "bbr")
    prop_links, _ = synthetic_runs(tmp_path, props, platform, "asymmetric", "properties", "bbr")
    links = pd.concat([rand_links, prop_links], ignore_index=True)
    errors = study.evaluate(links, {"bbr": platform})
    assert len(errors) == 2 * len(links)
    asym_errors = errors[errors["model"] == "asymmetric"]
    assert asym_errors["abs_eps"].max() < 1e-6
    fair = errors[(errors["model"] == "fairness") & (errors["family"] == "properties")]
    out_of_nic = fair[(fair["experiment"] == "nic_bidirectional") & (fair["direction"] == "out")]
    assert (out_of_nic["eps"] <= 1e-6).all() and (out_of_nic["eps"] < -0.2).any()

    table = study.table2(errors, pd.read_csv(REFERENCE / "asymmetric" / "table2.csv"))
    assert table[["nodes", "d"]].values.tolist() == [[10, 1], [10, 2], [10, 3]]
    assert (table["within10_pct"] == 100).all()
    assert table["paper_eps_abs_pct"].tolist() == [3.83, 6.58, 7.62]
    within = study.within10(errors, pd.read_csv(REFERENCE / "asymmetric" / "within10.csv"))
    assert within["paper_main_asymmetric_pct"].tolist() == [83.2, 77.3, 72.1]
    assert within["paper_main_fairness_pct"].tolist() == [66.8, 58.0, 68.8]
    assert (within["within10_pct"] == 100).all()
    assert (within["fair_within10_pct"] <= 100).all()


def test_property_rates_put_measurement_and_models_on_one_scale(
    tmp_path, config, rack_nodes, fitted
):
    platform = {k: fitted[k] for k in ("racks", "nic_bps", "backbone_bps")}
    props = study.property_patterns(config["asymmetric"], rack_nodes)
    mpi, _ = synthetic_runs(tmp_path, props, platform, "asymmetric", "properties", "cubic")
    # TCP level: every link at the fairness model's rate.
    rates = np.concatenate(
        [
            am.bandwidths(platform, group, "fairness") / 1e6
            for _, group in props.groupby("trial", sort=True)
        ]
    )
    tcp = study.tidy_tcp(
        {"cubic": props[["trial", "link"]].assign(mbit=rates, retransmits=0, mean_rtt_us=100)},
        props,
    )
    table = study.property_rates(mpi, tcp, {"cubic": platform})
    mpi_rows = table[table["level"] == "mpi"]
    assert mpi_rows["share_mean"].to_numpy() == pytest.approx(
        mpi_rows["asymmetric_share"].to_numpy()
    )
    tcp_rows = table[table["level"] == "tcp"]
    assert tcp_rows["share_mean"].to_numpy() == pytest.approx(tcp_rows["fairness_share"].to_numpy())
    two_one_out = mpi_rows[
        (mpi_rows["experiment"] == "nic_bidirectional")
        & (mpi_rows["delta_in"] == 2)
        & (mpi_rows["direction"] == "out")
        & (mpi_rows["delta_out"] == 1)
    ].iloc[0]
    assert two_one_out["asymmetric_share"] == pytest.approx(0.5)  # Sec. 5.2: 470 of 940
    assert two_one_out["fairness_share"] == pytest.approx(1.0)
    disagree = table["asymmetry"].notna()
    assert disagree.any() and not disagree.all()
    assert mpi_rows.loc[mpi_rows["asymmetry"].notna(), "asymmetry"].to_numpy() == pytest.approx(1)
    assert tcp_rows.loc[tcp_rows["asymmetry"].notna(), "asymmetry"].to_numpy() == pytest.approx(0)


def test_alltoallv_table_sets_ours_beside_the_paper(tmp_path, config, rack_nodes, fitted):
    platform = {k: fitted[k] for k in ("racks", "nic_bps", "backbone_bps")}
    pattern = study.alltoallv_pattern(config["asymmetric"], rack_nodes)
    links, trials = synthetic_runs(tmp_path, pattern, platform, "asymmetric", "alltoallv", "bbr")
    errors = study.evaluate(links, {"bbr": platform})
    published = pd.read_csv(REFERENCE / "asymmetric" / "alltoallv.csv")
    table = study.alltoallv_table(trials, errors, published)
    ours, paper = table.iloc[0], table.iloc[1]
    assert ours["asymmetric_error_pct"] == pytest.approx(0, abs=1e-6)
    assert ours["fairness_error_pct"] < -10
    assert paper["measured_s"] == 1.095
    assert paper["asymmetric_error_pct"] == pytest.approx(1.0, abs=0.05)
    assert paper["fairness_error_pct"] == pytest.approx(-22.3, abs=0.05)


def test_reference_tables_carry_their_source():
    table2 = pd.read_csv(REFERENCE / "asymmetric" / "table2.csv")
    assert len(table2) == 18 and set(table2["platform"]) == {"main testbed", "Grid5000"}
    assert table2["source"].str.contains("003_691d34d3fcf0833d.txt, Sec. 7.2, Table II").all()
    main = table2[table2["platform"] == "main testbed"]
    assert (main["n_trials"] > 500).all()  # "N_trials > 500"
    assert main["eps_abs_pct"].max() == 9.54  # "the largest average error ... 9.5 %"
    within = pd.read_csv(REFERENCE / "asymmetric" / "within10.csv")
    assert within["source"].str.contains("003_691d34d3fcf0833d.txt").all()
    alltoallv = pd.read_csv(REFERENCE / "asymmetric" / "alltoallv.csv").iloc[0]
    assert {k: alltoallv[k] for k in am.ALLTOALLV_PUBLISHED} == am.ALLTOALLV_PUBLISHED
    fig4 = pd.read_csv(REFERENCE / "asymmetric" / "fig4.csv")
    assert fig4["source"].str.contains("Sec. 5").all()
    assert set(fig4["experiment"]) <= set(study.EXPERIMENTS)


# --------------------------------------------------------------------------- workflow


def test_workflow_plans_the_study_on_the_testbed_only(tmp_path):
    overlay = tmp_path / "overlay.yaml"
    overlay.write_text("platform:\n  testbed:\n    prefix: na\n")
    out = snakemake("-n", "--forceall", "--configfile", str(overlay))
    assert out.returncode == 0, out.stderr[-3000:]
    for rule in (
        "validate_asymmetric_testbed",
        "measure_asymmetric_properties",
        "measure_asymmetric_random",
        "measure_asymmetric_alltoallv",
        "measure_asymmetric_tcp",
        "plot_asymmetric",
    ):
        assert rule in out.stdout
    # Seed 004 needs the link rate off the testbed; it is not what this checks.
    overlay.write_text("platform:\n  kind: localhost\nlatency_variation:\n  enabled: false\n")
    out = snakemake("-n", "--forceall", "--configfile", str(overlay))
    assert out.returncode == 0, out.stderr[-3000:]
    assert "measure_asymmetric" not in out.stdout
    assert "asymmetric (seed 003) skipped" in out.stderr + out.stdout


# --------------------------------------------------------------------------- on a testbed


@pytest.mark.root
@pytest.mark.slow
@pytest.mark.skipif(os.geteuid() != 0, reason="network namespaces need root")
def test_links_measured_at_both_levels_on_two_racks(tmp_path, built_programs):
    """A small two-rack testbed: two links out of one NIC and one across the backbone,
    at the MPI level (p2p_concurrent, one process per link end) and with iperf3."""
    if shutil.which("iperf3") is None:
        pytest.skip("iperf3 not installed")
    config = validate(
        {
            "platform": {"timeout_s": 120},
            "asymmetric": {
                "testbed": {"prefix": TEST_PREFIX, "nodes": 8, "nic_mbit": 20},
                "iterations": {"min": 2, "max": 3},
                "properties": {
                    "message_mb": 10,
                    "nic_links": [1, 2],
                    "backbone_links": [4],
                    "backbone_degrees": [[4, 1]],
                },
                "random": {"nodes": [4]},
            },
        }
    )
    asym = config["asymmetric"]
    platform_config = study.study_platform(config["platform"], asym, "cubic")
    platform = TestbedPlatform(platform_config)
    try:
        rack_nodes = study.racks(platform_config["testbed"])
        trials = study.property_patterns(asym, rack_nodes)
        trials = trials[
            trials["experiment"].isin(["nic_unidirectional", "backbone_unidirectional"])
        ]
        outputs = [tmp_path / f"trial{t}.csv" for t in sorted(trials["trial"].unique())]
        study.measure_mpi(
            platform,
            built_programs / "p2p_concurrent",
            trials,
            outputs,
            log=tmp_path / "run.log",
            timeout_s=120,
            iterations=asym["iterations"],
            config={"asymmetric": asym},
            inputs={},
        )
        links, _ = study.tidy_mpi(outputs, trials, "properties", "cubic")
        alone = links[links["links"] == 1]["rate_mbit"].iloc[0]
        assert 14 < alone <= 20  # one link: the NIC rate less headers and MPI overhead
        shared = links[(links["experiment"] == "nic_unidirectional") & (links["links"] == 2)]
        assert shared["rate_mbit"].sum() == pytest.approx(alone, rel=0.3)  # two share one NIC
        tcp = study.measure_tcp(platform.testbed, trials[trials["links"] == 4], 1, "cubic")
        assert len(tcp) == 4 and (tcp["mbit"] > 10).all()  # 4 x 20 < 200: backbone not a limit
        record = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
        assert f"{TEST_PREFIX}-n08" in record
    finally:
        platform.testbed.down()
    leftover = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    assert f"{TEST_PREFIX}-" not in leftover
