"""Third-party programs: fetching, building and wrapping their runs."""

from __future__ import annotations

import argparse
import shutil
import tarfile
import textwrap

import pytest

from netnoise.external import (
    ExternalError,
    ExternalProgram,
    _rows,
    build_external,
    fetch_source,
    figure_of_merit,
)
from netnoise.io import read_benchmark
from netnoise.provenance import read_sidecar
from netnoise.run import Job, RunFailed, corun

# A small MPI code with the shape of a real application's build and report:
# its own Makefile, a binary in a subdirectory, a figure of merit on stdout,
# and a non-zero exit when asked to fail.
APP_C = textwrap.dedent(
    """\
    #include <mpi.h>
    #include <stdio.h>
    #include <stdlib.h>
    int main(int argc, char **argv) {
        MPI_Init(&argc, &argv);
        int rank, steps = argc > 1 ? atoi(argv[1]) : 100;
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
        double t0 = MPI_Wtime(), x = rank, sum = 0;
        for (int i = 0; i < steps; i++)
            MPI_Allreduce(&x, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        double elapsed = MPI_Wtime() - t0;
        if (rank == 0) printf("Steps = %d\\nFOM = %.3f (steps/s)\\n", steps, steps / elapsed);
        MPI_Finalize();
        return steps < 0 ? 3 : 0;
    }
    """
)
MAKEFILE = "bin/app: app.c\n\tmkdir -p bin && $(MPICC) $(CFLAGS) -o $@ app.c\n"
FOM = r"FOM = ([0-9.]+)"


@pytest.fixture
def app_source(tmp_path):
    src = tmp_path / "app-1.0"
    src.mkdir()
    (src / "app.c").write_text(APP_C)
    (src / "Makefile").write_text(MAKEFILE)
    return src


def _build(source, tmp_path, command="make"):
    return build_external(
        "app",
        source=str(source),
        command=command,
        binary="bin/app",
        work_dir=tmp_path / "work",
        dest=tmp_path / "installed" / "app",
        env={"MPICC": "mpicc", "CFLAGS": "-O2"},
        log=tmp_path / "build.log",
    )


def test_fetch_unwraps_an_archive_given_as_path_or_file_url(app_source, tmp_path):
    archive = tmp_path / "app-1.0.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(app_source, arcname="app-1.0")
    by_path = fetch_source(str(archive), tmp_path / "a")
    by_url = fetch_source(archive.as_uri(), tmp_path / "b")
    for tree in (by_path, by_url):
        assert sorted(p.name for p in tree.iterdir()) == ["Makefile", "app.c"]


def test_fetch_rejects_what_is_no_source(tmp_path):
    with pytest.raises(ExternalError, match="neither a directory, an archive file nor a URL"):
        fetch_source(str(tmp_path / "missing"), tmp_path / "dest")
    junk = tmp_path / "junk.tar.gz"
    junk.write_text("not an archive")
    with pytest.raises(ExternalError, match="not a tar or zip archive"):
        fetch_source(str(junk), tmp_path / "dest")


@pytest.mark.mpi
def test_build_installs_the_binary_and_records_the_recipe(app_source, tmp_path):
    if shutil.which("mpicc") is None:
        pytest.skip("mpicc not installed")
    record = _build(app_source, tmp_path)
    assert (tmp_path / "installed" / "app").stat().st_mode & 0o111
    assert record["command"] == "make" and len(record["sha256"]) == 64
    # The user's source tree is never written to.
    assert not (app_source / "bin").exists()


def test_build_failures_say_what_failed(app_source, tmp_path):
    with pytest.raises(ExternalError, match="'exit 4' exited with status 4"):
        _build(app_source, tmp_path, command="exit 4")
    with pytest.raises(ExternalError, match="'bin/app' is not an executable file"):
        _build(app_source, tmp_path, command="true")
    assert not (tmp_path / "installed" / "app").exists()


def test_figure_of_merit_takes_the_last_match():
    text = "FOM = 1.5 (z/s)\nFOM = 2.25 (z/s)\n"
    assert figure_of_merit(text, FOM) == 2.25
    with pytest.raises(ExternalError, match="matched nothing"):
        figure_of_merit("no number here", FOM)
    with pytest.raises(ExternalError, match="not a number"):
        figure_of_merit("FOM = . (z/s)", r"FOM = (\S+)")


