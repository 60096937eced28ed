import pandas as pd

from netnoise.figures import network_noise as figures
from netnoise.figures import save, use_style
from netnoise.jobs import logged

with logged(snakemake.log[0]):
    use_style(snakemake.input.style)
    summary = pd.read_csv(snakemake.input.summary)
    drawn = {
        "fig13_fat_tree_size": figures.fat_tree_size(summary),
        "fig15_torus_ratio": figures.torus_ratio(summary),
        "fig16_torus_size": figures.torus_size(summary),
    }
    outputs = [*snakemake.output.svg, *snakemake.output.png]
    for name, figure in drawn.items():
        save(figure, [path for path in outputs if f"/{name}." in path])
