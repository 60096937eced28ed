"""The wait policies of netnoise's MPI programs (csrc/common/nn_wait.h).

A policy is ``mode[:spin_us[:sleep_us[:sleep_max_us]]]``: how a rank waits in a
blocking MPI call (``mpi``, NN_WAIT) and in the exchanges a program times to the
microsecond (``probe``, NN_PROBE_WAIT). The ranks read them from their
environment and, on bad text, only warn and keep their default, so a policy is
checked here, before anything runs.
"""

from __future__ import annotations

import re

MODES = ("spin", "sleep", "hybrid")
SPEC = "mode[:spin_us[:sleep_us[:sleep_max_us]]] with mode spin, sleep or hybrid"
#: The programs' own policies (NN_WAIT_DEFAULT, NN_PROBE_WAIT_DEFAULT), whose
#: fields a policy leaves out are kept.
DEFAULTS = {"mpi": "hybrid:50:20:1000", "probe": "hybrid:200:10:100"}
VARIABLES = {"mpi": "NN_WAIT", "probe": "NN_PROBE_WAIT"}
_MICROSECONDS = re.compile(r"[0-9]+(\.[0-9]+)?")
_LONGEST_US = 1e7


def problem(policy: str, default: str) -> str | None:
    """What is wrong with ``policy`` (None: nothing), read over ``default`` as the
    programs do: each field it leaves out keeps the default's."""
    mode, *words = policy.split(":")
    if mode not in MODES or len(words) > 3:
        return f"{policy!r} is not {SPEC}"
    fields = [float(word) for word in default.split(":")[1:]]
    for index, word in enumerate(words):
        if not _MICROSECONDS.fullmatch(word) or float(word) > _LONGEST_US:
            return f"{policy!r}: {word!r} is not a time in µs from 0 to {_LONGEST_US:.0f}"
        fields[index] = float(word)
    _, sleep_us, sleep_max_us = fields
    if sleep_us < 1:
        return f"{policy!r}: the first sleep ({sleep_us:g} µs) is shorter than 1 µs"
    if sleep_max_us < sleep_us:
        return (
            f"{policy!r}: the longest sleep ({sleep_max_us:g} µs) is shorter than the "
            f"first ({sleep_us:g} µs)"
        )
    return None


def problems(policies: dict[str, str | None], key: str) -> list[str]:
    """The problems of a ``{"mpi": ..., "probe": ...}`` section named ``key``."""
    found = []
    for name, policy in policies.items():
        if policy is not None and (why := problem(policy, DEFAULTS[name])):
            found.append(f"{key}.{name}: {why}")
    return found


def environment(policies: dict[str, str | None]) -> dict[str, str]:
    """The rank variables of the policies given (None: the program's default)."""
    return {VARIABLES[name]: policy for name, policy in policies.items() if policy}
