#!/usr/bin/env bash
# A throw-away one-node Slurm cluster with accounting on this machine, for
# tests/test_slurm.py and for trying profiles/slurm by hand:
#
#   tests/slurm/cluster.sh start    # idempotent; 4-15 s from cold, waits for an idle node
#   tests/slurm/cluster.sh status   # daemons, node state; exit 1 unless all is up
#   tests/slurm/cluster.sh env      # `eval "$(tests/slurm/cluster.sh env)"` sets SLURM_CONF
#   tests/slurm/cluster.sh stop     # kills what start started, removes its directory
#
# Everything lives under $NETNOISE_SLURM_DIR (default /tmp/netnoise-slurm):
# config, daemon state, logs, sockets, pid files and the MariaDB data
# directory. The daemons are munged, mariadbd (unix socket only, no
# network), slurmdbd, slurmctld and slurmd, all as root (needs root), on
# ports $NETNOISE_SLURM_PORT (default 16817, slurmctld), +1 (slurmd) and +2
# (slurmdbd), so a site's Slurm on the default ports is not disturbed.
# Cluster, partition and account are all called "netnoise".
#
# One file outside that directory: /etc/slurm/slurm.conf. The Snakemake
# slurm executor's jobstep removes SLURM_CONF from a job's environment, so
# an `srun` inside a job only finds the config at the compiled-in default
# path, as it would on a real cluster. `start` makes /etc/slurm/slurm.conf
# a symlink to this cluster's slurm.conf, moving an existing file to
# /etc/slurm/slurm.conf.netnoise-backup first; `stop` removes the symlink
# and moves the backup back. NETNOISE_SLURM_ETC=0 leaves /etc/slurm alone
# (then Slurm commands need SLURM_CONF, and srun inside a Snakemake job fails).
#
# The Debian packages (slurm-wlm slurmdbd munge mariadb-server) are
# installed when missing, without starting their services (on a systemd
# host the packages still enable their units for the next boot).
set -euo pipefail

DIR=${NETNOISE_SLURM_DIR:-/tmp/netnoise-slurm}
PORT=${NETNOISE_SLURM_PORT:-16817}
TIMEOUT=${NETNOISE_SLURM_TIMEOUT:-60}
MANAGE_ETC=${NETNOISE_SLURM_ETC:-1}
NAME=netnoise # cluster, partition and account
PACKAGES=(slurm-wlm slurmdbd munge mariadb-server)
ETC_CONF=/etc/slurm/slurm.conf
ETC_BACKUP=/etc/slurm/slurm.conf.netnoise-backup
# Stop order; start order is the reverse.
DAEMONS=(slurmd slurmctld slurmdbd mariadbd munged)

die() {
	echo "cluster.sh: $*" >&2
	exit 1
}

