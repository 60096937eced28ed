from snakemake.logging import logger

import inspect
import os
from types import SimpleNamespace

import netnoise
from netnoise import bundle as netnoise_bundle
from netnoise import config as netnoise_config
from netnoise import headlines as netnoise_headlines
from netnoise import platform as netnoise_platform
from netnoise import report as netnoise_report
from netnoise import scheduler_timers
from netnoise import settings as netnoise_settings
from netnoise import studies as netnoise_studies
from netnoise.build import list_programs
from netnoise.jobs import expose_package
from netnoise.study import StudyPaths

# Snakemake's YAML reader keeps the last of a key given twice; netnoise's refuses it.
for _configfile in workflow.configfiles:
    netnoise_config.read_yaml(_configfile)
netnoise_config.validate(
    config, source=", ".join(map(str, workflow.configfiles)) or "config"
)

expose_package(PACKAGE_SRC)

# The config, typed (netnoise.settings), and what the rules ask of the platform
# instead of its kind (netnoise.platform).
SETTINGS = netnoise_settings.Settings.of(config)
PLATFORM = netnoise_platform.from_settings(SETTINGS.platform)
_RESULTS = f"results/{PLATFORM.kind}"
_BIN = f"{_RESULTS}/bin"
_LOGS = f"{_RESULTS}/logs"
_BENCHMARKS = f"{_RESULTS}/benchmarks"
# Sources live beside the workflow; results go to the working directory. Rules
# name the sources relative to it, so the report's rule details show no
# absolute path of the machine that ran them.
_PROJECT = Path(os.path.relpath(Path(workflow.basedir).parent))
_CSRC = _PROJECT / "csrc"
_C_PROGRAMS = list_programs(_CSRC, PLATFORM.build_flavour)
_C_SOURCES = sorted(
    str(p) for p in _CSRC.rglob("*") if p.suffix in (".c", ".h") or p.name == "Makefile"
)
_NS3_PROGRAMS = list_programs(_CSRC, listing="list-ns3-programs")
_NS3_SOURCES = sorted(str(p) for p in (_CSRC / "ns3").glob("*.cc"))
# The package's figure style (netnoise.figures.STYLE), where the package is: in
# a checkout or installed.
_STYLE = os.path.relpath(Path(netnoise.__file__).parent / "netnoise.mplstyle")


wildcard_constraints:
    size=r"\d+",
    rep=r"\d+",


def reference(study, name):
    """A published-values table of a study in resources/reference/ (beside the workflow)."""
    return str(_PROJECT / "resources" / "reference" / study / name)


def report_text(name):
    """A text of the report in workflow/report/ (beside the workflow)."""
    return str(_PROJECT / "workflow" / "report" / name)


def program(name):
    """Path of a compiled C program of csrc/."""
    return f"{_BIN}/{name}"


def platform_paths():
    """Where the results shared by every study go (results/<platform.kind>): the
    programs, logs and benchmark timings, a build directory, and the platform's
    own raw results, tables and figures (testbed validation, baseline latency,
    provenance) with their report captions."""
    return SimpleNamespace(
        results=_RESULTS,
        bin=_BIN,
        build=f"{_RESULTS}/build",
        logs=_LOGS,
        benchmarks=_BENCHMARKS,
        raw=f"{_RESULTS}/raw",
        tidy=f"{_RESULTS}/tidy",
        tables=f"{_RESULTS}/tables",
        figures=f"{_RESULTS}/figures",
        captions="../report/platform",
    )


def c_sources():
    """The C build: csrc's Makefile, every source it compiles, the flavour and
    compiler of the platform's programs and the programs it makes; apart, the
    ns-3 programs (make ns3) and their sources."""
    return SimpleNamespace(
        makefile=str(_CSRC / "Makefile"),
        files=_C_SOURCES,
        flavour=PLATFORM.build_flavour,
        mpicc=PLATFORM.mpicc(SETTINGS.build.mpicc),
        programs=_C_PROGRAMS,
        ns3_files=_NS3_SOURCES,
        ns3_programs=_NS3_PROGRAMS,
    )


