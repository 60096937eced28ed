import pandas as pd

from netnoise.atomic import write_csv
from netnoise.jobs import logged
from netnoise.studies.latency_variation import characterization

with logged(snakemake.log[0]) as log:
    table = characterization.characterization_table(
        pd.read_csv(snakemake.input.samples), pd.read_csv(snakemake.input.load)
    )
    log.info("latency under load (µs):\n%s", table.to_string(index=False))
    write_csv(snakemake.output[0], table)
