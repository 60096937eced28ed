from snakemake.logging import logger

import copy
from types import SimpleNamespace

from netnoise.studies.asymmetric import study as asymmetric_study
from netnoise import config as netnoise_config
from netnoise import studies as netnoise_studies
from netnoise.build import list_programs
from netnoise.jobs import expose_package
from netnoise.studies.network_noise.analysis import point_name
from netnoise.studies.variability.campaign import batches, run_keys

netnoise_config.validate(
    config, source=", ".join(map(str, workflow.configfiles)) or "config"
)

expose_package(PACKAGE_SRC)

PLATFORM = config["platform"]["kind"]
RESULTS = f"results/{PLATFORM}"
BIN = f"{RESULTS}/bin"
LOGS = f"{RESULTS}/logs"
BENCHMARKS = f"{RESULTS}/benchmarks"
# Sources live beside the workflow; results go to the working directory.
PROJECT = Path(workflow.basedir).parent
CSRC = PROJECT / "csrc"
C_PROGRAMS = list_programs(CSRC)
C_SOURCES = sorted(
    str(p) for p in CSRC.rglob("*") if p.suffix in (".c", ".h") or p.name == "Makefile"
)
STYLE = str(PROJECT / "src" / "netnoise" / "netnoise.mplstyle")


wildcard_constraints:
    size=r"\d+",
    rep=r"\d+",


def reference(study, name):
    """A published-values table of a study in resources/reference/ (beside the workflow)."""
    return str(PROJECT / "resources" / "reference" / study / name)


def program(name):
    """Path of a compiled C program of csrc/."""
    return f"{BIN}/{name}"


def study_nodes(count):
    """Names of the first ``count`` nodes on the testbed; elsewhere the launcher places ranks."""
    if PLATFORM != "testbed":
        return None
    prefix = config["platform"]["testbed"]["prefix"]
    return [f"{prefix}-n{i:02d}" for i in range(1, count + 1)]


def application_binary(name):
    """Executable of a configured application: a csrc program or a built real one."""
    app = config["applications"][name]
    return program(app["program"]) if "program" in app else f"{BIN}/apps/{name}"


def application_job(name, output, ranks, nodes, iterations, warmup):
    """A co-run job spec of a configured application; iterations=0 loops until stopped.

    A real application is wrapped by netnoise.external, which times each launch
    and extracts its figure of merit.
    """
    app = config["applications"][name]
    spec = {
        "name": name,
        "program": application_binary(name),
        "args": list(app.get("args", [])),
        "ranks": ranks,
        "nodes": nodes,
        "output": output,
    }
    if "program" in app:
        spec["args"] += ["--iterations", iterations, "--warmup", warmup]
        return spec
    fom = app.get("figure_of_merit", {})
    spec["external"] = {
        "tool": name,
        "version": app["version"],
        "iterations": iterations,
        "warmup": warmup,
        "fom": fom.get("pattern"),
        "fom_unit": fom.get("unit", ""),
    }
    return spec


def build_environment():
    """Compiler settings a third-party build command sees."""
    return {"MPICC": config["build"]["mpicc"], "CFLAGS": config["build"]["cflags"]}


def benchmark_job(name, output, ranks, nodes, args):
    """A co-run job spec of a csrc benchmark."""
    return {
        "name": name,
        "program": program(name),
        "args": [str(a) for a in args],
        "ranks": ranks,
        "nodes": nodes,
        "output": output,
    }


def study_paths(key):
    """Where study ``key`` keeps its results, logs and benchmark timings, and how
    its report entries are filed (its caption folder and category)."""
    study = netnoise_studies.get(key)
    return SimpleNamespace(
        raw=f"{RESULTS}/raw/{key}",
        tidy=f"{RESULTS}/tidy/{key}",
        models=f"{RESULTS}/models/{key}",
        tables=f"{RESULTS}/tables/{key}",
        figures=f"{RESULTS}/figures/{key}",
        logs=f"{LOGS}/{key}",
        benchmarks=f"{BENCHMARKS}/{key}",
        captions=f"../report/{key}",
        category=f"{study.number} {study.title}",
    )


def figure_style():
    """The matplotlib style every figure uses (an input of every plot rule)."""
    return STYLE


_STUDY_TARGETS = {}
_RELEASES = []


def study_targets(key, targets):
    """Registers ``targets()`` as the final files of study ``key``; it is called
    only when the study is enabled."""
    _STUDY_TARGETS[key] = targets


def on_release(release):
    """Registers ``release()`` to run when the workflow ends (to remove the
    testbeds a study brought up of its own)."""
    _RELEASES.append(release)


def all_targets():
    targets = [
        f"{RESULTS}/figures/baseline_latency.svg",
        f"{RESULTS}/figures/baseline_latency.png",
        f"{RESULTS}/tables/baseline_latency.csv",
    ]
    if PLATFORM == "testbed":
        targets.append(f"{RESULTS}/tables/testbed_validation.csv")
    for key, targets_of in _STUDY_TARGETS.items():
        if config[key]["enabled"]:
            targets += targets_of()
    return targets


