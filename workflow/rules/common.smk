from snakemake.logging import logger

from types import SimpleNamespace

from netnoise import config as netnoise_config
from netnoise import studies as netnoise_studies
from netnoise.build import list_programs
from netnoise.jobs import expose_package

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


def results_dir():
    """Where every result of this platform goes (results/<platform.kind>), for the
    few files outside a study's own folders (e.g. a third-party build)."""
    return RESULTS


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
