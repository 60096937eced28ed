"""Synthetic inputs of seed 004's tests whose answers are known."""

from __future__ import annotations

import numpy as np
import pandas as pd

from netnoise.io import write_benchmark

#: The paper's Table 4 (resources/reference/latency_variation/table4.csv, shortened).
PUBLISHED = pd.DataFrame(
    {
        "application": ["FT", "CG", "IS", "MG", "LU"],
        "r_mean": [0.70, 0.73, 0.76, 0.73, 0.76],
        "r_std": [0.89, 0.91, 0.93, 0.95, 0.97],
        "significant_p": [7.89e-33, 4.94e-39, 8.89e-50, 1.31e-93, 5.24e-148],
    }
)


def write_result(path, columns: str, rows: list[str], tool: str = "pingpong") -> str:
    """A result file in the benchmarks' format, its rows as written."""
    meta = {
        "tool": tool,
        "version": "0",
        "git_sha": "x",
        "argv": tool,
        "seed": "1",
        "ranks": "2",
        "hosts": "a,b",
        "date": "2026-01-01T00:00:00Z",
    }
    table = pd.DataFrame([r.split(",") for r in rows], columns=columns.split(","))
    write_benchmark(path, meta, table)
    return str(path)


def points_frame() -> pd.DataFrame:
    """Injected distributions at levels 20 and 70 (mean 50 and 200 µs), and zero."""
    rows = [
        {"level": level, "distribution": dist, "table_mean_us": mean, "table_std_us": std}
        for level, mean in ((20, 50.0), (70, 200.0))
        for dist, std in (("uniform", 0.0), ("lognorm", mean), ("lognorm_scale25", 4 * mean))
    ]
    rows.append({"level": None, "distribution": "zero", "table_mean_us": 0.0, "table_std_us": 0.0})
    return pd.DataFrame(rows)


def std_grid(points: pd.DataFrame, stds_us=(0.0, 100.0, 400.0)) -> pd.DataFrame:
    """``points`` and, at every injected level, one distribution per standard deviation
    of ``stds_us`` at the level's mean, named ``std<µs>`` as the fitted grid's are."""
    levels = points[points["distribution"] == "uniform"]
    grid = [
        {
            "level": row.level,
            "distribution": f"std{std:g}",
            "table_mean_us": row.table_mean_us,
            "table_std_us": std,
        }
        for row in levels.itertuples()
        for std in stds_us
    ]
    return pd.concat([points, pd.DataFrame(grid)], ignore_index=True)


def runtimes_frame(seed: int = 0, points: pd.DataFrame | None = None) -> pd.DataFrame:
    """Runtimes that follow the injected std, not the mean, plus the zero runs, at
    ``points`` (default :func:`points_frame`)."""
    rng = np.random.default_rng(seed)
    points = points_frame() if points is None else points
    rows = []
    for app, base in (("lu_wavefront", 1.0), ("cg_solver", 2.0)):
        for point in points.itertuples():
            for run in range(4):
                runtime = base * (1 + 0.002 * point.table_std_us) + rng.normal(0, 0.01)
                rows.append(
                    {
                        "application": app,
                        "level": point.level,
                        "distribution": point.distribution,
                        "run": run,
                        "runtime_s": runtime,
                        "comm_s": runtime / 2,
                    }
                )
    return pd.DataFrame(rows)


def reports_for(
    runtimes: pd.DataFrame,
    realised_std: dict[tuple, float] | None = None,
    points: pd.DataFrame | None = None,
):
    """Injector reports of every application run of ``runtimes``: two ranks per point
    of ``points`` (default :func:`points_frame`), drawing the table's mean, and its
    std or the one ``realised_std`` gives for (level, distribution); both ranks draw
    the same mean and std, so the pooled values are theirs."""
    points = (points_frame() if points is None else points).set_index(["level", "distribution"])
    rows = []
    for (app, level, dist), _ in runtimes.groupby(
        ["application", "level", "distribution"], dropna=False
    ):
        key = (None if pd.isna(level) else level, dist)
        mean = points.loc[key, "table_mean_us"] if dist != "zero" else 0.0
        std = (realised_std or {}).get(
            key, points.loc[key, "table_std_us"] if dist != "zero" else 0.0
        )
        for rank in range(2):
            rows.append(
                {
                    "experiment": app,
                    "level": key[0],
                    "distribution": dist,
                    "rank": rank,
                    "delays": 1000,
                    "table_mean_ns": 1000 * mean,
                    "drawn_total_ns": 1000 * 1000 * mean,
                    "drawn_std_ns": 1000 * std,
                    "total_ns": 1000 * 1000 * mean,
                    "std_ns": 1000 * std,
                    "late_delays": 0,
                }
            )
    return pd.DataFrame(rows)
