import pandas as pd

from netnoise.figures import save_named, use_style
from netnoise.jobs import logged
from netnoise.studies.asymmetric import figures

with logged(snakemake.log[0]):
    use_style(snakemake.input.style)
    inputs = snakemake.input
    properties = pd.read_csv(inputs.properties)
    published = pd.read_csv(inputs.published_fig4)
    errors = pd.read_csv(inputs.errors)
    within = pd.read_csv(inputs.within10)
    drawn = {
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
        "fig8_alltoallv": figures.alltoallv(pd.read_csv(inputs.alltoallv)),
    }
    save_named(drawn, [*snakemake.output.svg, *snakemake.output.png])