case $DIR in
/*) ;;
*) die "NETNOISE_SLURM_DIR must be an absolute path, not '$DIR'" ;;
esac
DIR=${DIR%/}
[[ -n $DIR && $DIR != / ]] || die "NETNOISE_SLURM_DIR must not be /"
MARK=$DIR/.netnoise-slurm
CONF=$DIR/etc/slurm.conf
RUN=$DIR/run
LOGS=$DIR/log
MYSQL_SOCKET=$DIR/mysql-run/mysqld.sock
export SLURM_CONF=$CONF
# Every daemon carries this in its environment: stop and status only ever
# touch a process whose pid file, program name and environment all match.
export NETNOISE_SLURM_DIR=$DIR

pidfile() { echo "$RUN/$1.pid"; }

# The pid of daemon $1 of this cluster, if it runs.
daemon_pid() {
	local file pid
	file=$(pidfile "$1")
	pid=$({ tr -dc 0-9 <"$file"; } 2>/dev/null) || return 1
	[[ -n $pid && -d /proc/$pid ]] || return 1
	[[ $(cat "/proc/$pid/comm" 2>/dev/null) == "$1" ]] || return 1
	{ tr '\0' '\n' <"/proc/$pid/environ"; } 2>/dev/null | grep -qxF "NETNOISE_SLURM_DIR=$DIR" || return 1
	echo "$pid"
}

install_packages() {
	local missing=() p
	for p in "${PACKAGES[@]}"; do
		dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed' ||
			missing+=("$p")
	done
	((${#missing[@]})) || return 0
	echo "cluster.sh: installing Debian packages: ${missing[*]}"
	apt-get update -qq
	# A policy-rc.d that says no keeps the packages from starting their own
	# services (system-wide munged, mariadbd, slurm daemons) while installing.
	local policy=/usr/sbin/policy-rc.d made_policy=0
	if [[ ! -e $policy ]]; then
		printf '#!/bin/sh\n# netnoise tests/slurm/cluster.sh, while installing\nexit 101\n' >"$policy"
		chmod 755 "$policy"
		made_policy=1
	fi
	local status=0
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" ||
		status=$?
	((made_policy == 0)) || rm -f "$policy"
	((status == 0)) || die "apt-get install ${missing[*]} failed"
}

show_logs() {
	local f
	for f in "$LOGS"/*.log; do
		[[ -f $f ]] || continue
		echo "----- $f (last 25 lines)" >&2
		tail -n 25 "$f" >&2
	done
}

fail() {
	echo "cluster.sh: $*" >&2
	show_logs
	echo "cluster.sh: the cluster is left as it is for inspection; '$0 stop' removes it" >&2
	exit 1
}

# poll SECONDS COMMAND...: until COMMAND succeeds (0) or SECONDS pass (1).
poll() {
	local deadline=$((SECONDS + $1))
	shift
	until "$@" >/dev/null 2>&1; do
		((SECONDS < deadline)) || return 1
		sleep 0.1
	done
}

# wait_for SECONDS DESCRIPTION COMMAND...: poll, and fail with the logs on timeout.
wait_for() {
	local seconds=$1 what=$2
	shift 2
	poll "$seconds" "$@" || fail "timed out after ${seconds}s waiting for $what"
}

node_idle() { [[ $(sinfo -h -N -p "$NAME" -o %T 2>/dev/null) == idle ]]; }

# /etc/slurm/slurm.conf: see the header.
link_etc_conf() {
	[[ $MANAGE_ETC == 1 ]] || return 0
	mkdir -p /etc/slurm
	if [[ -L $ETC_CONF && $(readlink "$ETC_CONF") == "$CONF" ]]; then
		return 0
	fi
	if [[ -L $ETC_CONF && $(readlink "$ETC_CONF") == */etc/slurm.conf ]]; then
		local other
		other=$(dirname "$(dirname "$(readlink "$ETC_CONF")")")
		if [[ -e $other/.netnoise-slurm ]]; then
			die "$ETC_CONF belongs to the netnoise cluster in $other; stop that one first"
		elif [[ ! -e $ETC_CONF ]]; then
			# Left by a cluster whose directory is gone (a reboot emptied /tmp):
			# drop the dangling link; a backup beside it stays the original.
			rm -f "$ETC_CONF"
		fi
	fi
	if [[ -e $ETC_CONF || -L $ETC_CONF ]]; then
		[[ ! -e $ETC_BACKUP && ! -L $ETC_BACKUP ]] ||
			die "both $ETC_CONF and $ETC_BACKUP exist; move one away"
		mv "$ETC_CONF" "$ETC_BACKUP"
		echo "cluster.sh: moved $ETC_CONF to $ETC_BACKUP (stop puts it back)"
	fi
	ln -s "$CONF" "$ETC_CONF"
}

unlink_etc_conf() {
	if [[ -L $ETC_CONF && $(readlink "$ETC_CONF") == "$CONF" ]]; then
		rm -f "$ETC_CONF"
		if [[ -e $ETC_BACKUP || -L $ETC_BACKUP ]]; then
			mv "$ETC_BACKUP" "$ETC_CONF"
			echo "cluster.sh: restored $ETC_CONF from $ETC_BACKUP"
		fi
	fi
}

stop_daemons() {
	local d pid i
	for d in "${DAEMONS[@]}"; do
		pid=$(daemon_pid "$d") || continue
		kill -TERM "$pid" 2>/dev/null || true
		for ((i = 0; i < 100; i++)); do
			daemon_pid "$d" >/dev/null || break
			sleep 0.1
		done
		if daemon_pid "$d" >/dev/null; then
			echo "cluster.sh: $d ($pid) ignored SIGTERM for 10 s; killing it" >&2
			kill -KILL "$pid" 2>/dev/null || true
		fi
	done
}

