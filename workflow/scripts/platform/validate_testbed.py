from netnoise import provenance
from netnoise.atomic import write_csv
from netnoise.jobs import logged
from netnoise.platform import from_config
from netnoise.testbed.validation import BROKEN_SHARE, MIN_SHARE, link_checks

with logged(snakemake.log[0]) as log:
    platform = from_config(snakemake.params.platform)
    platform.check()
    start = provenance.now()
    checks = link_checks(platform.testbed, seconds=snakemake.params.seconds)
    log.info("link checks:\n%s", checks.to_string(index=False))
    write_csv(snakemake.output.table, checks)
    provenance.write_sidecar(
        snakemake.output.table,
        config={"platform": snakemake.params.platform},
        platform=platform.describe(),
        command=["iperf3"],
        start=start,
        end=provenance.now(),
        exit_status=0,
    )
    if (checks["share"] < BROKEN_SHARE).any():
        raise SystemExit(
            f"a testbed link carries less than {BROKEN_SHARE:.0%} of its configured rate: "
            "the testbed is misconfigured; see the table in the log"
        )
    if not checks["passed"].all():
        log.warning("a link stayed below %.0f%% of its rate: the CPU was busy", MIN_SHARE * 100)
