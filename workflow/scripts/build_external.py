from netnoise.atomic import write_json
from netnoise.external import build_external
from netnoise.jobs import logged

with logged(snakemake.log[0]):
    record = build_external(
        snakemake.params.name,
        source=snakemake.params.source,
        command=snakemake.params.command,
        binary=snakemake.params.binary,
        work_dir=snakemake.params.work_dir,
        dest=snakemake.output.binary,
        env=snakemake.params.env,
        log=snakemake.log[0],
    )
    write_json(snakemake.output.info, record)
