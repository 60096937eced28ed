"""Seed 003's tidy tables (tidy.py) from p2p_concurrent and iperf3 results."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from netnoise.studies.asymmetric.tidy import tidy_mpi, tidy_tcp
from tests.asymmetric.support import write_p2p_result


def test_tidy_mpi_gives_means_intervals_rates_and_completion(tmp_path):
    trials = pd.DataFrame(
        {"trial": [0, 0], "link": [0, 1], "src": ["a", "b"], "dst": ["b", "a"]}
        | {"bytes": [1000, 2000], "experiment": "random"}
    )
    times = np.array([[1.0, 2.0], [3.0, 1.0], [2.0, 3.0]])
    write_p2p_result(tmp_path / "t.csv", trials, times)
    links, summary = tidy_mpi([tmp_path / "t.csv"], trials, "random", "bbr")
    assert links["time_s"].tolist() == [2.0, 2.0]
    assert links["iterations"].tolist() == [3, 3]
    assert links["rate_mbit"].tolist() == pytest.approx([8 * 1000 / 2 / 1e6, 8 * 2000 / 2 / 1e6])
    assert links["ci95_s"].iloc[0] == pytest.approx(4.303 * 1.0 / np.sqrt(3), rel=1e-3)
    assert summary["makespan_s"].iloc[0] == pytest.approx((2 + 3 + 3) / 3)
    with pytest.raises(ValueError, match="message sizes differ"):
        tidy_mpi([tmp_path / "t.csv"], trials.assign(bytes=[1000, 5]), "random", "bbr")
    with pytest.raises(ValueError, match="2 trials but 1 result files"):
        tidy_mpi([tmp_path / "t.csv"], pd.concat([trials, trials.assign(trial=1)]), "random", "bbr")


def test_tidy_tcp_joins_every_congestion_control_with_the_pattern():
    trials = pd.DataFrame(
        {"trial": [0, 0, 1], "link": [0, 1, 0], "src": ["a", "a", "b"], "dst": ["b", "b", "a"]}
        | {"bytes": 1000, "experiment": ["nic_unidirectional"] * 2 + ["nic_bidirectional"]}
    )
    iperf = trials[["trial", "link"]].assign(mbit=[9.0, 10.0, 19.0], retransmits=0)
    iperf["mean_rtt_us"] = 100.0
    frame = tidy_tcp({"cubic": iperf, "bbr": iperf.assign(mbit=[5.0, 14.0, 18.0])}, trials)
    assert frame["congestion"].tolist() == ["cubic"] * 3 + ["bbr"] * 3
    assert frame["rate_mbit"].tolist() == [9.0, 10.0, 19.0, 5.0, 14.0, 18.0]
    assert frame["experiment"].tolist()[:3] == trials["experiment"].tolist()
    assert "mbit" not in frame.columns
    with pytest.raises(ValueError, match=r"iperf3 \(cubic\): 2 of 3 links"):
        tidy_tcp({"cubic": iperf.iloc[:2]}, trials)
