from netnoise.atomic import write_json
from netnoise.jobs import logged
from netnoise.studies.asymmetric.cluster import rack_map

with logged(snakemake.log[0]) as log:
    racks = rack_map(snakemake.params.platform, snakemake.params.study)
    log.info("racks: %s", racks)
    write_json(snakemake.output[0], racks)
