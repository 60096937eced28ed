import pandas as pd

from netnoise.atomic import write_csv
from netnoise.jobs import logged
from netnoise.studies.latency_variation import analysis

with logged(snakemake.log[0]) as log:
    inputs, out = snakemake.input, snakemake.output
    samples = pd.read_csv(inputs.samples)
    runtimes = pd.read_csv(inputs.runtimes)
    points = pd.read_csv(inputs.distributions)
    delays = analysis.injector_delays(pd.read_csv(inputs.reports))
    summary = analysis.injector_delay_summary(delays)
    runs = analysis.correlation_runs(runtimes, points, delays)
    published = pd.read_csv(inputs.published_table4)
    table4 = analysis.table4(runs, published)
    table4_grid = analysis.table4_grid(runs, published)
    log.info("injector, achieved vs intended mean delay:\n%s", summary.to_string(index=False))
    log.info(
        "latency of the correlations: %s", runs.groupby("application")["latency_source"].first()
    )
    log.info("Table 4:\n%s", table4.to_string(index=False))
    log.info("Table 4 on the mean x spread grid:\n%s", table4_grid.to_string(index=False))
    write_csv(out.table4, table4)
    write_csv(out.table4_grid, table4_grid)
    write_csv(out.grid_effects, analysis.grid_effects(runs))
    write_csv(out.injector_delay, delays)
    write_csv(out.injector_delay_summary, summary)
    write_csv(out.validation, analysis.validation_table(samples, points))
    write_csv(out.runtimes, analysis.runtime_summary(runtimes))
    write_csv(out.normality, analysis.normality_table(samples, runtimes))
    write_csv(out.mann_whitney, analysis.mann_whitney_table(samples, runtimes))
    write_csv(
        out.fixed_mean,
        analysis.fixed_mean_table(runtimes, points, snakemake.params.fixed_mean_levels, delays),
    )
    write_csv(out.correlation_runs, runs)
