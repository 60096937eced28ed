from netnoise.atomic import write_csv
from netnoise.baseline import load_samples, summary_table
from netnoise.jobs import logged

with logged(snakemake.log[0]):
    write_csv(snakemake.output[0], summary_table(load_samples(snakemake.input[0])))
