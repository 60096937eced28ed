from netnoise.atomic import write_csv
from netnoise.jobs import logged
from netnoise.studies.latency_variation import injection

with logged(snakemake.log[0]):
    inputs, params = snakemake.input, snakemake.params
    probes = [
        (name, point, path)
        for (name, point), path in zip(params.probes, inputs.probes, strict=True)
    ]
    apps = [(app, point, path) for (app, point), path in zip(params.apps, inputs.apps, strict=True)]
    reports = [
        (name, point, path)
        for (name, point), path in zip(
            [*params.probes, *params.apps],
            [*inputs.probe_reports, *inputs.app_reports],
            strict=True,
        )
    ]
    write_csv(snakemake.output.samples, injection.tidy_injected_samples(probes))
    write_csv(snakemake.output.runtimes, injection.tidy_runtimes(apps))
    write_csv(snakemake.output.reports, injection.tidy_reports(reports))
