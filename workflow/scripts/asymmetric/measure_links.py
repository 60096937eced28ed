import pandas as pd

from netnoise.jobs import logged
from netnoise.platform import from_config
from netnoise.studies.asymmetric.measure import measure_mpi

with logged(snakemake.log[0]):
    platform_config = snakemake.params.platform
    measure_mpi(
        from_config(platform_config),
        snakemake.input.program,
        pd.read_csv(snakemake.input.patterns),
        list(snakemake.output.results),
        log=snakemake.log[0],
        timeout_s=platform_config["timeout_s"],
        iterations=snakemake.params.iterations,
        config=snakemake.params.config,
        inputs={"program": snakemake.input.program, "patterns": snakemake.input.patterns},
    )
