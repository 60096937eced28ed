"""Seed 003 in the workflow: its jobs on the testbed, and a warning on localhost."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import snakemake

# The study's three kinds of trial, each a job of its own.
TRIALS = ("properties", "random", "alltoallv")


def dry_run(configfile: str | Path, planned: list[str], unplanned: list[str]) -> str:
    """What the workflow's dry run of every job under ``configfile`` says (its output
    and its log), once checked to succeed, to plan every job of ``planned`` and to
    say nothing of ``unplanned``."""
    out = snakemake("-n", "--forceall", "--configfile", str(configfile))
    assert out.returncode == 0, out.stderr[-3000:]
    said = out.stdout + out.stderr
    assert [rule for rule in planned if rule not in out.stdout] == []
    assert [text for text in unplanned if text in said] == []
    return said


def test_workflow_plans_the_study_on_the_testbed_not_localhost(tmp_path):
    overlay = tmp_path / "overlay.yaml"
    overlay.write_text("platform:\n  testbed:\n    prefix: na\n")
    measured = [f"measure_asymmetric_{trial}" for trial in (*TRIALS, "tcp")]
    dry_run(
        overlay,
        ["validate_asymmetric_testbed", *measured, "plot_asymmetric"],
        ["simulate_asymmetric_regime"],
    )
    # Seeds 000 and 004 need the link rate off the testbed; it is not what this checks.
    overlay.write_text(
        "platform:\n  kind: localhost\nlatency_variation:\n  enabled: false\n"
        "impact_compression:\n  compression:\n    link_mbit: 50\n"
    )
    assert "asymmetric (seed 003) skipped" in dry_run(overlay, [], ["measure_asymmetric"])


def test_workflow_simulates_the_study_in_ns3_with_its_overlay():
    simulated = [f"simulate_asymmetric_{trial}" for trial in TRIALS]
    simulated += ["simulate_asymmetric_regime", "plot_asymmetric_regime"]
    planned = ["build_ns3_programs", *simulated, "fit_asymmetric_platform", "tabulate_asymmetric"]
    unplanned = ["validate_asymmetric_testbed", "measure_asymmetric", "asymmetric (seed 003) skip"]
    dry_run("config/asymmetric-ns3.yaml", planned, unplanned)
