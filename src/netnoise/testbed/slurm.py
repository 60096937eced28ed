"""A Slurm cluster of testbed nodes: one ``slurmd`` per node, inside the node's namespaces.

``netnoise testbed up --slurm`` brings the testbed up and starts, on this host,
munged, MariaDB (unix socket only, no network), slurmdbd and slurmctld, then one
slurmd in every node. Jobs then run on the emulated nodes: their ranks talk over
the shaped node links and rack uplinks, exactly as the testbed platform's do, and
``sacct``/``scontrol`` keep Slurm's own record of every job and step. It serves
the tests of the slurm platform and anyone who wants to try
``snakemake --profile slurm`` without a cluster.

How the pieces reach each other:

- the controller side listens on ``10.77.0.254``, the host end of a veth pair
  ``<prefix>hst`` (host) -- ``<prefix>ctl`` (fabric namespace, on the core switch,
  or the rack switch with one rack), so every node reaches it and commands on
  this host (``sbatch``, ``sacct``) reach every node;
- every slurmd starts with ``nsenter --net`` in its node's network namespace (not
  ``ip netns exec``, which remounts ``/sys`` without the cgroup tree: slurmd then
  refuses to start) and in a private mount and UTS namespace of its own: host name
  = node name; ``/etc/slurm`` = this cluster's config directory (``srun`` inside a
  job finds ``slurm.conf`` at its default path, as on a real cluster, and the
  host's ``/etc/slurm`` is never touched); ``/etc/hosts`` = the node names;
  ``/tmp`` = the node's own (files one node writes for another must be on the
  shared file system, as on a cluster), but for the checkout and its Python
  environment where they lie under ``/tmp``: bound into every node, as a
  cluster's shared file system holds them; ``/sys`` = a sysfs of the node's network
  namespace (its ``/sys/class/net`` lists its ``eth0``), the cgroup tree kept.
  Jobs, steps and their tasks inherit all of it.

Everything lives in ``/run/netnoise/<prefix>/slurm`` (config, state, logs,
sockets, pid files, the MariaDB data) and under names starting with the prefix;
the daemons use ports ``port`` (slurmctld), ``port + 1`` (slurmd, one per node
namespace) and ``port + 2`` (slurmdbd, on localhost). Each daemon carries
``NETNOISE_SLURM_DIR`` in its environment: stopping only ever signals a process
whose pid file, program name and environment all match. Removing the testbed
stops the cluster first. Cluster, partition and account: the partition is
``batch`` (what ``profiles/slurm`` asks for), the account ``netnoise``, the
default account of root and of the user who ran ``sudo``.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from netnoise import project
from netnoise.testbed.fabric import SERVICES, SUBNET, Testbed, TestbedError, run_command

HOST_ADDRESS = f"{SUBNET}.254"
DEFAULT_PORT = 16817
PARTITION = "batch"
ACCOUNT = "netnoise"
PACKAGES = ("slurm-wlm", "slurmdbd", "munge", "mariadb-server")
# Host daemons, in start order; they stop in the reverse order, after the slurmds.
HOST_DAEMONS = ("munged", "mariadbd", "slurmdbd", "slurmctld")
START_TIMEOUT_S = 60
STOP_GRACE_S = 10
# A node namespace's view: its own host name, /etc/slurm, /etc/hosts, /tmp and
# /sys (with the host's cgroup tree moved back under it), then slurmd. The
# directories after the fourth argument lie under /tmp and stay visible over the
# node's own (the checkout and its environment, wherever they were cloned): the
# host's /tmp is bound aside first, each one bound back from there, then it goes.
NODE_START = """set -e
node=$2
hostname "$1"
if mountpoint -q /sys/fs/cgroup; then mount --rbind /sys/fs/cgroup "$node/cgroup"; fi
mount -t sysfs sysfs /sys
if mountpoint -q "$node/cgroup"; then mount --move "$node/cgroup" /sys/fs/cgroup; fi
mount --bind "$3" /etc/slurm
mount --bind "$4" /etc/hosts
mount --rbind /tmp "$node/host-tmp"
mount --bind "$node/tmp" /tmp
shift 4
for kept in "$@"; do
  mkdir -p "$kept"
  mount --rbind "$node/host-tmp/${kept#/tmp/}" "$kept"
