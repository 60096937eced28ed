from pathlib import Path

from netnoise import headlines
from netnoise.atomic import write_csv
from netnoise.jobs import logged

with logged(snakemake.log[0]) as log:
    key = snakemake.params.study
    paths = {name: Path(path) for name, path in snakemake.input.items()}
    claims = headlines.judge_headline_claims(key, paths)
    log.info("%s headline claims:\n%s", key, claims[["claim_id", "verdict", "reason"]].to_string())
    write_csv(snakemake.output[0], claims)
