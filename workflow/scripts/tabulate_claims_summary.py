import pandas as pd

from netnoise import claims_summary, verdicts
from netnoise.atomic import write_csv
from netnoise.jobs import logged

with logged(snakemake.log[0]) as log:
    claims = pd.concat([pd.read_csv(path) for path in snakemake.input], ignore_index=True)
    log.info("%s", claims_summary.headline_sentence(claims, snakemake.params.platform))
    for found in verdicts.contradictions(claims):
        log.warning("contradiction: %s", found)
    write_csv(snakemake.output[0], claims)
