from netnoise.atomic import write_csv
from netnoise.jobs import logged
from netnoise.studies.variability import analysis as study

with logged(snakemake.log[0]) as log:
    dirs = [d for batch in snakemake.input.batches for d in study.run_dirs(batch)]
    table = study.tidy_runs(dirs)
    log.info("%d runs: %s", len(table), table.groupby("campaign").size().to_dict())
    write_csv(snakemake.output[0], table)
