import pandas as pd

from netnoise.figures import save_named, use_style
from netnoise.jobs import logged
from netnoise.studies.network_noise import figures

with logged(snakemake.log[0]):
    use_style(snakemake.input.style)
    tidy = pd.read_csv(snakemake.input.tidy)
    slowdown = pd.read_csv(snakemake.input.slowdown)
    nodes = snakemake.params.nodes
    drawn = {
        "fig3_boxplot_ratio": figures.boxplot_by_ratio(tidy, nodes),
        "fig4_slowdown_ratio": figures.slowdown_by_ratio(slowdown, nodes),
        "fig5_slowdown_allocation": figures.slowdown_by_allocation(slowdown, tidy),
        "fig6_boxplot_collectives": figures.boxplot_by_collective(tidy, nodes),
    }
    save_named(drawn, [*snakemake.output.svg, *snakemake.output.png])
