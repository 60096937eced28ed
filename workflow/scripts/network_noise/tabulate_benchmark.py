import pandas as pd

from netnoise.atomic import write_csv
from netnoise.jobs import logged
from netnoise.studies.network_noise.analysis import benchmark_slowdown
from netnoise.studies.network_noise.claims_table import benchmark_claims

with logged(snakemake.log[0]) as log:
    tidy = pd.read_csv(snakemake.input[0])
    table = benchmark_slowdown(tidy, snakemake.params.clock)
    claims = benchmark_claims(tidy, table)
    log.info("noise benchmark:\n%s", table.to_string(index=False))
    log.info("claims:\n%s", claims.to_string(index=False))
    write_csv(snakemake.output.slowdown, table)
    write_csv(snakemake.output.claims, claims)
