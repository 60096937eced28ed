import pandas as pd

from netnoise.jobs import logged
from netnoise.studies.asymmetric.ns3 import simulate

with logged(snakemake.log[0]):
    params = snakemake.params
    simulate(
        snakemake.input.program,
        pd.read_csv(snakemake.input.patterns),
        list(snakemake.output.results),
        ns3=params.ns3,
        congestion=snakemake.wildcards.congestion,
        iterations=params.iterations,
        log=snakemake.log[0],
        timeout_s=params.timeout_s,
        config=params.config,
        inputs={"program": snakemake.input.program, "patterns": snakemake.input.patterns},
    )
