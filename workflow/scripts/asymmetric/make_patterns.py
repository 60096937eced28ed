import json

from netnoise.atomic import write_csv
from netnoise.jobs import logged
from netnoise.studies.asymmetric.patterns import patterns

with logged(snakemake.log[0]) as log:
    with open(snakemake.input.racks) as fh:
        racks = json.load(fh)
    frame = patterns(snakemake.wildcards.family, snakemake.params.study, racks)
    log.info("%d trials, %d links", frame["trial"].nunique(), len(frame))
    write_csv(snakemake.output[0], frame)
