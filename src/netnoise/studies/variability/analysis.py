"""Seed 002's analysis: the tidy table of the campaign's runs and the tables of
Sec. III-VI, with the paper's numbers beside ours.

The campaign itself is :mod:`netnoise.studies.variability.campaign`, a run's metrics
:mod:`netnoise.studies.variability.metrics`; the model is
:mod:`netnoise.studies.variability.model` and its evaluations
:mod:`netnoise.studies.variability.evaluation`.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from netnoise.studies.variability import ceilings, evaluation, nested_cv
from netnoise.studies.variability import features as model_features
from netnoise.studies.variability import model as variability
from netnoise.studies.variability.campaign import (
    CAMPAIGNS,
    CONTROLLED_CAMPAIGNS,
    PRODUCTION_GENERATORS,
)
from netnoise.studies.variability.metrics import RUN_FILE, STATS, metrics_of

# --------------------------------------------------------------------------- tidy table

DRAW_COLUMNS = (
    "campaign",
    "index",
    "seed",
    "generator",
    "loaded_nodes",
    "load",
    "messages",
    "sleep_cycles",
    "racks_spanned",
)
# What a run's conditions are (the conditions-only model's inputs): its draw, nodes
# and application.
CONDITIONS = (
    *(c for c in DRAW_COLUMNS if c not in ("campaign", "index", "seed")),
    "nodes",
    "application",
)


def run_dirs(root: str | os.PathLike[str]) -> list[Path]:
    """Every complete run directory (one holding run.json) below ``root``, sorted."""
    return sorted(p.parent for p in Path(root).rglob(RUN_FILE))


def tidy_runs(dirs: Iterable[str | os.PathLike[str]]) -> pd.DataFrame:
    """One row per run: its draw and its Table III metrics (the model's only input)."""
    rows = []
    for path in dirs:
        info = json.loads((Path(path) / RUN_FILE).read_text())
        drawn = info.get("draw", {})
        params = drawn.get("parameters", {})
        rows.append(
            {
                "program": info.get("program"),
                "campaign": info.get("campaign"),
                "index": info.get("index"),
                "seed": drawn.get("seed"),
                "generator": drawn.get("generator"),
                "loaded_nodes": len(drawn.get("loaded_nodes", [])),
                "load": params.get("load", math.nan),
                "messages": params.get("messages", math.nan),
                "sleep_cycles": params.get("sleep_cycles", math.nan),
                "racks_spanned": info.get("racks_spanned"),
                **metrics_of(path),
                "run_dir": str(path),
            }
        )
    if not rows:
        raise ValueError("no run directories given")
    table = pd.DataFrame(rows)
    first = ["application", "program", "nodes", "runtime_s", *DRAW_COLUMNS]
    table = table[first + [c for c in table.columns if c not in first]]
    order = ["campaign", "application", "nodes", "index"]
    return table.sort_values(order, kind="stable").reset_index(drop=True)


# --------------------------------------------------------------------------- analysis

# The proxies of csrc/apps that stand for the applications of seed 002 (Table I;
# csrc/apps/README.md), by program: the published rows shown beside ours.
PAPER_APPLICATIONS = {
    "cg_solver": "MILC",  # CG on a 4-D lattice: heavy point-to-point, light allreduce
    "halo3d": "Nekbone",  # spectral-element halo exchange, light collectives
    "multigrid": "Nek5000",  # its pressure solve: multigrid halos, small allreduces
    "fft_transpose": "Qbox",  # plane-wave FFT transposes: communication-bound (1:2)
    "fft_overlap": "Rayleigh",  # large-message all-to-all between spectral work
    "monte_carlo": "LAMMPS",  # the closest: light point-to-point, a reduction
}
# Table VI compares MILC with MILC Reorder: the first and second use-case application.
USE_CASE_PAPER = ("MILC", "MILC Reorder")

# Table III: metric, the paper's definition, the testbed counters, the key of run_metrics.
METRICS = (
    (
        "processor tile flits per second",
        "application communication intensity",
        "tx_bytes of each job NIC per second of runtime",
        "injection_rate",
    ),
    (
        "network tile stall-to-flit ratio",
        "relative congestion on network",
        "{stalls} per transmitted {unit} of each network port",
        "stall_ratio",
    ),
    (
        "network tile to processor tile flit ratio",
        "communication on the global network versus the application's injection",
        "mean bytes per network port / mean bytes per job NIC",
        "net_to_nic_ratio",
    ),
    (
        "network stalls",
        "total stalls; a high value indicates extreme congestion events",
        "{stalls} of each network port (switch ports, uplinks)",
        "network_stalls",
    ),
    (
        "network flits",
        "total traffic: how busy the network is",
        "bytes each network port sent",
        "network_bytes",
    ),
    ("nodes", "number of nodes used for a run", "the job's nodes", "nodes"),
)
# How Table III names the stall counter the runs were read with (metrics.STALL_COUNTERS).
STALL_NAMES = {
    "qdisc_stall_ns": "time the queue held packets (qdisc_stall_ns)",
    "xmit_wait_ticks": "PortXmitWait ticks",
    "qdisc_overlimits": "qdisc overlimits",
    "saturated_ns": "time the simulated link ran at its full rate (saturated_ns)",
}
# Table IV: the paper's three metrics, as columns of the tidy table.
CORRELATED = {
    "r_net_to_nic_ratio": "net_to_nic_ratio",
    "r_stall_ratio": "stall_ratio_mean",
    "r_network_stalls_p95": "network_stalls_p95",
}
PAPER_COLUMNS = ("mean_s", "std_s", "max_s", "cv", "max_over_min")
# The model's features that count congestion (the rest count traffic), and the
# queue occupancy the testbed samples besides: the candidate congestion counters.
STALL_FEATURES = ("stall_ratio_p75", "network_stalls_p95", "network_stalls_mean")
BACKLOG_FEATURES = ("network_backlog_bytes_mean", "network_backlog_bytes_p95")
TRAFFIC_FEATURES = tuple(f for f in model_features.FEATURES if f not in STALL_FEATURES)
CONGESTION_FEATURE_SETS = {
    "the paper's seven": model_features.FEATURES,
    "traffic alone": TRAFFIC_FEATURES,
    "traffic and queue backlog": TRAFFIC_FEATURES + BACKLOG_FEATURES,
    "the paper's seven and queue backlog": model_features.FEATURES + BACKLOG_FEATURES,
}
# The paper's figures model_evaluation sets beside ours.
PAPER_EVALUATION_CLAIMS = ("cv_r2", "train_fraction_0.75", "coverage", "containment")


def production(table: pd.DataFrame, campaign: str = "production") -> pd.DataFrame:
    """The runs of a production campaign (the steady one the model is trained on),
    indexed 0..n-1 (the index the trained model's evaluation uses)."""
    return table[table["campaign"] == campaign].reset_index(drop=True)


def _repeated_cv(
    runs: pd.DataFrame, X: pd.DataFrame, y: pd.Series, settings: ModelSettings, n_jobs: int
) -> pd.DataFrame:
    """:func:`netnoise.studies.variability.nested_cv.repeated_cv` of the features
    ``X`` and target ``y`` of ``runs``, with their groups and drawn conditions."""
    measured = runs.loc[X.index]
    groups = measured["application"].astype(str) + " x " + measured["nodes"].astype(str)
    return nested_cv.repeated_cv(
        X,
        y,
        groups,
        nested_cv.condition_matrix(measured, CONDITIONS),
        settings.fitting(),
        repeats=settings.repeats,
        n_jobs=n_jobs,
    )


def paper_application(programs: pd.Series) -> pd.Series:
    return programs.map(PAPER_APPLICATIONS)


def runtime_statistics(table: pd.DataFrame, published: pd.DataFrame) -> pd.DataFrame:
    """Table II per application and node count (sample σ), with the paper's 256-node row
    of the application each proxy stands for."""
    grouped = production(table).groupby(["application", "program", "nodes"])["runtime_s"]
    stats = grouped.agg(runs="size", mean_s="mean", std_s="std", max_s="max", min_s="min")
    stats = stats.reset_index()
    stats["cv"] = stats["std_s"] / stats["mean_s"]
    stats["max_over_min"] = stats["max_s"] / stats["min_s"]
    stats["paper_application"] = paper_application(stats["program"])
    paper = published.set_index("application")
    stats["paper_nodes"] = stats["paper_application"].map(paper["nodes"])
    for column in PAPER_COLUMNS:
        stats[f"paper_{column}"] = stats["paper_application"].map(paper[column])
    return stats


def correlations(table: pd.DataFrame, published: pd.DataFrame) -> pd.DataFrame:
    """Table IV: Pearson r between runtime and three metrics, per application and node count."""
    rows = []
    for (app, program, nodes), runs in production(table).groupby(
        ["application", "program", "nodes"]
    ):
        row = {"application": app, "program": program, "nodes": nodes, "runs": len(runs)}
        for name, column in CORRELATED.items():
            row[name] = float(runs["runtime_s"].corr(runs[column]))
        rows.append(row)
    out = pd.DataFrame(rows)
    out["paper_application"] = paper_application(out["program"])
    paper = published.set_index("application")
    for name in CORRELATED:
        out[f"paper_{name}"] = out["paper_application"].map(paper[name])
    return out


def metrics_table(table: pd.DataFrame) -> pd.DataFrame:
    """Table III: each metric, its definition, our counters, and its median per campaign
    (the mean over ports and intervals; its variance and percentiles are in the tidy table)."""
    recorded = table.get("stall_counter", pd.Series(dtype=object)).dropna()
    used = sorted({c for cell in recorded for c in str(cell).split(",") if c})
    stalls = " / ".join(STALL_NAMES.get(c, c) for c in used) or "no stall counter"
    # A simulated flow model counts no packets: its ratio is per byte (metrics.PACKET_COUNTERS).
    unit = "byte" if "saturated_ns" in used else "packet"
    rows = []
    for metric, definition, counters, key in METRICS:
        column = key if key in ("nodes", "net_to_nic_ratio") else f"{key}_mean"
        row = {
            "metric": metric,
            "paper_definition": definition,
            "netnoise_counters": counters.format(stalls=stalls, unit=unit),
            "statistics": key if key == "nodes" else ", ".join(f"{key}_{s}" for s in STATS),
        }
        for campaign in CAMPAIGNS:
            values = table.loc[table["campaign"] == campaign, column]
            row[f"median_{campaign}"] = float(values.median()) if len(values) else math.nan
        rows.append(row)
    return pd.DataFrame(rows)


@dataclasses.dataclass(frozen=True)
class ModelSettings:
    """How the model is trained and evaluated (config ``variability.model``; each
    key's meaning and default are in the schema)."""

    cv: int
    grid: Mapping[str, Sequence[float]]
    trees: int
    seed: int
    # Repeated CV (and draws of the added runs of Table V), the inner folds that
    # choose the grid inside a training fold, the share of new runs the bound holds.
    repeats: int
    inner_cv: int
    bound_level: float
    added: tuple[int, ...]
    train_fractions: tuple[float, ...]
    unseen_application: str | None
    sparse_application: str | None
    use_case_applications: tuple[str, ...]
    use_case_nodes: int | None

    def fitting(self) -> variability.Fitting:
        """How the combined model is fitted with these settings."""
        return variability.Fitting(
            grid=self.grid,
            cv=self.cv,
            inner_cv=self.inner_cv,
            seed=self.seed,
            n_estimators=self.trees,
            level=self.bound_level,
        )

    @classmethod
    def from_config(cls, model: Mapping[str, Any], seed: int) -> ModelSettings:
        """The settings of a validated ``variability.model`` section (the schema
        has filled in every default)."""
        return cls(
            cv=model["cv"],
            grid=model["grid"],
            trees=model["trees"],
            seed=seed,
            repeats=model["repeats"],
            inner_cv=model["inner_cv"],
            bound_level=model["bound_level"],
            added=tuple(model["added"]),
            train_fractions=tuple(model["train_fractions"]),
            unseen_application=model["unseen_application"],
            sparse_application=model["sparse_application"],
            use_case_applications=tuple(model["use_case"]["applications"]),
            use_case_nodes=model["use_case"]["nodes"],
        )


def train(
    table: pd.DataFrame, settings: ModelSettings, *, n_jobs: int = 1
) -> variability.VariabilityModel:
    """The model of Sec. IV-V on the production runs."""
    return variability.train(production(table), settings.fitting(), n_jobs=n_jobs)


def _claim(claims: pd.DataFrame, quantity: str) -> float:
    values = claims.loc[claims["quantity"] == quantity, "value"]
    return float(values.iloc[0]) if len(values) else math.nan


def evaluate(
    table: pd.DataFrame,
    model: variability.VariabilityModel,
    settings: ModelSettings,
    *,
    claims: pd.DataFrame,
    features: pd.DataFrame,
    unseen: pd.DataFrame,
    use_cases: pd.DataFrame,
    n_jobs: int = 1,
) -> dict[str, pd.DataFrame]:
    """Every table of Sec. IV-VI from the tidy runs and the trained model, the paper's
    numbers beside ours (``claims``, ``features``, ``unseen`` = Table V, ``use_cases`` =
    Table VI, the reference tables of resources/reference/variability/), and the
    nested repeated CV with its references (``model_evaluation``, ``cv_folds``,
    ``noise_floor``; :mod:`netnoise.studies.variability.evaluation`). The costly
    parts run ``n_jobs`` processes at a time; the tables do not depend on it."""
    runs = production(table)
    X, y = model_features.dataset(runs)
    if not model.evaluation.index.equals(X.index) or not np.allclose(model.evaluation["z_true"], y):
        raise ValueError("the model was trained on other runs than this table's production runs")
    params, seed = model.params, settings.seed
    apps = runs.loc[X.index, "application"]
    out: dict[str, pd.DataFrame] = {}

    summary = [
        ("runs", float(len(y)), math.nan),
        ("applications", float(apps.nunique()), 7.0),
        ("cv_folds", float(settings.cv), 10.0),
        *((f"svr_{k}", float(v), math.nan) for k, v in sorted(params.items())),
        ("cv_r2", model.cv_r2, _claim(claims, "cv_r2")),
        ("bound_scale", model.bound_scale, math.nan),
        ("coverage", model.coverage, _claim(claims, "coverage")),
        ("containment", model.containment, _claim(claims, "containment")),
    ]
    out["model_summary"] = pd.DataFrame(summary, columns=["quantity", "netnoise", "paper"])

    ranking = model_features.rank_features(X, y, seed=seed, n_estimators=max(settings.trees, 200))
    ranked = ranking.rename_axis("feature").reset_index()
    ranked.insert(0, "rank", range(1, len(ranked) + 1))
    out["feature_importance"] = ranked.merge(
        features[["feature", "rank"]].rename(columns={"rank": "paper_rank"}), on="feature"
    )
    out["feature_importance_resamples"] = model_features.importance_resamples(
        X, y, seed=seed, n_jobs=n_jobs
    )

    curve = evaluation.learning_curve_table(X, y, params, cv=settings.cv, seed=seed, n_jobs=n_jobs)
    out["learning_curve"] = curve
    fractions = evaluation.train_fraction_r2(X, y, params, fractions=settings.train_fractions)
    fractions["paper_r2"] = [
        _claim(claims, f"train_fraction_{f:g}") for f in fractions["train_fraction"]
    ]
    out["train_fraction"] = fractions

    loao = evaluation.leave_one_application_out(
        runs,
        grid=settings.grid,
        cv=settings.inner_cv,
        added=settings.added,
        draws=settings.repeats,
        seed=seed,
        n_jobs=n_jobs,
    )
    programs = runs.drop_duplicates("application").set_index("application")["program"]
    loao.insert(1, "paper_application", paper_application(loao["application"].map(programs)))
    # The paper's row of the application each proxy stands for, at its own counts
    # of added runs (Table V: 20 and 40; 0 only for MILC Reorder, Sec. V-B).
    paper = unseen.pivot(index="application", columns="added", values="r2")
    for added in paper.columns:
        loao[f"paper_r2_added_{added}"] = loao["paper_application"].map(paper[added])
    out["table5_unseen_application"] = loao

    figures = []
    for figure, application, added in (
        ("fig7", None, 0),
        ("fig9", settings.unseen_application, 0),
        ("fig10", settings.sparse_application, max(settings.added)),
    ):
        if figure != "fig7" and application is None:
            continue
        # Fig. 7 as the paper's (the grid chosen on all runs); Fig. 9 and 10 with
        # the grid Table V chose without the held-out application, first draw.
        chosen = params
        if application is not None:
            row = loao[loao["application"] == application].iloc[0]
            chosen = {k: float(row[k]) for k in settings.grid}
        points = evaluation.predicted_vs_true(
            runs, chosen, test_application=application, added=added, seed=seed
        )
        points.insert(0, "figure", figure)
        points["added"] = added
        points["r2"] = points.attrs["r2"]
        points["n_train"] = points.attrs["n_train"]
        figures.append(points)
    out["predicted_vs_true"] = pd.concat(figures, ignore_index=True)

    predictions = _repeated_cv(runs, X, y, settings, n_jobs)
    out["cv_folds"] = nested_cv.fold_scores(predictions)
    out["noise_floor"] = ceilings.noise_floor(table, CONDITIONS)
    out["model_evaluation"] = nested_cv.model_evaluation(
        predictions,
        variability.select_svr(X, y, grid=settings.grid, cv=settings.cv, seed=seed),
        float(out["predicted_vs_true"].query("figure == 'fig7'")["r2"].iloc[0]),
        out["noise_floor"],
        inner_cv=settings.inner_cv,
        level=settings.bound_level,
        paper={q: _claim(claims, q) for q in PAPER_EVALUATION_CLAIMS},
    )
    out["model_evaluation"].insert(0, "campaign", "production")
    out["model_evaluation"] = pd.concat(
        [out["model_evaluation"], bursty_evaluation(table, settings, n_jobs=n_jobs)],
        ignore_index=True,
    )

    out["congestion_counters"] = congestion_counters(table, settings, n_jobs=n_jobs)

    bound = model.evaluation.join(runs[["application", "nodes", "runtime_s"]])
    out["rf_bound"] = bound.reset_index(drop=True)

    tsne = evaluation.tsne_coordinates(X, apps, seed=seed)
    tsne["nodes"] = runs.loc[X.index, "nodes"].to_numpy()
    out["tsne"] = tsne.reset_index(drop=True)

    if settings.use_case_applications:
        cases = evaluation.use_case_table(
            model,
            runs,
            list(settings.use_case_applications),
            nodes=settings.use_case_nodes,
            predictions=model.evaluation,
        )
        paper = use_cases.set_index(["application", "run"])
        names = dict(zip(settings.use_case_applications, USE_CASE_PAPER, strict=False))
        cases["paper_application"] = cases["application"].map(names)
        for column in ("runtime_s", "z", "bound"):
            cases[f"paper_{column}"] = [
                paper[column].get((a, r), math.nan)
                for a, r in zip(cases["paper_application"], cases["run"], strict=True)
            ]
        out["table6_use_cases"] = cases

    out["controlled_estimates"] = controlled_estimates(table, model)
    return out


def congestion_counters(
    table: pd.DataFrame, settings: ModelSettings, *, n_jobs: int = 1
) -> pd.DataFrame:
    """How much of the runtime z each set of :data:`CONGESTION_FEATURE_SETS` explains in
    each production campaign (:func:`netnoise.studies.variability.ceilings.feature_set_r2`),
    with the stall counter the runs recorded: the numbers that choose a congestion counter."""
    parts = []
    for campaign in PRODUCTION_GENERATORS:
        runs = production(table, campaign)
        if runs.empty:
            continue
        part = ceilings.feature_set_r2(
            runs,
            CONGESTION_FEATURE_SETS,
            settings.fitting(),
            repeats=settings.repeats,
            n_jobs=n_jobs,
        )
        recorded = runs.get("stall_counter", pd.Series(dtype=object)).dropna().astype(str)
        part.insert(0, "campaign", campaign)
        part["stall_counter"] = ",".join(
            sorted({c for cell in recorded for c in cell.split(",") if c})
        )
        parts.append(part)
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()


def bursty_evaluation(
    table: pd.DataFrame, settings: ModelSettings, *, n_jobs: int = 1
) -> pd.DataFrame:
    """The models of the steady campaign cross-validated on the bursty campaign's
    runs alone (:func:`netnoise.studies.variability.nested_cv.nested_evaluation`,
    with the noise ceilings against the bursty runs' spread), ``campaign``
    "bursty"; no rows without bursty runs."""
    runs = production(table, "bursty")
    X, y = model_features.dataset(runs)
    if X.empty:
        return pd.DataFrame(columns=["campaign", *nested_cv.EVALUATION_COLUMNS])
    predictions = _repeated_cv(runs, X, y, settings, n_jobs)
    out = nested_cv.nested_evaluation(
        predictions,
        ceilings.noise_floor(table, CONDITIONS, production="bursty"),
        inner_cv=settings.inner_cv,
        level=settings.bound_level,
    )
    out.insert(0, "campaign", "bursty")
    return out


def controlled_estimates(table: pd.DataFrame, model: variability.VariabilityModel) -> pd.DataFrame:
    """The model's estimates of the controlled runs (never trained on), with their true z
    against the production runs of the same application and node count."""
    runs = production(table)
    grouped = runs.groupby(["application", "nodes"])["runtime_s"]
    reference = pd.DataFrame({"mean": grouped.mean(), "std": grouped.std(ddof=0)})
    controlled = table[table["campaign"].isin(CONTROLLED_CAMPAIGNS)].reset_index(drop=True)
    columns = ["campaign", "application", "nodes", "index", "runtime_s"]
    if controlled.empty:
        return pd.DataFrame(columns=[*columns, "z_true", "svr", "rf", "bound", "accepted", "z"])
    X = model_features.features(controlled)
    measurable = X.notna().all(axis=1)
    pred = model.predict(X[measurable])
    out = controlled.loc[measurable, columns].join(pred)
    ref = reference.loc[list(zip(out["application"], out["nodes"], strict=True))]
    out["z_true"] = (out["runtime_s"].to_numpy() - ref["mean"].to_numpy()) / ref["std"].to_numpy()
    out["verdict"] = [
        variability.verdict(z, b) if ok else "no estimate"
        for z, b, ok in zip(out["z"], out["bound"], out["accepted"], strict=True)
    ]
    return out.reset_index(drop=True)
