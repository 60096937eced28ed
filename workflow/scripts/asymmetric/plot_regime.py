from netnoise.figures import plot_job
from netnoise.studies.asymmetric import figures

plot_job(snakemake, lambda table: {"regime_asymmetry": figures.regime(table("regime"))})
