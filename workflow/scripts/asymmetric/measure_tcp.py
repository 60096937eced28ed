import pandas as pd

from netnoise import provenance
from netnoise.atomic import write_csv
from netnoise.jobs import logged
from netnoise.platform import from_config
from netnoise.studies.asymmetric.measure import measure_tcp

with logged(snakemake.log[0]) as log:
    platform = from_config(snakemake.params.platform)
    platform.check()
    start = provenance.now()
    frame = measure_tcp(
        platform.testbed,
        pd.read_csv(snakemake.input.patterns),
        snakemake.params.seconds,
        snakemake.wildcards.congestion,
    )
    log.info("iperf3 links:\n%s", frame.to_string(index=False))
    write_csv(snakemake.output.result, frame)
    provenance.write_sidecar(
        snakemake.output.result,
        inputs={"patterns": snakemake.input.patterns},
        config=snakemake.params.config,
        platform=platform.describe(),
        command=["iperf3"],
        start=start,
        end=provenance.now(),
        exit_status=0,
    )
