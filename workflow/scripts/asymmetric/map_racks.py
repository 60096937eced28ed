from netnoise.atomic import write_json
from netnoise.jobs import logged
from netnoise.platform import from_settings
from netnoise.settings import Settings
from netnoise.studies.asymmetric.cluster import rack_map
from netnoise.studies.asymmetric.settings import AsymmetricSettings

with logged(snakemake.log[0]) as log:
    settings = Settings.of(snakemake.config)
    platform = from_settings(settings.effective(settings.study(AsymmetricSettings)))
    racks = rack_map(platform, snakemake.params.study)
    log.info("racks: %s", racks)
    write_json(snakemake.output[0], racks)
