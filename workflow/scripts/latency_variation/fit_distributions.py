from pathlib import Path

import pandas as pd

from netnoise.atomic import write_csv
from netnoise.jobs import logged
from netnoise.studies.latency_variation import characterization, injection

with logged(snakemake.log[0]) as log:
    fit = snakemake.params.fit
    fits, dists = characterization.fit_characterization(
        pd.read_csv(snakemake.input.samples),
        fit["probe"],
        fit["scale_fractions"],
        fit["mean_from"],
        fit["stds_us"],
    )
    injected = dists[dists["level"].isin(snakemake.params.injected_levels)]
    directory = Path(snakemake.output.tables[0]).parent
    points = injection.write_injector_files(
        injected, directory, fit["table_unit"], snakemake.params.seed
    )
    log.info("fits:\n%s", fits.to_string(index=False))
    log.info("injected distributions:\n%s", points.to_string(index=False))
    write_csv(snakemake.output.fits, fits)
    write_csv(snakemake.output.distributions, points)
