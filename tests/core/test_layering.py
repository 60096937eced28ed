"""The layering the manual promises (docs/architecture.md): shared machinery
imports no study, no modules import each other in a cycle, and no module uses
another's private names. Studies join through one entry point group, each
with its ``STUDY`` (netnoise.study)."""

import ast
from importlib.metadata import distribution, entry_points
from pathlib import Path

import pytest

import netnoise
from netnoise import studies
from netnoise.study import Study

PACKAGE = Path(netnoise.__file__).resolve().parent


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _is_package(name: str) -> bool:
    return MODULES[name].name == "__init__.py"


def _imports(name: str) -> list[tuple[str, list[str]]]:
    """(imported module, names taken from it) of every import in a module, at any
    depth (a function's imports count too)."""
    tree = ast.parse(MODULES[name].read_text())
    package = name if _is_package(name) else name.rpartition(".")[0]
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(alias.name, []) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            names = [alias.name for alias in node.names]
            submodules = [f"{base}.{n}" for n in names if f"{base}.{n}" in MODULES]
            found += [(sub, []) for sub in submodules]
            taken = [n for n in names if f"{base}.{n}" not in MODULES]
            if taken or not submodules:
                found.append((base, taken))
    return [(module, names) for module, names in found if module in MODULES]


def _is_study(name: str) -> bool:
    return name.startswith("netnoise.studies.")


GRAPH = {name: {module for module, _ in _imports(name) if module != name} for name in MODULES}


@pytest.mark.parametrize("name", sorted(n for n in MODULES if not _is_study(n)))
def test_shared_module_imports_no_study(name):
    studies_imported = sorted(m for m in GRAPH[name] if _is_study(m))
    assert not studies_imported, f"{name} (shared) imports {studies_imported}"


def test_no_import_cycle():
    # Tarjan's strongly connected components; a component of two or more
    # modules is a cycle.
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for succ in GRAPH[node]:
            if succ not in index:
                visit(succ)
                low[node] = min(low[node], low[succ])
            elif succ in on_stack:
                low[node] = min(low[node], index[succ])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for name in sorted(GRAPH):
        if name not in index:
            visit(name)
    assert not cycles, f"modules that import each other: {cycles}"


def test_no_private_name_used_across_modules():
    used = [
        f"{name} imports {module}.{taken}"
        for name in MODULES
        for module, names in _imports(name)
        for taken in names
        if taken.startswith("_") and not taken.startswith("__") and module != name
    ]
    assert not used


def test_the_cycle_check_sees_a_cycle(monkeypatch):
    # The check above would pass on a graph it cannot read; on one with a
    # cycle it must fail.
    monkeypatch.setitem(GRAPH, "netnoise.io", GRAPH["netnoise.io"] | {"netnoise.atomic"})
    monkeypatch.setitem(GRAPH, "netnoise.atomic", GRAPH["netnoise.atomic"] | {"netnoise.io"})
    with pytest.raises(AssertionError, match=r"netnoise\.atomic"):
        test_no_import_cycle()


def test_studies_join_through_one_entry_point_group_each_under_its_key():
    groups = {point.group for point in distribution("netnoise").entry_points}
    assert groups == {"console_scripts", studies.GROUP}
    points = entry_points(group=studies.GROUP)
    assert sorted(point.name for point in points) == sorted(studies.KEYS)
    for study in studies.STUDIES:
        assert isinstance(study, Study)
        assert study.key == study.settings.KEY and study.rules.is_file()
        assert study.schema.is_file() and study.notebook.is_file()


def test_command_modules_are_imported_only_where_they_register():
    """A study imports no command of the shared machinery (for a class, say), and
    its own command-line module only its STUDY imports."""
    shared = {"netnoise.cli", "netnoise.cpubench"}
    found = [
        f"{name} imports {m}" for name in MODULES if _is_study(name) for m in GRAPH[name] & shared
    ]
    for name in MODULES:
        own = {m for m in GRAPH[name] if _is_study(m) and m.endswith(".cli")}
        found += [f"{name} imports {m}" for m in own if name != m.rpartition(".")[0] + ".study"]
    assert not found


#: Lines of a module: past it, a module holds more than one idea and is split.
MODULE_LINES = 600


def test_every_module_is_short_enough_to_hold_one_idea():
    long = {
        name: lines
        for name, path in MODULES.items()
        if (lines := len(path.read_text().splitlines())) >= MODULE_LINES
    }
    assert long == {}
