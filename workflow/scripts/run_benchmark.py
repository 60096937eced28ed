from netnoise.jobs import logged
from netnoise.platform import from_config
from netnoise.run import run_benchmark

with logged(snakemake.log[0]):
    platform_config = snakemake.params.platform
    run_benchmark(
        from_config(platform_config),
        [snakemake.input.program, *map(str, snakemake.params.args)],
        ranks=snakemake.params.ranks,
        output=snakemake.output.result,
        log=snakemake.log[0],
        timeout_s=platform_config["timeout_s"],
        config=snakemake.params.config,
        inputs={"program": snakemake.input.program},
        nodes=snakemake.params.get("nodes"),
        binds_by_role=snakemake.params.get("binds_by_role", False),
        env=snakemake.params.get("env"),
    )