def test_a_table_output_without_a_measurement_fails_the_run():
    """A Netgauge summary line of nan is an error of that run, not a missing row."""
    args = argparse.Namespace(fom=None, table="netgauge_collvsnoise")
    good = "# acc: 8 2 8 :: 1105.5 (1000.0), 1316.6 (1200.0)\n"
    assert len(_rows(args, 0, good, 1.0)) == 1
    with pytest.raises(ExternalError, match=r"(?s)run 3: .*line 2: unperturbed mean is 'nan'"):
        _rows(args, 3, good + "# acc: 8 4 8 :: nan (nan), 1.0 (1.0)\n", 1.0)


def test_wrapper_command_line():
    program = ExternalProgram("lulesh", version="2.0.3", iterations=3, warmup=1, fom=FOM)
    argv = program.wrap(["mpirun", "-n", "8", "lulesh2.0"], ["--output", "o.csv"], 8, ["a", "b"])
    assert argv[argv.index("--") + 1 :] == ["mpirun", "-n", "8", "lulesh2.0"]
    assert argv[argv.index("--hosts") + 1] == "a,b"
    assert argv[argv.index("--fom") + 1] == FOM
    assert argv[argv.index("--output") : argv.index("--output") + 2] == ["--output", "o.csv"]


@pytest.fixture
def built_app(app_source, tmp_path):
    if shutil.which("mpicc") is None:
        pytest.skip("mpicc not installed")
    _build(app_source, tmp_path)
    return str(tmp_path / "installed" / "app")


@pytest.mark.mpi
def test_measured_real_application_gives_runtime_and_fom_rows(
    built_app, tmp_path, localhost_platform
):
    out = tmp_path / "runs.csv"
    job = Job(
        "app",
        [built_app, "200"],
        2,
        out,
        external=ExternalProgram("app", version="1.0", iterations=3, warmup=1, fom=FOM),
    )
    corun(localhost_platform, job, log=tmp_path / "run.log", timeout_s=120)
    result = read_benchmark(out)
    assert result.data["run"].tolist() == [0, 1, 2]
    assert (result.data["runtime_s"] > 0).all()
    assert (result.data["figure_of_merit"] > 0).all()
    assert result.meta["tool"] == "app" and result.meta["version"] == "1.0"
    assert result.meta["fom_unit"] == ""
    assert read_sidecar(out)["exit_status"] == 0


@pytest.mark.mpi
def test_real_application_loops_in_the_background_until_stopped(
    built_app, built_programs, tmp_path, localhost_platform
):
    background = Job(
        "app",
        [built_app, "200"],
        2,
        tmp_path / "background.csv",
        external=ExternalProgram("app", iterations=0, warmup=1, fom=FOM),
    )
    measured = Job(
        "pingpong",
        [str(built_programs / "pingpong"), "--iterations", "0", "--duration", "3"],
        2,
        tmp_path / "pingpong.csv",
    )
    corun(localhost_platform, measured, [background], log=tmp_path / "run.log", timeout_s=120)
    assert len(read_benchmark(tmp_path / "pingpong.csv").data) > 0
    # Runs cut short by the stop are dropped, the completed ones kept.
    rows = read_benchmark(tmp_path / "background.csv").data
    assert len(rows) >= 1
    assert (rows["figure_of_merit"] > 0).all()


@pytest.mark.mpi
def test_failing_real_application_leaves_no_result(built_app, tmp_path, localhost_platform):
    out = tmp_path / "runs.csv"
    job = Job("app", [built_app, "-1"], 2, out, external=ExternalProgram("app", fom=FOM))
    with pytest.raises(RunFailed, match="exited with status"):
        corun(localhost_platform, job, log=tmp_path / "run.log", timeout_s=120)
    assert not out.exists()
    job = Job(
        "app", [built_app, "10"], 2, out, external=ExternalProgram("app", fom=r"Mop/s = (\d+)")
    )
    with pytest.raises(RunFailed):
        corun(localhost_platform, job, log=tmp_path / "run2.log", timeout_s=120)
    assert "matched nothing" in (tmp_path / "run2.log").read_text()
    assert not out.exists()
