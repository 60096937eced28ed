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
    return [
        f"{RESULTS}/figures/baseline_latency.svg",
        f"{RESULTS}/figures/baseline_latency.png",
        f"{RESULTS}/tables/baseline_latency.csv",
    ]
