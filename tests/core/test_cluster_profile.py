"""``snakemake --profile slurm`` from a clone: Snakemake finds a bare profile name
only in the user's profile directory, so the README names the one command that
puts the project's profile there (``make cluster-profile``) and the executor
plugin it needs, which ``make setup`` installs."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import tomllib

from tests.conftest import REPO, small_config, snakemake

README = (REPO / "README.md").read_text()


def _fresh_user(tmp_path) -> dict[str, str]:
    home = tmp_path / "home"
    home.mkdir()
    return {**os.environ, "HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config")}


def test_readme_names_the_profile_command_and_the_executor_plugin():
    assert "make cluster-profile" in README
    assert "snakemake --profile slurm" in README
    assert "snakemake-executor-plugin-slurm" in README
    workflow = tomllib.loads((REPO / "pyproject.toml").read_text())["project"][
        "optional-dependencies"
    ]["workflow"]
    assert any(spec.startswith("snakemake-executor-plugin-slurm") for spec in workflow)
    assert importlib.util.find_spec("snakemake_executor_plugin_slurm") is not None
    assert "executor: slurm" in (REPO / "profiles" / "slurm" / "config.yaml").read_text()


def test_profile_by_name_plans_after_make_cluster_profile(tmp_path, monkeypatch):
    env = _fresh_user(tmp_path)
    work = tmp_path / "work"
    small_config("slurm", work)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    before = snakemake("-n", "--profile", "slurm", "--directory", str(work), cwd=work)
    assert before.returncode != 0 and "slurm" in before.stderr
    made = subprocess.run(
        ["make", "-s", "-C", str(REPO), "cluster-profile"], env=env, capture_output=True, text=True
    )
    assert made.returncode == 0, made.stdout + made.stderr
    link = tmp_path / "home" / ".config" / "snakemake" / "slurm"
    assert link.resolve() == (REPO / "profiles" / "slurm").resolve()
    after = snakemake("-n", "--profile", "slurm", "--directory", str(work), cwd=work)
    assert after.returncode == 0, after.stderr[-3000:]
    assert "measure_baseline_latency" in after.stdout
    # A second run keeps the link; it refuses to replace a profile of the user's own.
    again = subprocess.run(["make", "-s", "-C", str(REPO), "cluster-profile"], env=env)
    assert again.returncode == 0
    link.unlink()
    link.mkdir()
    refused = subprocess.run(
        ["make", "-s", "-C", str(REPO), "cluster-profile"], env=env, capture_output=True, text=True
    )
    assert refused.returncode != 0 and "move it aside" in refused.stdout
