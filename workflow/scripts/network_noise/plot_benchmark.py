import pandas as pd

from netnoise.figures import save, use_style
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
        "fig5_slowdown_allocation": figures.slowdown_by_allocation(slowdown),
        "fig6_boxplot_collectives": figures.boxplot_by_collective(tidy, nodes),
    }
    outputs = [*snakemake.output.svg, *snakemake.output.png]
    for name, figure in drawn.items():
        save(figure, [path for path in outputs if f"/{name}." in path])
