import pandas as pd

from netnoise.atomic import write_csv
from netnoise.jobs import logged
from netnoise.studies.impact_compression import analysis as ic
from netnoise.studies.impact_compression import claims_table, queue

with logged(snakemake.log[0]) as log:
    inputs, out = snakemake.input, snakemake.output
    impact = pd.read_csv(inputs.impact)
    runtimes = pd.read_csv(inputs.runtimes, keep_default_na=False)
    table1 = pd.read_csv(inputs.published_table1)
    published = ic.published_scores(table1, pd.read_csv(inputs.published_claims))
    utilization = ic.utilization_table(
        impact, snakemake.config["impact_compression"]["compression"], snakemake.params.link_mbit
    )
    degradation = ic.degradation(runtimes)
    predictions = ic.predictions(impact, runtimes)
    summary = ic.error_summary(predictions, published, ic.mae_intervals(impact, runtimes))
    slowdowns = ic.measured_slowdowns(runtimes).assign(clock=snakemake.params.clock)
    relativity = ic.relativity_violations(impact, runtimes)
    idle = impact.loc[impact["component"] == "idle", "latency_us"].to_numpy(float)
    claims = claims_table.claims(
        slowdowns,
        summary,
        published,
        table1,
        utilization=utilization,
        idle_far_out=(int(queue.far_out(idle).sum()), len(idle)),
        discordant=queue.discordant_pairs(
            degradation, utilization.set_index("component")["utilization"]
        ),
        relativity=relativity,
        saturated=ic.saturated_share(impact, runtimes),
    )
    log.info("prediction errors:\n%s", summary.to_string(index=False))
    log.info("claims:\n%s", claims.to_string(index=False))
    write_csv(out.utilization, utilization)
    write_csv(out.degradation, degradation)
    write_csv(out.slowdowns, slowdowns)
    write_csv(out.predictions, predictions)
    write_csv(out.error_summary, summary)
    write_csv(out.table1, ic.slowdown_matrix(slowdowns).reset_index())
    write_csv(out.relativity, relativity)
    write_csv(out.claims, claims)
