"""The validated config, typed: one frozen dataclass per section.

:func:`netnoise.config.validate` checks a config and fills in its defaults; then
:meth:`Settings.of` builds the shared sections once, and
:meth:`Settings.study` a study's (the type its ``STUDY`` names). Each key is
described once, in the JSON schema (``workflow/schemas``); a dataclass here
gives the key its type and nothing else, and a test holds the two together.

A study's runs see the platform with the study's own layout, simulated network
and CPU limits over it: :meth:`Settings.effective` resolves that overlay, the
one place it is resolved; what a study overlays, its section type says
(:meth:`StudySection.overlay`).

A section keeps the mapping it was built from (:meth:`Section.as_config`): rule
params and provenance records carry that mapping, so they read as before.
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import types
import typing
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, TypeVar

S = TypeVar("S", bound="Section")


class SettingsError(KeyError):
    """A config mapping lacks a key its section type has: it was not validated."""


@dataclass(frozen=True)
class Section:
    """A config section, typed (:func:`section` builds one from its mapping)."""

    def as_config(self) -> dict[str, Any]:
        """The section as the config gives it: the mapping it was built from (key
        order included), or, for one made in code, its fields."""
        return self.__dict__.get("_config") or dataclasses.asdict(self)


@functools.cache
def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def _section_type(hint: Any) -> type[Section] | None:
    """The section type of a field's type (``X`` or ``X | None``), if it has one."""
    if isinstance(hint, type) and issubclass(hint, Section):
        return hint
    if isinstance(hint, types.UnionType) or typing.get_origin(hint) is typing.Union:
        inner = [a for a in typing.get_args(hint) if a is not type(None)]
        return _section_type(inner[0]) if len(inner) == 1 else None
    return None


def _value(hint: Any, value: Any, where: str) -> Any:
    kind = _section_type(hint)
    if kind is not None and value is not None:
        return section(kind, value, where)
    if typing.get_origin(hint) is dict:
        _, item = typing.get_args(hint)
        kind = _section_type(item)
        if kind is not None:
            return {name: section(kind, v, f"{where}.{name}") for name, v in value.items()}
    return value


def section(cls: type[S], mapping: Mapping[str, Any], where: str = "config") -> S:
    """The section ``cls`` of a validated ``mapping`` (``where`` names it in errors):
    subsections become their types, every other value is the mapping's own. A key
    the schema gives no default may be absent where its field has one."""
    values = {}
    for field in dataclasses.fields(cls):
        if field.name not in mapping and field.default is not dataclasses.MISSING:
            continue  # a key the schema leaves out unless given
        try:
            value = mapping[field.name]
        except KeyError:
            raise SettingsError(
                f"{where}.{field.name} is missing: build settings from a validated config "
                "(netnoise.config.validate fills in every default)"
            ) from None
        values[field.name] = _value(_hints(cls)[field.name], value, f"{where}.{field.name}")
    built = cls(**values)
    object.__setattr__(built, "_config", mapping)
    return built


def overlaid(platform: PlatformSettings, overlay: Mapping[str, Any]) -> PlatformSettings:
    """``platform`` with what ``overlay`` names replaced, the rest kept: the values
    of a subsection it gives a mapping (e.g. ``{"testbed": {"racks": 1}}``), any
    other key whole."""
    config = copy.deepcopy(platform.as_config())
    for name, values in overlay.items():
        if isinstance(values, Mapping):
            config[name] = {**config.get(name, {}), **values}
        else:
            config[name] = values
    return section(PlatformSettings, config, "platform")


def kept(overlay: Section | None) -> dict[str, Any]:
    """The values an overlay section sets (None keeps the platform's)."""
    if overlay is None:
        return {}
    return {name: value for name, value in overlay.as_config().items() if value is not None}


# ---------------------------------------------------------------- the platform


@dataclass(frozen=True)
class WaitSettings(Section):
    mpi: str | None
    probe: str | None


@dataclass(frozen=True)
class CpuSettings(Section):
    max_runnable: float | None
    attempts: int
    tolerated_runnable: float | None
    quiet_wait_s: float