done
umount -l "$node/host-tmp"
exec slurmd -f /etc/slurm/slurm.conf
"""


def kept_in_nodes() -> list[str]:
    """What the nodes' jobs run from that lies under /tmp, which each node has
    its own of: the checkout and the Python environment (its venv, its base)."""
    tmp = Path("/tmp")
    paths = {Path(p).resolve() for p in (project.ROOT, sys.prefix, sys.base_prefix)}
    under = sorted(p for p in paths if p.is_relative_to(tmp) and p != tmp)
    # A directory inside another kept one comes with it.
    return [str(p) for p in under if not any(p != q and p.is_relative_to(q) for q in under)]


def hostlist(names: list[str]) -> str:
    """Slurm's compact form of node names ``<prefix>-nNN`` in order: ``p-n[01-04]``."""
    stem = names[0][:-2]
    numbers = [int(n[-2:]) for n in names]
    if len(names) == 1:
        return names[0]
    if numbers != list(range(numbers[0], numbers[0] + len(numbers))):
        return ",".join(names)
    return f"{stem}[{numbers[0]:02d}-{numbers[-1]:02d}]"


class SlurmCluster:
    """Lifecycle and state of the Slurm cluster on one testbed."""

    def __init__(self, testbed: Testbed, port: int = DEFAULT_PORT):
        self.testbed = testbed
        self.spec = testbed.spec
        self.port = port
        self.dir = testbed.state_dir / "slurm"
        self.etc = self.dir / "etc"
        self.conf = self.etc / "slurm.conf"
        self.run_dir = self.dir / "run"
        self.logs = self.dir / "log"
        self.munge_socket = self.run_dir / "munge.socket"
        self.mysql_socket = self.dir / "mysql-run" / "mysqld.sock"
        self.host_link = f"{self.spec.prefix}hst"
        self.fabric_link = f"{self.spec.prefix}ctl"
        self.cluster_name = f"netnoise{self.spec.prefix}"

    # ------------------------------------------------------------ names
    def env(self) -> dict[str, str]:
        """What a Slurm command on this host needs to reach the cluster."""
        return {"SLURM_CONF": str(self.conf)}

    def _daemon_env(self) -> dict[str, str]:
        return {**os.environ, **self.env(), "NETNOISE_SLURM_DIR": str(self.dir)}

    def _pidfile(self, daemon: str) -> Path:
        return self.run_dir / f"{daemon}.pid"

    def _daemons(self) -> list[str]:
        """Every daemon's pid-file name, in stop order."""
        nodes = [f"slurmd-{n.name}" for n in self.spec.node_list()]
        return [*nodes, *reversed(HOST_DAEMONS)]

    def daemon_pid(self, daemon: str) -> int | None:
        """The pid of ``daemon`` (``slurmd-<node>`` for a node's) if it runs as ours."""
        try:
            pid = int(self._pidfile(daemon).read_text().strip())
            comm = Path(f"/proc/{pid}/comm").read_text().strip()
            environ = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
        except (OSError, ValueError):
            return None
        program = daemon.split("-", 1)[0]
        if comm != program or f"NETNOISE_SLURM_DIR={self.dir}".encode() not in environ:
            return None
        return pid

    # ------------------------------------------------------------ lifecycle
    def start(self) -> dict[str, Any]:
        """Start the cluster on the (already up) testbed; return how long it took."""
        started = time.monotonic()
        self._check_host()
        if self.dir.exists():
            self.stop()
        try:
            self._prepare()
            self._connect_host()
            self._start_controller()
            self._start_nodes()
            self._wait(self._nodes_idle, "every node to become idle in sinfo")
        except BaseException:
            self._report_logs()
            self.stop()
            raise
        return {"slurm_conf": str(self.conf), "start_s": round(time.monotonic() - started, 1)}

    def stop(self) -> None:
        """Cancel the jobs, stop every daemon, remove the host link and the directory."""
        if self.daemon_pid("slurmctld") and any(
            self.daemon_pid(f"slurmd-{n.name}") for n in self.spec.node_list()
        ):
            self._slurm(["scancel", "--full", f"--partition={PARTITION}"], check=False)
            with contextlib.suppress(TestbedError):
                self._wait(self._no_jobs, "the jobs to end", timeout_s=30)
        for daemon in self._daemons():
            self._stop_daemon(daemon)
        run_command(["ip", "link", "delete", self.host_link], check=False)
        shutil.rmtree(self.dir, ignore_errors=True)

    def is_up(self) -> bool:
        return all(self.daemon_pid(d) for d in self._daemons())

    def status(self) -> dict[str, Any]:
        daemons = {d: self.daemon_pid(d) for d in reversed(self._daemons())}
        nodes = {}
        if daemons["slurmctld"]:
            out = self._slurm(["sinfo", "-h", "-N", "-o", "%N %T"], check=False)
            nodes = dict(line.split() for line in out.splitlines() if line.strip())
        return {
            "up": all(daemons.values()),
            "slurm_conf": str(self.conf),
            "controller": HOST_ADDRESS,
            "partition": PARTITION,
            "account": ACCOUNT,
            "daemons": daemons,
            "nodes": nodes,
        }

    # ------------------------------------------------------------ start-up steps
    def _check_host(self) -> None:
        missing = [p for p in PACKAGES if not _installed(p)]
        if missing:
            _install(missing)
        if not Path("/etc/slurm").is_dir():
            raise TestbedError(
                "/etc/slurm is missing: every node mounts its own config there "
                "(the slurm-wlm package makes it)"
            )
        for line in run_command(["ip", "-o", "-4", "addr", "show"]).splitlines():
            words = line.split()
            if f"{HOST_ADDRESS}/" in line and words[1] != self.host_link:
                raise TestbedError(
                    f"{HOST_ADDRESS} is already on interface {words[1]}: another testbed's "
                    "Slurm cluster runs on this host; stop it first (netnoise testbed down)"
                )

    def _prepare(self) -> None:
        for sub in ("etc", "log", "run", "state/slurmctld"):
            (self.dir / sub).mkdir(parents=True, exist_ok=True)
        # munged insists: its key private, its socket directory world-searchable.
        for private in ("munge", "mysql", "mysql-run"):
            (self.dir / private).mkdir(mode=0o700, exist_ok=True)
        for path in (self.dir, self.run_dir):
            path.chmod(0o755)
        key = self.dir / "munge" / "munge.key"
        key.write_bytes(os.urandom(1024))
        key.chmod(0o400)
        for node in self.spec.node_list():
            node_dir = self.dir / "nodes" / node.name
            for sub in ("tmp", "host-tmp", "cgroup", "spool"):
                (node_dir / sub).mkdir(parents=True, exist_ok=True)
            (node_dir / "tmp").chmod(0o1777)
        self._write_configs()

    def _write_configs(self) -> None:
        nodes = self.spec.node_list()
        hardware = _node_hardware()
        host = socket.gethostname().split(".")[0]
        d = self.dir
        node_lines = [
            f"NodeName={n.name} NodeAddr={n.address} {hardware} State=UNKNOWN" for n in nodes
        ]
        (self.etc / "slurm.conf").write_text(
            f"""# netnoise testbed Slurm cluster ({self.spec.prefix}); removed with the testbed.
ClusterName={self.cluster_name}
SlurmctldHost={host}({HOST_ADDRESS})
SlurmctldPort={self.port}
SlurmdPort={self.port + 1}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket={self.munge_socket}
CredType=cred/munge
StateSaveLocation={d}/state/slurmctld
SlurmdSpoolDir={d}/nodes/%n/spool
SlurmctldPidFile={self._pidfile("slurmctld")}
SlurmdPidFile={self.run_dir}/slurmd-%n.pid
SlurmctldLogFile={self.logs}/slurmctld.log
SlurmdLogFile={self.logs}/slurmd-%n.log
PlugStackConfig={self.etc}/plugstack.conf
# No cgroups (containers often lack them): processes are tracked through /proc.
ProctrackType=proctrack/linuxproc
# Tasks bound to the cores of their step: two steps of a co-run get separate cores.
TaskPlugin=task/affinity
JobAcctGatherType=jobacct_gather/linux
JobAcctGatherFrequency=30
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
DefMemPerCPU=500
SchedulerType=sched/backfill
TopologyPlugin=topology/tree
MpiDefault=none
MailProg=/bin/true
ReturnToService=2
# Finished jobs stay visible to squeue this long (the executor's squeue
# status command needs at least 3 x its first status-check delay).
MinJobAge=300
InactiveLimit=0
KillWait=5
AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=localhost
AccountingStoragePort={self.port + 2}
AccountingStoragePass={self.munge_socket}
AccountingStorageEnforce=associations
# sacct shows the comment the Snakemake executor gives each job (rule_<name>...).
AccountingStoreFlags=job_comment
JobCompType=jobcomp/none
{chr(10).join(node_lines)}
PartitionName={PARTITION} Nodes=ALL Default=YES MaxTime=INFINITE State=UP
"""
        )
        switches = [
            f"SwitchName={self.spec.bridge(r)} "
            f"Nodes={hostlist([n.name for n in nodes if n.rack == r])}"
            for r in range(1, self.spec.racks + 1)
        ]
        if self.spec.racks > 1:
            racks = ",".join(self.spec.bridge(r) for r in range(1, self.spec.racks + 1))
            switches.append(f"SwitchName={self.spec.core} Switches={racks}")
        (self.etc / "topology.conf").write_text("\n".join(switches) + "\n")
        (self.etc / "plugstack.conf").write_text("")
        hosts = ["127.0.0.1 localhost", f"{HOST_ADDRESS} {host}"]
        hosts += [f"{n.address} {n.name}" for n in nodes]
        (self.dir / "hosts").write_text("\n".join(hosts) + "\n")
        # slurmdbd reads slurmdbd.conf beside slurm.conf; it must be private.
        dbd = self.etc / "slurmdbd.conf"
        dbd.touch(mode=0o600)
        dbd.write_text(
            f"""AuthType=auth/munge
AuthInfo=socket={self.munge_socket}
DbdHost=localhost
DbdPort={self.port + 2}
SlurmUser=root
PidFile={self._pidfile("slurmdbd")}
LogFile={self.logs}/slurmdbd.log
StorageType=accounting_storage/mysql
# localhost: the socket MYSQL_UNIX_PORT names; root: MariaDB's unix_socket
# authentication lets root in without a password.
StorageHost=localhost
StorageUser=root
StorageLoc=slurm_acct_db
"""
        )

    def _connect_host(self) -> None:
        spec = self.spec
        switch = spec.core if spec.racks > 1 else spec.bridge(1)
        run_command(["ip", "link", "delete", self.host_link], check=False)
        run_command(
            [
                "ip",
                "link",
                "add",
                self.host_link,
                "type",
                "veth",
                "peer",
                "name",
                self.fabric_link,
                "netns",
                spec.fabric,
            ]
        )
        run_command(
            ["ip", "-n", spec.fabric, "link", "set", self.fabric_link, "master", switch, "up"]
        )
        run_command(["ip", "addr", "add", f"{HOST_ADDRESS}/24", "dev", self.host_link])
        run_command(["ip", "link", "set", self.host_link, "up"])

    def _start_controller(self) -> None:
        d, env = self.dir, self._daemon_env()
        self._daemon(
            [
                "munged",
                f"--key-file={d}/munge/munge.key",
                f"--socket={self.munge_socket}",
                f"--pid-file={self._pidfile('munged')}",
                f"--log-file={self.logs}/munged.log",
                f"--seed-file={d}/munge/munged.seed",
            ]
        )
        install = [
            "mariadb-install-db",
            "--no-defaults",
            "--user=root",
            f"--datadir={d}/mysql",
            "--auth-root-authentication-method=socket",
            "--skip-test-db",
        ]
        with open(self.logs / "mariadb-install.log", "w") as log:
            if subprocess.run(install, stdout=log, stderr=subprocess.STDOUT, env=env).returncode:
                raise TestbedError(f"mariadb-install-db failed; see {log.name}")
        # mariadbd stays in the foreground: setsid --fork detaches it.
        self._daemon(
            [
                "setsid",
                "--fork",
                "mariadbd",
                "--no-defaults",
                "--user=root",
                f"--datadir={d}/mysql",
                f"--socket={self.mysql_socket}",
                "--skip-networking",
                f"--pid-file={self._pidfile('mariadbd')}",
                f"--log-error={self.logs}/mariadbd.log",
                "--innodb-buffer-pool-size=64M",
            ]
        )
        sql = ["mariadb", "--no-defaults", f"--socket={self.mysql_socket}", "-e", "select 1"]
        self._wait(lambda: _succeeds(sql, env), "mariadbd")
        # slurmdbd reaches MariaDB through the client library's default socket.
        self._daemon(["slurmdbd"], {"MYSQL_UNIX_PORT": str(self.mysql_socket)})
        self._wait(lambda: _succeeds(["sacctmgr", "-n", "list", "cluster"], env), "slurmdbd")
        users = ["root"] + [u for u in [os.environ.get("SUDO_USER")] if u and u != "root"]
        for command in (
            ["add", "cluster", self.cluster_name],
            [
                "add",
                "account",
                ACCOUNT,
                f"Cluster={self.cluster_name}",
                "Description=netnoise",
                "Organization=netnoise",
            ],
            *(
                [
                    "add",
                    "user",
                    u,
                    f"Account={ACCOUNT}",
                    f"DefaultAccount={ACCOUNT}",
                    f"Cluster={self.cluster_name}",
                ]
                for u in users
            ),
        ):
            self._slurm(["sacctmgr", "-i", *command])
        self._daemon(["slurmctld", "-f", str(self.conf)])
        self._wait(lambda: _succeeds(["scontrol", "ping"], env), "slurmctld")

    def _start_nodes(self) -> None:
        for node in self.spec.node_list():
            node_dir = self.dir / "nodes" / node.name
            self._daemon(
                [
                    "nsenter",
                    f"--net=/run/netns/{node.name}",
                    "unshare",
                    "--mount",
                    "--uts",
                    "--propagation",
                    "private",
                    "sh",
                    "-c",
                    NODE_START,
                    "sh",
                    node.name,
                    str(node_dir),
                    str(self.etc),
                    str(self.dir / "hosts"),
                    *kept_in_nodes(),
                ],
                log=self.logs / f"slurmd-{node.name}.start.log",
            )

    # ------------------------------------------------------------ helpers
    def _daemon(
        self, argv: list[str], extra_env: dict[str, str] | None = None, log: Path | None = None
    ) -> None:
        """Start a daemon that detaches itself; its start-up messages go to ``log``."""
        log = log or self.logs / f"{Path(argv[0]).name}.start.log"
        with open(log, "ab") as fh:
            status = subprocess.run(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=fh,
                stderr=subprocess.STDOUT,
                env={**self._daemon_env(), **(extra_env or {})},
                timeout=START_TIMEOUT_S,
            ).returncode
        if status != 0:
            raise TestbedError(f"{argv[0]} did not start (status {status}); see {log}")

    def _stop_daemon(self, daemon: str) -> None:
        pid = self.daemon_pid(daemon)
        if pid is None:
            return
        for sig in (signal.SIGTERM, signal.SIGKILL):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, sig)
            deadline = time.monotonic() + STOP_GRACE_S
            while self.daemon_pid(daemon) == pid and time.monotonic() < deadline:
                time.sleep(0.05)
            if self.daemon_pid(daemon) != pid:
                return

    def _slurm(self, argv: list[str], check: bool = True) -> str:
        proc = subprocess.run(
            argv, capture_output=True, text=True, timeout=60, env=self._daemon_env()
        )
        if check and proc.returncode != 0:
            raise TestbedError(f"{' '.join(argv)} failed: {proc.stderr.strip()}")
        return proc.stdout

    def _nodes_idle(self) -> bool:
        out = self._slurm(["sinfo", "-h", "-N", "-o", "%T"], check=False).split()
        return len(out) == self.spec.nodes and set(out) == {"idle"}

    def _no_jobs(self) -> bool:
        return not self._slurm(["squeue", "-h", "-o", "%i"], check=False).strip()

    def _wait(self, ready: Callable[[], bool], what: str, timeout_s: float = START_TIMEOUT_S):
        deadline = time.monotonic() + timeout_s
        while not ready():
            if time.monotonic() > deadline:
                raise TestbedError(f"timed out after {timeout_s:g} s waiting for {what}")
            time.sleep(0.1)

    def _report_logs(self) -> None:
        """The end of every log, for a start that failed (the directory goes next)."""
        for log in sorted(self.logs.glob("*.log")):
            print(f"----- {log} (last 15 lines)")
            print("\n".join(log.read_text(errors="replace").splitlines()[-15:]))


