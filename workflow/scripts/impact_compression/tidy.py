from netnoise.atomic import write_csv
from netnoise.jobs import logged
from netnoise.studies.impact_compression.analysis import tidy_impact, tidy_runtimes

with logged(snakemake.log[0]):
    inputs, params = snakemake.input, snakemake.params
    impact = dict(zip(params.components, inputs.impact, strict=True))
    runs = [(*run, path) for run, path in zip(params.runs, inputs.runtimes, strict=True)]
    write_csv(snakemake.output.impact, tidy_impact(impact))
    write_csv(snakemake.output.runtimes, tidy_runtimes(runs))
