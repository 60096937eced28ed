"""``netnoise config docs``: the configuration reference, ``docs/config.md``,
and the configuration guide ``config/README.md``, written from the JSON schemas
(``workflow/schemas/*.schema.yaml``) and the config files themselves.

The schemas are the one place a key is described; the reference shows each key
once, with its description, unit, default and allowed values, so that the
manual cannot drift from what the workflow accepts. ``config/README.md`` is the
page the Snakemake workflow catalog shows as a workflow's configuration: what
each file of ``config/`` is (the first sentence of its own header comment),
what each section of the config sets (its schema's description) and where the
reference lists its keys. ``tests/core/test_config_docs.py`` fails when either
page is not the rendering of what it is written from.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from netnoise import config as netnoise_config
from netnoise.project import ROOT

#: The pages ``netnoise config docs`` writes, relative to the project.
REFERENCE = Path("docs/config.md")
GUIDE = Path("config/README.md")

#: Units named by the suffix of a key.
UNITS = {
    "mbit": "Mbit/s",
    "bytes": "bytes",
    "mb": "MB (10^6 bytes)",
    "s": "seconds",
    "seconds": "seconds",
    "ms": "milliseconds",
    "us": "microseconds",
    "hz": "Hz",
    "cycles": "CPU cycles",
    "pct": "%",
}
HEADER = (
    "# Configuration reference\n\n"
    "<!-- Written by `netnoise config docs` from workflow/schemas/*.schema.yaml: "
    "change a description in its schema, then run `netnoise config docs`. -->\n"
)
_INTERNAL_REF = re.compile(r"^#/\$defs/(\w+)$")


def unit(key: str) -> str | None:
    """The unit a key's name gives by its suffix (``timeout_s``: seconds), or None."""
    suffix = key.rsplit(".", 1)[-1].rsplit("_", 1)
    return UNITS.get(suffix[1]) if len(suffix) == 2 else None


