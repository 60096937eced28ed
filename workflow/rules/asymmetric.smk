# Seed 003: link sharing on the NICs and the backbone of two racks (Sec. 5, Fig. 4),
# random patterns (Sec. 7.1-7.2, Table II, Fig. 6) and an Alltoallv (Sec. 7.3, Fig. 8)
# on the study's own two-rack testbed, against the asymmetric and the fairness model.
from netnoise.studies.asymmetric import patterns as asymmetric_patterns
from netnoise.studies.asymmetric import testbed as asymmetric_testbed

AS = config["asymmetric"]
AS_RAW = f"{RESULTS}/raw/asymmetric"
AS_TIDY = f"{RESULTS}/tidy/asymmetric"
AS_MODELS = f"{RESULTS}/models/asymmetric"
AS_TABLES = f"{RESULTS}/tables/asymmetric"
AS_FIGURES = f"{RESULTS}/figures/asymmetric"
AS_RACKS = asymmetric_testbed.racks(asymmetric_platform()["testbed"])
AS_TABLE_NAMES = ["table2", "within10", "properties", "alltoallv"]
AS_FIGURE_NAMES = [
    "fig4_fairness",
    "fig4a_nic_bidirectional",
    "fig4b_backbone_bidirectional",
    *[f"fig6_errors_{cc}" for cc in AS["random"]["congestion_controls"]],
    "fig8_alltoallv",
]


wildcard_constraints:
    congestion=r"cubic|bbr|reno",
    family=r"properties|random|alltoallv",


# Cheap table and figure steps run on the submitting host under a cluster
# executor (profiles/slurm); only builds and measurements become jobs.
localrules:
    make_asymmetric_patterns,
    tidy_asymmetric,
    fit_asymmetric_platform,
    predict_asymmetric_links,
    tabulate_asymmetric,
    plot_asymmetric,


study_targets("asymmetric", asymmetric_targets)
on_release(release_asymmetric_testbed)


rule make_asymmetric_patterns:
    output:
        f"{AS_RAW}/patterns/{{family}}.csv",
    log:
        f"{LOGS}/asymmetric/patterns_{{family}}.log",
    conda:
        "../../envs/analysis.yaml"
    params:
        study=AS,
        racks=AS_RACKS,
    script:
        "../scripts/asymmetric/make_patterns.py"


rule validate_asymmetric_testbed:
    output:
        table=report(
            f"{AS_TABLES}/testbed_validation.csv",
            caption="../report/asymmetric/testbed_validation.rst",
            category="003 Asymmetric links",
            labels={"table": "two-rack testbed validation"},
        ),
        provenance=f"{AS_TABLES}/testbed_validation.csv.prov.json",
    log:
        f"{LOGS}/asymmetric/validate_testbed.log",
    benchmark:
        f"{BENCHMARKS}/asymmetric/validate_testbed.tsv"
    conda:
        "../../envs/build.yaml"
    resources:
        network=1,
    params:
        platform=asymmetric_platform(),
        seconds=3,
    script:
        "../scripts/platform/validate_testbed.py"


# MPI level: every trial of a family is one p2p_concurrent run, one process per
# link end; the trials of a family and congestion control run in one job.
rule measure_asymmetric_properties:
    input:
        program=program("p2p_concurrent"),
        shim=program("libnntcpcc.so"),
        patterns=f"{AS_RAW}/patterns/properties.csv",
        validation=f"{AS_TABLES}/testbed_validation.csv",
    output:
        results=asymmetric_results("properties"),
        provenance=asymmetric_results("properties", ".prov.json"),
    log:
        f"{LOGS}/asymmetric/mpi_properties_{{congestion}}.log",
    benchmark:
        f"{BENCHMARKS}/asymmetric/mpi_properties_{{congestion}}.tsv"
    conda:
        "../../envs/build.yaml"
    resources:
        network=1,
    params:
        platform=lambda wc: asymmetric_platform(wc.congestion),
        iterations=AS["iterations"],
        config=lambda wc: {"asymmetric": AS, "congestion": wc.congestion},
    script:
        "../scripts/asymmetric/measure_links.py"


use rule measure_asymmetric_properties as measure_asymmetric_random with:
    input:
        program=program("p2p_concurrent"),
        shim=program("libnntcpcc.so"),
        patterns=f"{AS_RAW}/patterns/random.csv",
        validation=f"{AS_TABLES}/testbed_validation.csv",
    output:
        results=asymmetric_results("random"),
        provenance=asymmetric_results("random", ".prov.json"),
    log:
        f"{LOGS}/asymmetric/mpi_random_{{congestion}}.log",
    benchmark:
        f"{BENCHMARKS}/asymmetric/mpi_random_{{congestion}}.tsv"


use rule measure_asymmetric_properties as measure_asymmetric_alltoallv with:
    input:
        program=program("p2p_concurrent"),
        shim=program("libnntcpcc.so"),
        patterns=f"{AS_RAW}/patterns/alltoallv.csv",
        validation=f"{AS_TABLES}/testbed_validation.csv",
    output:
        results=asymmetric_results("alltoallv"),
        provenance=asymmetric_results("alltoallv", ".prov.json"),
    log:
        f"{LOGS}/asymmetric/mpi_alltoallv_{{congestion}}.log",
    benchmark:
        f"{BENCHMARKS}/asymmetric/mpi_alltoallv_{{congestion}}.tsv"


