"""Seed 002 evaluations of the model (Fig. 5, 7-10, Tables V-VI) on runs whose truth is known."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from netnoise.studies.variability import evaluation as e
from netnoise.studies.variability.features import dataset
from tests.variability.conftest import SIMILAR


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
    table = e.leave_one_application_out(mixed, model.params, added=(0, 40))
    r2 = table.set_index(["application", "added"])["r2"]
    assert table["n_test"].tolist() == [60, 20] * 5
    similar = r2.loc[list(SIMILAR), 0]
    assert similar.mean() > 0.6  # unseen but alike: predicted well
    assert r2["odd", 0] < 0  # unseen and unlike: worse than the mean
    assert r2["odd", 40] > 0.2  # a few of its runs in training fix much of it
    fig9 = e.predicted_vs_true(mixed, model.params, test_application="alpha")
    assert set(fig9["application"]) == {"alpha"} and len(fig9) == 60
    assert fig9.attrs["r2"] == pytest.approx(r2["alpha", 0])
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
