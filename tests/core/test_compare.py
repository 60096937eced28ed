"""netnoise compare: two runs' figures of merit side by side, with a stated
test of whether they agree, their claims and their provenance; references."""

from __future__ import annotations

import subprocess
import sys

import pandas as pd
import pytest

from netnoise import compare
from netnoise import verdicts as v
from netnoise.estimates import Estimate


def _run(tmp_path, name: str, slowdown_at_half: float, verdict: str = v.REPRODUCED):
    """A results folder with one benchmark table, its claims and provenance."""
    tables = tmp_path / name / "testbed" / "tables"
    (tables / "network_noise").mkdir(parents=True)
    points = pd.DataFrame(
        {
            "collective": ["allreduce"] * 3,
            "ratio": [0.0, 0.3333, 0.5],
            "allocation": [8, 8, 8],
            "perturbation": ["network"] * 3,
            "splits": [128, 128, 128],
            "perturbed_mean_us": [60.12345, 90.9876, 120.54321],
            "slowdown_pct": [100.0, 150.0, slowdown_at_half],
            "slowdown_ci_low": [98.0, 140.0, slowdown_at_half - 10],
            "slowdown_ci_high": [102.0, 160.0, slowdown_at_half + 10],
        }
    )
    points.to_csv(tables / "network_noise" / "benchmark_slowdown.csv", index=False)
    claim = v.read_claims("network_noise")["collective_factor_2"]
    estimate = Estimate(slowdown_at_half, slowdown_at_half - 20, slowdown_at_half + 20, 128)
    row = claim.row(estimate, v.Judgement(verdict, "why"))
    v.table([row]).to_csv(tables / "claims_summary.csv", index=False)
    pd.DataFrame(
        {"result": ["r"], "git_sha": [f"rev-{name}"], "platform": ["testbed"], "mpi": ["4.1.4"]}
    ).to_csv(tables / "provenance.csv", index=False)
    return tmp_path / name


def test_a_run_against_itself_agrees_everywhere(tmp_path):
    run = compare.load(_run(tmp_path, "a", 220))
    comparison = compare.compare(run, run)
    # The benchmark's three points, and the claim's value in the claims table.
    assert len(comparison.figures) == 4
    assert comparison.figures["compatible"].all()
    assert comparison.disagreeing.empty and comparison.changed_claims.empty
    assert comparison.provenance.empty


def test_a_known_difference_is_found_beyond_its_interval(tmp_path):
    first = compare.load(_run(tmp_path, "a", 220))
    second = compare.load(_run(tmp_path, "b", 300, verdict=v.NOT_REPRODUCED))
    comparison = compare.compare(first, second)
    differs = comparison.disagreeing[comparison.disagreeing["table"] != "claims_summary"]
    assert differs["point"].tolist() == [
        "collective=allreduce; ratio=0.5; allocation=8; perturbation=network"
    ]
    row = differs.iloc[0]
    assert row["difference"] == 80
    # Half-widths of 10 and 10 in quadrature: 14.1 either side.
    assert row["difference_low"] == pytest.approx(80 - 14.142, abs=0.01)
    assert comparison.changed_claims["claim_id"].tolist() == ["collective_factor_2"]
    assert comparison.provenance["key"].tolist() == ["run.git_sha"]
    lines = compare.summary_lines(comparison)
    assert "2 of 4 with an interval differ beyond their intervals" in lines[0]
    assert any("reproduced → not reproduced" in line for line in lines)


def test_the_command_fails_when_a_verdict_changes(tmp_path):
    first, second = _run(tmp_path, "a", 220), _run(tmp_path, "b", 300, v.NOT_REPRODUCED)
    argv = [sys.executable, "-m", "netnoise", "compare"]
    same = subprocess.run([*argv, str(first), str(first)], capture_output=True, text=True)
    assert same.returncode == 0, same.stderr
    assert "0 of 4 with an interval differ" in same.stdout
    out = tmp_path / "figures.csv"
    changed = subprocess.run(
        [*argv, str(first), str(second), "--csv", str(out)], capture_output=True, text=True
    )
    assert changed.returncode == 1
    assert "claim network_noise/collective_factor_2" in changed.stdout
    assert len(pd.read_csv(out)) == 4
    alone = subprocess.run([*argv, str(first)], capture_output=True, text=True)
    assert alone.returncode == 2 and "compare needs two runs" in alone.stderr


def test_a_reference_is_saved_from_one_run_and_checks_another(tmp_path):
    reference = tmp_path / "references.yaml"
    first = compare.load(_run(tmp_path, "a", 220))
    assert compare.save_reference(first, reference) == 4
    document = compare.read_reference(reference)
    assert document["platform"] == "testbed"
    assert compare.check_reference(first, document)["status"].eq("pass").all()
    checked = compare.check_reference(compare.load(_run(tmp_path, "b", 300)), document)
    # The claim's value and the benchmark's point at ratio 1/2 moved.
    assert checked["status"].tolist() == ["fail", "pass", "pass", "fail"]
    reference.write_text("format: something-else\n")
    with pytest.raises(ValueError, match="not a netnoise reference"):
        compare.read_reference(reference)


def test_figures_and_keys_follow_the_tables_conventions():
    frame = pd.DataFrame(
        {
            "campaign": ["a", "a", "b"],
            "nodes": [2, 4, 2],
            "runs": [32, 32, 30],
            "r2_sd": [0.1, 0.1, 0.1],
            "r2_low": [0.5, 0.5, 0.5],
            "r2_high": [0.7, 0.7, 0.7],
            "within10_pct": [80.0, 70.0, 60.0],
            "within10_low_pct": [70.0, 60.0, 50.0],
            "within10_high_pct": [90.0, 80.0, 70.0],
            "paper_r2": [0.91, 0.91, 0.91],
        }
    )
    # A spread is never a figure's value; counts and the paper's values are no keys.
    assert compare.figures_of_merit(frame) == {
        "within10_pct": ("within10_low_pct", "within10_high_pct")
    }
    assert compare.key_columns(frame) == ["campaign", "nodes"]


def test_a_claim_only_one_run_judged_is_named_so(tmp_path):
    first = _run(tmp_path, "a", 220)
    second = _run(tmp_path, "b", 220)
    summary = second / "testbed" / "tables" / "claims_summary.csv"
    trend = v.read_claims("network_noise")["rises_with_ratio"]
    extra = trend.row(Estimate(90.0, 60.0, 120.0, 128), v.Judgement(v.REPRODUCED, "why"))
    pd.concat([pd.read_csv(summary), v.table([extra])]).to_csv(summary, index=False)
    changed = compare.compare(compare.load(first), compare.load(second)).changed_claims
    assert changed[["claim_id", "verdict_a", "verdict_b"]].values.tolist() == [
        ["rises_with_ratio", compare.NOT_JUDGED, v.REPRODUCED]
    ]
