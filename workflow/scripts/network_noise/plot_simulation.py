from pathlib import Path

import pandas as pd

from netnoise.figures import save_named, use_style
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
    wanted = {Path(path).stem for path in outputs}
    save_named({name: plot(summary) for name, plot in draw.items() if name in wanted}, outputs)
