# Study 100, beyond the papers: the platform's congestion in GPCNeT's numbers.
# One run of the canaries and congestors per congestor setting (the idle
# congestors of "none" are the control), then each canary's Congestion Impact
# Factor. What runs is planned in netnoise.studies.characterise.plan.
from netnoise.studies.characterise import plan as ch_plan
from netnoise.studies.characterise.settings import CharacteriseSettings

CH = SETTINGS.study(CharacteriseSettings)
CH_PATHS = study_paths("characterise")
# The study's own layout (racks, backbone) over the platform's.
CH_PLATFORM = SETTINGS.effective(CH)
CH_TIDY = f"{CH_PATHS.tidy}/samples.csv"


localrules:
    tidy_characterise,
    tabulate_characterise,
    plot_characterise,


wildcard_constraints:
    congestor="|".join(CH.congestors),


rule measure_characterise:
    input:
        program=program("characterise"),
    output:
        result=ch_plan.raw_result(CH_PATHS.raw, "{congestor}"),
        provenance=ch_plan.raw_result(CH_PATHS.raw, "{congestor}") + ".prov.json",
    log:
        f"{CH_PATHS.logs}/measure_{{congestor}}.log",
    benchmark:
        f"{CH_PATHS.benchmarks}/measure_{{congestor}}.tsv"
    conda:
        "../../envs/build.yaml"
    threads: MEASUREMENT_THREADS
    resources:
        **measurement_resources(CH.nodes),
    params:
        ranks=CH.nodes,
        nodes=lambda wc: ch_plan.run_nodes(CH_PLATFORM, wc.congestor, CH.nodes),
        args=lambda wc: ch_plan.program_args(CH, wc.congestor),
        platform=CH_PLATFORM.as_config(),
        config={"characterise": CH.as_config()},
        # Open MPI's one-sided rdma component needs an RDMA network; the put and
        # get congestors go through pt2pt over TCP.
        env={"OMPI_MCA_osc": "^rdma"},
    script:
        "../scripts/run_benchmark.py"


rule tidy_characterise:
    input:
        results=[ch_plan.raw_result(CH_PATHS.raw, c) for c in CH.congestors],
    output:
        CH_TIDY,
    log:
        f"{CH_PATHS.logs}/tidy.log",
    conda:
        "../../envs/analysis.yaml"
    params:
        identifiers={"congestor": list(CH.congestors)},
    script:
        "../scripts/tidy_results.py"


rule tabulate_characterise:
    input:
        CH_TIDY,
    output:
        **{name: f"{CH_PATHS.tables}/{name}.csv" for name in ch_plan.TABLES},
    log:
        f"{CH_PATHS.logs}/tabulate.log",
    conda:
        "../../envs/analysis.yaml"
    script:
        "../scripts/characterise/tabulate.py"


rule plot_characterise:
    input:
        cif=f"{CH_PATHS.tables}/cif.csv",
        style=figure_style(),
    output:
        svg=expand(f"{CH_PATHS.figures}/{{name}}.svg", name=ch_plan.FIGURES),
        png=[
            report_result(
                f"{CH_PATHS.figures}/{name}.png",
                "characterise",
                name,
                caption=f"{CH_PATHS.captions}/{name}.rst",
            )
            for name in ch_plan.FIGURES
        ],
    log:
        f"{CH_PATHS.logs}/plot.log",
    conda:
        "../../envs/analysis.yaml"
    script:
        "../scripts/characterise/plot.py"
