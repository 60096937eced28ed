from netnoise.jobs import job_from_spec, logged
from netnoise.platform import from_config
from netnoise.studies.latency_variation.injection import run_with_injector

with logged(snakemake.log[0]):
    inputs, params = snakemake.input, snakemake.params
    platform = from_config(params.platform)
    for spec, reports in zip(params.jobs, snakemake.output.reports, strict=True):
        run_with_injector(
            platform,
            job_from_spec(spec),
            inputs.table,
            inputs.seed,
            reports,
            library=getattr(inputs, "library", None),
            level=params.injector_level,
            unit=params.unit,
            wait=params.wait,
            sleep_margin_us=params.sleep_margin_us,
            log=snakemake.log[0],
            timeout_s=params.platform["timeout_s"],
            config=params.config,
            inputs={"program": spec["program"], "table": inputs.table, "seed": inputs.seed},
        )
