from pathlib import Path

from netnoise.atomic import write_csv
from netnoise.jobs import logged
from netnoise.provenance import summary_table

with logged(snakemake.log[0]) as log:
    results = Path(snakemake.params.results)
    sidecars = sorted(results.glob("raw/**/*.prov.json")) + sorted(
        results.glob("tables/**/*.prov.json")
    )
    table = summary_table(sidecars, root=".")
    failed = table[table["exit_status"] != 0]
    if not failed.empty:
        raise ValueError(f"results with a failed run recorded: {failed['result'].tolist()}")
    log.info("%d results, revisions %s", len(table), sorted(table["git_sha"].unique()))
    write_csv(snakemake.output[0], table)
