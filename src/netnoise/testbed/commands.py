"""``netnoise testbed``: bring the emulated cluster up and down, look at it,
and run commands and MPI programs on its nodes."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
from pathlib import Path

from netnoise import config
from netnoise.platform.testbed import TestbedPlatform
from netnoise.settings import PlatformSettings
from netnoise.testbed.slurm import ACCOUNT as SLURM_ACCOUNT
from netnoise.testbed.slurm import DEFAULT_PORT as SLURM_PORT
from netnoise.testbed.slurm import PARTITION as SLURM_PARTITION
from netnoise.testbed.slurm import SlurmCluster


def add_parser(sub: argparse._SubParsersAction, default_config: Path) -> None:
    """The ``testbed`` command and its actions, under the command line's ``sub``;
    ``default_config`` is the config whose platform section it reads by default."""
    testbed = sub.add_parser(
        "testbed", help="the emulated cluster: network namespaces as nodes (needs root)"
    )
    testbed.add_argument(
        "--config",
        default=str(default_config),
        help="workflow config whose platform.testbed section describes the testbed "
        "(default: %(default)s, or the schema defaults when it does not exist)",
    )
    testbed.set_defaults(default_config=str(default_config))
    tb = testbed.add_subparsers(dest="action", required=True)
    up = tb.add_parser("up", help="bring it up (after removing leftovers)")
    up.add_argument(
        "--slurm",
        action="store_true",
        help="and a Slurm cluster of its nodes: slurmctld, slurmdbd here, one slurmd per node",
    )
    up.add_argument(
        "--slurm-port",
        type=_port,
        default=SLURM_PORT,
        help="slurmctld's port; slurmd uses the next, slurmdbd the one after "
        "(default: %(default)s)",
    )
    up.set_defaults(func=_cmd_testbed_up)
    tb.add_parser(
        "down", help="kill what runs inside and remove it (its Slurm cluster too)"
    ).set_defaults(func=_cmd_testbed_down)
    tb.add_parser(
        "env", help="print the shell exports that reach its Slurm cluster (SLURM_CONF)"
    ).set_defaults(func=_cmd_testbed_env)
    status = tb.add_parser("status", help="nodes, addresses, link rates, up or not")
    status.add_argument("--json", action="store_true", help="all of it as JSON")
    status.add_argument(
        "--check", action="store_true", help="exit 1 when it is down, 2 when this user cannot tell"
    )
    status.set_defaults(func=_cmd_testbed_status)
    exec_cmd = tb.add_parser("exec", help="run a command on a node: exec NODE -- CMD ...")
    exec_cmd.add_argument("node", help="node name (nn-n01) or number (1)")
    exec_cmd.add_argument("argv", nargs=argparse.REMAINDER, help="-- and the command")
    exec_cmd.set_defaults(func=_cmd_testbed_exec)
    mpirun = tb.add_parser("mpirun", help="run an MPI program: mpirun -n N -- PROGRAM ...")
    mpirun.add_argument("-n", type=_ranks, required=True, help="MPI ranks (1 or more)")
    mpirun.add_argument("--nodes", help="comma-separated nodes (default: all)")
    mpirun.add_argument(
        "argv", nargs=argparse.REMAINDER, help="-- and the program with its arguments"
    )
    mpirun.set_defaults(func=_cmd_testbed_mpirun)


def _testbed(args: argparse.Namespace) -> TestbedPlatform:
    """The testbed of the config's platform section: the studies' sections are
    not checked, so a config of a small testbed serves every testbed command."""
    path = Path(args.config)
    if os.path.lexists(path) or args.config != args.default_config:
        platform = config.load_platform(path)
    else:
        platform = config.validate_platform({})
    return TestbedPlatform(PlatformSettings.of(platform))


def _cmd_testbed_up(args: argparse.Namespace) -> int:
    platform = _testbed(args)
    state = platform.testbed.up()
    status = platform.testbed.status()
    print(
        f"testbed {status['prefix']} up in {state['setup_s']:.2f} s: {len(status['nodes'])} nodes, "
        f"{status['racks']} rack(s), links {status['links']}"
    )
    if args.slurm:
        cluster = SlurmCluster(platform.testbed, args.slurm_port).start()
        print(
            f"Slurm cluster up in {cluster['start_s']:.1f} s: partition {SLURM_PARTITION}, "
            f"account {SLURM_ACCOUNT}; for its commands: "
            f"export SLURM_CONF={cluster['slurm_conf']}"
        )
    return 0


def _cmd_testbed_env(args: argparse.Namespace) -> int:
    cluster = SlurmCluster(_testbed(args).testbed)
    if not cluster.conf.exists():
        print("netnoise: this testbed has no Slurm cluster (netnoise testbed up --slurm)")
        return 1
    for name, value in cluster.env().items():
        print(f"export {name}={value}")
    return 0


def _cmd_testbed_down(args: argparse.Namespace) -> int:
    removed = _testbed(args).testbed.down()
    print(f"removed {len(removed)} namespace(s)" if removed else "nothing to remove")
    return 0


def _testbed_summary(status: dict) -> str:
    if status["up"] is None:
        return f"cannot tell whether it is up: {status['unknown']}"
    words = ["up" if status["up"] else "down"]
    holder = status["claimed_by"]
    if holder:
        whose = "in use by" if holder["alive"] else "last used by a run that is gone,"
        words.append(f"{whose} pid {holder['pid']} ({holder['command'][:80]})")
    if status["processes_inside"]:
        words.append(f"{status['processes_inside']} process(es) running inside")
    return "; ".join(words)


def _cmd_testbed_status(args: argparse.Namespace) -> int:
    testbed = _testbed(args).testbed
    status = testbed.status()
    cluster = SlurmCluster(testbed)
    if cluster.dir.exists():
        status["slurm"] = cluster.status()
    if args.json:
        print(json.dumps(status, indent=2))
    else:
        print(f"testbed {status['prefix']}: {_testbed_summary(status)}")
        slurm = status.get("slurm")
        for node in status["nodes"]:
            state = f"  slurm {slurm['nodes'].get(node['name'], '-')}" if slurm else ""
            print(f"  {node['name']}  {node['address']}  rack {node['rack']}{state}")
        if slurm:
            down = [d for d, pid in slurm["daemons"].items() if pid is None]
            print(
                f"slurm: {'up' if slurm['up'] else 'not running: ' + ', '.join(down)}, "
                f"SLURM_CONF={slurm['slurm_conf']}"
            )
    up = status["up"] and status.get("slurm", {}).get("up", True)
    if not args.check or up:
        return 0
    return 2 if status["up"] is None else 1


def _cmd_testbed_exec(args: argparse.Namespace) -> int:
    platform = _testbed(args)
    node = platform.testbed.node(args.node)  # a node it lacks: refused before it is brought up
    platform.check()
    argv = platform.testbed.exec_argv(node, args.argv)
    return subprocess.run(argv).returncode


def _cmd_testbed_mpirun(args: argparse.Namespace) -> int:
    platform = _testbed(args)
    nodes = args.nodes.split(",") if args.nodes is not None else None
    for node in nodes or []:
        platform.testbed.node(node)  # refused before the testbed is brought up
    platform.check()
    launch = platform.mpi_launch(args.argv, args.n, nodes)
    return subprocess.run(launch.argv, env={**os.environ, **launch.env}).returncode


def whole_number(text: str, what: str) -> int:
    try:
        number = int(text)
    except ValueError:
        number = 0
    if number < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: give a whole number of {what}, 1 or more")
    return number


def _port(text: str) -> int:
    port = whole_number(text, "a port")
    if port > 65533:
        raise argparse.ArgumentTypeError(
            f"{text!r}: give a port of 1 to 65533 (the next two serve slurmd and slurmdbd)"
        )
    return port


def _ranks(text: str) -> int:
    return whole_number(text, "MPI ranks")
