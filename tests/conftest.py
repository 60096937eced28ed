from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
VENV_BIN = Path(sys.executable).parent
# platform.cpu for tests of what runs on the testbed, not of how well it measures:
# a busy machine must neither fail them nor hold each job a minute waiting for
# quiet cores. Whether a CPU-saturated run is rejected has tests of its own
# (tests/core/test_platform_run.py).
UNJUDGED_CPU = {"max_runnable": 1000, "quiet_wait_s": 5}
#: The default test config, ``.test/config/config.yaml``: the Snakemake workflow
#: catalog's convention, so that ``snakemake --directory .test`` runs it.
DEFAULT_SLICE = "config"


def snakemake(*args: str, cwd: Path = REPO, timeout: float = 600) -> subprocess.CompletedProcess:
    """Run the workflow's snakemake with the project's Snakefile."""
    exe = shutil.which("snakemake", path=str(VENV_BIN)) or "snakemake"
    return subprocess.run(
        [exe, "--snakefile", str(REPO / "workflow" / "Snakefile"), *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def shipped_studies() -> set[str]:
    """The studies the shipped bundle's run measured (enabled in its config)."""
    import tarfile

    import yaml

    from netnoise.bundle import CONFIG, SHIPPED
    from netnoise.config import validate
    from netnoise.studies import STUDIES

    with tarfile.open(SHIPPED) as bundle:
        # With the schema's defaults: a study the bundle's config never names
        # (newer than the run) is enabled only if its default is.
        config = validate(yaml.safe_load(bundle.extractfile(CONFIG)))
    return {s.key for s in STUDIES if config[s.key]["enabled"]}


def shipped_table(study: str, name: str):
    """The table ``name`` of ``study`` as the shipped bundle's run made it (its
    ``expected/`` copy): real, realistic input for a figure's test."""
    import tarfile

    import pandas as pd

    from netnoise.bundle import SHIPPED

    with tarfile.open(SHIPPED) as bundle:
        member = f"expected/results/testbed/tables/{study}/{name}.csv"
        return pd.read_csv(bundle.extractfile(member))


def full_platform(partial: dict | None = None) -> dict:
    """A whole ``platform`` section: the default config's with ``partial`` (some
    of its keys) merged over it, as a config file is."""
    import copy

    from netnoise.config import merge_like_snakemake, validate

    return merge_like_snakemake(copy.deepcopy(validate({})["platform"]), partial or {})


def slurm_platform(launcher: str):
    """The slurm platform launching through ``launcher``, without placement words."""
    from netnoise.platform import from_config

    return from_config(
        full_platform({"kind": "slurm", "slurm": {"launcher": launcher, "tasks_per_node": None}})
    )


def platform_of(kind: str, **sections: dict):
    """The platform ``kind`` of the default config, with ``sections`` (e.g.
    ``testbed={"cores": "shared"}``) over its own: what its capabilities say."""
    from netnoise.platform import from_config

    return from_config(full_platform({**sections, "kind": kind}))


def study_settings(kind: type, section: dict | None = None):
    """The typed section of study type ``kind`` (netnoise.settings): the default
    config's, with ``section`` (some of its keys) merged over it as a config file
    is. Planning tests give a section that the workflow's checks of files and
    applications would refuse here."""
    import copy

    from netnoise.config import merge_like_snakemake, validate
    from netnoise.settings import section as typed_section

    defaults = copy.deepcopy(validate({})[kind.KEY])
    return typed_section(kind, merge_like_snakemake(defaults, section or {}), kind.KEY)


def quick_study_with(*overlays: str) -> dict:
    """config/config.yaml with each ``config/<overlay>`` merged over it in turn, as
    ``--configfile`` merges them, validated."""
    import yaml
    from snakemake.utils import update_config

    from netnoise.config import validate

    config = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    for overlay in overlays:
        update_config(config, yaml.safe_load((REPO / "config" / overlay).read_text()))
    return validate(config)


def small_config(name: str, workdir: Path, **sections) -> dict:
    """Copy the small config ``.test/<name>/config.yaml`` (``name`` a slice, or
    :data:`DEFAULT_SLICE`) into ``workdir/config/``
    (its fabric paths made absolute; ``sections`` replace whole top-level keys)
    and return it."""
    import yaml

    config = yaml.safe_load((REPO / ".test" / name / "config.yaml").read_text())
    fabrics = config.get("network_noise", {}).get("fabrics", [])
    if fabrics:
        config["network_noise"]["fabrics"] = [str(REPO / f) for f in fabrics]
    config.update(sections)
    (workdir / "config").mkdir(parents=True, exist_ok=True)
    (workdir / "config" / "config.yaml").write_text(yaml.safe_dump(config))
    return config


def small_run(name: str, workdir: Path, *, cores: int) -> Path:
    """The workflow run whole on the small config ``.test/<name>`` in ``workdir``."""
    small_config(name, workdir)
    out = snakemake("--cores", str(cores), cwd=workdir)
    assert out.returncode == 0, out.stderr[-4000:]
    return workdir


@pytest.fixture(scope="session")
def built_programs(tmp_path_factory) -> Path:
    """The C programs, built once per session into a temporary directory."""
    if shutil.which("mpicc") is None:
        pytest.skip("mpicc not installed (make setup installs Open MPI)")
    return build_csrc(tmp_path_factory.mktemp("build"))


@pytest.fixture(scope="session")
def smpi_programs(tmp_path_factory) -> Path:
    """The programs the SimGrid tests run, built for SMPI (csrc/Makefile
    FLAVOUR=smpi): pingpong, noise, a proxy, the load generators and the co-run
    dispatcher."""
    if shutil.which("smpicc") is None:
        pytest.skip("SimGrid not installed (make setup installs libsimgrid-dev)")
    build = tmp_path_factory.mktemp("smpi-build")
    names = ("pingpong", "noise", "corun", "halo3d", "loadgen", "compressionb")
    subprocess.run(
        ["make", "-s", "-C", str(REPO / "csrc"), "FLAVOUR=smpi", f"BUILD={build}",
         *(str(build / "bin" / name) for name in names)],
        check=True,
        capture_output=True,
    )  # fmt: skip
    return build / "bin"


def build_csrc(root: Path, **options) -> Path:
    """csrc built with ``options`` (a make target, say) into ``root``; its bin folder."""
    from netnoise.build import build_programs

    build_programs(
        REPO / "csrc",
        root / "bin",
        mpicc="mpicc",
        cflags="-O2",
        log=root / "build.log",
        build_dir=root / "objects",
        **options,
    )
    return root / "bin"


def run_pingpong(
    platform, programs: Path, tmp_path: Path, *args: str, ranks=2, timeout_s=60.0, **options
) -> Path:
    """``programs/pingpong args`` run alone on ``platform`` by netnoise.run.run_benchmark
    (``options`` passed on), its log ``tmp_path/pingpong.log``; its result file,
    ``tmp_path/pingpong.csv``."""
    from netnoise.run import run_benchmark

    argv = [str(programs / "pingpong"), *args]
    out, log = tmp_path / "pingpong.csv", tmp_path / "pingpong.log"
    return run_benchmark(platform, argv, ranks, out, log, timeout_s, **options)


def fake_ib_tree(root: Path, xmit_words: int, wait: int, rcv_words: int | None = None) -> None:
    """An InfiniBand HCA's sysfs counters (mlx5_0, port 1) under ``root``, as a node
    shows them: data in 4-byte words, a packet every 64 words, ``rcv_words``
    defaulting to ``xmit_words``, and one counter that does not read as a number."""
    rcv_words = xmit_words if rcv_words is None else rcv_words
    counters = root / "mlx5_0" / "ports" / "1" / "counters"
    counters.mkdir(parents=True, exist_ok=True)
    values = {
        "port_xmit_data": xmit_words,
        "port_rcv_data": rcv_words,
        "port_xmit_packets": xmit_words // 64,
        "port_rcv_packets": rcv_words // 64,
        "port_xmit_wait": wait,
        "symbol_error": 0,
    }
    for name, value in values.items():
        (counters / name).write_text(f"{value}\n")
    (counters / "unreadable").write_text("n/a\n")


@pytest.fixture(scope="session")
def platform_run(tmp_path_factory) -> Path:
    """A small real run of the default test config ``.test/config/config.yaml``
    (build, the baseline ping-pong on localhost, its table and figure,
    provenance, the report's pages), once per session; its working directory."""
    if shutil.which("mpicc") is None:
        pytest.skip("Open MPI not installed")
    return small_run(DEFAULT_SLICE, tmp_path_factory.mktemp("platform-run"), cores=1)


@pytest.fixture(scope="session")
def platform_report(platform_run) -> Path:
    """The report of ``platform_run`` (netnoise report)."""
    from netnoise import report

    html = platform_run / "report.html"
    report.build(html, workdir=platform_run, configfiles=[platform_run / "config" / "config.yaml"])
    return html


@pytest.fixture(scope="session")
def shipped_review(tmp_path_factory) -> Path:
    """``netnoise review`` of the shipped bundle: its working directory, with the
    rebuilt tables, figures and report."""
    from netnoise import bundle

    return bundle.review(bundle.SHIPPED, tmp_path_factory.mktemp("shipped") / "review", cores=2)


@pytest.fixture(scope="session")
def simulator_run(tmp_path_factory) -> Path:
    """Seed 001's simulator part run whole (``.test/network_noise``: small
    topologies and the fixture fabric, its tables, figures, headline claims and
    report pages) once per session; its working directory."""
    return small_run("network_noise", tmp_path_factory.mktemp("simulator-run"), cores=2)


@pytest.fixture(scope="session")
def platform_bundle(platform_run) -> tuple[Path, dict]:
    """The results bundle of ``platform_run`` and its manifest."""
    from netnoise import bundle

    packed = platform_run / "bundle.tar.gz"
    manifest = bundle.create(packed, workdir=platform_run, configfiles=["config/config.yaml"])
    return packed, manifest


@pytest.fixture(scope="session")
def platform_review(platform_bundle, tmp_path_factory) -> tuple[Path, Path]:
    """``netnoise review`` of ``platform_bundle``: its working directory (with the
    report) and the bundle file."""
    from netnoise import bundle

    packed, _ = platform_bundle
    return bundle.review(packed, tmp_path_factory.mktemp("review") / "review", cores=1), packed


@pytest.fixture
def localhost_platform():
    from netnoise.platform import from_config

    return from_config(full_platform({"kind": "localhost", "timeout_s": 120}))


def pytest_configure(config):
    os.environ.setdefault("OMPI_MCA_btl_vader_single_copy_mechanism", "none")


def pytest_terminal_summary(terminalreporter):
    """Name the folders where tests left screenshots (user property ``screenshots``)."""
    folders = {
        value
        for reports in terminalreporter.stats.values()
        for report in reports
        for name, value in getattr(report, "user_properties", ())
        if name == "screenshots"
    }
    for folder in sorted(folders):
        terminalreporter.write_line(f"screenshots: {folder}")
