# Seed 003: link sharing on the NICs and the backbone of two racks (Sec. 5, Fig. 4),
# random patterns (Sec. 7.1-7.2, Table II, Fig. 6) and an Alltoallv (Sec. 7.3, Fig. 8)
# on the study's own two-rack testbed, two racks of a Slurm cluster or a simulated
# tree in ns-3 (asymmetric.network), against the asymmetric and the fairness model.
# Planning: netnoise.studies.asymmetric.plan; the testbed: ...asymmetric.testbed; a
# cluster's racks and rates: ...asymmetric.cluster; ns-3: ...asymmetric.ns3.
from snakemake.logging import logger

from netnoise.studies.asymmetric import cluster as asymmetric_cluster
from netnoise.studies.asymmetric import ns3 as asymmetric_ns3
from netnoise.studies.asymmetric import patterns as asymmetric_patterns
from netnoise.studies.asymmetric import plan as asymmetric_plan
from netnoise.studies.asymmetric import regime as asymmetric_regime
from netnoise.studies.asymmetric import testbed as asymmetric_testbed
from netnoise.studies.asymmetric.settings import AsymmetricSettings

AS = SETTINGS.study(AsymmetricSettings)
AS_CONFIG = AS.as_config()
AS_PATHS = study_paths("asymmetric")
AS_PLATFORM = SETTINGS.effective(AS)
# The study with the link rates of where it runs (what its patterns and models read).
AS_STUDY = asymmetric_cluster.on_platform(
    netnoise_platform.from_settings(AS_PLATFORM), AS_CONFIG
)
AS_RACKS = f"{AS_PATHS.raw}/racks.json"
AS_TABLE_NAMES = asymmetric_plan.TABLE_NAMES
AS_FIGURE_NAMES = asymmetric_plan.figure_names(AS)
AS_RUNS = asymmetric_plan.runs(AS_PATHS.raw, AS)
AS_SKIPPED = asymmetric_plan.skipped(PLATFORM, AS)
# The TCP level (iperf3) and the link checks run on the study's testbed only.
AS_TESTBED = asymmetric_plan.on_testbed(AS, PLATFORM)
AS_NS3 = AS.in_ns3
AS_VALIDATION = [f"{AS_PATHS.tables}/testbed_validation.csv"] if AS_TESTBED else []

if AS.enabled and AS_SKIPPED:
    logger.warning(AS_SKIPPED)


wildcard_constraints:
    congestion=r"cubic|bbr|reno|default",
    family=r"properties|random|alltoallv",
    regime_point=r"p\d+",


# Cheap table and figure steps run on the submitting host under a cluster
# executor (profiles/slurm); only builds and measurements become jobs.
localrules:
    map_asymmetric_racks,
    make_asymmetric_patterns,
    tidy_asymmetric,
    fit_asymmetric_platform,
    predict_asymmetric_links,
    tabulate_asymmetric,
    plot_asymmetric,
    tabulate_asymmetric_regime,
    plot_asymmetric_regime,


on_release(lambda: asymmetric_testbed.release(AS_PLATFORM, AS))


# The racks the patterns are drawn on, resolved when the study starts (on a
# cluster from scontrol, which a dry run need not reach) and kept with the results.
rule map_asymmetric_racks:
    output:
        AS_RACKS,
    log:
        f"{AS_PATHS.logs}/racks.log",
    conda:
        "../../envs/analysis.yaml"
    params:
        platform=config["platform"],
        study=AS_CONFIG,
    script:
        "../scripts/asymmetric/map_racks.py"


rule make_asymmetric_patterns:
    input:
        racks=AS_RACKS,
    output:
        f"{AS_PATHS.raw}/patterns/{{family}}.csv",
    log:
        f"{AS_PATHS.logs}/patterns_{{family}}.log",
    conda:
        "../../envs/analysis.yaml"
    params:
        study=AS_STUDY,
    script:
        "../scripts/asymmetric/make_patterns.py"


rule validate_asymmetric_testbed:
    output:
        table=f"{AS_PATHS.tables}/testbed_validation.csv",
        provenance=f"{AS_PATHS.tables}/testbed_validation.csv.prov.json",
    log:
        f"{AS_PATHS.logs}/validate_testbed.log",
    benchmark:
        f"{AS_PATHS.benchmarks}/validate_testbed.tsv"
    conda:
        "../../envs/build.yaml"
    threads: MEASUREMENT_THREADS
    resources:
        network=1,
    params:
        platform=AS_PLATFORM.as_config(),
        seconds=3,
    script:
        "../scripts/platform/validate_testbed.py"


