from netnoise.figures import plot_job
from netnoise.studies.latency_variation import figures


def draw(table):
    validation, runtimes = table("validation"), table("runtimes")
    runs, fixed = table("correlation_runs"), table("fixed_mean")
    table4 = table("table4", keep_default_na=False, na_values=[""])
    low, high = snakemake.params.fixed_mean_levels
    # The figures this platform's experiments make (no tcpping in a simulation).
    makers = {
        "fig5_packet_mean": lambda: figures.injected_by_level(validation, "tcpping", "mean"),
        "fig6_packet_median": lambda: figures.injected_by_level(validation, "tcpping", "median"),
        "fig7_pingpong_mean": lambda: figures.injected_by_level(validation, "pingpong", "mean"),
        "fig8_pingpong_median": lambda: figures.injected_by_level(validation, "pingpong", "median"),
        "fig9_barrier_mean": lambda: figures.injected_by_level(validation, "barrier", "mean"),
        "fig10_barrier_median": lambda: figures.injected_by_level(validation, "barrier", "median"),
        "fig11_runtime_uniform": lambda: figures.runtimes_by_level(runtimes, "uniform"),
        "fig12_runtime_lognorm": lambda: figures.runtimes_by_level(runtimes, "lognorm"),
        "fig13_runtime_vs_mean": lambda: figures.runtime_vs_latency(runs, table4, "mean"),
        "fig14_runtime_vs_std": lambda: figures.runtime_vs_latency(runs, table4, "std"),
        "fig15_fixed_mean_low": lambda: figures.fixed_mean(fixed, low),
        "fig16_fixed_mean_high": lambda: figures.fixed_mean(fixed, high),
        "table4_correlations": lambda: figures.table4_figure(table4),
    }
    return {name: makers[name]() for name in snakemake.params.figures}


plot_job(snakemake, draw)
