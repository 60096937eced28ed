import pandas as pd

from netnoise.atomic import write_csv
from netnoise.jobs import logged
from netnoise.studies.asymmetric.analysis import evaluate, load_platforms

with logged(snakemake.log[0]):
    platforms = load_platforms(snakemake.params.congestion_controls, snakemake.input.platforms)
    write_csv(snakemake.output[0], evaluate(pd.read_csv(snakemake.input.links), platforms))
