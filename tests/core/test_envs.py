"""Versions: pyproject.toml asks for compatible ranges, requirements.lock pins the
tested versions exactly, and the conda environments pin the same (the
interpreter to its patch level, the compilers to the ones the tests build with)."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tomllib

import yaml

from tests.conftest import REPO

#: ``name>=lower,<upper`` (an extra allowed), the form of every pyproject dependency.
RANGE = re.compile(r"([A-Za-z0-9_.-]+)(\[[a-z,]+\])?>=([0-9.]+),<([0-9.]+)")


def _key(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def pyproject_ranges() -> dict[str, tuple[str, str]]:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    specs = list(project["dependencies"])
    for extra in project["optional-dependencies"].values():
        specs.extend(extra)
    ranges = {}
    for spec in specs:
        match = RANGE.fullmatch(spec)
        assert match, f"pyproject.toml: {spec!r} is not a range name>=tested,<next-major"
        ranges[_key(match.group(1))] = (match.group(3), match.group(4))
    return ranges


def lock_pins() -> dict[str, str]:
    pins = {}
    for line in (REPO / "requirements.lock").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            name, _, version = line.partition("==")
            assert version, f"requirements.lock: {line!r} is not name==version"
            pins[_key(name)] = version
    return pins


def next_major(version: str) -> str:
    """The first version a compatible range leaves out: the next major, or for
    0.x the next minor (semantic versioning's breaking step)."""
    major, minor, *_ = (int(part) for part in version.split("."))
    return f"0.{minor + 1}" if major == 0 else str(major + 1)


def conda_pins() -> dict[str, dict[str, str]]:
    envs = {}
    for path in sorted((REPO / "envs").glob("*.yaml")):
        env = yaml.safe_load(path.read_text())
        assert env["channels"][0] == "conda-forge", f"{path.name}: conda-forge must come first"
        assert "nodefaults" in env["channels"], f"{path.name}: add nodefaults"
        pins = {}
        for dep in env["dependencies"]:
            name, _, version = dep.partition("=")
            assert version, f"envs/{path.name}: {dep!r} is not pinned"
            pins[name] = version
        envs[path.name] = pins
    return envs


def test_every_dependency_ranges_from_its_locked_version_to_the_next_major():
    locked = lock_pins()
    for name, (lower, upper) in pyproject_ranges().items():
        assert name in locked, f"{name} is in pyproject.toml but not in requirements.lock"
        assert lower == locked[name], f"{name}: pyproject >={lower}, lock =={locked[name]}"
        assert upper == next_major(lower), (
            f"{name}: <{upper}, its next major is {next_major(lower)}"
        )


def test_every_conda_pin_of_a_python_package_matches_the_lock():
    locked = lock_pins()
    for env, deps in conda_pins().items():
        for name, version in deps.items():
            if _key(name) in locked:
                assert version == locked[_key(name)], (
                    f"envs/{env}: {name}={version}, requirements.lock {locked[_key(name)]}"
                )


def test_every_pyproject_dependency_is_in_some_conda_env():
    in_conda = {_key(name) for deps in conda_pins().values() for name in deps}
    missing = set(pyproject_ranges()) - in_conda
    assert not missing, f"not in any envs/*.yaml: {sorted(missing)}"


def test_conda_envs_pin_the_tested_interpreter_and_compilers():
    python = ".".join(str(part) for part in sys.version_info[:3])
    for env, deps in conda_pins().items():
        assert deps["python"] == python, f"envs/{env}: python={deps['python']}, tested {python}"
    build = conda_pins()["build.yaml"]
    for name in ("gcc", "gxx", "make"):
        assert re.fullmatch(r"\d+\.\d+(\.\d+)?", build[name]), f"build.yaml: {name} unpinned"
    assert build["gcc"] == build["gxx"]
    if shutil.which("gcc"):
        version = subprocess.run(
            ["gcc", "-dumpfullversion"], capture_output=True, text=True, check=True
        ).stdout.strip()
        assert build["gcc"] == version, (
            f"envs/build.yaml: gcc={build['gcc']}, tests build with {version}"
        )


def test_every_rule_has_a_conda_environment_that_exists():
    for smk in (REPO / "workflow" / "rules").glob("*.smk"):
        text = smk.read_text()
        # Rules inside an if block (a study choosing its rules by config) are indented.
        rules = re.findall(r"^\s*rule (\w+):", text, flags=re.M)
        envs = re.findall(r'conda:\n\s+"([^"]+)"', text)
        assert len(envs) == len(rules), f"{smk.name}: {len(rules)} rules, {len(envs)} conda:"
        for env in envs:
            assert (smk.parent / env).resolve().is_file(), f"{smk.name}: {env} missing"
