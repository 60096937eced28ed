"""Every job dies with the workflow that started it.

Snakemake runs a job's script in a process of its own. Killed, even by SIGKILL,
it leaves that process running: a measurement would go on, write a complete,
valid-looking result and share its testbed with the rerun. So the workflow puts
its process id in ``NETNOISE_WORKFLOW_PID`` each time it reads the Snakefile (in
a cluster job, that is the job's own snakemake), and every job it starts holds
on to that process through a pidfd:

- nothing is renamed into place (netnoise.atomic) once the workflow is gone;
- a job whose workflow is no longer among its ancestors when it starts (it was
  killed in between) refuses to run at all;
- a watchdog thread, started with the job's first launch, kills every process
  session the job launched as soon as the workflow ends, then interrupts the
  job's main thread, which unwinds (its temporary files removed) and exits;
  should it not within GRACE_S, the process ends itself;
- every launch has the parent-death signal: a killed job takes its launchers
  with it, and killing a launch kills its whole session, so ranks and daemons
  that Open MPI puts in process groups of their own go too.

Outside a workflow (no ``NETNOISE_WORKFLOW_PID``) a process answers for itself.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import select
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ENV = "NETNOISE_WORKFLOW_PID"
# From the workflow's end to the job's exit at the latest.
GRACE_S = 3.0
# Interrupts the main thread once the workflow is gone.
ORPHAN_SIGNAL = signal.SIGUSR1
PR_SET_PDEATHSIG = 1

_libc = ctypes.CDLL(None, use_errno=True)


class Orphaned(SystemExit):
    """The workflow that started this job is gone: the job stops, writing nothing.
    A SystemExit, so that no ``except Exception`` carries on after it."""


def declare_workflow() -> None:
    """Make this process the workflow of every job it starts (the Snakefile calls it)."""
    os.environ[ENV] = str(os.getpid())


def _stat(pid: int) -> list[str] | None:
    """The fields of /proc/PID/stat after the command name (state first), or None."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return None
    return text.rsplit(")", 1)[1].split()


def _parent(fields: list[str]) -> int:
    return int(fields[1])


def _session(fields: list[str]) -> int:
    return int(fields[3])


def _start_ticks(fields: list[str]) -> int:
    return int(fields[19])


def _running(fields: list[str] | None) -> bool:
    """Alive, not a zombie (or dead) waiting for someone to reap it."""
    return fields is not None and fields[0] not in ("Z", "X")


@dataclass(frozen=True)
class Owner:
    """A process by id and start time (clock ticks after boot), so that a later
    process that happens to get the same id is never taken for it."""

    pid: int
    started: int

    @classmethod
    def of(cls, pid: int) -> Owner | None:
        fields = _stat(pid)
        return cls(pid, _start_ticks(fields)) if _running(fields) else None

    def alive(self) -> bool:
        fields = _stat(self.pid)
        return _running(fields) and _start_ticks(fields) == self.started

    def command(self) -> str:
        try:
            raw = Path(f"/proc/{self.pid}/cmdline").read_bytes()
        except OSError:
            return "?"
        return raw.replace(b"\0", b" ").decode(errors="replace").strip() or "?"

    def as_dict(self) -> dict[str, Any]:
        return {"pid": self.pid, "started": self.started, "command": self.command()}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Owner:
        return cls(int(data["pid"]), int(data["started"]))


def _ancestors() -> set[int]:
    ancestors = set()
    pid = os.getppid()
    while pid > 0 and pid not in ancestors:
        ancestors.add(pid)
        fields = _stat(pid)
        pid = _parent(fields) if fields else 0
    return ancestors


class _Workflow:
    """The workflow process this job serves."""

    def __init__(self, pid: int):
        self.owner = Owner.of(pid) if pid in _ancestors() else None
        self.pid = pid
        self.fd: int | None = None
        if self.owner is not None:
            with contextlib.suppress(OSError):  # kernels before 5.3: watched by polling
                self.fd = os.pidfd_open(pid)
            if not self.owner.alive():  # its id was reused before the pidfd was opened
                self.owner = None

    def gone(self) -> bool:
        if self.owner is None:
            return True
        if self.fd is not None:
            return bool(select.select([self.fd], [], [], 0)[0])
        return not self.owner.alive()

    def wait_gone(self) -> None:
        while not self.gone():
            if self.fd is not None:
                select.select([self.fd], [], [])
            else:
                time.sleep(0.2)