if AS_NS3:

    # ns-3: every trial of a family simulated on the tree of asymmetric.ns3 by
    # asymmetric_ns3, which writes p2p_concurrent's results; a family and
    # congestion control per job, on the submitting host's cores.
    rule simulate_asymmetric_properties:
        input:
            program=program(asymmetric_ns3.PROGRAM),
            patterns=f"{AS_PATHS.raw}/patterns/properties.csv",
        output:
            results=asymmetric_plan.results(AS_PATHS.raw, AS, "properties"),
            provenance=asymmetric_plan.results(
                AS_PATHS.raw, AS, "properties", ".prov.json"
            ),
        log:
            f"{AS_PATHS.logs}/ns3_properties_{{congestion}}.log",
        benchmark:
            f"{AS_PATHS.benchmarks}/ns3_properties_{{congestion}}.tsv"
        conda:
            "../../envs/build.yaml"
        params:
            ns3=AS.ns3.as_config(),
            iterations=AS.iterations.as_config(),
            timeout_s=SETTINGS.platform.timeout_s,
            config=lambda wc: asymmetric_plan.run_config(AS, wc.congestion),
        script:
            "../scripts/asymmetric/simulate_links.py"

    use rule simulate_asymmetric_properties as simulate_asymmetric_random with:
        input:
            program=program(asymmetric_ns3.PROGRAM),
            patterns=f"{AS_PATHS.raw}/patterns/random.csv",
        output:
            results=asymmetric_plan.results(AS_PATHS.raw, AS, "random"),
            provenance=asymmetric_plan.results(AS_PATHS.raw, AS, "random", ".prov.json"),
        log:
            f"{AS_PATHS.logs}/ns3_random_{{congestion}}.log",
        benchmark:
            f"{AS_PATHS.benchmarks}/ns3_random_{{congestion}}.tsv"

    use rule simulate_asymmetric_properties as simulate_asymmetric_alltoallv with:
        input:
            program=program(asymmetric_ns3.PROGRAM),
            patterns=f"{AS_PATHS.raw}/patterns/alltoallv.csv",
        output:
            results=asymmetric_plan.results(AS_PATHS.raw, AS, "alltoallv"),
            provenance=asymmetric_plan.results(
                AS_PATHS.raw, AS, "alltoallv", ".prov.json"
            ),
        log:
            f"{AS_PATHS.logs}/ns3_alltoallv_{{congestion}}.log",
        benchmark:
            f"{AS_PATHS.benchmarks}/ns3_alltoallv_{{congestion}}.tsv"

else:

    # MPI level: every trial of a family is one p2p_concurrent run, one process per
    # link end; the trials of a family and congestion control run in one job.
    rule measure_asymmetric_properties:
        input:
            program=program("p2p_concurrent"),
            shim=program("libnntcpcc.so"),
            patterns=f"{AS_PATHS.raw}/patterns/properties.csv",
            validation=AS_VALIDATION,
        output:
            results=asymmetric_plan.results(AS_PATHS.raw, AS, "properties"),
            provenance=asymmetric_plan.results(
                AS_PATHS.raw, AS, "properties", ".prov.json"
            ),
        log:
            f"{AS_PATHS.logs}/mpi_properties_{{congestion}}.log",
        benchmark:
            f"{AS_PATHS.benchmarks}/mpi_properties_{{congestion}}.tsv"
        conda:
            "../../envs/build.yaml"
        threads: MEASUREMENT_THREADS
        resources:
            # On a cluster: whole nodes, those of the family's patterns.
            **measurement_resources(
                lambda wc, input: len(asymmetric_plan.pattern_nodes(input.patterns)),
                nodes=lambda wc, input: len(
                    asymmetric_plan.pattern_nodes(input.patterns)
                ),
                slurm_extra=lambda wc, input: asymmetric_plan.slurm_placement(
                    input.patterns
                ),
            ),
        params:
            platform=lambda wc: study_platform(AS, congestion=wc.congestion),
            iterations=AS.iterations.as_config(),
            config=lambda wc: asymmetric_plan.run_config(AS, wc.congestion),
        script:
            "../scripts/asymmetric/measure_links.py"

    use rule measure_asymmetric_properties as measure_asymmetric_random with:
        input:
            program=program("p2p_concurrent"),
            shim=program("libnntcpcc.so"),
            patterns=f"{AS_PATHS.raw}/patterns/random.csv",
            validation=AS_VALIDATION,
        output:
            results=asymmetric_plan.results(AS_PATHS.raw, AS, "random"),
            provenance=asymmetric_plan.results(AS_PATHS.raw, AS, "random", ".prov.json"),
        log:
            f"{AS_PATHS.logs}/mpi_random_{{congestion}}.log",
        benchmark:
            f"{AS_PATHS.benchmarks}/mpi_random_{{congestion}}.tsv"

    use rule measure_asymmetric_properties as measure_asymmetric_alltoallv with:
        input:
            program=program("p2p_concurrent"),
            shim=program("libnntcpcc.so"),
            patterns=f"{AS_PATHS.raw}/patterns/alltoallv.csv",
            validation=AS_VALIDATION,
        output:
            results=asymmetric_plan.results(AS_PATHS.raw, AS, "alltoallv"),
            provenance=asymmetric_plan.results(
                AS_PATHS.raw, AS, "alltoallv", ".prov.json"
            ),
        log:
            f"{AS_PATHS.logs}/mpi_alltoallv_{{congestion}}.log",
        benchmark:
            f"{AS_PATHS.benchmarks}/mpi_alltoallv_{{congestion}}.tsv"


