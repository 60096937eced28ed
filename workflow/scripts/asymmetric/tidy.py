import pandas as pd

from netnoise.atomic import write_csv
from netnoise.jobs import logged
from netnoise.studies.asymmetric.tidy import tidy_mpi, tidy_tcp

with logged(snakemake.log[0]):
    inputs, params = snakemake.input, snakemake.params
    patterns = dict(zip(params.families, map(pd.read_csv, inputs.patterns), strict=True))
    tidied = [tidy_mpi(paths, patterns[family], family, cc) for family, cc, paths in params.runs]
    write_csv(snakemake.output.links, pd.concat([links for links, _ in tidied]))
    write_csv(snakemake.output.trials, pd.concat([trials for _, trials in tidied]))
    tcp = dict(zip(params.congestion_controls, map(pd.read_csv, inputs.tcp), strict=True))
    write_csv(snakemake.output.tcp, tidy_tcp(tcp, patterns["properties"]))
