from pathlib import Path

from netnoise.build import build_programs, write_build_info
from netnoise.jobs import logged

with logged(snakemake.log[0]):
    info = build_programs(
        Path(snakemake.input.makefile).parent,
        Path(snakemake.output.info).parent,
        mpicc=snakemake.params.mpicc,
        cflags=snakemake.params.cflags,
        log=snakemake.log[0],
        build_dir=snakemake.params.build_dir,
        flavour=snakemake.params.flavour,
        target=snakemake.params.target,
    )
    write_build_info(snakemake.output.info, info)
