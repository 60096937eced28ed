#!/usr/bin/env bash
# C-level tests: --help, bad arguments on every rank, and real 2-rank runs
# whose output must follow the #@ preamble + CSV format.
set -u
BINDIR=${BINDIR:-build/bin}
MPIRUN=${MPIRUN:-mpirun}
# Root in containers and CI: Open MPI refuses to run as root unless told.
if [ "$(id -u)" = 0 ]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
# Shared-memory single copy needs ptrace rights that containers often lack.
export OMPI_MCA_btl_vader_single_copy_mechanism=none
read -r -a FLAGS <<<"${MPIRUN_FLAGS:---oversubscribe --bind-to none}"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
passed=0
failed=0

ok() { passed=$((passed + 1)); }
fail() { failed=$((failed + 1)); echo "FAIL: $*" >&2; }

mpi() { timeout 60 "$MPIRUN" "${FLAGS[@]}" "$@"; }

# expect_reject RANKS MESSAGE PROGRAM ARGS...: exits 2 on all ranks, message once.
expect_reject() {
  local ranks=$1 message=$2
  shift 2
  mpi -n "$ranks" "$@" >"$tmp/out" 2>"$tmp/err"
  local rc=$?
  if [ "$rc" -eq 0 ]; then
    fail "$* was accepted"
  elif ! grep -qF -- "$message" "$tmp/err"; then
    fail "$*: stderr lacks '$message': $(head -c 400 "$tmp/err")"
  elif [ "$(grep -cF -- "$message" "$tmp/err")" -ne 1 ]; then
    fail "$*: message printed more than once"
  else
    ok
  fi
}

# check_format FILE MIN_ROWS: preamble keys, header with units, numeric rows.
check_format() {
  local file=$1 min_rows=$2 key
  for key in format tool version git_sha argv seed mpi_library ranks hosts date; do
    grep -q "^#@$key=" "$file" || { fail "$file lacks #@$key"; return; }
  done
  local header rows
  header=$(grep -v '^#@' "$file" | head -n 1)
  rows=$(grep -v '^#@' "$file" | tail -n +2 | wc -l)
  [[ "$header" == *_* ]] || { fail "$file header '$header' has no units"; return; }
  [ "$rows" -ge "$min_rows" ] || { fail "$file has $rows rows, expected >= $min_rows"; return; }
  ok
}

for prog in ${BENCHMARKS:?set by make check}; do
  bin="$BINDIR/$prog"
  if mpi -n 1 "$bin" --help >"$tmp/help" 2>&1 && grep -q "^usage: $prog" "$tmp/help" \
     && grep -q "^Method:" "$tmp/help"; then
    ok
  else
    fail "$prog --help"
  fi
  expect_reject 2 "unknown option '--no-such-flag'" "$bin" --no-such-flag 1
  expect_reject 2 "--seed: invalid value 'x1'" "$bin" --seed x1
  expect_reject 2 "--warmup: missing value" "$bin" --warmup
done

# pingpong: argument checks specific to it, then real runs.
expect_reject 2 "--size: invalid value '3X'" "$BINDIR/pingpong" --size 3X
expect_reject 1 "needs an even number of ranks >= 2, got 1" "$BINDIR/pingpong"
expect_reject 3 "needs an even number of ranks >= 2, got 3" "$BINDIR/pingpong"

if mpi -n 2 "$BINDIR/pingpong" --size 1K --warmup 10 --iterations 50 --output "$tmp/pp.csv" \
     2>"$tmp/err"; then
  check_format "$tmp/pp.csv" 50
  ls "$tmp" | grep -q '\.tmp\.' && fail "pingpong left a temporary file behind"
else
  fail "2-rank pingpong: $(head -c 400 "$tmp/err")"
fi
if mpi -n 4 "$BINDIR/pingpong" --iterations 20 --output "$tmp/pp4.csv" 2>"$tmp/err"; then
  check_format "$tmp/pp4.csv" 40
else
  fail "4-rank pingpong: $(head -c 400 "$tmp/err")"
fi
# A stop file ends an open-ended run cleanly on every rank.
touch "$tmp/stop"
if mpi -n 2 "$BINDIR/pingpong" --iterations 0 --stop-file "$tmp/stop" --output "$tmp/stopped.csv" \
     2>"$tmp/err" && grep -q '^pair,iteration' "$tmp/stopped.csv"; then
  ok
else
  fail "stop file: $(head -c 400 "$tmp/err")"
fi

# libnntcpcc.so sets the congestion control of every TCP socket.
for cc in reno cubic; do
  got=$(LD_PRELOAD="$(realpath "$BINDIR")/libnntcpcc.so" NN_TCP_CONGESTION=$cc python3 -c \
    'import socket; s = socket.socket(); print(s.getsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, 16).rstrip(b"\0").decode())')
  [ "$got" = "$cc" ] && ok || fail "libnntcpcc.so: asked for $cc, socket has '$got'"
done

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
