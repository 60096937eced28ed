import pandas as pd

from netnoise.atomic import write_csv
from netnoise.jobs import logged
from netnoise.studies.asymmetric.cli import load_platform
from netnoise.studies.asymmetric.analysis import evaluate

with logged(snakemake.log[0]):
    platforms = {
        cc: load_platform(path)
        for cc, path in zip(
            snakemake.params.congestion_controls, snakemake.input.platforms, strict=True
        )
    }
    write_csv(snakemake.output[0], evaluate(pd.read_csv(snakemake.input.links), platforms))
