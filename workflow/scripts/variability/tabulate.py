import time

import pandas as pd

from netnoise.atomic import write_csv
from netnoise.jobs import logged
from netnoise.studies.variability import analysis as study
from netnoise.studies.variability import model_file

with logged(snakemake.log[0]) as log:
    inputs = snakemake.input
    table = pd.read_csv(inputs.runs)
    settings = study.ModelSettings.from_config(snakemake.params.model, snakemake.params.seed)
    started = time.perf_counter()
    tables = study.evaluate(
        table,
        model_file.load_model(inputs.model),
        settings,
        claims=pd.read_csv(inputs.published_claims),
        features=pd.read_csv(inputs.published_features),
        unseen=pd.read_csv(inputs.published_table5),
        use_cases=pd.read_csv(inputs.published_table6),
        n_jobs=snakemake.threads,
    )
    log.info(
        "model evaluation of %d runs (%d x %d-fold nested CV) in %.1f s on %d process(es)",
        tables["model_summary"].set_index("quantity").at["runs", "netnoise"],
        settings.repeats,
        settings.cv,
        time.perf_counter() - started,
        snakemake.threads,
    )
    tables["table2_runtime_statistics"] = study.runtime_statistics(
        table, pd.read_csv(inputs.published_table2)
    )
    tables["table3_metrics"] = study.metrics_table(table)
    tables["table4_correlations"] = study.correlations(table, pd.read_csv(inputs.published_table4))
    # The clock says whether the counters were a simulated network's (headline.py).
    tables["model_evaluation"] = tables["model_evaluation"].assign(clock=snakemake.params.clock)
    log.info("model summary:\n%s", tables["model_summary"].to_string(index=False))
    log.info("model evaluation:\n%s", tables["model_evaluation"].to_string(index=False))
    log.info("unseen application:\n%s", tables["table5_unseen_application"].to_string(index=False))
    for name, path in snakemake.output.items():
        write_csv(path, tables[name])
