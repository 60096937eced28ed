from netnoise.jobs import logged
from netnoise.studies.asymmetric import regime
from netnoise.studies.asymmetric.ns3 import simulate

with logged(snakemake.log[0]):
    params = snakemake.params
    point = params.point
    simulate(
        snakemake.input.program,
        regime.point_patterns(point),
        list(snakemake.output.results),
        ns3=point["ns3"],
        congestion=snakemake.wildcards.congestion,
        iterations=params.iterations,
        log=snakemake.log[0],
        timeout_s=params.timeout_s,
        config={**params.config, "regime_point": point},
        inputs={"program": snakemake.input.program},
    )
