import pandas as pd

from netnoise.atomic import write_csv
from netnoise.jobs import logged
from netnoise.studies.network_noise.analysis import benchmark_slowdown

with logged(snakemake.log[0]) as log:
    table = benchmark_slowdown(pd.read_csv(snakemake.input[0]))
    log.info("noise benchmark:\n%s", table.to_string(index=False))
    write_csv(snakemake.output[0], table)
