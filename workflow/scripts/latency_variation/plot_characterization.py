import pandas as pd

from netnoise.figures import save_named, use_style
from netnoise.jobs import logged
from netnoise.studies.latency_variation import figures

with logged(snakemake.log[0]):
    use_style(snakemake.input.style)
    table = pd.read_csv(snakemake.input.table)
    drawn = {
        "fig2_latency_mean": figures.latency_vs_load(table, "mean"),
        "fig3_latency_std": figures.latency_vs_load(table, "std"),
        "fig4_idle_distribution": figures.idle_histogram(
            pd.read_csv(snakemake.input.samples),
            pd.read_csv(snakemake.input.fits),
            snakemake.params.probe,
        ),
    }
    save_named(drawn, [*snakemake.output.svg, *snakemake.output.png])
