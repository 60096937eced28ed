"""Seed 003 in the workflow: its jobs on the testbed, and a warning on localhost."""

from __future__ import annotations

from tests.conftest import snakemake


def test_workflow_plans_the_study_on_the_testbed_not_localhost(tmp_path):
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
    # Seeds 000 and 004 need the link rate off the testbed; it is not what this checks.
    overlay.write_text(
        "platform:\n  kind: localhost\nlatency_variation:\n  enabled: false\n"
        "impact_compression:\n  compression:\n    link_mbit: 50\n"
    )
    out = snakemake("-n", "--forceall", "--configfile", str(overlay))
    assert out.returncode == 0, out.stderr[-3000:]
    assert "measure_asymmetric" not in out.stdout
    assert "asymmetric (seed 003) skipped" in out.stderr + out.stdout


def test_workflow_simulates_the_study_in_ns3_with_its_overlay():
    out = snakemake("-n", "--forceall", "--configfile", "config/asymmetric-ns3.yaml")
    assert out.returncode == 0, out.stderr[-3000:]
    for rule in (
        "build_ns3_programs",
        "simulate_asymmetric_properties",
        "simulate_asymmetric_random",
        "simulate_asymmetric_alltoallv",
        "fit_asymmetric_platform",
        "tabulate_asymmetric",
    ):
        assert rule in out.stdout
    for rule in ("validate_asymmetric_testbed", "measure_asymmetric", "asymmetric (seed 003) skip"):
        assert rule not in out.stdout + out.stderr