# TCP level: the property experiments as concurrent iperf3 transfers.
rule measure_asymmetric_tcp:
    input:
        patterns=f"{AS_PATHS.raw}/patterns/properties.csv",
        validation=f"{AS_PATHS.tables}/testbed_validation.csv",
    output:
        result=f"{AS_PATHS.raw}/tcp/properties_{{congestion}}.csv",
        provenance=f"{AS_PATHS.raw}/tcp/properties_{{congestion}}.csv.prov.json",
    log:
        f"{AS_PATHS.logs}/tcp_properties_{{congestion}}.log",
    benchmark:
        f"{AS_PATHS.benchmarks}/tcp_properties_{{congestion}}.tsv"
    conda:
        "../../envs/build.yaml"
    threads: MEASUREMENT_THREADS
    resources:
        network=1,
    params:
        platform=lambda wc: study_platform(AS, congestion=wc.congestion),
        seconds=AS.properties.iperf_seconds,
        config=lambda wc: asymmetric_plan.run_config(AS, wc.congestion),
    script:
        "../scripts/asymmetric/measure_tcp.py"


rule tidy_asymmetric:
    input:
        patterns=expand(
            f"{AS_PATHS.raw}/patterns/{{family}}.csv",
            family=asymmetric_patterns.FAMILIES,
        ),
        mpi=[path for *_, paths in AS_RUNS for path in paths],
        tcp=expand(
            f"{AS_PATHS.raw}/tcp/properties_{{congestion}}.csv",
            congestion=AS.congestion_controls if AS_TESTBED else [],
        ),
    output:
        links=f"{AS_PATHS.tidy}/mpi_links.csv",
        trials=f"{AS_PATHS.tidy}/mpi_trials.csv",
        tcp=f"{AS_PATHS.tidy}/tcp_links.csv",
    log:
        f"{AS_PATHS.logs}/tidy.log",
    conda:
        "../../envs/analysis.yaml"
    params:
        families=asymmetric_patterns.FAMILIES,
        runs=AS_RUNS,
        congestion_controls=AS.congestion_controls if AS_TESTBED else [],
    script:
        "../scripts/asymmetric/tidy.py"


rule fit_asymmetric_platform:
    input:
        links=f"{AS_PATHS.tidy}/mpi_links.csv",
        racks=AS_RACKS,
    output:
        f"{AS_PATHS.models}/platform_{{congestion}}.yaml",
    log:
        f"{AS_PATHS.logs}/fit_platform_{{congestion}}.log",
    conda:
        "../../envs/analysis.yaml"
    params:
        testbed=AS_STUDY["testbed"],
        network=AS.network,
    script:
        "../scripts/asymmetric/fit_platform.py"


rule predict_asymmetric_links:
    input:
        links=f"{AS_PATHS.tidy}/mpi_links.csv",
        platforms=expand(
            f"{AS_PATHS.models}/platform_{{congestion}}.yaml",
            congestion=AS.congestion_controls,
        ),
    output:
        f"{AS_PATHS.tidy}/link_errors.csv",
    log:
        f"{AS_PATHS.logs}/predict_links.log",
    conda:
        "../../envs/analysis.yaml"
    params:
        congestion_controls=AS.congestion_controls,
    script:
        "../scripts/asymmetric/predict_links.py"


