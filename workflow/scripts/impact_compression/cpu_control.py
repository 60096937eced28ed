import json
from pathlib import Path

from netnoise.jobs import job_from_spec, logged
from netnoise.platform import from_config
from netnoise.run import corun
from netnoise.studies.impact_compression.plan import cpu_control_load

with logged(snakemake.log[0]) as log:
    inputs, params = snakemake.input, snakemake.params
    records = [json.loads(Path(path).read_text()) for path in inputs.pairings]
    cpuhog = params.cpuhog
    load = cpu_control_load(records, cpuhog["ranks"])
    log.info("cpuhog ranks busy %.3f of a core each", load)
    cpuhog = {**cpuhog, "args": [*cpuhog["args"], "--load", f"{load:.3f}"]}
    corun(
        from_config(params.platform),
        job_from_spec(params.measured),
        [job_from_spec(cpuhog)],
        log=snakemake.log[0],
        timeout_s=params.platform["timeout_s"],
        config={**params.config, "cpu_control_load": load},
        inputs={"app": inputs.app, "cpuhog": inputs.cpuhog},
    )