@dataclass(frozen=True)
class TestbedSettings(Section):
    __test__ = False  # not a pytest test class despite the name
    prefix: str
    nodes: int
    racks: int
    nic_mbit: float
    backbone_mbit: float
    burst_bytes: int
    queue_bytes: int
    mtu_bytes: int
    tcp_congestion: str
    tcp_rto_min_ms: float | None
    socket_buffer_bytes: int | None
    backbone_arbitration: str
    btl_tcp_links: int
    cores: str
    keep_up: bool

    def rack_interleaved_nodes(self, count: int) -> list[str]:
        """The first ``count`` nodes taken from the racks in turn (rack 1's first,
        rack 2's first, ...): an allocation that spans every rack, so its traffic
        crosses the backbone."""
        per_rack = -(-self.nodes // self.racks)
        order = sorted(range(self.nodes), key=lambda i: (i % per_rack, i // per_rack))
        return [f"{self.prefix}-n{i + 1:02d}" for i in order[:count]]


@dataclass(frozen=True)
class SimgridSettings(Section):
    topology: str
    link_gbit: float
    latency_us: float
    network_model: str
    smpirun: str
    smpicc: str


@dataclass(frozen=True)
class SlurmSettings(Section):
    launcher: str
    nodes: int | None
    tasks_per_node: int | None
    exclusive: bool
    switches: int | None
    srun_args: list[str]
    fabric: str
    tcp_congestion: str


@dataclass(frozen=True)
class PlatformSettings(Section):
    kind: str
    mpirun: str
    mpirun_args: list[str]
    timeout_s: float
    wait: WaitSettings
    cpu: CpuSettings
    testbed: TestbedSettings
    simgrid: SimgridSettings
    slurm: SlurmSettings

    @classmethod
    def of(cls, mapping: Mapping[str, Any]) -> PlatformSettings:
        """The validated ``platform`` section, typed (rule params carry the mapping)."""
        return section(cls, mapping, "platform")


# ---------------------------------------------------------------- shared sections


@dataclass(frozen=True)
class BuildSettings(Section):
    mpicc: str
    cflags: str


@dataclass(frozen=True)
class FigureOfMerit(Section):
    pattern: str
    unit: str


@dataclass(frozen=True)
class ApplicationSettings(Section):
    """A csrc ``program`` with its ``args``, or a real application built from
    ``source`` by ``build`` into ``binary``."""

    version: str
    program: str | None = None
    args: list[str] | None = None
    source: str | None = None
    build: str | None = None
    binary: str | None = None
    figure_of_merit: FigureOfMerit | None = None


@dataclass(frozen=True)
class BaselineSettings(Section):
    ranks: int
    sizes: list[int]
    warmup: int
    iterations: int
    repetitions: int


# ---------------------------------------------------------------- studies


@dataclass(frozen=True)
class StudySimgrid(Section):
    """A study's simulated network over ``platform.simgrid`` (None keeps it)."""

    topology: str | None
    link_gbit: float | None
    latency_us: float | None


@dataclass(frozen=True)
class StudyTestbed(Section):
    """A study's testbed layout over ``platform.testbed`` (None keeps it)."""

    __test__ = False  # not a pytest test class despite the name
    nodes: int | None
    racks: int | None
    nic_mbit: float | None
    backbone_mbit: float | None
    queue_bytes: int | None
    mtu_bytes: int | None
    tcp_rto_min_ms: float | None


@dataclass(frozen=True)
class StudyCpu(Section):
    """A study's CPU limits over ``platform.cpu`` (None keeps them)."""

    tolerated_runnable: float | None
    attempts: int | None


@dataclass(frozen=True)
class StudySection(Section):
    """A study's config section (the ``<key>`` section of the config). ``KEY``
    names it; ``testbed``, ``simgrid`` and ``cpu`` subsections, where the type
    has them, overlay the platform's (:meth:`overlay`)."""

    KEY: ClassVar[str]

    def overlay(self, platform: PlatformSettings, **choices: Any) -> dict[str, dict[str, Any]]:
        """What the study's runs change of ``platform``, by its subsection: its own
        testbed layout, simulated network and CPU limits, where it sets them.
        ``choices``: what one run of the study chooses itself, for a study that
        has such (none here)."""
        if choices:
            raise TypeError(f"{self.KEY} runs choose nothing: {', '.join(choices)}")
        return {
            name: kept(getattr(self, name, None))
            for name in ("testbed", "simgrid", "cpu")
            if hasattr(self, name)
        }


# ---------------------------------------------------------------- the whole config


@dataclass(frozen=True)
class Settings(Section):
    """The shared sections of a validated config; a study's on request."""

    platform: PlatformSettings
    build: BuildSettings
    baseline: BaselineSettings
    applications: dict[str, ApplicationSettings]

    @classmethod
    def of(cls, config: Mapping[str, Any]) -> Settings:
        """The settings of a validated ``config``."""
        return section(cls, config)

    def study(self, kind: type[S]) -> S:
        """The section of the study whose section type is ``kind``."""
        return section(kind, self.as_config()[kind.KEY], kind.KEY)

    def effective(self, study: StudySection, **choices: Any) -> PlatformSettings:
        """The platform ``study``'s runs see: the platform with the study's
        overlay (:meth:`StudySection.overlay`; ``choices``: what one of its runs
        chooses) over it."""
        return overlaid(self.platform, study.overlay(self.platform, **choices))
