from netnoise.jobs import job_from_spec, logged
from netnoise.platform import from_config
from netnoise.run import corun

with logged(snakemake.log[0]):
    platform_config = snakemake.params.platform
    corun(
        from_config(platform_config),
        job_from_spec(snakemake.params.measured),
        [job_from_spec(spec) for spec in snakemake.params.background],
        log=snakemake.log[0],
        timeout_s=platform_config["timeout_s"],
        config=snakemake.params.config,
        inputs=dict(snakemake.input.items()),
    )
