"""A study's claims table: one row per claim of its paper, the value measured here,
the criterion it is judged by and whether it holds."""

from __future__ import annotations

import numpy as np

RELATIONS = {">=": np.greater_equal, "<=": np.less_equal, "<": np.less, ">": np.greater}


def holds(value: float, relation: str, target: float) -> bool:
    """Whether ``value relation target``; an inclusive bound also holds for a value
    that is the target up to floating-point rounding (a Spearman ρ over four points
    with one swap is 0.8, computed as 0.7999999999999999)."""
    if relation in (">=", "<=") and np.isclose(value, target, rtol=1e-9, atol=0.0):
        return True
    return bool(RELATIONS[relation](value, target))


def claim(
    claim: str,
    scope: str,
    value: float,
    relation: str = "",
    target: float = np.nan,
    paper: str = "",
    detail: str = "",
    *,
    unit: str | None = None,
) -> dict:
    """One row; ``meets`` is None where no criterion applies (no relation) or
    nothing was measured (``value`` is nan). A table whose claims have units
    (``unit`` given) has a unit column after the value."""
    meets = holds(value, relation, target) if relation and not np.isnan(value) else None
    units = {} if unit is None else {"unit": unit}
    return {
        "claim": claim,
        "scope": scope,
        "value": value,
        **units,
        "relation": relation,
        "target": target,
        "meets": meets,
        "paper": paper,
        "detail": detail,
    }
