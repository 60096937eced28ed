import pandas as pd

from netnoise.figures import save, use_style
from netnoise.jobs import logged
from netnoise.studies.network_noise import figures

with logged(snakemake.log[0]):
    use_style(snakemake.input.style)
    summary = pd.read_csv(snakemake.input.summary)
    draw = {
        "fig11_fabric_ratio": figures.fabric_ratio,
        "fig13_fat_tree_size": figures.fat_tree_size,
        "fig15_torus_ratio": figures.torus_ratio,
        "fig16_torus_size": figures.torus_size,
    }
    outputs = [*snakemake.output.svg, *snakemake.output.png]
    for name, plot in draw.items():
        paths = [path for path in outputs if f"/{name}." in path]
        if paths:
            save(plot(summary), paths)
