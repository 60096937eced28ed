"""Seed 004 Sec. 5: tidy tables of the probes under load, their table and the fits."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from netnoise.bundle import SHIPPED
from netnoise.studies.latency_variation import characterization as ch
from tests.latency_variation.synthetic import write_result

LOADGEN_COLUMNS = (
    "rank,peer,messages_count,sent_bytes,received_bytes,elapsed_s,target_mbps,achieved_mbps"
)


def test_tidy_characterization_halves_the_round_trip(tmp_path):
    pp = write_result(
        tmp_path / "pp.csv", "pair,iteration,size_bytes,rtt_us", ["0,0,1,20.0", "0,1,1,30.0"]
    )
    tcp = write_result(
        tmp_path / "tcp.csv", "pair,iteration,size_bytes,rtt_us", ["0,0,1,8.0"], tool="tcpping"
    )
    lg = write_result(
        tmp_path / "lg.csv",
        LOADGEN_COLUMNS,
        ["0,1,5,10,10,1.0,20.0,19.0", "1,0,5,10,10,1.0,20.0,21.0"],
        tool="loadgen",
    )
    samples = ch.tidy_characterization([("pingpong", 40, pp), ("tcpping", "0", tcp)])
    assert list(samples.columns) == ch.SAMPLE_COLUMNS
    assert samples["latency_us"].tolist() == [10.0, 15.0, 4.0]
    assert samples["probe"].tolist() == ["pingpong", "pingpong", "tcpping"]
    assert samples["level"].tolist() == [40, 40, 0]  # levels are integers
    load = ch.tidy_load([("pingpong", 40, lg)])
    assert list(load.columns) == ch.LOAD_COLUMNS
    assert load["achieved_mbps"].tolist() == [19.0, 21.0]
    table = ch.characterization_table(samples, load).set_index("probe")
    row = table.loc["pingpong"]
    assert (row["samples"], row["mean"], row["achieved_mbps"]) == (2, 12.5, 20.0)
    assert pd.isna(table.loc["tcpping", "achieved_mbps"])  # no load file given


def test_fit_characterization_fits_the_chosen_probe_per_level():
    rng = np.random.default_rng(7)
    frames = [
        pd.DataFrame(
            {"probe": probe, "level": level, "latency_us": 10 + rng.lognormal(mu, 0.6, 3000)}
        )
        for level, mu in ((0, np.log(3.0)), (50, np.log(30.0)))
        for probe in ("tcpping", "pingpong")
    ]
    samples = pd.concat(frames, ignore_index=True)
    fits, dists = ch.fit_characterization(samples, "tcpping", [0.25, 0.5, 0.75], "fit")
    assert fits["probe"].tolist() == ["tcpping", "tcpping"]
    assert fits["n"].tolist() == [3000, 3000]
    # The generating parameters come back (loc 10, scale e^mu, shape 0.6).
    assert fits["shape"].tolist() == pytest.approx([0.6, 0.6], rel=0.1)
    assert fits["scale_us"].tolist() == pytest.approx([3.0, 30.0], rel=0.15)
    assert len(dists) == 2 * 5
    with pytest.raises(ValueError, match="no samples of probe 'ping'"):
        ch.fit_characterization(samples, "ping", [0.5], "fit")


def test_a_bundles_latency_under_load_is_taken_level_by_level():
    """The shipped testbed run's samples and load at the levels asked, with where
    they come from; a level that run did not measure is refused by name."""
    samples, load, source = ch.from_bundle(str(SHIPPED), [0, 20], "characterize.from_bundle")
    assert list(samples.columns) == ch.SAMPLE_COLUMNS and list(load.columns) == ch.LOAD_COLUMNS
    assert set(samples["level"]) == {0, 20} == set(load["level"])
    assert set(samples["probe"]) == {"tcpping", "pingpong"} and len(samples) > 1000
    assert source.startswith("resources/cache/quick-testbed.tar.gz: latency measured on testbed")
    with pytest.raises(ValueError, match=r"characterize.from_bundle: .* not \[30\]"):
        ch.from_bundle(str(SHIPPED), [0, 30], "characterize.from_bundle")
