"""Seed 002 features and z-score target on runs whose truth is known."""

from __future__ import annotations

import numpy as np
import pandas as pd

from netnoise.studies.variability.features import dataset, rank_features, zscore_target
from tests.variability.conftest import INFORMATIVE


def test_zscore_target_standardises_each_application_and_node_count(mixed):
    z = zscore_target(mixed)
    stats = z.groupby([mixed["application"], mixed["nodes"]]).agg(["mean", "std"])
    assert np.allclose(stats["mean"], 0, atol=1e-12)
    assert np.allclose(stats["std"] * np.sqrt(19 / 20), 1)  # population std
    one = pd.DataFrame({"application": ["a", "b", "b"], "nodes": 4, "runtime_s": [1, 2, 2]})
    assert zscore_target(one).isna().all()  # one run, or no spread: undefined


def test_feature_ranking_puts_the_informative_features_first(clean):
    X, y = dataset(clean)
    ranking = rank_features(X, y, n_estimators=100)
    assert set(ranking.index[:3]) == INFORMATIVE
    assert ranking.iloc[:3].sum() > 0.8