def _succeeds(argv: list[str], env: dict[str, str]) -> bool:
    return (
        subprocess.run(argv, capture_output=True, env=env, timeout=30, check=False).returncode == 0
    )


def _node_hardware() -> str:
    """The node as slurmd sees this host (CPUs, sockets, cores, threads, memory): a
    node whose config disagrees with its hardware gets drained."""
    first = run_command(["slurmd", "-C"]).splitlines()[0].split()
    if not first or not first[0].startswith("NodeName="):
        raise TestbedError(f"slurmd -C printed {' '.join(first)!r}")
    return " ".join(first[1:])


def _installed(package: str) -> bool:
    out = subprocess.run(
        ["dpkg-query", "-W", "-f=${Status}", package], capture_output=True, text=True
    )
    return out.stdout.startswith("install ok installed")


def _install(packages: list[str]) -> None:
    """apt-get install without starting the packages' own services (a policy-rc.d
    that says no, while installing)."""
    print(f"installing Debian packages: {' '.join(packages)}")
    policy = Path("/usr/sbin/policy-rc.d")
    made_policy = not policy.exists()
    if made_policy:
        policy.write_text("#!/bin/sh\n# netnoise testbed slurm, while installing\nexit 101\n")
        policy.chmod(0o755)
    try:
        env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
        for argv in (
            ["apt-get", "update", "-qq"],
            ["apt-get", "install", "-y", "-qq", "--no-install-recommends", *packages],
        ):
            if subprocess.run(argv, env=env).returncode != 0:
                raise TestbedError(f"{' '.join(argv)} failed")
    finally:
        if made_policy:
            policy.unlink()


# A testbed's down() stops its Slurm cluster first: the daemons on the host
# would otherwise outlive the namespaces they serve.
SERVICES["slurm"] = lambda testbed: SlurmCluster(testbed).stop()