rule tabulate_asymmetric:
    input:
        errors=f"{AS_PATHS.tidy}/link_errors.csv",
        links=f"{AS_PATHS.tidy}/mpi_links.csv",
        trials=f"{AS_PATHS.tidy}/mpi_trials.csv",
        tcp=f"{AS_PATHS.tidy}/tcp_links.csv",
        platforms=expand(
            f"{AS_PATHS.models}/platform_{{congestion}}.yaml",
            congestion=AS.congestion_controls,
        ),
        published_table2=reference("asymmetric", "table2.csv"),
        published_within10=reference("asymmetric", "within10.csv"),
        published_alltoallv=reference("asymmetric", "alltoallv.csv"),
    output:
        **{name: f"{AS_PATHS.tables}/{name}.csv" for name in AS_TABLE_NAMES},
    log:
        f"{AS_PATHS.logs}/tabulate.log",
    conda:
        "../../envs/analysis.yaml"
    params:
        congestion_controls=AS.congestion_controls,
        iterations=AS.iterations.as_config(),
        testbed=(
            asymmetric_ns3.queue_link(AS_CONFIG["ns3"])
            if AS_NS3
            else AS_PLATFORM.testbed.as_config()
        ),
        network=AS.network,
    script:
        "../scripts/asymmetric/tabulate.py"


rule plot_asymmetric:
    input:
        **{name: f"{AS_PATHS.tables}/{name}.csv" for name in AS_TABLE_NAMES},
        errors=f"{AS_PATHS.tidy}/link_errors.csv",
        published_fig4=reference("asymmetric", "fig4.csv"),
        style=figure_style(),
    output:
        svg=expand(f"{AS_PATHS.figures}/{{name}}.svg", name=AS_FIGURE_NAMES),
        png=[
            report_result(
                f"{AS_PATHS.figures}/{name}.png",
                "asymmetric",
                name,
                caption=f"{AS_PATHS.captions}/{asymmetric_plan.caption(name)}.rst",
            )
            for name in AS_FIGURE_NAMES
        ],
    log:
        f"{AS_PATHS.logs}/plot.log",
    conda:
        "../../envs/analysis.yaml"
    params:
        random_congestion_controls=AS.random.congestion_controls,
    script:
        "../scripts/asymmetric/plot.py"


# Where the asymmetric property lives (asymmetric.regime): every point of the
# sweeps simulated in ns-3 whatever the study's network, a congestion control
# and point per job.
rule simulate_asymmetric_regime:
    input:
        program=program(asymmetric_ns3.PROGRAM),
    output:
        results=asymmetric_regime.results(AS_PATHS.raw),
        provenance=asymmetric_regime.results(AS_PATHS.raw, ".prov.json"),
    log:
        f"{AS_PATHS.logs}/regime_{{congestion}}_{{regime_point}}.log",
    benchmark:
        f"{AS_PATHS.benchmarks}/regime_{{congestion}}_{{regime_point}}.tsv"
    conda:
        "../../envs/build.yaml"
    params:
        point=lambda wc: asymmetric_regime.named_point(AS_CONFIG, wc.regime_point),
        iterations=asymmetric_regime.stopping_rule(AS_CONFIG),
        timeout_s=SETTINGS.platform.timeout_s,
        config=lambda wc: asymmetric_plan.run_config(AS, wc.congestion),
    script:
        "../scripts/asymmetric/simulate_regime.py"


rule tabulate_asymmetric_regime:
    input:
        [
            path
            for cc in AS.regime.congestion_controls
            for path in asymmetric_regime.result_paths(AS_PATHS.raw, AS_CONFIG, cc)
        ],
    output:
        f"{AS_PATHS.tables}/{asymmetric_plan.REGIME_TABLE}.csv",
    log:
        f"{AS_PATHS.logs}/tabulate_regime.log",
    conda:
        "../../envs/analysis.yaml"
    params:
        study=AS_CONFIG,
        congestion_controls=AS.regime.congestion_controls,
    script:
        "../scripts/asymmetric/tabulate_regime.py"


rule plot_asymmetric_regime:
    input:
        regime=f"{AS_PATHS.tables}/{asymmetric_plan.REGIME_TABLE}.csv",
        style=figure_style(),
    output:
        svg=[f"{AS_PATHS.figures}/{asymmetric_plan.REGIME_FIGURE}.svg"],
        png=[
            report_result(
                f"{AS_PATHS.figures}/{asymmetric_plan.REGIME_FIGURE}.png",
                "asymmetric",
                asymmetric_plan.REGIME_FIGURE,
                caption=f"{AS_PATHS.captions}/{asymmetric_plan.REGIME_FIGURE}.rst",
            )
        ],
    log:
        f"{AS_PATHS.logs}/plot_regime.log",
    conda:
        "../../envs/analysis.yaml"
    script:
        "../scripts/asymmetric/plot_regime.py"
