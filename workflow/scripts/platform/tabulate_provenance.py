from netnoise.atomic import write_csv
from netnoise.jobs import logged
from netnoise.provenance import cpu_summary, sidecars, summary_table

with logged(snakemake.log[0]) as log:
    table = summary_table(sidecars(snakemake.params.results), root=".")
    failed = table[table["exit_status"] != 0]
    if not failed.empty:
        raise ValueError(f"results with a failed run recorded: {failed['result'].tolist()}")
    log.info("%d results, revisions %s", len(table), sorted(table["git_sha"].unique()))
    write_csv(snakemake.output.provenance, table)
    summary = cpu_summary(table)
    for row in summary.itertuples():
        log.info(
            "%s: %d measured results, %d CPU-saturated, %d attempts rejected",
            row.study,
            row.results,
            row.saturated,
            row.rejected_attempts,
        )
    write_csv(snakemake.output.cpu, summary)
