import pandas as pd

from netnoise.figures import save_named, use_style
from netnoise.jobs import logged
from netnoise.studies.impact_compression import analysis as ic
from netnoise.studies.impact_compression import figures

with logged(snakemake.log[0]):
    use_style(snakemake.input.style)
    inputs = snakemake.input
    impact = pd.read_csv(inputs.impact)
    utilization = pd.read_csv(inputs.utilization)
    degradation = pd.read_csv(inputs.degradation)
    applications = sorted(degradation["application"].unique())
    summary = pd.read_csv(inputs.error_summary)
    published = ic.published_scores(
        pd.read_csv(inputs.published_table1), pd.read_csv(inputs.published_claims)
    )
    drawn = {
        "fig3_impact_latency": figures.impact_latency(impact, applications),
        "fig6_compression_utilization": figures.compression_utilization(utilization),
        "fig7_degradation": figures.degradation_vs_utilization(
            degradation, utilization, ic.fit_lines(degradation, utilization)
        ),
        "fig8_prediction_errors": figures.prediction_errors(pd.read_csv(inputs.predictions)),
        "fig9_error_summary": figures.error_summary(summary, published),
        "table1_slowdowns": figures.slowdown_tables(
            pd.read_csv(inputs.table1),
            pd.read_csv(inputs.published_table1),
            pd.read_csv(inputs.slowdowns),
            summary,
            published,
        ),
    }
    save_named(drawn, [*snakemake.output.svg, *snakemake.output.png])
