from netnoise.baseline import load_samples
from netnoise.baseline_figure import latency_by_size
from netnoise.figures import save, use_style
from netnoise.jobs import logged

with logged(snakemake.log[0]):
    use_style(snakemake.input.style)
    figure = latency_by_size(load_samples(snakemake.input.tidy), snakemake.params.platform)
    save(figure, [snakemake.output.svg, snakemake.output.png])
