from netnoise.figures import plot_job
from netnoise.studies.characterise import figures


def draw(table):
    return {"fig_cif": figures.fig_cif(table("cif"))}


plot_job(snakemake, draw)
