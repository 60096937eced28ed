"""Time the testbed's queues hold packets, counted in the kernel as they move.

An Aries stall counter (``INQ_PRF_ROWBUS_STALL_CNT``) and InfiniBand's
PortXmitWait count *time*: the cycles a port had data ready and could not send
it. A tbf qdisc only counts *events* (``overlimits``: a dequeue that found no
tokens), and its backlog is a gauge that a 100 ms sampler reads between bursts.
This module gives the fabric's queues the time counters, from the kernel's
``qdisc:qdisc_enqueue`` and ``qdisc:qdisc_dequeue`` tracepoints, integrated
between consecutive events of a root qdisc (the queue length changes only at
them):

- ``qdisc_stall_ns``: time the queue held at least one packet, the stall
  counter's analogue;
- ``qdisc_sojourn_ns``: the integral of its length in packets, which by
  Little's law is the sum of the times its packets waited.

Both are cumulative, like the link counters beside them. A snapshot is
synchronous: the reading thread renames itself to a marker (and back), and the
tracer prints its totals in answer to the ``task:task_rename`` tracepoint (a
system-call tracepoint would send every system call of every process through
the kernel's slow path while it is attached).

The tracer costs CPU in every namespace's packet path (a program run per
qdisc event), enough to saturate a small machine's cores under heavy load, so
the variability study uses it only when asked (``variability.queue_time``).

The totals are those of the moment the tracer prints them, a few milliseconds
after the same snapshot's link counters. The interval since a queue's last
event is not yet counted; a backlogged tbf has an event at every departure,
which bounds that error.

The tracer is ``bpftrace`` (Debian package ``bpftrace``), run as root; the
kernel needs BTF (``/sys/kernel/btf/vmlinux``). bpftrace finds tracepoints in
tracefs; where the host has not mounted it, the tracer runs in a mount
namespace of its own with tracefs mounted there, and the host's mounts stay
as they are.
"""

from __future__ import annotations

import ctypes
import json
import os
import queue
import shutil
import subprocess
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from netnoise.counters import now

COUNTERS = ("qdisc_stall_ns", "qdisc_sojourn_ns")
# A thread name is at most 15 bytes: the prefix and a sequence number.
MARKER_PREFIX = "nnqt"
PR_SET_NAME = 15
STARTUP_TIMEOUT_S = 60.0
ANSWER_TIMEOUT_S = 10.0
MAP_ENTRIES = "65536"
TRACEFS = Path("/sys/kernel/tracing")

# $1: inode of the traced network namespace; $2: the process asking for totals.
# The qdisc tracepoints fire for every packet of every namespace. A root qdisc
# is known by its address: whether it is the traced namespace's is looked up
# once (@side: 1 ours, 2 not), so the other namespaces' events cost a lookup;
# a dequeue that found nothing changes no length and is skipped. The testbed's
# qdiscs live as long as a tracer (one measurement job). The two CPUs trace at
# once, also while a snapshot prints: a qdisc is named before it is marked as
# ours, and the counters print before the names, so every qdisc counted in an
# answer is named in it.
SCRIPT = """
tracepoint:qdisc:qdisc_enqueue, tracepoint:qdisc:qdisc_dequeue
/args->skbaddr != 0/
{
  $q = (uint64)args->qdisc;
  $side = @side[$q];
  if ($side == 0) {
    $dev = ((struct Qdisc *)$q)->dev_queue->dev;
    $side = $dev->nd_net.net->ns.inum == $1 ? 1 : 2;
    if ($side == 1) {
      @port[$q] = $dev->name;
    }
    @side[$q] = $side;
  }
  if ($side == 1) {
    $now = nsecs;
    $queued = @queued[$q];
    if ($queued > 0) {
      $span = $now - @last[$q];
      @qdisc_stall_ns[$q] = @qdisc_stall_ns[$q] + $span;
      @qdisc_sojourn_ns[$q] = @qdisc_sojourn_ns[$q] + $span * $queued;
    }
    @last[$q] = $now;
    @queued[$q] = ((struct Qdisc *)$q)->q.qlen;
  }
}
tracepoint:task:task_rename /pid == $2 && strncmp(args->newcomm, "MARKER", MARKER_LENGTH) == 0/
{
  printf("snapshot %s\\n", args->newcomm);
  print(@qdisc_stall_ns);
  print(@qdisc_sojourn_ns);
  print(@port);
  printf("end %s\\n", args->newcomm);
}
END
{
  clear(@side);
  clear(@last);
  clear(@queued);
}
""".replace("MARKER_LENGTH", str(len(MARKER_PREFIX))).replace("MARKER", MARKER_PREFIX)


