from netnoise.atomic import write_csv
from netnoise.jobs import logged
from netnoise.studies.asymmetric import regime

with logged(snakemake.log[0]) as log:
    params = snakemake.params
    table = regime.tabulate(params.study, params.congestion_controls, list(snakemake.input))
    log.info("regime:\n%s", table.to_string(index=False))
    write_csv(snakemake.output[0], table)
