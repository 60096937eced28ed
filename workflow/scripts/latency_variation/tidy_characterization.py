from netnoise.atomic import write_csv
from netnoise.jobs import logged
from netnoise.studies.latency_variation import characterization

with logged(snakemake.log[0]):
    inputs, points = snakemake.input, snakemake.params.points
    samples = [
        (probe, level, path) for (probe, level), path in zip(points, inputs.latency, strict=True)
    ]
    load = [(probe, level, path) for (probe, level), path in zip(points, inputs.load, strict=True)]
    write_csv(snakemake.output.samples, characterization.tidy_characterization(samples))
    write_csv(snakemake.output.load, characterization.tidy_load(load))
