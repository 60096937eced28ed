import pandas as pd

from netnoise.atomic import write_csv
from netnoise.jobs import logged
from netnoise.studies.asymmetric import analysis

with logged(snakemake.log[0]) as log:
    inputs = snakemake.input
    params = snakemake.params
    errors = pd.read_csv(inputs.errors)
    links, tcp = pd.read_csv(inputs.links), pd.read_csv(inputs.tcp)
    platforms = analysis.load_platforms(params.congestion_controls, inputs.platforms)
    quality = {
        tuple(by): analysis.precision(errors, links, tcp, params.iterations, params.testbed, by)
        for by in (["congestion", "d"], ["congestion", "nodes", "d"])
    }
    tables = {
        "table2": analysis.table2(
            errors, pd.read_csv(inputs.published_table2), quality["congestion", "nodes", "d"]
        ),
        "within10": analysis.within10(
            errors, pd.read_csv(inputs.published_within10), quality["congestion", "d"]
        ),
        "properties": analysis.property_rates(links, tcp, platforms),
        "alltoallv": analysis.alltoallv_table(
            pd.read_csv(inputs.trials), errors, pd.read_csv(inputs.published_alltoallv)
        ),
    }
    for name, table in tables.items():
        # Which network's trials (and fitted models) every row comes from.
        table.insert(0, "network", params.network)
        log.info("%s:\n%s", name, table.to_string(index=False))
        write_csv(snakemake.output[name], table)
