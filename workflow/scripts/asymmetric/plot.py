from netnoise.figures import plot_job
from netnoise.studies.asymmetric import figures


def draw(table):
    properties, published = table("properties"), table("published_fig4")
    errors, within = table("errors"), table("within10")
    return {
        "fig4_fairness": figures.fairness(properties, published),
        "fig4a_nic_bidirectional": figures.bidirectional(
            properties, published, "nic_bidirectional"
        ),
        "fig4b_backbone_bidirectional": figures.bidirectional(
            properties, published, "backbone_bidirectional"
        ),
        **{
            f"fig6_errors_{cc}": figures.error_histograms(errors, within, cc)
            for cc in snakemake.params.random_congestion_controls
        },
        "fig8_alltoallv": figures.alltoallv(table("alltoallv")),
    }


plot_job(snakemake, draw)
