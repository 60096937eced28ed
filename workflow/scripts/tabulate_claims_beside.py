import pandas as pd

from netnoise import claims_summary, headlines
from netnoise.atomic import write_csv
from netnoise.jobs import logged

with logged(snakemake.log[0]) as log:
    here = {snakemake.params.platform: pd.read_csv(snakemake.input.summary)}
    by_platform = headlines.beside_bundle(snakemake.input.shipped, here)
    for platform, claims in by_platform.items():
        log.info("%s", claims_summary.headline_sentence(claims, platform))
    write_csv(snakemake.output[0], claims_summary.beside(by_platform))
