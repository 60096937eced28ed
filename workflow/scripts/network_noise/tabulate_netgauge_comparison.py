import pandas as pd

from netnoise.atomic import write_csv
from netnoise.jobs import logged
from netnoise.studies.network_noise.analysis import is_measured
from netnoise.studies.network_noise.netgauge import comparison

with logged(snakemake.log[0]) as log:
    ours = pd.read_csv(snakemake.input.netnoise)
    table = comparison(
        ours[is_measured(ours)],
        pd.read_csv(snakemake.input.netgauge),
        snakemake.params.perturb_bytes,
    )
    if table.empty:
        raise ValueError("Netgauge and the noise benchmark have no ratio in common")
    log.info("Netgauge beside netnoise:\n%s", table.to_string(index=False))
    if table["netgauge_cpu_saturated"].astype(str).str.lower().eq("true").any():
        log.warning("Netgauge's run was CPU-saturated: its times are the cores', not the network's")
    write_csv(snakemake.output[0], table)
