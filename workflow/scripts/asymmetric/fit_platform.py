import json

import pandas as pd
import yaml

from netnoise.atomic import atomic_open
from netnoise.jobs import logged
from netnoise.studies.asymmetric.analysis import fit_platform

with logged(snakemake.log[0]) as log:
    links = pd.read_csv(snakemake.input.links)
    with open(snakemake.input.racks) as fh:
        racks = json.load(fh)
    congestion = snakemake.wildcards.congestion
    network = "ns-3" if snakemake.params.network == "ns3" else "measured"
    mine = links[(links["family"] == "properties") & (links["congestion"] == congestion)]
    platform = fit_platform(mine, racks, snakemake.params.testbed)
    log.info("fitted platform (%s): %s", congestion, platform)
    with atomic_open(snakemake.output[0]) as fh:
        fh.write(
            f"# Seed 003 model platform fitted to the {congestion} property runs ({network}):\n"
            "# the NIC rate of one link alone (MPI level), the backbone scaled by the\n"
            "# configured ratio"
            " (or the most the backbone runs moved together, where no rate is\n"
            "# configured).\n"
            "# Input of `netnoise predict asymmetric --platform`.\n"
        )
        yaml.safe_dump(platform, fh, sort_keys=False)
