from netnoise.atomic import write_csv
from netnoise.jobs import logged
from netnoise.studies.latency_variation import characterization

with logged(snakemake.log[0]) as log:
    samples, load, source = characterization.from_bundle(
        snakemake.input.bundle,
        snakemake.params.levels,
        "latency_variation.characterize.from_bundle",
    )
    log.info("%s", source)
    write_csv(snakemake.output.samples, samples)
    write_csv(snakemake.output.load, load)
