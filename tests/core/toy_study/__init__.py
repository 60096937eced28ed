"""A sixth study, from the test tree: the contract a newcomer fills to add one
(netnoise.study, docs/architecture.md).

It judges a claim of Hockney's model of a message's time, latency plus size
over bandwidth: that on this platform the one-way latency of the largest
message of the baseline ping-pong (platform.smk) is at least ``min_ratio``
times that of the smallest. Its rules (``toy.smk``) take the two sizes' samples
from the platform's tidy ping-pong; its claim is judged from them.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from netnoise import verdicts as v
from netnoise.config import enabled
from netnoise.estimates import mean_estimate
from netnoise.report import ABOUT, HEADLINE_CLAIMS, Result
from netnoise.settings import Settings, StudySection
from netnoise.study import Citation, Claims, Study, StudyPaths

HOME = Path(__file__).resolve().parent
KEY = "toy"
TABLE = "latency_growth"


@dataclass(frozen=True)
class ToySettings(StudySection):
    KEY = KEY
    enabled: bool
    min_ratio: float


def checks(config: dict[str, Any]) -> list[str]:
    """A ratio below one claims nothing of a size's cost."""
    study = enabled(config, KEY)
    if study and study["min_ratio"] < 1:
        return [f"toy.min_ratio: {study['min_ratio']} claims no growth; give at least 1"]
    return []


def final_files(settings: Settings, paths: StudyPaths) -> list[str]:
    return [f"{paths.tables}/{TABLE}.csv"]


def _grows(min_ratio: float) -> v.Claim:
    """The toy's one claim, its bound the config's ``min_ratio``."""
    test = v.Test(
        part="",
        quote="a message's time is its latency plus its size over the bandwidth",
        paper_value="grows with the size",
        kind="threshold",
        statistic="one-way latency of the largest message over the smallest's mean",
        unit="×",
        paper_number=float("nan"),
        null_value=1.0,
        target_low=min_ratio,
        target_high=float("nan"),
        unit_of_replication="runs",
        band_reason="the config's toy.min_ratio",
    )
    return v.Claim(
        KEY,
        "latency_grows_with_size",
        "A message's time is its latency plus its size over the bandwidth.",
        "Hockney 1994, Sec. 2",
        "",
        {"": test},
    )


def headline_claims(growth: pd.DataFrame) -> pd.DataFrame:
    """The largest message's one-way latency over the smallest's mean, each sample
    of the largest a ratio, against the ratio the table's rows carry."""
    sizes = growth["size_bytes"]
    base = growth.loc[sizes == sizes.min(), "latency_us"].mean()
    ratios = growth.loc[sizes == sizes.max(), "latency_us"] / base
    claim = _grows(float(growth["min_ratio"].iloc[0]))
    return v.table([claim.judged(mean_estimate(ratios))])


STUDY = Study(
    key=KEY,
    number="900",
    title="Message time against message size",
    seed="none: the test tree's own study",
    citation=Citation(
        authors="Roger W. Hockney",
        title="The communication challenge for MPP: Intel Paragon and Meiko CS-2",
        venue="Parallel Computing",
        year=1994,
        doi="10.1016/0167-8191(94)90027-2",
    ),
    testbed_changes="The paper timed two machines' interconnects; here the platform's own.",
    settings=ToySettings,
    schema=HOME / "toy.schema.yaml",
    checks=checks,
    rules=HOME / "toy.smk",
    plan=final_files,
    results=(
        HEADLINE_CLAIMS,
        ABOUT,
        Result(TABLE, "Sec. 2 · one-way latency of the smallest and largest message"),
    ),
    claims=Claims(headline_claims, {"growth": f"tables/{KEY}/{TABLE}.csv"}),
    notebook=HOME / "toy.ipynb",
    captions=HOME / "report",
)
