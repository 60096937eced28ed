from netnoise.atomic import write_csv
from netnoise.io import read_tidy
from netnoise.jobs import logged

with logged(snakemake.log[0]):
    frame = read_tidy(list(snakemake.input.results), **snakemake.params.identifiers)
    write_csv(snakemake.output[0], frame)
