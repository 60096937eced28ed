"""The conda environments and pyproject.toml pin the same versions."""

from __future__ import annotations

import re
import tomllib

import yaml

from tests.conftest import REPO


def pyproject_pins() -> dict[str, str]:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    specs = list(project["dependencies"])
    for extra in project["optional-dependencies"].values():
        specs.extend(extra)
    pins = {}
    for spec in specs:
        match = re.fullmatch(r"([A-Za-z0-9_.-]+)(\[[a-z,]+\])?==([0-9.]+)", spec)
        assert match, f"pyproject.toml: {spec!r} is not pinned exactly (name==version)"
        pins[match.group(1).lower()] = match.group(3)
    return pins


def conda_pins() -> dict[str, dict[str, str]]:
    envs = {}
    for path in sorted((REPO / "envs").glob("*.yaml")):
        env = yaml.safe_load(path.read_text())
        assert env["channels"][0] == "conda-forge", f"{path.name}: conda-forge must come first"
        assert "nodefaults" in env["channels"], f"{path.name}: add nodefaults"
        pins = {}
        for dep in env["dependencies"]:
            name, _, version = dep.partition("=")
            pins[name] = version
        envs[path.name] = pins
    return envs


def test_every_conda_pin_of_a_python_package_matches_pyproject():
    pins = pyproject_pins()
    for env, deps in conda_pins().items():
        for name, version in deps.items():
            if name in pins:
                assert version == pins[name], (
                    f"envs/{env}: {name}={version}, pyproject {pins[name]}"
                )


def test_every_pyproject_dependency_is_in_some_conda_env():
    in_conda = {name for deps in conda_pins().values() for name in deps}
    missing = set(pyproject_pins()) - in_conda
    assert not missing, f"not in any envs/*.yaml: {sorted(missing)}"


def test_every_rule_has_a_conda_environment_that_exists():
    for smk in (REPO / "workflow" / "rules").glob("*.smk"):
        text = smk.read_text()
        # Rules inside an if block (a study choosing its rules by config) are indented.
        rules = re.findall(r"^\s*rule (\w+):", text, flags=re.M)
        envs = re.findall(r'conda:\n\s+"([^"]+)"', text)
        assert len(envs) == len(rules), f"{smk.name}: {len(rules)} rules, {len(envs)} conda:"
        for env in envs:
            assert (smk.parent / env).resolve().is_file(), f"{smk.name}: {env} missing"
