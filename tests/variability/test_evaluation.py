"""Seed 002 evaluations of the model (Fig. 5, 7-10, Tables V-VI) on runs whose truth is known."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import r2_score

from netnoise.studies.variability import ceilings, nested_cv
from netnoise.studies.variability import evaluation as e
from netnoise.studies.variability import model as v
from netnoise.studies.variability.features import dataset, zscore_target
from netnoise.studies.variability.model import select_svr
from netnoise.studies.variability.synthetic import synthetic_table
from tests.variability.conftest import GRID, SIMILAR


def test_more_training_data_gives_better_r2(clean):
    X, y = dataset(clean)
    params = {"C": 100.0, "gamma": 0.03}
    curve = e.learning_curve_table(X, y, params, train_sizes=(0.1, 0.5, 1.0))
    assert curve["n_train"].tolist() == [27, 135, 270]
    assert curve["cv_r2"].iloc[-1] > curve["cv_r2"].iloc[0] + 0.3
    fractions = e.train_fraction_r2(X, y, params)
    assert fractions["train_fraction"].tolist() == [0.75, 0.5, 0.25, 0.1]
    assert fractions["n_train"].tolist() == [225, 150, 75, 30]
    assert fractions["r2"].iloc[0] > 0.8
    assert fractions["r2"].iloc[0] > fractions["r2"].iloc[-1]


def test_leave_one_application_out_and_added_samples(mixed, model):
    table = e.leave_one_application_out(mixed, grid=GRID, cv=3, added=(0, 40), draws=3)
    rows = table.set_index(["application", "added"])
    r2 = rows["r2"]
    assert table["n_test"].tolist() == [60, 20] * 5
    assert table["draws"].tolist() == [1, 3] * 5
    assert rows["r2_sd"].isna().tolist() == [True, False] * 5
    similar = r2.loc[list(SIMILAR), 0]
    assert similar.mean() > 0.6  # unseen but alike: predicted well
    assert r2["odd", 0] < 0  # unseen and unlike: worse than the mean
    assert r2["odd", 40] > 0.2  # a few of its runs in training fix much of it
    # The grid is chosen without the held-out application: as select_svr on the others.
    X, y = dataset(mixed)
    others = mixed.loc[X.index, "application"] != "alpha"
    chosen = select_svr(X[others], y[others], grid=GRID, cv=3).params
    assert {k: rows.at[("alpha", 0), k] for k in chosen} == chosen
    fig9 = e.predicted_vs_true(mixed, chosen, test_application="alpha")
    assert set(fig9["application"]) == {"alpha"} and len(fig9) == 60
    assert fig9.attrs["r2"] == pytest.approx(r2["alpha", 0])
    draws = [
        e.predicted_vs_true(mixed, chosen, test_application="alpha", added=40, draw=d)
        for d in range(3)
    ]
    assert r2["alpha", 40] == pytest.approx(np.mean([d.attrs["r2"] for d in draws]))
    assert not draws[0].index.equals(draws[1].index)  # each draw adds other runs
    fig7 = e.predicted_vs_true(mixed, model.params)
    assert len(fig7) == 75 and fig7.attrs["n_train"] == 225
    agree = np.sign(fig7["z_true"]) == np.sign(fig7["z_pred"])
    assert ((fig7["region"] != "mismatch") == agree).all()
    assert agree.mean() > 0.75


def test_tsne_separates_the_unlike_application_and_is_seeded(mixed):
    sample = mixed.groupby("application").head(20)  # 100 runs: quick
    X, _ = dataset(sample)
    apps = sample.loc[X.index, "application"]
    one = e.tsne_coordinates(X, apps, max_iter=300)
    two = e.tsne_coordinates(X, apps, max_iter=300)
    pd.testing.assert_frame_equal(one, two)
    centre = one.groupby("application")[["x", "y"]].mean()
    others = centre.drop(index="odd")
    spread = np.linalg.norm(others - others.mean(), axis=1).max()
    assert np.linalg.norm(centre.loc["odd"] - others.mean()) > 2 * spread


def test_use_case_table_reads_congested_and_favourable_runs(model, fresh):
    table = e.use_case_table(model, fresh, ["alpha", "beta"], nodes=256)
    assert table["run"].tolist() == ["A", "B", "C"] * 2
    assert set(table["nodes"]) == {256}
    by = table.set_index(["application", "run"])
    # B is a fast run of the first application and a slow run of the second.
    assert by.at[("alpha", "B"), "runtime_s"] < by.at[("alpha", "C"), "runtime_s"]
    assert by.at[("beta", "B"), "runtime_s"] > by.at[("beta", "C"), "runtime_s"]
    for app in ("alpha", "beta"):
        fast, slow = sorted(["B", "C"], key=lambda r, a=app: by.at[(a, r), "runtime_s"])
        assert by.at[(app, slow), "z"] > by.at[(app, "A"), "z"] > by.at[(app, fast), "z"]
        # The use case: a congested run is told from a typical one.
        assert by.at[(app, slow), "verdict"] == "congested"
        assert by.at[(app, "A"), "verdict"] == "typical"
        assert by.at[(app, fast), "verdict"] != "congested"
    assert (table["z"] - table["z_true"]).abs().mean() < 0.6


CONDITIONS = ("generator", "loaded_nodes", "load", "messages", "sleep_cycles", "racks_spanned")


def cv_inputs(table: pd.DataFrame):
    X, y = dataset(table)
    runs = table.loc[X.index]
    groups = runs["application"] + " x " + runs["nodes"].astype(str)
    conditions = nested_cv.condition_matrix(runs, [*CONDITIONS, "nodes", "application"])
    return X, y, groups, conditions


def test_condition_matrix_one_hot_and_no_background_parameter_as_zero(clean):
    matrix = nested_cv.condition_matrix(clean, [*CONDITIONS, "nodes", "application"])
    assert {"generator_loadgen", "generator_compressionb", "application_alpha"} <= set(matrix)
    assert matrix.notna().all().all() and all(pd.api.types.is_float_dtype(t) for t in matrix.dtypes)
    loadgen = clean["generator"] == "loadgen"
    assert (matrix.loc[loadgen, "load"] == clean.loc[loadgen, "b"]).all()
    assert (matrix.loc[~loadgen, "load"] == 0).all()
    with pytest.raises(ValueError, match=r"lack the condition column.*racks"):
        nested_cv.condition_matrix(clean.drop(columns="racks_spanned"), CONDITIONS)


def test_nested_cv_fits_nothing_on_its_test_fold(clean, monkeypatch):
    """Every fit of a fold (grid choice, SVR, forest, bound) sees its training runs only."""
    small = clean.groupby(["application", "nodes"]).head(8)
    X, y, groups, conditions = cv_inputs(small)
    seen = []
    fit_combined = v.fit_combined

    def spy(X_train, y_train, fitting):
        seen.append(X_train.index)
        return fit_combined(X_train, y_train, fitting)

    monkeypatch.setattr(v, "fit_combined", spy)
    predictions = nested_cv.repeated_cv(
        X, y, groups, conditions, v.Fitting(grid=GRID, cv=4, inner_cv=3, n_estimators=10), repeats=2
    )
    tested = [part.index for _, part in predictions.groupby(["repeat", "fold"])]
    assert len(seen) == len(tested) == 8
    for trained, test in zip(seen, tested, strict=True):
        assert trained.intersection(test).empty
        assert trained.union(test).sort_values().equals(X.index.sort_values())
    # Every run is predicted once per repeat, by the model of its own fold.
    assert (predictions.groupby("repeat").size() == len(X)).all()
    assert predictions.reset_index().groupby("index")["repeat"].nunique().eq(2).all()


def test_grid_chosen_on_the_test_folds_inflates_r2_nested_cv_does_not():
    """On a target of pure noise nothing is predictable (true R² <= 0): the grid's best
    score on the folds it chose from is biased upward, the nested estimate is not."""
    grid = {"C": [0.1, 1.0, 10.0, 100.0], "gamma": [0.01, 0.1, 1.0, 10.0]}
    inflation = []
    for seed in range(4):
        rng = np.random.default_rng(seed)
        X = pd.DataFrame(rng.standard_normal((80, 7)), columns=[f"f{i}" for i in range(7)])
        y = rng.standard_normal(80)
        best = select_svr(X, y, grid=grid, cv=5, seed=seed)
        table, _ = v.combined_evaluation(
            X, y, v.Fitting(grid=grid, cv=5, inner_cv=4, seed=seed, n_estimators=10, level=0.8)
        )
        nested = table.groupby("fold").apply(lambda f: r2_score(f["z_true"], f["svr"]))
        assert nested.mean() < 0.02
        inflation.append(best.score - nested.mean())
    assert min(inflation) > 0 and np.mean(inflation) > 0.03


@pytest.mark.parametrize("level", [0.7, 0.9])
def test_the_bound_holds_its_level_of_held_out_runs_over_seeds(level):
    coverage = []
    for seed in range(3):
        table = synthetic_table(runs_per_group=15, applications=SIMILAR, noise=0.03, seed=20 + seed)
        X, y = dataset(table)
        _, rated = v.combined_evaluation(
            X, y, v.Fitting(grid=GRID, cv=5, inner_cv=4, seed=seed, n_estimators=60, level=level)
        )
        coverage.append(rated["interval_coverage"])
    # Conformal: at least the level on average, a few points above (the calibration
    # residuals come from models trained on fewer runs than the one judged).
    assert level - 0.03 < np.mean(coverage) < level + 0.07
    assert min(coverage) > level - 0.08


def test_repeated_cv_scores_counters_conditions_and_the_group_mean(clean):
    X, y, groups, conditions = cv_inputs(clean)
    predictions = nested_cv.repeated_cv(
        X, y, groups, conditions, v.Fitting(grid=GRID, cv=5, inner_cv=3, n_estimators=30), repeats=2
    )
    scores = nested_cv.fold_scores(predictions)
    summary = nested_cv.cv_summary(predictions).set_index("model")
    assert list(summary.index) == list(nested_cv.CV_MODELS)
    assert (summary["repeats"] == 2).all() and (summary["runs"] == len(X)).all()
    svr = scores[scores["model"] == "counters_svr"]
    assert len(svr) == 10
    assert summary.at["counters_svr", "r2_mean"] == pytest.approx(svr["r2"].mean())
    assert summary.at["counters_svr", "r2_sd"] == pytest.approx(svr["r2"].std(ddof=1))
    first = predictions[predictions["repeat"] == 0]
    pooled = [r2_score(p["z_true"], p["counters_svr"]) for _, p in predictions.groupby("repeat")]
    assert summary.at["counters_svr", "r2_pooled"] == pytest.approx(np.mean(pooled))
    assert pooled[0] == pytest.approx(r2_score(first["z_true"], first["counters_svr"]))
    # The truth: z follows c, b and d, the counters see all three, the drawn
    # conditions b alone, the group mean nothing: z has mean 0 over every group, so
    # a group's test runs above its mean leave its training runs below (R² < 0).
    r2 = summary["r2_pooled"]
    assert r2["counters_svr"] > 0.75 and r2["counters_forest"] > 0.6
    assert 0.03 < r2["conditions_forest"] < r2["counters_svr"] - 0.5
    assert -0.3 < r2["group_mean"] < 0
    combined = summary.loc["combined"]
    assert combined["given"] > 0.8 and combined["interval_coverage"] > 0.8
    assert 0.8 < combined["containment"] <= 1 and combined["bound_scale"] > 0
    # The rates of the combined model are those of model.rates, fold by fold.
    fold = predictions[(predictions["repeat"] == 1) & (predictions["fold"] == 2)]
    row = scores[(scores["model"] == "combined") & (scores["repeat"] == 1) & (scores["fold"] == 2)]
    assert row["containment"].iloc[0] == pytest.approx(v.rates(fold)["containment"])


def test_standardised_within_groups_scales_by_the_training_runs_of_each_group():
    X = pd.DataFrame(
        {"bytes": [10.0, 20.0, 30.0, 1000.0, 3000.0, 5000.0, 7.0], "flat": [1.0] * 7},
        index=[10, 11, 12, 13, 14, 15, 16],
    )
    groups = pd.Series(["a", "a", "a", "b", "b", "b", "c"], index=X.index)
    train = np.array([0, 1, 3, 4])
    scaled = nested_cv.standardised_within_groups(X, groups, train)
    assert scaled.index.equals(X.index) and list(scaled.columns) == list(X.columns)
    # a: mean 15, spread 5 of its training runs; b: mean 2000, spread 1000. The
    # test runs (30 and 5000) do not enter their groups' scale.
    assert list(scaled["bytes"]) == pytest.approx([-1.0, 1.0, 3.0, -1.0, 1.0, 3.0, 0.0])
    # No spread among the training runs, or no training run of the group: 0.
    assert (scaled["flat"] == 0).all()


def test_standardising_within_groups_recovers_a_signal_each_group_scales_its_own_way():
    """Each group's counter is its own affine map of the signal, as bytes or stalls are
    of one congestion for applications of different volumes: the pooled forest
    must learn every group's scale, the standardised one need not."""
    rng = np.random.default_rng(3)
    parts = []
    for group, (offset, gain) in enumerate([(0, 1), (5, 0.2), (-3, 3), (10, 0.5)]):
        signal = rng.standard_normal(40)
        parts.append(
            pd.DataFrame({"counter": offset + gain * signal, "group": f"g{group}", "z": signal})
        )
    runs = pd.concat(parts, ignore_index=True)
    X, y, groups = runs[["counter"]], runs["z"], runs["group"]
    conditions = pd.get_dummies(groups, dtype=float)
    predictions = nested_cv.repeated_cv(
        X, y, groups, conditions, v.Fitting(grid=GRID, cv=5, inner_cv=3, n_estimators=30), repeats=1
    )
    r2 = nested_cv.cv_summary(predictions).set_index("model")["r2_pooled"]
    assert r2["counters_within_group"] > 0.9
    assert r2["counters_within_group"] > r2["counters_forest"] + 0.1


