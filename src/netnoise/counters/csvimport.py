"""Counters a site already collects, from CSV with columns time_s,device,port,counter,value
(and optionally role)."""

from __future__ import annotations

import os

import pandas as pd

from netnoise.counters import COLUMNS

REQUIRED = ["time_s", "device", "port", "counter", "value"]


def read(path: str | os.PathLike[str], default_role: str = "node_nic") -> pd.DataFrame:
    data = pd.read_csv(path)
    missing = [c for c in REQUIRED if c not in data.columns]
    if missing:
        raise ValueError(
            f"{path}: missing column(s) {', '.join(missing)}; need {', '.join(REQUIRED)}"
        )
    for column in ("time_s", "value"):
        numeric = pd.to_numeric(data[column], errors="coerce")
        bad = numeric.isna() & data[column].notna()
        if bad.any():
            line = int(bad.idxmax()) + 2  # header is line 1
            raise ValueError(
                f"{path}:{line}: {column} is not a number: {data[column][bad.idxmax()]!r}"
            )
        data[column] = numeric
    if "role" not in data.columns:
        data["role"] = default_role
    return data[COLUMNS]
