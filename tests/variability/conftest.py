"""Seed 002 fixtures: synthetic runs whose truth is known, the model trained on them,
and the tables of the study's analysis (trained once for every test file)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from netnoise.config import validate
from netnoise.studies.variability import analysis as study
from netnoise.studies.variability import model as v
from netnoise.studies.variability.synthetic import synthetic_table
from tests.conftest import REPO

REFERENCE = REPO / "resources" / "reference" / "variability"


def counter_rows(t: float, entries: list[tuple[str, str, str, str, float]]) -> list[dict]:
    """Tidy counter rows at time ``t`` of (device, port, role, counter, value) entries."""
    return [
        {"time_s": t, "device": d, "port": p, "role": r, "counter": c, "value": val}
        for d, p, r, c, val in entries
    ]


GRID = {"C": [10.0, 100.0], "gamma": [0.03, 0.3]}
SIMILAR = {
    "alpha": {"base": 560.0, "sens": 0.15, "rate": 2.0e8, "stall_scale": 1.0},
    "beta": {"base": 1500.0, "sens": 0.08, "rate": 6.0e7, "stall_scale": 1.0},
    "gamma": {"base": 430.0, "sens": 0.04, "rate": 1.2e8, "stall_scale": 1.0},
    "delta": {"base": 680.0, "sens": 0.10, "rate": 3.0e8, "stall_scale": 1.0},
}
INFORMATIVE = {"stall_ratio_p75", "net_to_nic_ratio", "network_stalls_p95"}


@pytest.fixture(scope="session")
def clean():
    """Four applications that see congestion alike: a generic model fits them."""
    return synthetic_table(runs_per_group=25, applications=SIMILAR, seed=1)


@pytest.fixture(scope="session")
def mixed():
    """The four plus 'odd', whose stall ratio reads three times higher."""
    return synthetic_table(runs_per_group=20, seed=1)


@pytest.fixture(scope="session")
def model(mixed):
    return v.train(mixed, v.Fitting(grid=GRID, n_estimators=50))


@pytest.fixture(scope="session")
def fresh():
    return synthetic_table(runs_per_group=20, seed=7)


def synthetic_runs(seed: int = 1, runs: int = 30) -> pd.DataFrame:
    """A tidy table whose z truth is known (synthetic_table), with the campaign columns:
    ``runs`` steady production runs per group, 12 bursty ones of the same kind (a
    generator of their own), and two controlled runs of each group: dedicated at the
    fastest and maximal beyond the slowest, each repeating its group's conditions with
    1 % runtime noise."""
    apps = {
        "cg_solver": {"base": 560.0, "sens": 0.15, "rate": 2.0e8, "stall_scale": 1.0},
        "halo3d": {"base": 1500.0, "sens": 0.08, "rate": 6.0e7, "stall_scale": 1.0},
        "fft_transpose": {"base": 680.0, "sens": 0.10, "rate": 3.0e8, "stall_scale": 1.0},
    }
    table = synthetic_table(runs_per_group=runs, applications=apps, node_counts=(2, 4), seed=seed)
    table["program"] = table["application"]
    table["campaign"] = "production"
    table["index"] = table.groupby(["application", "nodes"]).cumcount()
    table["stall_ratio_mean"] = table["stall_ratio_p75"]
    bursty = synthetic_table(
        runs_per_group=12, applications=apps, node_counts=(2, 4), seed=seed + 1
    )
    bursty["program"] = bursty["application"]
    bursty["campaign"] = "bursty"
    bursty["index"] = bursty.groupby(["application", "nodes"]).cumcount()
    bursty["stall_ratio_mean"] = bursty["stall_ratio_p75"]
    controlled = []
    noise = np.random.default_rng([seed, 2])
    for campaign, pick in (("dedicated", "idxmin"), ("maximal", "idxmax")):
        idx = table.groupby(["application", "nodes"])["g"].agg(pick)
        rows = pd.concat([table.loc[idx]] * 2).sort_index(kind="stable")
        rows["campaign"] = campaign
        rows["index"] = rows.groupby(["application", "nodes"]).cumcount()
        rows["runtime_s"] *= 0.97 if campaign == "dedicated" else 1.1
        rows["runtime_s"] *= 1 + 0.01 * noise.standard_normal(len(rows))
        controlled.append(rows)
    return pd.concat([table, bursty, *controlled], ignore_index=True)


SETTINGS = study.ModelSettings.from_config(
    validate({})["variability"]["model"]
    | {
        "cv": 5,
        "grid": {"C": [10.0, 100.0], "gamma": [0.03, 0.3]},
        "trees": 50,
        "repeats": 2,
        "inner_cv": 3,
        "added": [0, 10, 20],
        "unseen_application": "cg_solver",
        "sparse_application": "halo3d",
        "use_case": {"applications": ["cg_solver", "fft_transpose"], "nodes": 4},
    },
    seed=0,
)


@pytest.fixture(scope="session")
def campaign_table():
    return synthetic_runs()


@pytest.fixture(scope="session")
def campaign_model(campaign_table):
    return study.train(campaign_table, SETTINGS)


@pytest.fixture(scope="session")
def evaluated(campaign_table, campaign_model):
    return study.evaluate(
        campaign_table,
        campaign_model,
        SETTINGS,
        claims=pd.read_csv(REFERENCE / "claims.csv"),
        features=pd.read_csv(REFERENCE / "features.csv"),
        unseen=pd.read_csv(REFERENCE / "table5.csv"),
        use_cases=pd.read_csv(REFERENCE / "table6.csv"),
    )