def release_testbed():
    """Tear the testbed down (and every study's own) when the workflow ends,
    unless asked to keep them."""
    if PLATFORM == "testbed" and not config["platform"]["testbed"]["keep_up"]:
        from netnoise.platform.testbed import TestbedPlatform

        TestbedPlatform(config["platform"]).testbed.down()
        for release in _RELEASES:
            release()


def release_asymmetric_testbed():
    if config["asymmetric"]["enabled"]:
        from netnoise.platform.testbed import TestbedPlatform

        TestbedPlatform(asymmetric_platform()).testbed.down()


# Seed 000 (rules/compression.smk, rules/pairings.smk): job specs and targets.


def impactb(output, samples=0):
    """ImpactB probing every node pair; samples=0 loops until the co-run ends."""
    args = ["--size", IC["impact_size"], "--sleep-us", IC["impact_sleep_us"]]
    args += ["--iterations", samples, "--warmup", 2]
    return benchmark_job("impactb", output, IC_RANKS, IC_NODES, args)


def compressionb(cb, output):
    partners, messages, cycles = IC_CONFIGS[cb]
    args = ["--partners", partners, "--messages", messages, "--sleep-cycles", cycles]
    args += [
        "--cycle-hz",
        IC_GRID["cycle_hz"],
        "--size",
        IC_GRID["size"],
        "--iterations",
        0,
    ]
    return benchmark_job("compressionb", output, IC_RANKS, IC_NODES, args)


def measured_app(app, output):
    return application_job(app, output, IC_RANKS, IC_NODES, IC["runs"], 1)


def background_app(app, output):
    return application_job(app, output, IC_RANKS, IC_NODES, 0, 0)


def app_program(wildcards):
    return application_binary(wildcards.app)


def partner_program(wildcards):
    return application_binary(wildcards.partner)


def impact_compression_targets():
    return [
        *expand(
            f"{IC_FIGURES}/{{name}}.{{ext}}", name=IC_FIGURE_NAMES, ext=["svg", "png"]
        ),
        *expand(f"{IC_TABLES}/{{name}}.csv", name=IC_TABLE_NAMES),
    ]


# Seed 001 simulator (rules/simulate.smk): one point per topology and ratio.


def simulation_points():
    """Point id -> (figure, topology SPEC, ratio) of every simulation."""
    nn = config["network_noise"]
    points = {}

    def add(figure, spec, ratio):
        points[point_name(figure, spec, ratio)] = (figure, spec, ratio)

    for spec in nn["fat_trees"]:
        add("fat_tree_size", spec, 0.5)
    for ratio in nn["ratios"]:
        add("torus_ratio", nn["torus_2d"], ratio)
        add("torus_ratio", nn["torus_3d"], ratio)
    for k in nn["torus_sizes_2d"]:
        add("torus_size", f"torus:{k}x{k}", 0.5)
    for k in nn["torus_sizes_3d"]:
        add("torus_size", f"torus:{k}x{k}x{k}", 0.5)
    for path in nn["fabrics"]:
        for ratio in nn["ratios"]:
            add("fabric_ratio", f"fabric:{path}", ratio)
    return points


def network_noise_targets():
    targets = network_noise_simulation_targets()
    if config["network_noise"]["benchmark"]["enabled"]:
        targets += network_noise_benchmark_targets() + netgauge_targets()
    return targets


def network_noise_simulation_targets():
    return [
        *expand(
            f"{NN_FIGURES}/{{name}}.{{ext}}", name=NN_FIGURE_NAMES, ext=["svg", "png"]
        ),
        f"{NN_TABLES}/simulation_summary.csv",
        f"{NN_TABLES}/topologies.csv",
    ]


def fabric_file(spec):
    """The topology file a fabric SPEC reads (an input of its simulations)."""
    return [spec.split(":", 1)[1]] if spec.startswith("fabric:") else []


def nn_figure_names():
    """Fig. 11 exists only when fabric files are configured."""
    names = ["fig13_fat_tree_size", "fig15_torus_ratio", "fig16_torus_size"]
    return (
        ["fig11_fabric_ratio", *names] if config["network_noise"]["fabrics"] else names
    )


def noise_points():
    """(collective, ratio, allocation) of every noise-benchmark run: the ratio sweep of
    Fig. 3, 4, 6 on the full allocation and the allocation sweep of Fig. 5."""
    bench = config["network_noise"]["benchmark"]
    points = [
        (c, r, bench["nodes"]) for c in bench["collectives"] for r in bench["ratios"]
    ]
    points += [("allreduce", 0.5, n) for n in bench["allocations"]]
    return sorted(set(points))


def network_noise_benchmark_targets():
    return [
        *expand(
            f"{NN_FIGURES}/{{name}}.{{ext}}", name=NB_FIGURE_NAMES, ext=["svg", "png"]
        ),
        f"{NN_TABLES}/benchmark_slowdown.csv",
    ]


def netgauge_build_command():
    """Netgauge's autotools build against the MPI of build.mpicc."""
    mpi_root = '"$(dirname "$(dirname "$(command -v "$MPICC")")")"'
    extra = config["network_noise"]["benchmark"]["netgauge"]["configure_args"]
    return " ".join(["./configure", f"--with-mpi={mpi_root}", *extra, "&& make"])


