from netnoise.figures import plot_job
from netnoise.studies.impact_compression import analysis as ic
from netnoise.studies.impact_compression import figures


def draw(table):
    impact, utilization = table("impact"), table("utilization")
    degradation, summary = table("degradation"), table("error_summary")
    applications = sorted(degradation["application"].unique())
    published = ic.published_scores(table("published_table1"), table("published_claims"))
    return {
        "fig3_impact_latency": figures.impact_latency(impact, applications),
        "fig6_compression_utilization": figures.compression_utilization(utilization),
        "fig7_degradation": figures.degradation_vs_utilization(
            degradation, utilization, ic.fit_lines(degradation, utilization)
        ),
        "fig8_prediction_errors": figures.prediction_errors(table("predictions")),
        "fig9_error_summary": figures.error_summary(summary, published),
        "table1_slowdowns": figures.slowdown_tables(
            table("table1"), table("published_table1"), table("slowdowns"), summary, published
        ),
    }


plot_job(snakemake, draw)
