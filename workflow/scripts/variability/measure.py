import contextlib
from pathlib import Path

from netnoise.jobs import logged
from netnoise.platform import from_config
from netnoise.studies.variability import campaign

with logged(snakemake.log[0]), contextlib.ExitStack() as stack:
    study = snakemake.params.config["variability"]
    platform = from_config(snakemake.params.platform)
    machine = campaign.machine_on(platform, study, snakemake.log[0], stack)
    applications = {
        name: campaign.Measured(
            app["program"], tuple(map(str, app["args"])), study["warmup"], study["iterations"]
        )
        for name, app in snakemake.params.applications.items()
    }
    out_dir = Path(snakemake.output[0])
    campaign.measure_runs(
        platform,
        machine,
        [campaign.RunKey(*run) for run in snakemake.params.runs],
        applications,
        campaign=snakemake.wildcards.campaign,
        seed=study["seed"],
        out_dir=out_dir,
        programs={"loadgen": snakemake.input.loadgen, "compressionb": snakemake.input.compressionb},
        log=snakemake.log[0],
        timeout_s=snakemake.params.platform["timeout_s"],
        counter_interval_s=study["counter_interval_s"],
        settings=campaign.BackgroundSettings.from_config(study["background"]),
        config=snakemake.params.config,
    )
