"""Netgauge's collvsnoise beside the noise benchmark: its output, sizes and the comparison."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from netnoise.studies.network_noise.netgauge import (
    application_sizes,
    collvsnoise_argv,
    comparison,
    parse_collvsnoise,
    size_problems,
)

NETGAUGE_OUTPUT = """\
# Info:   (0): Netgauge v2.4.6 MPI enabled (P=8, threadlevel=0)
# initializing x86-64 timer (takes some seconds)
........
# acc: 8 2 8 :: 1105.5 (1000.0), 1316.6 (1200.0)
........
# acc: 8 4 8 :: 1274.9 (1250.0), 1775.2 (1700.0)
"""


def test_parse_collvsnoise_gives_per_call_times_and_ratios():
    table = parse_collvsnoise(NETGAUGE_OUTPUT)
    assert table["application_ranks"].tolist() == [2, 4]
    assert table["ratio"].tolist() == [0.75, 0.5]
    assert table["unperturbed_mean_us"].tolist() == pytest.approx([110.55, 127.49])
    assert table["perturbed_median_us"].tolist() == pytest.approx([120.0, 170.0])
    assert parse_collvsnoise("no summary").empty


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        ("# acc: 8 6 8 :: nan (nan), 1316.6 (1200.0)", "unperturbed mean is 'nan'"),
        ("# acc: 8 6 8 :: 1105.5 (1000.0), inf (1200.0)", "perturbed mean is 'inf'"),
        ("# acc: 8 6 8 :: 1105.5 (1000.0), 1316.6 (-nan)", "perturbed median is '-nan'"),
        ("# acc: 8 6 8 :: 1105.5 (1000.0), 1316.6 (x)", "perturbed median 'x' is not a number"),
        ("# acc: 8 6 8 :: 1105.5 (1000.0)", "not 'P c size"),
        ("# acc: 8 six 8 :: 1.0 (1.0), 1.0 (1.0)", "application ranks 'six'"),
    ],
)
def test_parse_collvsnoise_reports_lines_without_a_measurement(line, problem):
    """A size whose summary is nan or inf used to vanish from the table unnoticed."""
    text = NETGAUGE_OUTPUT + line + "\n"
    with pytest.raises(ValueError, match="1 summary line") as err:
        parse_collvsnoise(text)
    assert f"line 7: {problem}" in str(err.value)
    assert line[:30] in str(err.value)


def test_collvsnoise_covers_the_noise_ratios():
    assert application_sizes(8, [0.25, 0.5, 0.75]) == [2, 4, 6]
    argv = collvsnoise_argv("ng", 4, 8, [0.25, 0.5, 0.75])
    assert argv[argv.index("--commsize") + 1] == "2-6"
    assert argv[argv.index("-x") + 1] == "collvsnoise"
    assert size_problems(8, [0.25, 0.5]) == []
    assert "pairs them" in size_problems(6, [0.5])[0]


def test_comparison_matches_ratios_both_ran():
    ours = pd.DataFrame(
        {
            "collective": ["allreduce", "allreduce", "bcast"],
            "ratio": [0.5, 0.25, 0.5],
            "allocation": [8, 8, 8],
            "unperturbed_mean_us": [100.0, 90.0, 50.0],
            "perturbed_mean_us": [150.0, 99.0, 70.0],
            "slowdown_pct": [150.0, 110.0, 140.0],
        }
    )
    table = comparison(ours, parse_collvsnoise(NETGAUGE_OUTPUT), 1 << 20)
    assert table["ratio"].tolist() == [0.5]
    row = table.iloc[0]
    assert row["netnoise_slowdown_pct"] == 150.0
    assert row["netgauge_slowdown_pct"] == pytest.approx(100 * 1775.2 / 1274.9)
    assert np.isnan(row["netgauge_cpu_saturated"])
    recorded = parse_collvsnoise(NETGAUGE_OUTPUT).assign(cpu_mean_runnable=7.3, cpu_saturated=True)
    row = comparison(ours, recorded, 1 << 20).iloc[0]
    assert row["netgauge_cpu_mean_runnable"] == 7.3 and row["netgauge_cpu_saturated"]
