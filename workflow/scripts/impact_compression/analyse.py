import pandas as pd

from netnoise.atomic import write_csv
from netnoise.jobs import logged
from netnoise.studies.impact_compression import analysis as ic

with logged(snakemake.log[0]) as log:
    impact = pd.read_csv(snakemake.input.impact)
    runtimes = pd.read_csv(snakemake.input.runtimes, keep_default_na=False)
    out = snakemake.output
    utilization = ic.utilization_table(impact)
    predictions = ic.predictions(impact, runtimes)
    summary = ic.error_summary(predictions)
    slowdowns = ic.measured_slowdowns(runtimes)
    log.info("prediction errors:\n%s", summary.to_string(index=False))
    write_csv(out.utilization, utilization)
    write_csv(out.degradation, ic.degradation(runtimes))
    write_csv(out.slowdowns, slowdowns)
    write_csv(out.predictions, predictions)
    write_csv(out.error_summary, summary)
    write_csv(out.table1, ic.slowdown_matrix(slowdowns).reset_index())