_workflow_cache: list[_Workflow | None] = []


def _workflow() -> _Workflow | None:
    """The workflow of this process, or None outside one (or in the workflow itself)."""
    if not _workflow_cache:
        value = os.environ.get(ENV, "")
        pid = int(value) if value.isdigit() else None
        _workflow_cache.append(None if pid in (None, os.getpid()) else _Workflow(pid))
    return _workflow_cache[0]


def owner() -> Owner:
    """Who this process works for: its workflow, or outside one itself."""
    workflow = _workflow()
    if workflow is not None and workflow.owner is not None:
        return workflow.owner
    me = Owner.of(os.getpid())
    assert me is not None
    return me


def check(what: str) -> None:
    """Raise Orphaned, naming ``what`` would have been done, when the workflow is gone."""
    workflow = _workflow()
    if workflow is not None and workflow.gone():
        raise Orphaned(
            f"netnoise: the workflow that started this job (pid {workflow.pid}) is gone; "
            f"{what} is abandoned"
        )


# ------------------------------------------------------------------ launches

_sessions: dict[int, subprocess.Popen] = {}
_lock = threading.Lock()
_watchdog: list[threading.Thread] = []


def _die_with(parent: int) -> Callable[[], None]:
    def preexec() -> None:
        _libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
        if os.getppid() != parent:  # the parent died before the signal was armed
            os._exit(1)

    return preexec


def spawn(argv: Sequence[str], **popen: Any) -> subprocess.Popen:
    """Start ``argv`` in a session of its own that dies with this process and with the
    workflow; end it with :func:`stop`. Raises Orphaned once the workflow is gone.

    Call it from the main thread: the parent-death signal fires when the thread that
    started the process ends."""
    check(f"launching {argv[0]}")
    _start_watchdog()
    with _lock:
        proc = subprocess.Popen(
            argv, start_new_session=True, preexec_fn=_die_with(os.getpid()), **popen
        )
        _sessions[proc.pid] = proc
    return proc


def session_members(session: int) -> list[int]:
    """Running processes of a session (the id of a session is its leader's pid)."""
    members = []
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            fields = _stat(int(entry.name))
            if _running(fields) and _session(fields) == session:
                members.append(int(entry.name))
    return members


def _kill_session(session: int, leader_reaped: bool) -> None:
    """SIGKILL every member of ``session``. Once its leader is reaped, the number is
    only ours while members hold it: a process whose pid is the number then leads
    another session (the pid was reused) and nothing is killed."""
    # Killed processes cannot start new ones: a few rounds catch those started meanwhile.
    for _ in range(50):
        members = session_members(session)
        if not members or (leader_reaped and session in members):
            return
        for pid in members:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.01)


def stop(proc: subprocess.Popen, grace_s: float = 5.0) -> None:
    """End a launch: SIGTERM to its process group (mpirun then stops its ranks), after
    ``grace_s`` SIGKILL, then SIGKILL whatever is left of its session."""
    if proc.poll() is None and grace_s > 0:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=grace_s)
    with _lock:
        _kill_session(proc.pid, leader_reaped=proc.returncode is not None)
        proc.wait()
        _sessions.pop(proc.pid, None)


def _on_orphaned(signum: int, frame: object) -> None:
    check("the job")


def _start_watchdog() -> None:
    workflow = _workflow()
    if workflow is None or _watchdog:
        return
    interrupt = threading.current_thread() is threading.main_thread()
    if interrupt:
        signal.signal(ORPHAN_SIGNAL, _on_orphaned)
    thread = threading.Thread(
        target=_watch, args=(workflow, interrupt), name="netnoise-lifeline", daemon=True
    )
    _watchdog.append(thread)
    thread.start()


def _watch(workflow: _Workflow, interrupt: bool) -> None:
    workflow.wait_gone()
    with _lock:
        for session, proc in list(_sessions.items()):
            _kill_session(session, leader_reaped=proc.returncode is not None)
    if interrupt:
        signal.pthread_kill(threading.main_thread().ident, ORPHAN_SIGNAL)
    time.sleep(GRACE_S)
    os._exit(1)
