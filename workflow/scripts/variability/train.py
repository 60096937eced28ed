import pandas as pd

from netnoise.jobs import logged
from netnoise.studies.variability import analysis as study
from netnoise.studies.variability import model_file

with logged(snakemake.log[0]) as log:
    settings = study.ModelSettings.from_config(snakemake.params.model, snakemake.params.seed)
    model = study.train(pd.read_csv(snakemake.input[0]), settings, n_jobs=snakemake.threads)
    log.info(
        "trained on %s: %s, %d-fold R2 %.3f (the grid's best), bound %.2f x the trees' "
        "spread (%.0f %% level); out of fold: coverage %.3f, containment %.3f",
        model.applications,
        model.params,
        settings.cv,
        model.cv_r2,
        model.bound_scale,
        100 * settings.bound_level,
        model.coverage,
        model.containment,
    )
    model_file.save_model(snakemake.output[0], model)