# TCP level: the property experiments as concurrent iperf3 transfers.
rule measure_asymmetric_tcp:
    input:
        patterns=f"{AS_RAW}/patterns/properties.csv",
        validation=f"{AS_TABLES}/testbed_validation.csv",
    output:
        result=f"{AS_RAW}/tcp/properties_{{congestion}}.csv",
        provenance=f"{AS_RAW}/tcp/properties_{{congestion}}.csv.prov.json",
    log:
        f"{LOGS}/asymmetric/tcp_properties_{{congestion}}.log",
    benchmark:
        f"{BENCHMARKS}/asymmetric/tcp_properties_{{congestion}}.tsv"
    conda:
        "../../envs/build.yaml"
    resources:
        network=1,
    params:
        platform=lambda wc: asymmetric_platform(wc.congestion),
        seconds=AS["properties"]["iperf_seconds"],
        config=lambda wc: {"asymmetric": AS, "congestion": wc.congestion},
    script:
        "../scripts/asymmetric/measure_tcp.py"


rule tidy_asymmetric:
    input:
        patterns=expand(
            f"{AS_RAW}/patterns/{{family}}.csv", family=asymmetric_patterns.FAMILIES
        ),
        mpi=[path for *_, paths in asymmetric_runs() for path in paths],
        tcp=expand(
            f"{AS_RAW}/tcp/properties_{{congestion}}.csv",
            congestion=AS["congestion_controls"],
        ),
    output:
        links=f"{AS_TIDY}/mpi_links.csv",
        trials=f"{AS_TIDY}/mpi_trials.csv",
        tcp=f"{AS_TIDY}/tcp_links.csv",
    log:
        f"{LOGS}/asymmetric/tidy.log",
    conda:
        "../../envs/analysis.yaml"
    params:
        families=asymmetric_patterns.FAMILIES,
        runs=asymmetric_runs(),
        congestion_controls=AS["congestion_controls"],
    script:
        "../scripts/asymmetric/tidy.py"


rule fit_asymmetric_platform:
    input:
        f"{AS_TIDY}/mpi_links.csv",
    output:
        f"{AS_MODELS}/platform_{{congestion}}.yaml",
    log:
        f"{LOGS}/asymmetric/fit_platform_{{congestion}}.log",
    conda:
        "../../envs/analysis.yaml"
    params:
        racks=AS_RACKS,
        testbed=asymmetric_platform()["testbed"],
    script:
        "../scripts/asymmetric/fit_platform.py"


rule predict_asymmetric_links:
    input:
        links=f"{AS_TIDY}/mpi_links.csv",
        platforms=expand(
            f"{AS_MODELS}/platform_{{congestion}}.yaml",
            congestion=AS["congestion_controls"],
        ),
    output:
        f"{AS_TIDY}/link_errors.csv",
    log:
        f"{LOGS}/asymmetric/predict_links.log",
    conda:
        "../../envs/analysis.yaml"
    params:
        congestion_controls=AS["congestion_controls"],
    script:
        "../scripts/asymmetric/predict_links.py"


rule tabulate_asymmetric:
    input:
        errors=f"{AS_TIDY}/link_errors.csv",
        links=f"{AS_TIDY}/mpi_links.csv",
        trials=f"{AS_TIDY}/mpi_trials.csv",
        tcp=f"{AS_TIDY}/tcp_links.csv",
        platforms=expand(
            f"{AS_MODELS}/platform_{{congestion}}.yaml",
            congestion=AS["congestion_controls"],
        ),
        published_table2=reference("asymmetric", "table2.csv"),
        published_within10=reference("asymmetric", "within10.csv"),
        published_alltoallv=reference("asymmetric", "alltoallv.csv"),
    output:
        **{
            name: report(
                f"{AS_TABLES}/{name}.csv",
                caption=f"../report/asymmetric/{name}.rst",
                category="003 Asymmetric links",
                labels={"table": name},
            )
            for name in AS_TABLE_NAMES
        },
    log:
        f"{LOGS}/asymmetric/tabulate.log",
    conda:
        "../../envs/analysis.yaml"
    params:
        congestion_controls=AS["congestion_controls"],
    script:
        "../scripts/asymmetric/tabulate.py"


rule plot_asymmetric:
    input:
        **{name: f"{AS_TABLES}/{name}.csv" for name in AS_TABLE_NAMES},
        errors=f"{AS_TIDY}/link_errors.csv",
        published_fig4=reference("asymmetric", "fig4.csv"),
        style=STYLE,
    output:
        svg=expand(f"{AS_FIGURES}/{{name}}.svg", name=AS_FIGURE_NAMES),
        png=[
            report(
                f"{AS_FIGURES}/{name}.png",
                caption=f"../report/asymmetric/{asymmetric_caption(name)}.rst",
                category="003 Asymmetric links",
                labels={"figure": name},
            )
            for name in AS_FIGURE_NAMES
        ],
    log:
        f"{LOGS}/asymmetric/plot.log",
    conda:
        "../../envs/analysis.yaml"
    params:
        random_congestion_controls=AS["random"]["congestion_controls"],
    script:
        "../scripts/asymmetric/plot.py"
