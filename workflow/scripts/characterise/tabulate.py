import pandas as pd

from netnoise.atomic import write_csv
from netnoise.jobs import logged
from netnoise.studies.characterise import cif

with logged(snakemake.log[0]) as log:
    tidy = pd.read_csv(snakemake.input[0])
    tables = {
        "cif": cif.impact_table(tidy),
        "canaries": cif.canary_rounds_table(tidy),
        "offered_load": cif.offered_load_table(tidy),
    }
    log.info("Congestion Impact Factors:\n%s", tables["cif"].to_string(index=False))
    log.info("offered load:\n%s", tables["offered_load"].to_string(index=False))
    for name, table in tables.items():
        write_csv(snakemake.output[name], table)
