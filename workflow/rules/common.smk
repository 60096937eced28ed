from netnoise import config as netnoise_config
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


def program(name):
    """Path of a compiled C program of csrc/."""
    return f"{BIN}/{name}"


def all_targets():
    targets = [
        f"{RESULTS}/figures/baseline_latency.svg",
        f"{RESULTS}/figures/baseline_latency.png",
        f"{RESULTS}/tables/baseline_latency.csv",
    ]
    if PLATFORM == "testbed":
        targets.append(f"{RESULTS}/tables/testbed_validation.csv")
    return targets


def release_testbed():
    """Tear the testbed down when the workflow ends, unless asked to keep it."""
    if PLATFORM == "testbed" and not config["platform"]["testbed"]["keep_up"]:
        from netnoise.platform.testbed import TestbedPlatform

        TestbedPlatform(config["platform"]).testbed.down()
