import pandas as pd

from netnoise.atomic import write_csv
from netnoise.jobs import logged
from netnoise.studies.network_noise.analysis import simulation_summary, topology_table

with logged(snakemake.log[0]):
    runs = [pd.read_csv(path) for path in snakemake.input.points]
    write_csv(snakemake.output.summary, simulation_summary(runs, snakemake.params.figures))
    inputs = snakemake.input
    published = pd.concat(
        [pd.read_csv(inputs.published_fat_trees), pd.read_csv(inputs.published_tori)]
    )
    write_csv(snakemake.output.topologies, topology_table(runs, published))
