from netnoise.atomic import write_csv
from netnoise.jobs import logged
from netnoise.sim import simulate

with logged(snakemake.log[0]) as log:
    p = snakemake.params
    runs = simulate(p.spec, p.collective, p.ratio, p.runs, p.seed)
    log.info(
        "%s %s ratio %g: mean slowdown %.3f", p.spec, p.collective, p.ratio, runs["slowdown"].mean()
    )
    write_csv(snakemake.output[0], runs)
