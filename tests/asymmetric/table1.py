"""Fig. 1 / Table I of the paper, the worked example the model and CLI tests share."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd

from netnoise.studies.asymmetric import model as am

DATA = Path(__file__).parent / "data"
TABLE1_PLATFORM = DATA / "table1_platform.yaml"
TABLE1_PATTERN = DATA / "table1_pattern.csv"
MBPS = 1e6
NIC = am.PAPER_NIC_BPS

# Fig. 1 / Table I. What the text fixes: e1 and e2 leave node X1; e1, e3, e4
# cross the backbone from rack X to rack Y (δ⁻(rack X) = 3); e4 is the only
# link leaving X3; e5 leaves Y1; b1's NIC receives only e1 (S(e1)[2] = {e1}).
# Table I's rates force the rest: e2 stays inside rack X (it is not in
# E⁻(rack X)), and e5, at 626.6 = 940 − 313.3 Mbps, shares its receiving NIC
# with one 313.3 Mbps backbone link (here e3, into Y2). Any placement making
# e5 contra-flow on the backbone would give it 313.3 Mbps instead.
TABLE1 = pd.DataFrame(
    {
        "src": ["X1", "X1", "X2", "X3", "Y1"],
        "dst": ["Y1", "X2", "Y2", "Y3", "Y2"],
        "bytes": [10 * am.MB, 20 * am.MB, 20 * am.MB, 20 * am.MB, 20 * am.MB],
    }
)
# Sec. 6.3 assumes the copper backbone, which runs at the NIC's 940 Mbps.
TABLE1_PLATFORM_DICT = {
    "racks": {"X": ["X1", "X2", "X3"], "Y": ["Y1", "Y2", "Y3"]},
    "nic_bps": am.PAPER_NIC_BPS,
    "backbone_bps": am.PAPER_COPPER_BPS,
}
TABLE1_STEP1_MBPS = [313.3, 626.6, 313.3, 313.3, 626.6]
TABLE1_STEP2_MBPS = [470.0, 470.0]  # e3, e4
TABLE1_PRED_S = [0.255, 0.255, 0.425, 0.425, 0.255]
TABLE1_MEAS_S = [0.252, 0.245, 0.406, 0.443, 0.270]
TABLE1_EPS_PCT = [1.2, 4.0, 4.7, -4.1, -4.6]


def truncate(values, digits: int) -> list[float]:
    """The paper truncates: 626.67 is printed 626.6 and 0.4255 is printed 0.425."""
    scale = 10**digits
    return [math.floor(v * scale + 1e-9) / scale for v in values]