def _resolved(node: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
    """``node`` with its ``$ref`` and ``allOf`` to the main schema's ``$defs`` merged in."""
    merged = dict(node)
    refs = [merged.pop("$ref")] if "$ref" in merged else []
    refs += [part["$ref"] for part in merged.pop("allOf", []) if "$ref" in part]
    for ref in refs:
        found = _INTERNAL_REF.match(ref.split("config.schema.yaml", 1)[-1])
        if found and found.group(1) in defs:
            merged = {**_resolved(defs[found.group(1)], defs), **merged}
    return merged


def _number(value: Any) -> str:
    # Thousands separators keep long numbers readable (and unlike a revision).
    if isinstance(value, bool) or not isinstance(value, int | float):
        return json.dumps(value)
    if isinstance(value, int) or value.is_integer():
        return f"{int(value):,}"
    return repr(value)


def _value(value: Any) -> str:
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {_value(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_value(v) for v in value) + "]"
    if isinstance(value, str):
        return json.dumps(value)
    return "null" if value is None else _number(value)


def _code(text: str) -> str:
    return f"`` {text} ``" if "`" in text else f"`{text}`"


def allowed(node: dict[str, Any]) -> str:
    """What values a key takes, in words: its values, type, range, pattern, list rules."""
    if "enum" in node:
        return "one of " + ", ".join(_code(_value(v)) for v in node["enum"])
    parts = []
    types = node.get("type")
    if types:
        parts.append(" or ".join(types) if isinstance(types, list) else types)
    bounds = [
        (word, node[name])
        for name, word in (
            ("minimum", ">="),
            ("exclusiveMinimum", ">"),
            ("maximum", "<="),
            ("exclusiveMaximum", "<"),
        )
        if name in node
    ]
    if bounds:
        parts.append(", ".join(f"{word} {_number(v)}" for word, v in bounds))
    if "pattern" in node:
        parts.append(f"matching {_code(node['pattern'])}")
    if "minLength" in node:
        parts.append(f"at least {node['minLength']} character(s)")
    if "minItems" in node or "maxItems" in node:
        low, high = node.get("minItems"), node.get("maxItems")
        parts.append(
            f"{low}-{high} items" if low is not None and high is not None
            else f"at least {low} item(s)" if low is not None else f"at most {high} items"
        )  # fmt: skip
    if node.get("uniqueItems"):
        parts.append("no item twice")
    return "; ".join(parts)


def keys(schema: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    """Every key of the config, depth first, as (dotted name, resolved schema node)."""
    defs = schema.get("$defs", {})

    def walk(node: dict[str, Any], prefix: str) -> Iterator[tuple[str, dict[str, Any]]]:
        for name, sub in node.get("properties", {}).items():
            key = f"{prefix}.{name}" if prefix else name
            sub = _resolved(sub, defs)
            yield key, sub
            yield from walk(sub, key)
            items = sub.get("items")
            if isinstance(items, dict):
                yield from walk(_resolved(items, defs), f"{key}[]")
            entries = sub.get("additionalProperties")
            if isinstance(entries, dict):
                yield from walk(_resolved(entries, defs), f"{key}.<name>")

    yield from walk(schema, "")


def _entry(key: str, node: dict[str, Any], defs: dict[str, Any]) -> str:
    # A section (a top-level key) is a chapter of the page, its keys entries in it.
    heading = "##" if "." not in key else "###"
    lines = [f"{heading} `{key}`", "", " ".join(str(node.get("description", "")).split()), ""]
    facts = []
    if unit(key):
        facts.append(f"- unit: {unit(key)}")
    if "default" in node:
        facts.append(f"- default: {_code(_value(node['default']))}")
    took = allowed(node)
    items = node.get("items")
    if isinstance(items, dict):
        each = allowed(_resolved(items, defs))
        if each:
            took = f"{took}; each item {each}" if took else f"each item {each}"
    if took:
        facts.append(f"- allowed: {took}")
    return "\n".join(lines + facts) + "\n"


def render(schema: dict[str, Any] | None = None) -> str:
    """The text of ``docs/config.md``."""
    schema = schema if schema is not None else netnoise_config.load_schema()
    defs = schema.get("$defs", {})
    parts = [HEADER, str(schema.get("description", "")).strip() + "\n"]
    parts += [_entry(key, node, defs) for key, node in keys(schema)]
    return "\n".join(parts)


GUIDE_HEADER = (
    "# Configuration\n\n"
    "<!-- Written by `netnoise config docs` from workflow/schemas/*.schema.yaml and the "
    "header comment of each config file: change those, then run `netnoise config docs`. -->\n"
)
#: How the guide names each way of choosing a configuration.
GUIDE_RUNS = """\
## Choosing a configuration

```sh
snakemake --cores 2                        # the quick study, config/config.yaml
snakemake --cores 2 --configfile config/config.yaml config/testbed-bundle.yaml
snakemake --cores 1 --directory .test      # the default test slice, .test/config/config.yaml
snakemake --profile slurm --configfile config/paper.yaml   # Slurm (make cluster-profile)
```

Files given with `--configfile` are merged over `config/config.yaml` in turn, key by
key (a list replaces a list). A config that breaks a rule of its schema stops the
workflow before any job runs, naming each bad key, its value and what is allowed;
`netnoise config check FILE --show` prints a file with its defaults filled in. The
testbed (the default platform) needs root; `platform.kind: localhost` runs without.
"""


def header_summary(text: str) -> str:
    """The first sentence of a config file's header comment: its leading ``#``
    lines up to the first indented one (a command line), up to its first full
    stop, without a closing colon."""
    words = []
    for line in text.splitlines():
        if not line.startswith("#"):
            break
        body = line[1:]
        if body.startswith("   ") or not body.strip():
            break
        words.append(body.strip())
    summary = " ".join(words)
    end = re.search(r"\.(\s|$)", summary)
    summary = summary[: end.start()] if end else summary
    return summary.rstrip(" :") + "."


def _anchor(key: str) -> str:
    """GitHub's anchor of the reference's heading of a top-level key."""
    return re.sub(r"[^a-z0-9_ -]", "", key.lower()).replace(" ", "-")


def render_guide(schema: dict[str, Any] | None = None, root: Path = ROOT) -> str:
    """The text of ``config/README.md``: the config files of ``root/config``, the
    sections of ``schema`` and where :func:`render`'s reference lists their keys."""
    schema = schema if schema is not None else netnoise_config.load_schema()
    defs = schema.get("$defs", {})
    reference = f"../{REFERENCE.as_posix()}"
    parts = [
        GUIDE_HEADER,
        "The workflow reads `config/config.yaml` and any file given with `--configfile`. "
        "Every key is described once, in its JSON schema (`workflow/schemas/`): "
        f"[{REFERENCE.as_posix()}]({reference}) lists every key with its unit, default "
        "and allowed values.\n",
        GUIDE_RUNS,
        "## The config files\n",
        "| file | what it is |\n| --- | --- |",
    ]
    files = sorted((root / "config").glob("*.yaml"), key=lambda p: (p.name != "config.yaml", p))
    parts += [f"| `config/{p.name}` | {header_summary(p.read_text())} |" for p in files]
    parts += ["", "## The sections of a config\n", "| section | what it sets |", "| --- | --- |"]
    for key, node in schema.get("properties", {}).items():
        described = " ".join(str(_resolved(node, defs).get("description", "")).split())
        parts.append(f"| [`{key}`]({reference}#{_anchor(key)}) | {described} |")
    return "\n".join(parts) + "\n"
