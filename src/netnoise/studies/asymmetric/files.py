"""The files of ``netnoise predict asymmetric`` (seed 003), read strictly.

PLATFORM.yaml::

    racks:                 # rack name -> node names (a link inside a rack
      X: [n01, n02, n03]   # does not use the backbone)
      Y: [n04, n05, n06]
    nic_bps: 940e6         # rate of one NIC, each direction, bit/s
    backbone_bps: 9.4e9    # rate of the backbone between racks, each direction, bit/s

PATTERN.csv: header ``src,dst,bytes``, one link per line (blank lines and
lines starting with ``#`` are skipped, spaces and tabs around fields ignored,
byte counts of 1 to 2^30, as ``p2p_concurrent`` reads it). With node names
equal to MPI ranks the same file drives the benchmark. A bad file is a
ValueError naming the file and line.
"""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import yaml

from netnoise import inputs
from netnoise.studies.asymmetric.model import PATTERN_COLUMNS, Platform

PLATFORM_KEYS = ("racks", "nic_bps", "backbone_bps")
#: The largest message of one link, as p2p_concurrent takes it (an MPI count).
MAX_LINK_BYTES = 1 << 30


def _read(path: Path) -> str:
    try:
        return inputs.read_text(path, inputs.MAX_TABLE_BYTES, "CSV or YAML file")
    except OSError as err:
        raise ValueError(f"{path}: cannot read: {err.strerror or err}") from None


def _line(node: yaml.Node) -> int:
    return node.start_mark.line + 1


def _rate(path: Path, key: str, node: yaml.Node) -> float:
    text = node.value if isinstance(node, yaml.ScalarNode) else None
    try:
        value = float(text) if text is not None else math.nan
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value > 0):
        shown = repr(text) if text is not None else f"a {node.id}"
        raise ValueError(
            f"{path}:{_line(node)}: bad number for {key}: expected a positive rate in bit/s, "
            f"got {shown}"
        )
    return value


def _racks(path: Path, node: yaml.Node) -> dict[str, tuple[str, ...]]:
    if not isinstance(node, yaml.MappingNode) or not node.value:
        raise ValueError(f"{path}:{_line(node)}: racks must map rack names to lists of nodes")
    racks: dict[str, tuple[str, ...]] = {}
    rack_of: dict[str, str] = {}
    for key, value in node.value:
        rack = str(key.value)
        if rack in racks:
            raise ValueError(f"{path}:{_line(key)}: rack {rack!r} is listed twice")
        if not isinstance(value, yaml.SequenceNode) or not value.value:
            raise ValueError(
                f"{path}:{_line(value)}: rack {rack!r} must be a non-empty list of node names"
            )
        names = []
        for item in value.value:
            if not isinstance(item, yaml.ScalarNode) or not str(item.value).strip():
                raise ValueError(f"{path}:{_line(item)}: rack {rack!r}: a node name must be text")
            name = str(item.value)
            if name in rack_of:
                raise ValueError(
                    f"{path}:{_line(item)}: node {name!r} of rack {rack!r} is already in rack "
                    f"{rack_of[name]!r}"
                )
            rack_of[name] = rack
            names.append(name)
        racks[rack] = tuple(names)
    return racks


def load_platform(path: str | Path) -> Platform:
    """Read PLATFORM.yaml; ValueError naming the file and line on any problem."""
    path = Path(path)
    text = _read(path)
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        line = mark.line + 1 if mark is not None else 1
        problem = getattr(err, "problem", None) or str(err)
        raise ValueError(f"{path}:{line}: not valid YAML: {problem}") from None
    if not isinstance(root, yaml.MappingNode):
        line = _line(root) if root is not None else 1
        raise ValueError(f"{path}:{line}: expected a mapping with keys {', '.join(PLATFORM_KEYS)}")
    found: dict[str, yaml.Node] = {}
    for key, value in root.value:
        name = str(key.value)
        if name not in PLATFORM_KEYS:
            raise ValueError(
                f"{path}:{_line(key)}: unknown key {name!r} (expected {', '.join(PLATFORM_KEYS)})"
            )
        if name in found:
            raise ValueError(f"{path}:{_line(key)}: key {name!r} is given twice")
        found[name] = value
    for name in PLATFORM_KEYS:
        if name not in found:
            raise ValueError(f"{path}:1: missing key {name!r}")
    return Platform(
        _racks(path, found["racks"]),
        _rate(path, "nic_bps", found["nic_bps"]),
        _rate(path, "backbone_bps", found["backbone_bps"]),
    )


def load_pattern(path: str | Path, platform: Platform) -> pd.DataFrame:
    """Read PATTERN.csv against ``platform``; ValueError naming the file and line."""
    path = Path(path)
    # Lines, blanks and numbers as p2p_concurrent reads them (csrc/common/nn_pattern.h).
    lines = [line.removesuffix("\r") for line in _read(path).split("\n")]
    expected = ",".join(PATTERN_COLUMNS)
    if not lines or [f.strip(" \t") for f in lines[0].split(",")] != list(PATTERN_COLUMNS):
        got = lines[0] if lines else ""
        raise ValueError(f"{path}:1: wrong header: expected {expected!r}, got {inputs.quoted(got)}")
    rows = []
    for lineno, line in enumerate(lines[1:], start=2):
        if not line.strip(" \t") or line.lstrip(" \t").startswith("#"):
            continue
        fields = [f.strip(" \t") for f in line.split(",")]
        if len(fields) != 3:
            raise ValueError(
                f"{path}:{lineno}: expected 3 fields {expected}, got {len(fields)}: "
                f"{inputs.quoted(line)}"
            )
        src, dst, size = fields
        for node in (src, dst):
            if node not in platform.rack_of:
                raise ValueError(
                    f"{path}:{lineno}: unknown node {node!r} (not in any rack of the platform)"
                )
        if src == dst:
            raise ValueError(f"{path}:{lineno}: src == dst ({src!r}): a link needs two nodes")
        nbytes = int(size) if size.isascii() and size.isdigit() else 0
        if not 0 < nbytes <= MAX_LINK_BYTES:
            raise ValueError(
                f"{path}:{lineno}: bad number for bytes: expected a whole number of 1 to 2^30, "
                f"got {inputs.quoted(size)}"
            )
        rows.append((src, dst, nbytes))
    if not rows:
        raise ValueError(f"{path}:{len(lines)}: no links after the header")
    return pd.DataFrame(rows, columns=list(PATTERN_COLUMNS))