all_running() {
	local d
	[[ -e $MARK ]] || return 1
	for d in "${DAEMONS[@]}"; do
		daemon_pid "$d" >/dev/null || return 1
	done
}

write_configs() {
	local node_line
	# The node as slurmd sees it (CPUs, sockets, cores, threads, memory):
	# a node whose config disagrees with its hardware gets drained.
	node_line=$(slurmd -C | head -n 1)
	[[ $node_line == NodeName=* ]] || fail "slurmd -C printed '$node_line'"
	cat >"$CONF" <<EOF
# Generated by tests/slurm/cluster.sh; removed by its stop.
ClusterName=$NAME
SlurmctldHost=$(hostname -s)(127.0.0.1)
SlurmctldPort=$PORT
SlurmdPort=$((PORT + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$RUN/munge.socket
CredType=cred/munge
StateSaveLocation=$DIR/state/slurmctld
SlurmdSpoolDir=$DIR/state/slurmd
SlurmctldPidFile=$(pidfile slurmctld)
SlurmdPidFile=$(pidfile slurmd)
SlurmctldLogFile=$LOGS/slurmctld.log
SlurmdLogFile=$LOGS/slurmd.log
PlugStackConfig=$DIR/etc/plugstack.conf
# No cgroups here (containers often lack them): track processes through /proc.
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/linux
JobAcctGatherFrequency=30
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
DefMemPerCPU=1000
SchedulerType=sched/backfill
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
AccountingStoragePort=$((PORT + 2))
AccountingStoragePass=$RUN/munge.socket
AccountingStorageEnforce=associations
JobCompType=jobcomp/none
# sacct shows the comment the Snakemake executor gives each job (rule_<name>...).
AccountingStoreFlags=job_comment
$node_line NodeAddr=127.0.0.1 State=UNKNOWN
PartitionName=$NAME Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF
	: >"$DIR/etc/plugstack.conf"
	# slurmdbd reads slurmdbd.conf beside slurm.conf; it must be private.
	install -m 600 /dev/null "$DIR/etc/slurmdbd.conf"
	cat >"$DIR/etc/slurmdbd.conf" <<EOF
# Generated by tests/slurm/cluster.sh; removed by its stop.
AuthType=auth/munge
AuthInfo=socket=$RUN/munge.socket
DbdHost=localhost
DbdPort=$((PORT + 2))
SlurmUser=root
PidFile=$(pidfile slurmdbd)
LogFile=$LOGS/slurmdbd.log
StorageType=accounting_storage/mysql
# localhost: the socket MYSQL_UNIX_PORT names; root: MariaDB's unix_socket
# authentication lets the root user in without a password.
StorageHost=localhost
StorageUser=root
StorageLoc=slurm_acct_db
EOF
}

start() {
	local t0=$SECONDS
	if all_running && scontrol ping >/dev/null 2>&1; then
		link_etc_conf
		wait_for "$TIMEOUT" "node of partition $NAME to become idle" node_idle_or_busy
		echo "cluster.sh: already running in $DIR"
		return 0
	fi
	if [[ -e $DIR ]]; then
		if [[ -e $MARK ]]; then
			echo "cluster.sh: cleaning up a stale cluster in $DIR"
			stop_daemons
			unlink_etc_conf
			rm -rf "$DIR"
		elif [[ -n $(ls -A "$DIR") ]]; then
			die "$DIR exists, is not empty and was not made by this script; choose" \
				"another NETNOISE_SLURM_DIR"
		fi
	fi
	install_packages
	mkdir -p "$DIR"
	touch "$MARK"
	mkdir -p "$DIR/etc" "$LOGS" "$DIR/state/slurmctld" "$DIR/state/slurmd"
	# munged insists: its key private, its socket directory world-searchable.
	install -d -m 700 "$DIR/munge" "$DIR/mysql" "$DIR/mysql-run"
	install -d -m 755 "$RUN"
	chmod 755 "$DIR"

	dd if=/dev/urandom of="$DIR/munge/munge.key" bs=1024 count=1 status=none
	chmod 400 "$DIR/munge/munge.key"
	munged --key-file="$DIR/munge/munge.key" --socket="$RUN/munge.socket" \
		--pid-file="$(pidfile munged)" --log-file="$LOGS/munged.log" \
		--seed-file="$DIR/munge/munged.seed" </dev/null >>"$LOGS/munged.log" 2>&1 ||
		fail "munged did not start"

	mariadb-install-db --no-defaults --user=root --datadir="$DIR/mysql" \
		--auth-root-authentication-method=socket --skip-test-db \
		>"$LOGS/mariadb-install.log" 2>&1 || fail "mariadb-install-db failed"
	# Unix socket only: nothing listens on the network.
	setsid mariadbd --no-defaults --user=root --datadir="$DIR/mysql" \
		--socket="$MYSQL_SOCKET" --skip-networking --pid-file="$(pidfile mariadbd)" \
		--log-error="$LOGS/mariadbd.log" --innodb-buffer-pool-size=128M --innodb-lock-wait-timeout=900 \
		</dev/null >>"$LOGS/mariadbd.log" 2>&1 &
	wait_for "$TIMEOUT" "mariadbd" mariadb --no-defaults --socket="$MYSQL_SOCKET" -e 'select 1'

	write_configs
	# slurmdbd reaches MariaDB through the client library's default socket.
	MYSQL_UNIX_PORT=$MYSQL_SOCKET slurmdbd </dev/null >>"$LOGS/slurmdbd.log" 2>&1 ||
		fail "slurmdbd did not start"
	wait_for "$TIMEOUT" "slurmdbd" sacctmgr -n list cluster
	sacctmgr -i add cluster "$NAME" >/dev/null
	sacctmgr -i add account "$NAME" Cluster="$NAME" Description=netnoise-tests \
		Organization=netnoise >/dev/null
	sacctmgr -i add user root Account="$NAME" Cluster="$NAME" >/dev/null

	slurmctld -f "$CONF" </dev/null >>"$LOGS/slurmctld.log" 2>&1 || fail "slurmctld did not start"
	wait_for "$TIMEOUT" "slurmctld" scontrol ping
	slurmd -f "$CONF" </dev/null >>"$LOGS/slurmd.log" 2>&1 || fail "slurmd did not start"
	link_etc_conf
	wait_for "$TIMEOUT" "node of partition $NAME to become idle" node_idle
	echo "cluster.sh: cluster '$NAME' up in $DIR after $((SECONDS - t0)) s" \
		"(SLURM_CONF=$CONF, partition and account '$NAME')"
}

jobs_gone() { [[ -z $(squeue -h -o %i 2>/dev/null) ]]; }

node_idle_or_busy() {
	[[ $(sinfo -h -N -p "$NAME" -o %T 2>/dev/null) =~ ^(idle|mixed|allocated)$ ]]
}

stop() {
	if [[ ! -e $DIR ]]; then
		unlink_etc_conf
		echo "cluster.sh: nothing to stop in $DIR"
		return 0
	fi
	[[ -e $MARK ]] || die "$DIR was not made by this script; not touching it"
	# Running jobs first, so that no step outlives its slurmd.
	if daemon_pid slurmctld >/dev/null && daemon_pid slurmd >/dev/null; then
		scancel --full --user=root >/dev/null 2>&1 || true
		poll 30 jobs_gone || echo "cluster.sh: jobs still ending after 30 s; stopping anyway" >&2
	fi
	stop_daemons
	unlink_etc_conf
	rm -rf "$DIR"
	echo "cluster.sh: stopped; $DIR removed"
}

status() {
	local d pid ok=0
	[[ -e $MARK ]] || {
		echo "no cluster in $DIR"
		return 1
	}
	for d in munged mariadbd slurmdbd slurmctld slurmd; do
		if pid=$(daemon_pid "$d"); then
			echo "$d: running (pid $pid)"
		else
			echo "$d: not running"
			ok=1
		fi
	done
	if [[ -L $ETC_CONF && $(readlink "$ETC_CONF") == "$CONF" ]]; then
		echo "$ETC_CONF -> $CONF"
	fi
	echo "SLURM_CONF=$CONF"
	sinfo -N -p "$NAME" 2>&1 || ok=1
	return $ok
}

case ${1:-} in
start | stop | status)
	[[ $(id -u) == 0 ]] || die "needs root (the daemons run as root)"
	"$1"
	;;
env) echo "export SLURM_CONF=$CONF" ;;
*)
	echo "usage: $0 start|stop|status|env" >&2
	exit 2
	;;
esac
