from __future__ import annotations

import re
import subprocess
import sys

import pandas as pd
import pytest
import yaml

from netnoise import bundle, claims_summary, headlines, studies, verdicts
from netnoise.provenance import read_sidecar
from tests.conftest import REPO, snakemake


@pytest.mark.parametrize("name", ["config.yaml", "paper.yaml"])
def test_dry_run(name):
    out = snakemake("-n", "--forceall", "--configfile", str(REPO / "config" / name))
    assert out.returncode == 0, out.stderr[-3000:]
    assert "measure_baseline_latency" in out.stdout


def test_measurements_hold_every_local_core():
    """--cores 2 overrides the profile's 1: a measurement job then takes both
    cores, so that no build or analysis loads the cores its ranks poll on."""
    out = snakemake(
        "-n", "--forceall", "--cores", "2", "--configfile", str(REPO / "config" / "config.yaml")
    )
    assert out.returncode == 0, out.stderr[-3000:]
    jobs = re.split(r"^(?:local)?rule ", out.stdout, flags=re.M)[1:]
    measurements = [job for job in jobs if "network=1" in job]
    assert len(measurements) > 20
    assert all("threads: 2" in job for job in measurements)
    assert not any("threads: 2" in job for job in jobs if job.startswith("build_programs"))


def test_paper_grid_on_slurm_plans_every_study(tmp_path):
    """config/paper.yaml through the site profile, as a cluster user starts it:
    measurement jobs of all five studies, none skipped."""
    out = snakemake(
        "-n",
        "--forceall",
        "--profile",
        str(REPO / "profiles" / "slurm"),
        "--configfile",
        str(REPO / "config" / "paper.yaml"),
        cwd=tmp_path,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    planned = set(re.findall(r"^(\w+)\s+\d+$", out.stdout, flags=re.M))
    for study, rule in {
        "impact_compression": "measure_pairing",
        "network_noise": "measure_network_noise",
        "variability": "measure_variability_runs",
        "asymmetric": "measure_asymmetric_random",
        "latency_variation": "measure_injected_applications",
    }.items():
        assert rule in planned, study
    assert "skipped" not in (out.stdout + out.stderr).lower()


def test_real_applications_and_netgauge_are_built_when_a_study_uses_them(tmp_path):
    overlay = tmp_path / "real.yaml"
    # The precision rule and drawn compute phases are built-in proxies' only: a
    # study with a real application measures a fixed number of runs as they
    # come, as the config check asks.
    study = {
        "applications": ["lulesh", "halo3d"],
        "precision": {"ci_width": None},
        "compute_jitter": 0,
    }
    # Collvsnoise splits the allocation at every ratio, into sizes it steps by 2.
    split = {"application_ranks": None, "ratios": [0.25, 0.5, 0.75]}
    netgauge = {"benchmark": {**split, "netgauge": {"source": str(tmp_path / "netgauge")}}}
    overlay.write_text(yaml.safe_dump({"impact_compression": study, "network_noise": netgauge}))
    configs = [REPO / "config" / n for n in ("config.yaml", "real-applications.yaml")]
    out = snakemake("-n", "--forceall", "--configfile", *map(str, configs), str(overlay))
    assert out.returncode == 0, out.stderr[-3000:]
    assert "build_application" in out.stdout and "apps/lulesh" in out.stdout
    assert "measure_netgauge_collvsnoise" in out.stdout
    assert "tabulate_netgauge_comparison" in out.stdout
    # Unused recipes are not built.
    assert "apps/npb_cg" not in out.stdout


def test_paper_grid_is_larger_than_the_quick_one():
    quick = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    paper = yaml.safe_load((REPO / "config" / "paper.yaml").read_text())
    assert paper["platform"]["kind"] == "slurm"
    assert len(paper["baseline"]["sizes"]) > len(quick["baseline"]["sizes"])
    assert paper["baseline"]["iterations"] > quick["baseline"]["iterations"]


@pytest.mark.mpi
@pytest.mark.slow
def test_small_real_run_end_to_end(platform_run, platform_report, platform_bundle, platform_review):
    """Build, measure, tidy, tabulate and plot in a scratch working directory."""
    results = platform_run / "results" / "localhost"
    table = pd.read_csv(results / "tables" / "baseline_latency.csv")
    assert table["size_bytes"].tolist() == [8, 4096]
    assert (table["samples"] == 100).all()
    assert (table["median"] > 0).all()
    assert (table["p95"] >= table["median"]).all()
    for suffix in ("svg", "png"):
        assert (results / "figures" / f"baseline_latency.{suffix}").stat().st_size > 1000
    raw = results / "raw" / "baseline" / "pingpong_size8_rep0.csv"
    record = read_sidecar(raw)
    assert record["exit_status"] == 0
    assert record["config"]["baseline"]["iterations"] == 50
    assert (results / "logs" / "baseline" / "pingpong_size8_rep0.log").exists()
    assert (results / "benchmarks" / "baseline" / "pingpong_size8_rep0.tsv").exists()
    assert platform_report.stat().st_size > 10_000

    # Reviewer mode: the bundle of this run rebuilds the same table, measuring nothing.
    from netnoise import bundle

    _, manifest = platform_bundle
    assert "results/localhost/tidy/baseline_latency.csv" in manifest["files"]
    assert not any("/raw/" in f and not f.endswith(".prov.json") for f in manifest["files"])
    assert not any(f.endswith(("/pingpong", ".svg", ".html")) for f in manifest["files"])
    review, _ = platform_review
    rebuilt = review / "results" / "localhost"
    assert (rebuilt / "tables" / "baseline_latency.csv").read_text() == (
        results / "tables" / "baseline_latency.csv"
    ).read_text()
    assert (rebuilt / "figures" / "baseline_latency.png").stat().st_size > 1000
    verdicts = bundle.compare_tables(manifest, review)
    assert "results/localhost/tables/baseline_latency.csv" in verdicts
    assert set(verdicts.values()) == {"identical"}
    assert not (rebuilt / "raw" / "baseline" / "pingpong_size8_rep0.csv").exists()
    assert not (rebuilt / "bin" / "pingpong").exists()
    assert (review / "report.html").stat().st_size > 10_000


@pytest.mark.slow
def test_simulator_figures_including_a_real_fabric(simulator_run):
    """Seed 001's simulator rules end to end on small topologies and the fixture fabric."""
    results = simulator_run / "results" / "localhost"
    figures = results / "figures" / "network_noise"
    for name in ("fig11_fabric_ratio", "fig13_fat_tree_size", "fig15_torus_ratio"):
        assert (figures / f"{name}.svg").stat().st_size > 1000
    summary = pd.read_csv(results / "tables" / "network_noise" / "simulation_summary.csv")
    fabric_rows = summary[summary["figure"] == "fabric_ratio"]
    assert fabric_rows["ratio"].tolist() == [0.25, 0.5]
    assert (fabric_rows["slowdown_mean"] >= 1).all()
    assert (summary["slowdown_runs"] == 20).all()


@pytest.mark.slow
def test_a_run_judges_its_headline_claims_and_gathers_them(simulator_run):
    """The run's claims: the benchmark's not measurable (disabled), the
    simulator's judged from its summary; the summary gathers every enabled study's."""
    tables = simulator_run / "results" / "localhost" / "tables"
    claims = pd.read_csv(tables / "network_noise" / "headline_claims.csv")
    assert list(claims.columns) == list(verdicts.COLUMNS)
    verdict = dict(zip(claims["claim_id"], claims["verdict"], strict=True))
    assert verdict["collective_factor_2"] == verdicts.NOT_MEASURABLE
    assert verdict["simulated_growth_with_size"] in verdicts.VERDICTS
    assert verdict["simulated_growth_with_size"] != verdicts.NOT_MEASURABLE
    summary = pd.read_csv(tables / "claims_summary.csv")
    assert summary.equals(claims)
    assert verdicts.contradictions(summary) == []
    assert verdicts.outside_band(summary) == []
    printed = subprocess.run(
        [sys.executable, "-m", "netnoise", "claims", str(simulator_run / "results")],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert printed.splitlines()[0].endswith("headline claims reproduced on localhost")
    assert "In simulation, network noise's influence grows" in printed


def test_off_the_testbed_a_run_sets_its_claims_beside_the_shipped_bundles(simulator_run):
    """Every claim once: the shipped testbed run's verdict beside this run's,
    and "not run" where this run's config left the study out."""
    tables = simulator_run / "results" / "localhost" / "tables"
    summary = pd.read_csv(tables / "claims_summary.csv").set_index(["study", "claim_id"])
    beside = pd.read_csv(tables / "claims_beside.csv").set_index(["study", "claim_id"])
    shipped, _ = headlines.bundle_claims(bundle.SHIPPED)["testbed"]
    assert len(beside) == len(shipped) and summary.index.isin(beside.index).all()
    assert beside.loc[summary.index, "localhost verdict"].tolist() == summary["verdict"].tolist()
    assert beside["testbed verdict"].tolist() == shipped["verdict"].tolist()
    assert (beside.drop(summary.index)["localhost verdict"] == claims_summary.NOT_RUN).all()
    printed = subprocess.run(
        [
            sys.executable,
            "-m",
            "netnoise",
            "claims",
            str(simulator_run / "results"),
            "--beside",
            str(bundle.SHIPPED),
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "| Seed | Claim | Paper | Band | testbed | localhost |" in printed


def test_every_enabled_studys_report_opens_with_its_claims_page():
    """With every study enabled (the quick study's config), each paper's
    category has a headline-claims page, the summary has its own, and seed
    001's benchmark claims (with its CPU-only control) have theirs."""
    out = snakemake("-n", "--forceall", "--configfile", str(REPO / "config" / "config.yaml"))
    assert out.returncode == 0, out.stderr[-3000:]
    pages = set(re.findall(r"results/testbed/report/[\w/]+\.html", out.stdout))
    for key in studies.PAPER_KEYS:
        assert f"results/testbed/report/{key}/headline_claims.html" in pages, key
    assert "results/testbed/report/claims/claims_summary.html" in pages
    # A study beyond the papers judges no claim: its category opens with its front page.
    overlay = REPO / "config" / "characterise-testbed.yaml"
    out = snakemake(
        "-n", "--forceall", "--configfile", str(REPO / "config" / "config.yaml"), str(overlay)
    )
    assert out.returncode == 0, out.stderr[-3000:]
    pages = set(re.findall(r"results/testbed/report/[\w/]+\.html", out.stdout))
    assert "results/testbed/report/characterise/about.html" in pages
    assert "results/testbed/report/characterise/cif.html" in pages
    assert "results/testbed/report/characterise/headline_claims.html" not in pages
    assert "results/testbed/report/network_noise/benchmark_claims.html" in pages


def test_the_workflow_names_the_file_and_line_of_a_config_snakemake_cannot_read(tmp_path):
    """Snakemake says only "Config file is not valid JSON or YAML" of a tab or a Python
    tag; the workflow reads the config as ``netnoise config check`` does, first."""
    (tmp_path / "config").mkdir()
    cases = {
        "platform:\n\tkind: testbed\n": "config/config.yaml:2:1): malformed YAML",
        "platform: !!python/object/apply:os.getpid []\n": (
            "config/config.yaml:1:11): could not determine a constructor"
        ),
    }
    for text, message in cases.items():
        (tmp_path / "config" / "config.yaml").write_text(text)
        out = snakemake("-n", cwd=tmp_path)
        assert out.returncode != 0
        assert message in out.stdout + out.stderr, out.stderr[-3000:]
