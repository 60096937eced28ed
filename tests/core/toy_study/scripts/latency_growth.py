from netnoise.atomic import write_csv
from netnoise.baseline import load_samples
from netnoise.jobs import logged

with logged(snakemake.log[0]):
    samples = load_samples(snakemake.input[0])
    sizes = samples["size_bytes"]
    extremes = samples[sizes.isin([sizes.min(), sizes.max()])]
    table = extremes[["size_bytes", "latency_us"]].assign(min_ratio=snakemake.params.min_ratio)
    write_csv(snakemake.output[0], table)
