"""Platforms answer for themselves: code outside netnoise.platform asks a platform's
capabilities (docs/architecture.md) and never compares its kind with a name, so a
platform added there needs no change anywhere else."""

import ast
import io
import tokenize
from pathlib import Path

import pytest

from netnoise import platform as netnoise_platform
from tests.conftest import REPO, platform_of

KINDS = set(netnoise_platform.KINDS)
COMPARISONS = {"==", "!=", "in", "is"}


def _words(text: str) -> list[tokenize.TokenInfo]:
    skipped = {tokenize.NL, tokenize.NEWLINE, tokenize.COMMENT, tokenize.INDENT, tokenize.DEDENT}
    return [
        t for t in tokenize.generate_tokens(io.StringIO(text).readline) if t.type not in skipped
    ]


def _kind(token: tokenize.TokenInfo) -> bool:
    if token.type != tokenize.STRING:
        return False
    try:
        return ast.literal_eval(token.string) in KINDS
    except (ValueError, SyntaxError):  # an f-string
        return False


def kind_comparisons(text: str) -> list[int]:
    """The lines of ``text`` (Python, or a Snakemake file, which tokenizes as
    Python) that compare something with a platform kind's name: beside a
    comparison, as a ``case`` of a match, or inside a collection that follows
    one (``kind in ("testbed", "slurm")``). A loop's ``in`` compares nothing."""
    words = _words(text)
    found = []
    operators = []  # whether each word is a comparison
    collections = []  # whether each open bracket's items are compared
    loops = [False]  # whether a ``for`` at each bracket depth awaits its ``in``
    for i, word in enumerate(words):
        name = word.string if word.type == tokenize.NAME else None
        if name == "for":
            loops[-1] = True
        looping = name == "in" and loops[-1]
        loops[-1] = loops[-1] and not looping
        operators.append(word.string in COMPARISONS and not looping)
        before = words[i - 1].string if i else ""
        after = words[i + 1].string if i + 1 < len(words) else ""
        if word.type == tokenize.OP and word.string in "([{":
            collections.append(i > 0 and operators[i - 1])
            loops.append(False)
        elif word.type == tokenize.OP and word.string in ")]}" and collections:
            collections.pop()
            loops.pop()
        elif _kind(word) and (
            (i > 0 and operators[i - 1])
            or after in COMPARISONS
            or before == "case"
            or (collections and collections[-1])
        ):
            found.append(word.start[0])
    return found


def _sources() -> list[Path]:
    package = REPO / "src" / "netnoise"
    workflow = REPO / "workflow"
    return sorted(
        [
            *(p for p in package.rglob("*.py") if "platform" not in p.relative_to(package).parts),
            *workflow.rglob("*.py"),
            *workflow.rglob("*.smk"),
            workflow / "Snakefile",
        ]
    )


def test_no_module_or_rule_outside_the_platforms_compares_a_platform_kind():
    found = [
        f"{path.relative_to(REPO)}:{line}"
        for path in _sources()
        for line in kind_comparisons(path.read_text())
    ]
    assert not found, f"platform kinds compared outside netnoise.platform: {found}"


def test_the_check_sees_every_form_of_comparison():
    text = (
        'if kind == "testbed":\n'
        '    x = "slurm" != config["platform"]["kind"]\n'
        'y = kind in ("localhost", "other")\n'
        "match kind:\n"
        '    case "simgrid":\n'
        "        pass\n"
        'z = f"{kind} testbed" == name and prefix == "nn"\n'
        'for name in ("testbed", "cpu"):\n'
        '    w = [n for n in ("slurm",) if n]\n'
        'v = "testbed" in kinds\n'
    )
    assert kind_comparisons(text) == [1, 2, 3, 5, 10]


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_every_platform_answers_its_capabilities_without_running(kind):
    """Planning asks a platform of a config that may not run here (a dry run, a
    review): every capability answers without bringing anything up."""
    platform = platform_of(kind)
    assert platform.clock in (netnoise_platform.WALL, netnoise_platform.SIMULATED)
    for name in (
        "places_named_nodes",
        "isolates_cores",
        "has_counters",
        "reads_counters_in_run",
        "mpi_over_tcp",
        "tcp_sockets",
        "supports_ns3",
        "judges_saturation",
        "shapes_links",
        "discovers_layout",
        "allocates_jobs",
        "reference",
        "names_nodes",
        "runs_third_party",
    ):
        assert isinstance(getattr(platform, name), bool), name
    assert platform.max_nodes is None or platform.max_nodes > 0
    assert (platform.node_names(2) is not None) == platform.names_nodes
    assert platform.build_flavour in ("native", "smpi")
    facts = platform.facts()
    assert facts is None or (facts[0] and all(len(line) == 2 for line in facts[1]))


def test_how_to_add_a_platform_names_every_capability_within_a_screen():
    text = (REPO / "docs" / "architecture.md").read_text()
    page = text.split("## How to add a platform\n", 1)[1].split("\n## ", 1)[0]
    assert len(page.strip().splitlines()) <= 30
    base = netnoise_platform.Platform
    asked = {name for name in vars(base) if not name.startswith("_")} - {
        "mpi_launch", "corun_launches", "link_counter_flags", "simulated_counters",
        "core_sets", "run_record", "check", "rank_failure_marker", "runs_third_party",
        "places_named_nodes", "reads_counters_in_run", "supports_ns3", "judges_saturation",
        "reference", "named_nodes_refused",
    }  # fmt: skip
    assert sorted(name for name in asked if f"`{name}`" not in page) == []
