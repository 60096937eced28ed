import pandas as pd

from netnoise.atomic import write_csv
from netnoise.jobs import logged
from netnoise.studies.asymmetric import analysis

with logged(snakemake.log[0]) as log:
    inputs = snakemake.input
    errors = pd.read_csv(inputs.errors)
    platforms = analysis.load_platforms(snakemake.params.congestion_controls, inputs.platforms)
    tables = {
        "table2": analysis.table2(errors, pd.read_csv(inputs.published_table2)),
        "within10": analysis.within10(errors, pd.read_csv(inputs.published_within10)),
        "properties": analysis.property_rates(
            pd.read_csv(inputs.links), pd.read_csv(inputs.tcp), platforms
        ),
        "alltoallv": analysis.alltoallv_table(
            pd.read_csv(inputs.trials), errors, pd.read_csv(inputs.published_alltoallv)
        ),
    }
    for name, table in tables.items():
        log.info("%s:\n%s", name, table.to_string(index=False))
        write_csv(snakemake.output[name], table)
