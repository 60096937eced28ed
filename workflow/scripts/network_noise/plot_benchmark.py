from netnoise.figures import plot_job
from netnoise.studies.network_noise import figures


def draw(table):
    tidy, slowdown, nodes = table("tidy"), table("slowdown"), snakemake.params.nodes
    return {
        "fig3_boxplot_ratio": figures.boxplot_by_ratio(tidy, nodes),
        "fig4_slowdown_ratio": figures.slowdown_by_ratio(slowdown, nodes, table("published_fig4")),
        "fig5_slowdown_allocation": figures.slowdown_by_allocation(slowdown, tidy),
        "fig6_boxplot_collectives": figures.boxplot_by_collective(tidy, nodes),
    }


plot_job(snakemake, draw)
