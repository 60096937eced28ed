"""netnoise finds its workflow and data in the checkout, or in the copy a plain
installation ships, and says in one line what it lacks otherwise."""

import ast
import sys

import pytest

from netnoise import bundle, cli, project


def test_a_checkout_runs_from_itself():
    assert project.ROOT == project.CHECKOUT
    assert project.path("workflow", "Snakefile").is_file()


def test_a_missing_file_is_one_line_naming_what_provides_it():
    with pytest.raises(project.ProjectFileMissing) as err:
        project.path("workflow", "no-such-file")
    message = str(err.value)
    assert "\n" not in message and "pip install ." in message


def _without_snakemake(monkeypatch, tmp_path):
    """As a plain ``pip install .``: no snakemake to run or to import."""
    monkeypatch.setattr(project.sys, "executable", str(tmp_path / "python"))
    monkeypatch.setenv("PATH", str(tmp_path))
    for module in ("snakemake", "snakemake.utils"):
        monkeypatch.setitem(sys.modules, module, None)


def test_without_snakemake_review_says_what_to_install(monkeypatch, tmp_path, capsys):
    _without_snakemake(monkeypatch, tmp_path)
    shipped = str(bundle.SHIPPED)
    assert cli.main(["review", "--bundle", shipped, "--workdir", str(tmp_path / "r")]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "needs Snakemake" in err, err
    assert not (tmp_path / "r").exists()
    monkeypatch.chdir(tmp_path)
    assert cli.main(["review", "--bundle", shipped]) == 2
    assert list(tmp_path.iterdir()) == []


def test_without_snakemake_a_config_is_checked(monkeypatch, tmp_path, capsys):
    _without_snakemake(monkeypatch, tmp_path)
    assert cli.main(["config", "check", str(project.CHECKOUT / "config" / "config.yaml")]) == 0


def test_setup_ships_the_directories_the_package_looks_for():
    tree = ast.parse((project.CHECKOUT / "setup.py").read_text())
    shipped = next(
        ast.literal_eval(node.value)
        for node in tree.body
        if isinstance(node, ast.Assign) and node.targets[0].id == "SHIPPED_DIRECTORIES"
    )
    assert tuple(shipped) == project.SHIPPED_DIRECTORIES
    for name in shipped:
        assert (project.CHECKOUT / name).is_dir()