_libc = ctypes.CDLL(None, use_errno=True)


def _rename_thread_for_a_moment(name: str) -> None:
    """Fires ``task:task_rename`` with ``name``; the thread keeps its own name."""
    own = Path("/proc/thread-self/comm").read_bytes().rstrip(b"\n")
    for comm in (name.encode(), own):
        if _libc.prctl(PR_SET_NAME, ctypes.c_char_p(comm), 0, 0, 0) != 0:
            err = ctypes.get_errno()
            raise QueueTimeError(f"prctl(PR_SET_NAME): {os.strerror(err)}")


class QueueTimeError(RuntimeError):
    """The tracer could not be started or stopped answering."""


def namespace_inode(namespace: str) -> int:
    """The inode of ``/run/netns/NAME``: the id the kernel gives the namespace."""
    try:
        return os.stat(f"/run/netns/{namespace}").st_ino
    except OSError as err:
        raise QueueTimeError(f"network namespace {namespace}: {err.strerror}") from None


def parse_answer(lines: Iterable[str], marker: str) -> dict[str, dict[str, int]]:
    """Counter → {interface: total} from the tracer's JSON lines of one answer.

    The tracer keys its totals by qdisc and names each qdisc's interface; the
    totals of qdiscs of one name (one replaced by another) are added. A counter
    whose map is still empty (no packet queued yet) is not printed and reads as
    zero on every interface.
    """
    maps: dict[str, dict[str, Any]] = {}
    started = False
    for line in lines:
        event = json.loads(line)
        if event.get("type") == "printf":
            text = event["data"].strip()
            if text == f"snapshot {marker}":
                started = True
            elif text == f"end {marker}" and started:
                break
        elif started and event.get("type") == "map":
            for name, values in event["data"].items():
                maps[name.lstrip("@")] = values
    else:
        raise QueueTimeError(f"the tracer's answer to snapshot {marker} is incomplete")
    port = maps.get("port", {})
    totals: dict[str, dict[str, int]] = {c: {} for c in COUNTERS}
    for counter in COUNTERS:
        for qdisc, value in maps.get(counter, {}).items():
            if qdisc not in port:
                raise QueueTimeError(f"the tracer counted {counter} of an unnamed qdisc {qdisc}")
            name = port[qdisc]
            totals[counter][name] = totals[counter].get(name, 0) + int(value)
    return totals


def tracefs_launcher(tracefs: Path = TRACEFS) -> list[str]:
    """The command that starts the tracer (its argv follows) with ``tracefs``
    mounted: nothing when the host has mounted it."""
    if (tracefs / "events").is_dir():
        return []
    mount = f'mount -t tracefs tracefs {tracefs} && exec "$0" "$@"'
    return ["unshare", "--mount", "--propagation", "private", "sh", "-c", mount]