def identical_runs_table(noise: float, signal: float, seed: int = 0) -> pd.DataFrame:
    """Production runs whose runtime is base·(1 + signal·s + noise·ε), s and ε standard
    normal, and 30 dedicated runs per group that repeat one condition: base·(1 + noise·ε)."""
    rng = np.random.default_rng(seed)
    parts = []
    for app, base in (("a", 100.0), ("b", 400.0), ("c", 50.0)):
        for nodes in (2, 4):
            s = rng.standard_normal(370)
            production = base * (1 + signal * s + noise * rng.standard_normal(370))
            parts.append(
                pd.DataFrame(
                    {
                        "campaign": "production",
                        "application": app,
                        "nodes": nodes,
                        "runtime_s": production,
                        "signal": s,
                        "generator": "loadgen",
                        "load": rng.uniform(size=370),
                    }
                )
            )
            dedicated = base * (1 + noise * rng.standard_normal(30))
            parts.append(
                pd.DataFrame(
                    {
                        "campaign": "dedicated",
                        "application": app,
                        "nodes": nodes,
                        "runtime_s": dedicated,
                        "generator": "none",
                        "load": np.nan,
                    }
                )
            )
    return pd.concat(parts, ignore_index=True)


def test_noise_floor_gives_the_r2_ceiling_of_known_noise():
    noise, signal = 0.05, 0.1
    table = identical_runs_table(noise, signal)
    floor = ceilings.noise_floor(table, ["generator", "load", "nodes", "application"])
    groups = floor[floor["application"] != "all"]
    assert len(groups) == 6 and (groups["identical_runs"] == 30).all()
    assert (groups["production_runs"] == 370).all()
    truth = noise**2 / (noise**2 + signal**2)  # 0.2: the ceiling is 0.8
    assert groups["noise_share"].between(truth - 0.15, truth + 0.15).all()
    assert groups["noise_cv"].between(0.03, 0.07).all()
    (pooled,) = floor[floor["application"] == "all"].itertuples()
    assert pooled.campaign == "dedicated" and pooled.identical_runs == 180
    assert pooled.noise_share == pytest.approx(truth, abs=0.05)
    assert pooled.share_low < truth < pooled.share_high
    assert pooled.ceiling_r2 == pytest.approx(1 - pooled.noise_share)
    assert pooled.ceiling_low < 1 - truth < pooled.ceiling_high
    # The ceiling is what a model that knows every condition reaches.
    production = table[table["campaign"] == "production"]
    z = zscore_target(production)
    best = production.groupby(["application", "nodes"])["signal"].transform(
        lambda s: (s - s.mean()) / s.std(ddof=0)
    ) * np.sqrt(1 - truth)
    assert r2_score(z, best) == pytest.approx(pooled.ceiling_r2, abs=0.06)


def test_noise_floor_takes_identical_runs_only():
    table = identical_runs_table(0.05, 0.1)
    dedicated = table.index[table["campaign"] == "dedicated"]
    table.loc[dedicated[:2], "generator"] = ["none", "loadgen"]
    with pytest.raises(ValueError, match=r"'dedicated'.* differ in generator.*not repeated"):
        ceilings.noise_floor(table, ["generator", "load", "nodes", "application"])
    # One run of a condition tells nothing of the noise: no group, no ceiling.
    fresh = identical_runs_table(0.05, 0.1)
    one_each = fresh[fresh["campaign"] == "dedicated"].groupby(["application", "nodes"]).head(1)
    single = pd.concat([fresh[fresh["campaign"] == "production"], one_each])
    empty = ceilings.noise_floor(single, ["generator", "load", "nodes", "application"])
    assert empty.empty and "ceiling_r2" in empty.columns
