import pandas as pd

from netnoise import headlines, verdicts
from netnoise.atomic import write_csv
from netnoise.jobs import logged

with logged(snakemake.log[0]) as log:
    here = {snakemake.params.platform: pd.read_csv(snakemake.input.summary)}
    by_platform = headlines.beside_bundle(snakemake.input.shipped, here)
    for platform, claims in by_platform.items():
        log.info("%s", verdicts.headline_sentence(claims, platform))
    write_csv(snakemake.output[0], verdicts.beside(by_platform))