class QueueTime:
    """Stall and sojourn time of every root qdisc of one network namespace.

    A context manager: entering starts the tracer (it takes a few seconds to
    compile and attach), :meth:`totals` and :meth:`rows` read it, leaving
    stops it.
    """

    def __init__(self, namespace: str, *, bpftrace: str = "bpftrace"):
        self.namespace = namespace
        self.inode = namespace_inode(namespace)
        self.executable = shutil.which(bpftrace)
        if self.executable is None:
            raise QueueTimeError(
                f"{bpftrace} not found: the queue-time counters need it "
                "(Debian package bpftrace, run as root)"
            )
        self._process: subprocess.Popen[str] | None = None
        self._lines: queue.Queue[str | None] = queue.Queue()
        self._stderr: list[str] = []
        self._lock = threading.Lock()
        self._sequence = 0

    def __enter__(self) -> QueueTime:
        argv = [*tracefs_launcher(), self.executable, "-B", "line", "-f", "json", "-e", SCRIPT]
        argv += [str(self.inode), str(os.getpid())]
        env = {**os.environ, "BPFTRACE_MAP_KEYS_MAX": MAP_ENTRIES}
        self._process = subprocess.Popen(
            argv,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        threading.Thread(target=self._pump, args=(self._process.stdout, True), daemon=True).start()
        threading.Thread(target=self._pump, args=(self._process.stderr, False), daemon=True).start()
        try:
            self._wait_for(lambda line: '"attached_probes"' in line, STARTUP_TIMEOUT_S)
            self._until_answered()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self._process is not None and self._process.poll() is None:
            self._process.terminate()
            try:
                self._process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()

    def _pump(self, stream: Any, is_stdout: bool) -> None:
        for line in stream:
            if is_stdout:
                self._lines.put(line)
            else:
                self._stderr.append(line.rstrip())
        if is_stdout:
            self._lines.put(None)

    def _failure(self, what: str) -> QueueTimeError:
        said = "; ".join(line for line in self._stderr if "RLIMIT_MEMLOCK" not in line)
        return QueueTimeError(f"queue-time tracer {what}" + (f": {said}" if said else ""))

    def _wait_for(self, done: Any, timeout_s: float) -> list[str]:
        seen = []
        deadline = now() + timeout_s
        while True:
            try:
                line = self._lines.get(timeout=max(0.0, deadline - now()))
            except queue.Empty:
                raise self._failure(f"did not answer within {timeout_s:g} s") from None
            if line is None:
                raise self._failure("stopped")
            seen.append(line)
            if done(line):
                return seen

    def _until_answered(self) -> None:
        """Marks until the tracer answers: it reports its probes attached a
        moment before the marker's probe fires. An answer to an earlier marker
        is skipped by the next wait."""
        deadline = now() + STARTUP_TIMEOUT_S
        while True:
            try:
                self.totals(timeout_s=0.5)
                return
            except QueueTimeError:
                if now() > deadline or self._process.poll() is not None:
                    raise

    def totals(self, timeout_s: float = ANSWER_TIMEOUT_S) -> dict[str, dict[str, int]]:
        """Interface → {counter: nanoseconds} since the tracer started."""
        with self._lock:
            self._sequence += 1
            marker = f"{MARKER_PREFIX}{self._sequence % 10**11}"
            _rename_thread_for_a_moment(marker)
            lines = self._wait_for(lambda line: f'"end {marker}\\n' in line, timeout_s)
        by_counter = parse_answer(lines, marker)
        interfaces = {i for values in by_counter.values() for i in values}
        return {i: {c: by_counter[c].get(i, 0) for c in COUNTERS} for i in interfaces}

    def rows(self, roles: dict[str, str], t: float) -> list[dict[str, Any]]:
        """Counter rows (:data:`netnoise.counters.COLUMNS`) at time ``t`` of the
        interfaces in ``roles`` (interface → role); an interface no packet has
        queued on yet reads zero. ``t`` is the time of the namespace's other
        counters of the same snapshot, so that they share its intervals."""
        totals = self.totals()
        return [
            {
                "time_s": t,
                "device": self.namespace,
                "port": port,
                "role": role,
                "counter": counter,
                "value": totals.get(port, {}).get(counter, 0),
            }
            for port, role in roles.items()
            for counter in COUNTERS
        ]
