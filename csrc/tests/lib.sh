# The set-up every C-level test script shares, sourced by tests/check.sh,
# apps/tests/check.sh and injector/tests/check.sh (`make check` sets BINDIR,
# BUILD, MPIRUN and MPIRUN_FLAGS): Open MPI's environment, the mpirun flags,
# a temporary directory removed on exit, and the pass/fail count.
# A script may set DEFAULT_MPIRUN_FLAGS before sourcing: the flags used when
# MPIRUN_FLAGS is empty (otherwise --oversubscribe --bind-to none).
set -u
BINDIR=${BINDIR:-build/bin}
BUILD=${BUILD:-build}
MPIRUN=${MPIRUN:-mpirun}
# Root in containers and CI: Open MPI refuses to run as root unless told.
if [ "$(id -u)" = 0 ]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
# Shared-memory single copy needs ptrace rights that containers often lack.
export OMPI_MCA_btl_vader_single_copy_mechanism=none
# Ranks that fail on purpose exit by themselves: no need for mpirun to wait
# a second before it kills the rest (it keeps the rejection tests fast).
export OMPI_MCA_odls_base_sigkill_timeout=0
read -r -a FLAGS <<<"${MPIRUN_FLAGS:-${DEFAULT_MPIRUN_FLAGS:---oversubscribe --bind-to none}}"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
passed=0
failed=0

ok() { passed=$((passed + 1)); }
fail() { failed=$((failed + 1)); echo "FAIL: $*" >&2; }

# mpi MPIRUN_ARGS...: mpirun with FLAGS, killed after a minute. A script may
# define its own after sourcing; expect_reject calls it as mpi -n RANKS ...
mpi() { timeout 60 "$MPIRUN" "${FLAGS[@]}" "$@"; }

# expect_reject RANKS MESSAGE PROGRAM ARGS...: exit status 2, MESSAGE exactly
# once on stderr (rank 0 alone reports), nothing on stdout.
expect_reject() {
  local ranks=$1 message=$2
  shift 2
  mpi -n "$ranks" "$@" >"$tmp/out" 2>"$tmp/err"
  local rc=$?
  if [ "$rc" -eq 0 ]; then
    fail "$* on $ranks ranks was accepted"
  elif [ "$rc" -ne 2 ]; then
    fail "$* on $ranks ranks: exit status $rc, expected 2: $(head -c 400 "$tmp/err")"
  elif ! grep -qF -- "$message" "$tmp/err"; then
    fail "$* on $ranks ranks: stderr lacks '$message': $(head -c 400 "$tmp/err")"
  elif [ "$(grep -cF -- "$message" "$tmp/err")" -ne 1 ]; then
    fail "$* on $ranks ranks: message printed more than once"
  elif [ -s "$tmp/out" ]; then
    fail "$* on $ranks ranks: wrote to stdout although it failed"
  else
    ok
  fi
}

# The end of every script: the count, and the exit status.
finish() {
  echo "$passed passed, $failed failed"
  [ "$failed" -eq 0 ]
}
