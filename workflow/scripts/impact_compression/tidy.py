from netnoise.atomic import write_csv
from netnoise.jobs import logged
from netnoise.studies.impact_compression.analysis import tidy_impact, tidy_runtimes

with logged(snakemake.log[0]):
    inputs, params = snakemake.input, snakemake.params
    impact = {"idle": inputs.idle}
    impact.update(zip(params.apps, inputs.impact_apps, strict=True))
    impact.update(zip(params.configs, inputs.impact_compression, strict=True))
    records = [(app, "none", "", path) for app, path in zip(params.apps, inputs.alone, strict=True)]
    grid = [(app, cb) for app in params.apps for cb in params.configs]
    records += [
        (app, "compression", cb, path)
        for (app, cb), path in zip(grid, inputs.compression, strict=True)
    ]
    records += [
        (app, "application", partner, path)
        for (app, partner), path in zip(params.pairs, inputs.pairing, strict=True)
    ]
    write_csv(snakemake.output.impact, tidy_impact(impact))
    write_csv(snakemake.output.runtimes, tidy_runtimes(records))
