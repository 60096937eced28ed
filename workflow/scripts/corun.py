from netnoise.jobs import logged
from netnoise.platform import from_config
from netnoise.run import Job, corun


def job(spec):
    program = [spec["program"], *map(str, spec["args"])]
    return Job(
        spec["name"], program, spec["ranks"], spec["output"], spec["nodes"], spec.get("env", {})
    )


with logged(snakemake.log[0]):
    platform_config = snakemake.params.platform
    corun(
        from_config(platform_config),
        job(snakemake.params.measured),
        [job(spec) for spec in snakemake.params.background],
        log=snakemake.log[0],
        timeout_s=platform_config["timeout_s"],
        config=snakemake.params.config,
        inputs=dict(snakemake.input.items()),
    )