def study_nodes(count):
    """Names of the first ``count`` nodes where jobs name them; elsewhere (None) the
    launcher places ranks."""
    return PLATFORM.node_names(count)


def _derived(value, compute):
    """compute(value), or, when value is a function of the wildcards (and the
    input), one of the same arguments: a resource that follows a wildcard (an
    allocation size) or an input file (the nodes of a pattern)."""
    if not callable(value):
        return compute(value)
    if "input" in inspect.signature(value).parameters:
        return lambda wildcards, input: compute(value(wildcards, input))
    return lambda wildcards: compute(value(wildcards))


def study_platform(study, **choices):
    """The platform ``study``'s runs see (a study section of SETTINGS, with what one
    run ``choices``; netnoise.settings.Settings.effective), as a rule's params
    carry it: the mapping of its config."""
    return SETTINGS.effective(study, **choices).as_config()


def slurm_nodes(ranks):
    """Nodes of a Slurm job whose launches start ``ranks`` ranks each, as the
    platform.slurm placement spreads them."""
    slurm = SETTINGS.platform.slurm
    return slurm.nodes or -(-ranks // slurm.tasks_per_node)


# A measurement job on this host holds every core Snakemake was given: a build
# or an analysis beside it would load the cores its ranks poll on, and its runs
# would read that load as the network's (--cores 2 overrides the profile's 1).
# A job that is an allocation of its own needs none here. Without cores (a dry
# run) nothing runs.
MEASUREMENT_THREADS = (
    1 if PLATFORM.allocates_jobs else (workflow.resource_settings.cores or 1)
)


def measurement_resources(ranks, launches=1, **slurm):
    """Resources of a measurement job: one at a time on the network (network=1)
    and, on the slurm platform, its allocation: ``tasks`` for every rank of its
    ``launches`` co-running launches of ``ranks`` ranks each (a number, or a
    function of the wildcards and maybe the input), ``nodes`` for one launch, and
    ``mpi`` (the launcher),
    which makes the executor run the rule in the job itself, whose script starts
    the ranks as steps. ``slurm`` replaces any of them (a job sized otherwise)."""
    resources = {"network": 1}
    if not PLATFORM.allocates_jobs:
        return resources
    placement = SETTINGS.platform.slurm
    resources["mpi"] = placement.launcher
    resources["tasks"] = _derived(ranks, lambda r: launches * r)
    # Without a node count or ranks per node, srun spreads the ranks as it likes.
    if placement.nodes or placement.tasks_per_node:
        resources["nodes"] = _derived(ranks, slurm_nodes)
    return {**resources, **slurm}


def application_binary(name):
    """Executable of a configured application: a csrc program or a built real one."""
    app = SETTINGS.applications[name]
    return program(app.program) if app.program is not None else f"{_BIN}/apps/{name}"


def application_job(name, output, ranks, nodes, iterations, warmup, extra_args=()):
    """A co-run job spec of a configured application; iterations=0 loops until stopped.

    ``extra_args`` follow the application's own (a study sizing a proxy its way:
    the later of two equal options wins). A real application is wrapped by
    netnoise.external, which times each launch and extracts its figure of merit.
    """
    app = SETTINGS.applications[name]
    spec = {
        "name": name,
        "program": application_binary(name),
        "args": [*(app.args or []), *map(str, extra_args)],
        "ranks": ranks,
        "nodes": nodes,
        "output": output,
    }
    if app.program is not None:
        spec["args"] += ["--iterations", iterations, "--warmup", warmup]
        return spec
    fom = app.figure_of_merit
    spec["external"] = {
        "tool": name,
        "version": app.version,
        "iterations": iterations,
        "warmup": warmup,
        "fom": fom.pattern if fom else None,
        "fom_unit": fom.unit if fom else "",
    }
    return spec


def build_environment():
    """Compiler settings a third-party build command sees."""
    return {"MPICC": SETTINGS.build.mpicc, "CFLAGS": SETTINGS.build.cflags}


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


def report_results(category):
    """The results of a report category in their order: a study's (key), the
    claims summary's ("claims"), the platform's ("platform") or the provenance
    ("provenance")."""
    if category == "claims":
        return netnoise_report.CLAIMS_RESULTS
    if category == "platform":
        return netnoise_report.PLATFORM_RESULTS
    if category == "provenance":
        return netnoise_report.PROVENANCE_RESULTS
    return netnoise_studies.get(category).results


def report_category(category):
    """The report category's name: a study's number and title, Claims, Platform,
    Provenance."""
    if category in ("claims", "platform", "provenance"):
        return category.capitalize()
    study = netnoise_studies.get(category)
    return f"{study.number} {study.title}"


def report_result(path, category, name, caption):
    """``path`` in the report as result ``name`` of ``category`` (report_results):
    labelled with its place in the paper's order and its title."""
    return report(
        path,
        caption=caption,
        category=report_category(category),
        labels=netnoise_report.labels(report_results(category), name),
    )


def reviewed_bundle():
    """In a working directory ``netnoise review`` unpacked a bundle into: the
    bundle's manifest and the review's record of its file and SHA-256."""
    if not Path(netnoise_bundle.REVIEWED).is_file():
        return {}
    return {"manifest": netnoise_bundle.MANIFEST, "review": netnoise_bundle.REVIEWED}


def study_paths(key):
    """Where study ``key`` keeps its results, logs and benchmark timings, and its
    report captions (relative to these rules)."""
    captions = os.path.relpath(
        netnoise_studies.get(key).captions, Path(workflow.basedir) / "rules"
    )
    return StudyPaths.under(_RESULTS, key, captions)


def figure_style():
    """The matplotlib style every figure uses (an input of every plot rule)."""
    return _STYLE


_RELEASES = []


def on_release(release):
    """Registers ``release()`` to run when the workflow ends (to remove the
    testbeds a study brought up of its own)."""
    _RELEASES.append(release)


def all_targets():
    targets = [
        f"{_RESULTS}/figures/baseline_latency.svg",
        f"{_RESULTS}/figures/baseline_latency.png",
        f"{_RESULTS}/tables/baseline_latency.csv",
    ]
    if PLATFORM.shapes_links:
        targets.append(f"{_RESULTS}/tables/testbed_validation.csv")
    for study in netnoise_studies.STUDIES:
        if config[study.key]["enabled"]:
            made = study.plan(SETTINGS, study_paths(study.key))
            targets += made
            if made and study.reproduces:
                targets.append(headline_claims_table(study.key))
    if judged_tables(targets):
        targets.append(claims_summary_table())
        if not PLATFORM.reference:
            targets.append(claims_beside_table())
    return targets


def judged_tables(targets):
    """The headline-claims tables among ``targets``: one per study that runs."""
    tables = {headline_claims_table(key) for key in netnoise_studies.PAPER_KEYS}
    return [t for t in targets if t in tables]


def headline_claims_table(key):
    """Study ``key``'s headline claims, judged on this run (netnoise.verdicts)."""
    return f"{_RESULTS}/tables/{key}/headline_claims.csv"


def claims_summary_table():
    """Every enabled study's headline claims in one table."""
    return f"{_RESULTS}/tables/claims_summary.csv"


def claims_beside_table():
    """This run's headline claims beside the shipped testbed bundle's (on a
    platform other than the testbed)."""
    return f"{_RESULTS}/tables/claims_beside.csv"


#: The shipped bundle: one run of the study on the testbed (netnoise.bundle.SHIPPED).
SHIPPED_BUNDLE = str(_PROJECT / "resources" / "cache" / "quick-testbed.tar.gz")


def headline_inputs(key):
    """What study ``key``'s headline claims are judged from: its tables, an
    optional one only where this config makes it."""
    optional = netnoise_headlines.optional_headline_inputs(key)
    paths = netnoise_headlines.headline_inputs(key, Path(_RESULTS), _PROJECT)
    made = set(all_targets()) if optional else set()
    return {
        argument: str(path)
        for argument, path in paths.items()
        if argument not in optional or str(path) in made
    }


def release_platform():
    """Remove what the platform brought up (and every study's own testbed) when
    the workflow ends, unless asked to keep them."""
    if PLATFORM.release():
        for release in _RELEASES:
            release()
