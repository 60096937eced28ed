from netnoise.figures import plot_job
from netnoise.studies.latency_variation import figures


def draw(table):
    levels = table("table")
    return {
        "fig2_latency_mean": figures.latency_vs_load(levels, "mean"),
        "fig3_latency_std": figures.latency_vs_load(levels, "std"),
        "fig4_idle_distribution": figures.idle_histogram(
            table("samples"), table("fits"), snakemake.params.probe
        ),
    }


plot_job(snakemake, draw)