def netgauge_job(binary, output):
    """The collvsnoise run covering the ratio sweep of the noise benchmark."""
    from netnoise.studies.network_noise.netgauge import collvsnoise_argv

    bench = config["network_noise"]["benchmark"]
    argv = collvsnoise_argv(
        binary, bench["netgauge"]["tests"], bench["nodes"], bench["ratios"]
    )
    return {
        "name": "netgauge",
        "program": argv[0],
        "args": argv[1:],
        "ranks": bench["nodes"],
        "nodes": study_nodes(bench["nodes"]),
        "output": output,
        "external": {"tool": "netgauge", "table": "netgauge_collvsnoise"},
    }


def netgauge_targets():
    if config["network_noise"]["benchmark"]["netgauge"]["source"]:
        return [f"{NN_TABLES}/netgauge_comparison.csv"]
    return []


if (
    config["network_noise"]["benchmark"]["enabled"]
    and not config["network_noise"]["benchmark"]["netgauge"]["source"]
):
    logger.info(
        "network_noise.benchmark.netgauge.source is empty: "
        "the Netgauge side-by-side run is skipped"
    )


# Seed 003 (rules/asymmetric.smk): the study's own testbed, its runs and targets.


def asymmetric_platform(congestion=None):
    """The platform config of seed 003's two-rack testbed (with a TCP congestion control)."""
    return asymmetric_study.study_platform(
        config["platform"], config["asymmetric"], congestion
    )


def asymmetric_congestions(family):
    """Congestion controls a pattern family runs with."""
    study = config["asymmetric"]
    if family == "random":
        return study["random"]["congestion_controls"]
    return study["congestion_controls"]


def asymmetric_results(family, suffix=""):
    """p2p_concurrent result of every trial of a family ({congestion} left open)."""
    count = asymmetric_study.trial_count(family, config["asymmetric"])
    return [
        f"{AS_RAW}/mpi/{family}/{{congestion}}/trial{i:03d}.csv{suffix}"
        for i in range(count)
    ]


def asymmetric_runs():
    """(family, congestion control, result files) of every MPI-level job."""
    return [
        (
            family,
            cc,
            [path.format(congestion=cc) for path in asymmetric_results(family)],
        )
        for family in asymmetric_study.FAMILIES
        for cc in asymmetric_congestions(family)
    ]


def asymmetric_caption(figure):
    """One caption serves Fig. 6 of every congestion control."""
    return "fig6_errors" if figure.startswith("fig6_errors_") else figure


def asymmetric_targets():
    if PLATFORM != "testbed":
        logger.warning(
            "asymmetric (seed 003) skipped: it runs on its own two-rack testbed, "
            f"so it needs platform.kind testbed, not {PLATFORM}"
        )
        return []
    return [
        *expand(
            f"{AS_FIGURES}/{{name}}.{{ext}}", name=AS_FIGURE_NAMES, ext=["svg", "png"]
        ),
        *expand(f"{AS_TABLES}/{{name}}.csv", name=AS_TABLE_NAMES),
        f"{AS_TABLES}/testbed_validation.csv",
    ]


# Seed 002 (rules/variability.smk): the campaign's measurement jobs and targets.


def variability_batches():
    """Campaign -> its measurement jobs, each a list of [application, nodes, run index]."""
    vb = config["variability"]
    runs = {"production": vb["runs"]}
    runs |= {campaign: vb["controlled_runs"] for campaign in ("dedicated", "maximal")}
    jobs = {}
    for campaign, count in runs.items():
        keys = run_keys(vb["applications"], vb["node_counts"], count)
        if keys:
            jobs[campaign] = [
                [[k.application, k.node_count, k.index] for k in batch]
                for batch in batches(keys, vb["runs_per_job"])
            ]
    return jobs


def variability_batch_runs(wildcards):
    return VB_BATCHES[wildcards.campaign][int(wildcards.batch)]


def application_program(name):
    """Program path and arguments of a configured application."""
    return {
        "program": application_binary(name),
        "args": config["applications"][name].get("args", []),
    }


def variability_programs():
    return sorted({application_binary(a) for a in VB["applications"]})


def variability_platform():
    """The platform with the study's testbed layout (racks, backbone) over the shared one.

    Measurements run one at a time (resource network), so the testbed is rebuilt
    with this layout when the study's jobs start and back when another study's do."""
    platform = copy.deepcopy(config["platform"])
    platform["testbed"].update(netnoise_config.study_testbed(config["variability"]))
    return platform


def variability_targets():
    # The campaign draws placements on the testbed and reads its counters.
    if PLATFORM != "testbed":
        return []
    return [
        *expand(
            f"{VB_FIGURES}/{{name}}.{{ext}}", name=VB_FIGURE_NAMES, ext=["svg", "png"]
        ),
        *expand(f"{VB_TABLES}/{{name}}.csv", name=VB_TABLE_NAMES),
        VB_MODEL,
    ]
