import pandas as pd

from netnoise.figures import save_named, use_style
from netnoise.jobs import logged
from netnoise.studies.latency_variation import figures

with logged(snakemake.log[0]):
    use_style(snakemake.input.style)
    inputs = snakemake.input
    validation = pd.read_csv(inputs.validation)
    runtimes = pd.read_csv(inputs.runtimes)
    runs = pd.read_csv(inputs.correlation_runs)
    table4 = pd.read_csv(inputs.table4, keep_default_na=False, na_values=[""])
    fixed = pd.read_csv(inputs.fixed_mean)
    low, high = snakemake.params.fixed_mean_levels
    drawn = {
        "fig5_packet_mean": figures.injected_by_level(validation, "tcpping", "mean"),
        "fig6_packet_median": figures.injected_by_level(validation, "tcpping", "median"),
        "fig7_pingpong_mean": figures.injected_by_level(validation, "pingpong", "mean"),
        "fig8_pingpong_median": figures.injected_by_level(validation, "pingpong", "median"),
        "fig9_barrier_mean": figures.injected_by_level(validation, "barrier", "mean"),
        "fig10_barrier_median": figures.injected_by_level(validation, "barrier", "median"),
        "fig11_runtime_uniform": figures.runtimes_by_level(runtimes, "uniform"),
        "fig12_runtime_lognorm": figures.runtimes_by_level(runtimes, "lognorm"),
        "fig13_runtime_vs_mean": figures.runtime_vs_latency(runs, table4, "mean"),
        "fig14_runtime_vs_std": figures.runtime_vs_latency(runs, table4, "std"),
        "fig15_fixed_mean_low": figures.fixed_mean(fixed, low),
        "fig16_fixed_mean_high": figures.fixed_mean(fixed, high),
        "table4_correlations": figures.table4_figure(table4),
    }
    save_named(drawn, [*snakemake.output.svg, *snakemake.output.png])
