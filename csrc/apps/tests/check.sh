#!/usr/bin/env bash
# C-level tests of the proxy applications (csrc/apps): --help, bad arguments
# rejected on every rank with one message, real 2- and 4-rank runs whose
# output follows the #@ preamble + CSV format with one row per run, the
# rank-count and size constraints, and the stop file of co-runs.
# shellcheck source=../../tests/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../../tests/lib.sh"
COLUMNS_EXPECTED="run,runtime_s,comm_s,comm_mean_s,compute_s,sent_bytes,messages_count,checksum"


# check_run FILE TOOL RANKS ROWS: preamble keys, the header, exactly ROWS
# rows of positive runtimes and byte counts, one checksum for all rows.
check_run() {
  local file=$1 tool=$2 ranks=$3 rows=$4 key
  for key in format tool version git_sha argv seed mpi_library ranks hosts date size steps \
             compute compute_us; do
    grep -q "^#@$key=." "$file" || { fail "$file ($tool) lacks #@$key"; return; }
  done
  grep -qx "#@format=netnoise-2" "$file" || { fail "$tool: wrong format line"; return; }
  [ "$(tail -n 1 "$file")" = "#@end=$rows" ] || { fail "$tool: no '#@end=$rows' at the end"; return; }
  grep -qx "#@tool=$tool" "$file" || { fail "$tool: wrong #@tool"; return; }
  grep -qx "#@ranks=$ranks" "$file" || { fail "$tool: #@ranks is not $ranks"; return; }
  local header
  header=$(grep -v '^#' "$file" | head -n 1)
  [ "$header" = "$COLUMNS_EXPECTED" ] || { fail "$tool: header '$header'"; return; }
  local problem
  problem=$(grep -v '^#' "$file" | tail -n +2 | awk -F, -v rows="$rows" '
    NF != 8 { print "row " NR " has " NF " fields"; exit }
    $1 != NR - 1 { print "row " NR " is numbered " $1; exit }
    !($2 > 0 && $3 >= 0 && $5 >= 0 && $6 > 0 && $7 > 0) { print "row " NR ": " $0; exit }
    NR == 1 { sum = $8 }
    $8 != sum { print "checksum " $8 " differs from the first run " sum; exit }
    END { if (NR != rows && !problem) print NR " rows, expected " rows }')
  [ -z "$problem" ] || { fail "$tool on $ranks ranks: $problem"; return; }
  ok
}

# expect_run RANKS ROWS NAME PROGRAM ARGS...: a successful run into $tmp/NAME.csv.
expect_run() {
  local ranks=$1 rows=$2 name=$3 bin=$4
  shift 4
  if mpi -n "$ranks" "$bin" "$@" --output "$tmp/$name.csv" 2>"$tmp/err"; then
    check_run "$tmp/$name.csv" "$(basename "$bin")" "$ranks" "$rows"
  else
    fail "$ranks-rank $(basename "$bin") $*: $(head -c 400 "$tmp/err")"
  fi
}

for prog in ${APPS:?set by make check}; do
  bin="$BINDIR/$prog"
  # The method paragraph is wrapped: search it as one line.
  if mpi -n 1 "$bin" --help >"$tmp/help" 2>&1 && grep -q "^usage: $prog" "$tmp/help" \
     && grep -q "^Method:" "$tmp/help" && tr -s ' \n' ' ' <"$tmp/help" >"$tmp/help1" \
     && grep -q "Stands for .* seed 00[0-4] (Sec" "$tmp/help1" \
     && grep -q "Message volume per step" "$tmp/help1" \
     && grep -q -- "--compute VALUE (one of arith|spin|sleep)" "$tmp/help1"; then
    ok
  else
    fail "$prog --help: $(head -c 400 "$tmp/help")"
  fi
  expect_reject 2 "$prog: unknown option '--no-such-flag'" "$bin" --no-such-flag 1
  expect_reject 2 "--compute: invalid value 'fast', expected one of arith|spin|sleep" \
    "$bin" --compute fast
  expect_reject 2 "--size: invalid value '0', expected an integer in [" "$bin" --size 0
  expect_reject 1 "$prog: needs at least 2 ranks (a proxy application must communicate), got 1" \
    "$bin"

  # 2 ranks, real arithmetic, 3 runs with the same data: the same checksum.
  expect_run 2 3 "$prog-2" "$bin" --compute arith --warmup 0 --iterations 3
  # 4 ranks, default options (sleep mode), as the workflow runs it.
  expect_run 4 2 "$prog-4" "$bin" --iterations 2
done

# Options shared through apps/proxy.h (the same code in every application).
expect_reject 2 "--steps: missing value" "$BINDIR/cg_solver" --steps
expect_reject 2 "--compute-us: invalid value '-1', expected a number in [0, 1e+07]" \
  "$BINDIR/monte_carlo" --compute-us -1
expect_reject 2 "lu_wavefront: --iterations 0 needs --duration or --stop-file to end" \
  "$BINDIR/lu_wavefront" --iterations 0

# Constraints of particular applications, each with the numbers involved.
for prog in fft_transpose fft_overlap; do
  expect_reject 3 \
    "$prog: --size 256 must be divisible by the number of ranks 3 (256 = 3 x 85 + 1)" \
    "$BINDIR/$prog" --size 256
done
expect_reject 4 "halo3d: --grid cube needs a cubic number of ranks (8, 27, 64, ...), got 4" \
  "$BINDIR/halo3d" --grid cube
expect_reject 2 "multigrid: --size 30 must be a multiple of 2^(levels-1) = 8 for --levels 4" \
  "$BINDIR/multigrid" --size 30
# Topologies that need 3 or more ranks: an odd 1-D wavefront, a 3x1x1 halo
# grid, a non power-of-two FFT (N = 12 on 3 ranks: the direct transform).
expect_run 3 1 lu3 "$BINDIR/lu_wavefront" --compute arith --iterations 1
expect_run 3 1 halo3 "$BINDIR/halo3d" --compute spin --compute-us 100 --iterations 1
expect_run 3 1 fft3 "$BINDIR/fft_transpose" --size 12 --compute arith --iterations 1
grep -qx "#@fft=direct O(N^2)" "$tmp/fft3.csv" && ok || fail "fft_transpose N=12: not direct"

# In arith mode the FFT's result does not depend on the rank count.
expect_run 4 1 fft4 "$BINDIR/fft_transpose" --compute arith --iterations 1
a=$(tail -n 1 "$tmp/fft_transpose-2.csv" | cut -d, -f8)
b=$(tail -n 1 "$tmp/fft4.csv" | cut -d, -f8)
if awk -v a="$a" -v b="$b" \
     'BEGIN { d = a - b; m = a < 0 ? -a : a; exit !(d <= 1e-9 * m && -d <= 1e-9 * m) }'; then
  ok
else
  fail "fft_transpose checksum on 2 ranks '$a' differs from 4 ranks '$b'"
fi

# A co-run background job: runs until the stop file appears, creates the
# ready file after its warm-up, and leaves a valid file behind.
rm -f "$tmp/stop" "$tmp/ready"
mpi -n 2 "$BINDIR/halo3d" --iterations 0 --stop-file "$tmp/stop" --ready-file "$tmp/ready" \
  --output "$tmp/bg.csv" 2>"$tmp/bgerr" &
bg=$!
for _ in $(seq 100); do [ -e "$tmp/ready" ] && break; sleep 0.1; done
sleep 0.3
touch "$tmp/stop"
if wait "$bg" && [ -e "$tmp/ready" ]; then
  rows=$(grep -v '^#' "$tmp/bg.csv" | tail -n +2 | wc -l)
  if [ "$rows" -ge 1 ]; then
    check_run "$tmp/bg.csv" halo3d 2 "$rows"
  else
    fail "stop file: no row"
  fi
else
  fail "stop file: halo3d did not stop cleanly: $(head -c 400 "$tmp/bgerr")"
fi
ls "$tmp" | grep -q '\.tmp\.' && fail "an application left a temporary file behind"

finish
