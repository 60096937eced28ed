"""Study 100's plan and config checks (studies/characterise/plan.py, config.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from netnoise.config import ConfigError, read_yaml, validate
from netnoise.platform import from_config
from netnoise.settings import Settings
from netnoise.studies.characterise import plan
from netnoise.studies.characterise.settings import CharacteriseSettings
from netnoise.study import StudyPaths

PROJECT = Path(__file__).resolve().parents[2]
PATHS = StudyPaths.under("results/testbed", "characterise", "captions")


def study(overlay: dict | None = None) -> tuple[Settings, CharacteriseSettings]:
    settings = Settings.of(validate({"characterise": {"enabled": True, **(overlay or {})}}))
    return settings, settings.study(CharacteriseSettings)


def test_the_split_is_gpcnets():
    assert plan.split(10, 0.2) == (2, 8)
    assert plan.split(128, 0.2) == (26, 102)
    assert plan.split(11, 0.2) == (3, 8)


def test_each_congestor_setting_is_one_run_of_the_program():
    _, ch = study({"rounds": 5, "seed": 7})
    args = plan.program_args(ch, "none")
    assert args[:2] == ["--congestor", "none"]
    given = dict(zip(args[::2], args[1::2], strict=True))
    assert given["--rounds"] == "5" and given["--seed"] == "7"
    assert given["--bandwidth-size"] == "131072" and given["--congestor-size"] == "4096"
    assert plan.raw_result("raw", "all") == "raw/all.csv"


def test_the_cpu_only_control_runs_all_four_groups_with_the_canaries_in_the_first_rack():
    settings, ch = study({"congestors": ["all", "none", plan.APART]})
    args = plan.program_args(ch, plan.APART)
    assert args[:3] == ["--congestor", "all", "--canaries-first"]
    assert "--canaries-first" not in plan.program_args(ch, "all")
    effective = settings.effective(ch)
    apart = plan.run_nodes(effective, plan.APART, ch.nodes)
    spread = plan.run_nodes(effective, "all", ch.nodes)
    assert sorted(apart) == sorted(spread) and apart[:2] == ["nn-n01", "nn-n02"]
    assert spread[:2] == ["nn-n01", "nn-n06"]  # one node of each rack in turn
    simgrid = Settings.of(validate(read_yaml(PROJECT / "config" / "simgrid.yaml")))
    on_simgrid = simgrid.effective(simgrid.study(CharacteriseSettings))
    assert plan.run_nodes(on_simgrid, plan.APART, 10) is None  # SimGrid places its ranks


def test_the_study_runs_on_its_own_layout_and_not_on_localhost():
    settings, _ = study()
    files = plan.final_files(settings, PATHS)
    assert "results/testbed/tables/characterise/cif.csv" in files
    assert "results/testbed/figures/characterise/fig_cif.png" in files
    effective = settings.effective(settings.study(CharacteriseSettings))
    assert (effective.testbed.nodes, effective.testbed.racks) == (10, 2)
    # Below a node link, so that one congestor pair across it saturates it.
    assert effective.testbed.backbone_mbit < effective.testbed.nic_mbit
    local = from_config({**settings.platform.as_config(), "kind": "localhost"})
    assert "nodes of their own" in plan.skipped(local)
    assert plan.targets(local, PATHS) == []


def test_config_checks_name_the_key_and_what_is_allowed():
    def fails(overlay, message):
        with pytest.raises(ConfigError, match=message):
            validate({"characterise": {"enabled": True, **overlay}})

    fails({"nodes": 9}, r"characterise.nodes: 9 is out of range")
    fails({"congestors": ["all"]}, r"characterise.congestors")
    fails({"congestors": ["all", "bogus", "none"]}, r"characterise.congestors")
    fails({"canary_fraction": 0.6}, r"characterise.canary_fraction")
    fails({"nodes": 10, "canary_fraction": 0.1}, r"leaves 1 canary node\(s\)")
    fails(
        {"nodes": 12, "canary_fraction": 0.5, "testbed": {"nodes": 12}},
        r"leave 6 congestor node\(s\).*four groups of at least 2",
    )
    fails({"nodes": 12}, r"characterise.nodes: 12 exceeds the platform's 10 nodes")
    fails({"testbed": {"racks": 9}}, r"characterise.testbed.racks")
    fails(
        {
            "nodes": 12,
            "canary_fraction": 0.25,
            "congestors": ["none", plan.APART],
            "testbed": {"nodes": 12, "racks": 6},
        },
        r"characterise.congestors: all_apart puts the 3 canary nodes in the first rack, "
        r"which holds 2",
    )
    fails(
        {"nodes": 10, "canary_fraction": 0.5, "congestors": ["none", plan.APART]},
        r"congestors all_apart run four groups",
    )
    # One congestor alone needs no four groups.
    ok = validate(
        {
            "characterise": {
                "enabled": True,
                "nodes": 12,
                "canary_fraction": 0.5,
                "congestors": ["a2a", "none"],
                "testbed": {"nodes": 12},
            }
        }
    )
    assert ok["characterise"]["congestors"] == ["a2a", "none"]
    assert validate({"characterise": {"enabled": False, "nodes": 64}})


def test_its_front_page_cites_the_method_it_follows_and_judges_nothing():
    from netnoise import report, studies

    study = studies.get("characterise")
    assert not study.reproduces and study.claims is None
    assert "characterise" not in studies.PAPER_KEYS
    page = report.about_page(study, [r.title for r in study.results], source="s")
    assert "It follows the method of Sudheer Chunduri" in page
    assert "<h2>Results</h2>" in page and "paper&#x27;s order" not in page
    assert "10.1145/3295500.3356215" in page


def test_the_command_prints_a_runs_factors_and_refuses_a_config_that_leaves_it_out(
    tmp_path, capsys
):
    from netnoise.cli import main
    from netnoise.studies.characterise import cif
    from tests.characterise.test_cif import samples

    tables = tmp_path / "tables" / "characterise"
    tables.mkdir(parents=True)
    cif.impact_table(samples({"all": 3.0}, rounds=3)).to_csv(tables / "cif.csv", index=False)
    assert main(["characterise", "--results", str(tmp_path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("latency    congestors all         average  CIF 3")
    assert lines[0].endswith("over 3 rounds") and len(lines) == 7
    off = tmp_path / "off.yaml"
    off.write_text("characterise: {enabled: false}\n")
    assert main(["characterise", "--configfile", str(off)]) == 2
    assert "characterise.enabled is false" in capsys.readouterr().err
    assert main(["characterise", "--results", str(tmp_path / "none")]) == 2
