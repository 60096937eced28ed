"""Jobs die with their workflow (netnoise.lifeline), shown with stand-in processes:
a "workflow" that declares itself and starts a "job", which launches a session whose
members sit in process groups of their own, as Open MPI's daemons and ranks do."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from netnoise import lifeline

SRC = str(Path(__file__).resolve().parents[2] / "src")

# The job: launch a session (a leader and a member in a process group of its own),
# report the pids, wait for the launch, then write a result.
JOB = textwrap.dedent(
    """
    import sys
    from netnoise import lifeline
    from netnoise.atomic import write_json

    out = sys.argv[1]
    member = f"'{sys.executable}' -c 'import os, time; os.setpgid(0, 0); time.sleep(3600)'"
    launch = lifeline.spawn(["sh", "-c", f"{member} & wait"])
    write_json(out + ".pids", {"job": __import__("os").getpid(), "session": launch.pid})
    launch.wait()
    write_json(out, {"valid": "looking"})
    """
)

# The workflow: declare itself, start the job, wait for it.
WORKFLOW = textwrap.dedent(
    """
    import subprocess, sys
    from netnoise import lifeline

    lifeline.declare_workflow()
    sys.exit(subprocess.run([sys.executable, "-c", sys.argv[1], sys.argv[2]]).returncode)
    """
)


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != lifeline.ENV}
    env["PYTHONPATH"] = os.pathsep.join([SRC, env.get("PYTHONPATH", "")])
    return env


# A hang guard, not a figure: what the tests wait for comes at the machine's
# pace, and they wait for it as long as a machine under any load needs.
HANG_S = 300


def _until(condition, what: str, timeout_s: float = HANG_S):
    """Poll ``condition`` until it holds (its value), failing after ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    while not (value := condition()):
        assert time.monotonic() < deadline, f"{what} after {timeout_s:.0f} s"
        time.sleep(0.02)
    return value


def _wait_for(path: Path) -> dict:
    _until(path.exists, f"{path} did not appear")
    return json.loads(path.read_text())


def _running(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state not in ("Z", "X")


def test_sigkill_of_the_workflow_ends_the_job_and_its_launch_writing_nothing(tmp_path):
    result = tmp_path / "result.json"
    workflow = subprocess.Popen(
        [sys.executable, "-c", WORKFLOW, JOB, str(result)],
        env=_env(),
        stderr=subprocess.PIPE,
        text=True,
    )
    members: list[int] = []
    try:
        started = time.monotonic()
        pids = _wait_for(Path(f"{result}.pids"))
        # The leader and the member of a process group of its own, once both run.
        members = _until(
            lambda: (
                len(lifeline.session_members(pids["session"])) == 2
                and lifeline.session_members(pids["session"])
            ),
            "the launch did not start its member",
        )
        startup_s = time.monotonic() - started
        killed = time.monotonic()
        workflow.send_signal(signal.SIGKILL)
        workflow.wait()
        # Gone at the pace the machine started them: the members sleep an hour,
        # so only the lifeline ends them in time.
        _until(
            lambda: not _running(pids["job"]) and not lifeline.session_members(pids["session"]),
            "the job or its launch outlived the workflow",
            timeout_s=min(HANG_S, 60 + 20 * startup_s),
        )
        print(f"job and launch gone {time.monotonic() - killed:.2f} s after the kill")
    finally:
        workflow.kill()
        workflow.wait()
        for pid in members:  # only what this test started, should the lifeline fail
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
    assert os.listdir(tmp_path) == ["result.json.pids"]  # no result, no temporary file


def test_a_job_whose_workflow_is_gone_refuses_to_start(tmp_path):
    gone = subprocess.Popen(["true"])
    gone.wait()
    job = subprocess.run(
        [sys.executable, "-c", JOB, str(tmp_path / "result.json")],
        env={**_env(), lifeline.ENV: str(gone.pid)},
        capture_output=True,
        text=True,
    )
    assert job.returncode == 1
    assert f"the workflow that started this job (pid {gone.pid}) is gone" in job.stderr
    assert "Traceback" not in job.stderr
    assert os.listdir(tmp_path) == []


def test_outside_a_workflow_a_process_answers_for_itself(monkeypatch):
    monkeypatch.delenv(lifeline.ENV, raising=False)
    monkeypatch.setattr(lifeline, "_workflow_cache", [])
    me = lifeline.owner()
    assert me.pid == os.getpid() and me.alive()
    lifeline.check("anything")  # no workflow to outlive
    assert not lifeline.Owner(me.pid, me.started + 1).alive()  # same id, another process


def test_stop_ends_every_member_of_a_launch():
    member = f"'{sys.executable}' -c 'import os, time; os.setpgid(0, 0); time.sleep(3600)'"
    launch = lifeline.spawn(["sh", "-c", f"{member} & wait"])
    _until(lambda: len(lifeline.session_members(launch.pid)) >= 2, "the member did not start")
    lifeline.stop(launch, grace_s=0.5)
    assert lifeline.session_members(launch.pid) == []
    assert launch.returncode is not None


def test_results_appear_with_the_permissions_of_the_umask(tmp_path):
    from netnoise.atomic import write_json

    old = os.umask(0o022)
    try:
        write_json(tmp_path / "r.json", {})
    finally:
        os.umask(old)
    assert (tmp_path / "r.json").stat().st_mode & 0o777 == 0o644


def test_a_reaped_leaders_session_number_now_leading_another_session_is_left_alone():
    # The number of a session whose leader is reaped and whose members are gone
    # can be a new process's pid: if that process leads a session of its own, the
    # number belongs to it and nothing of it is killed.
    other = subprocess.Popen(["sleep", "30"], start_new_session=True)
    try:
        lifeline._kill_session(other.pid, leader_reaped=True)
        assert other.poll() is None
        lifeline._kill_session(other.pid, leader_reaped=False)
        assert other.wait(timeout=5) == -signal.SIGKILL
    finally:
        other.kill()
        other.wait()
