#!/usr/bin/env bash
# C-level tests: --help, bad arguments on every rank, and real 2-rank runs
# whose output must follow the #@ preamble + CSV format.
# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# check_format FILE MIN_ROWS: preamble keys, header with units, numeric rows,
# and the end-of-data line with their count as the last line.
check_format() {
  local file=$1 min_rows=$2 key
  for key in format tool version git_sha argv seed mpi_library ranks hosts date; do
    grep -q "^#@$key=" "$file" || { fail "$file lacks #@$key"; return; }
  done
  grep -qx "#@format=netnoise-2" "$file" || { fail "$file: wrong format line"; return; }
  local header rows
  header=$(grep -v '^#@' "$file" | head -n 1)
  rows=$(grep -v '^#@' "$file" | tail -n +2 | wc -l)
  [[ "$header" == *_* ]] || { fail "$file header '$header' has no units"; return; }
  [ "$rows" -ge "$min_rows" ] || { fail "$file has $rows rows, expected >= $min_rows"; return; }
  [ "$(tail -n 1 "$file")" = "#@end=$rows" ] ||
    { fail "$file ends with '$(tail -n 1 "$file")', expected '#@end=$rows'"; return; }
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
  expect_reject 2 "--output: missing value" "$bin" --output
done

# The wait layer: sleeping waits cost almost no CPU and still end promptly.
for policy in spin sleep hybrid; do
  if mpi -n 2 "$BUILD/test_wait" "$policy" >"$tmp/wait" 2>"$tmp/err"; then
    ok
  else
    fail "wait layer, $policy: $(cat "$tmp/wait") $(head -c 400 "$tmp/err")"
  fi
done
# Every program records its wait policy; --mpi-wait and NN_WAIT set it.
mpi -n 2 "$BINDIR/pingpong" --iterations 5 --mpi-wait sleep:0:20:200 --probe-wait spin \
  --output "$tmp/w1.csv" 2>"$tmp/err"
mpi -n 2 -x NN_WAIT=hybrid:100:10:50 "$BINDIR/pingpong" --iterations 5 --output "$tmp/w2.csv" \
  2>>"$tmp/err"
if grep -qx '#@mpi_wait=sleep spin=0us sleep=20-200us' "$tmp/w1.csv" &&
   grep -qx '#@probe_wait=spin spin=200us sleep=10-100us' "$tmp/w1.csv" &&
   grep -qx '#@mpi_wait=hybrid spin=100us sleep=10-50us' "$tmp/w2.csv" &&
   grep -qx '#@probe_wait=hybrid spin=200us sleep=10-100us' "$tmp/w2.csv"; then
  ok
else
  fail "wait policies in the preamble: $(grep _wait "$tmp"/w?.csv) $(head -c 400 "$tmp/err")"
fi
expect_reject 2 "--mpi-wait 'lazy': expected mode" "$BINDIR/pingpong" --mpi-wait lazy
expect_reject 2 "--probe-wait 'spin:x': expected mode" "$BINDIR/pingpong" --probe-wait spin:x

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
# On standard output too, a complete run ends with its end-of-data line.
if mpi -n 2 "$BINDIR/pingpong" --iterations 3 >"$tmp/stdout.csv" 2>"$tmp/err"; then
  check_format "$tmp/stdout.csv" 3
else
  fail "pingpong to standard output: $(head -c 400 "$tmp/err")"
fi
# A stop file ends an open-ended run cleanly on every rank.
touch "$tmp/stop"
if mpi -n 2 "$BINDIR/pingpong" --iterations 0 --stop-file "$tmp/stop" --output "$tmp/stopped.csv" \
     2>"$tmp/err" && grep -q '^pair,iteration' "$tmp/stopped.csv"; then
  ok
else
  fail "stop file: $(head -c 400 "$tmp/err")"
fi
# The timed region's handshake: after the warm-up the ready file appears and the
# timed part waits for the start file; after it the end file appears and the
# results wait for the release file.
mpi -n 2 "$BINDIR/pingpong" --iterations 5 --ready-file "$tmp/ready" --start-file "$tmp/go" \
  --end-file "$tmp/end" --release-file "$tmp/release" --output "$tmp/gated.csv" 2>"$tmp/err" &
gated=$!
for _ in $(seq 100); do [ -e "$tmp/ready" ] && break; sleep 0.1; done
sleep 0.5
if [ -e "$tmp/ready" ] && [ ! -e "$tmp/end" ] && [ ! -e "$tmp/gated.csv" ]; then
  ok
else
  fail "handshake: the timed part did not wait for the start file after its ready file"
fi
touch "$tmp/go"
for _ in $(seq 100); do [ -e "$tmp/end" ] && break; sleep 0.1; done
sleep 0.5
if [ -e "$tmp/end" ] && [ ! -e "$tmp/gated.csv" ]; then
  ok
else
  fail "handshake: the results did not wait for the release file after the end file"
fi
touch "$tmp/release"
if wait "$gated"; then
  check_format "$tmp/gated.csv" 5
else
  fail "handshake: $(head -c 400 "$tmp/err")"
fi

# run_ok NAME MIN_ROWS RANKS PROGRAM ARGS...: a real run that must produce a valid file.
run_ok() {
  local name=$1 rows=$2 ranks=$3
  shift 3
  if mpi -n "$ranks" "$@" --output "$tmp/$name.csv" 2>"$tmp/err"; then
    check_format "$tmp/$name.csv" "$rows"
  else
    fail "$name: $(head -c 400 "$tmp/err")"
  fi
}

# impactb: probes with a short pause; an odd rank count leaves the last rank out.
run_ok impactb 8 4 "$BINDIR/impactb" --iterations 4 --sleep-us 1000
run_ok impactb_odd 4 3 "$BINDIR/impactb" --iterations 4 --sleep-us 0
grep -q '^#@sleep_us=1000$' "$tmp/impactb.csv" && ok || fail "impactb preamble lacks sleep_us"
expect_reject 2 "--iterations 0 needs --duration or --stop-file" "$BINDIR/impactb" --iterations 0

# compressionb: one ring of all ranks on a single host; the per-core rings need nodes.
run_ok compressionb 4 4 "$BINDIR/compressionb" --iterations 10 --partners 2 --messages 2 \
  --sleep-cycles 1000 --cycle-hz 1e9 --ring world
grep -q '^#@sleep_ns=1000$' "$tmp/compressionb.csv" && ok || fail "compressionb cycles->ns"
expect_reject 2 "ring (all ranks) has only 2" "$BINDIR/compressionb" --iterations 1 --ring world \
  --partners 2
expect_reject 2 "--partners: invalid value '0'" "$BINDIR/compressionb" --partners 0

# noise: 4 splits of 6 ranks at ratio 1/2, with perturbation and without.
run_ok noise 16 6 "$BINDIR/noise" --ratio 0.5 --splits 4 --reps 2 --perturb-size 256K
if [ -f "$tmp/noise.csv" ]; then
  perturbed=$(grep -c '^[0-9]*,3,3,1,' "$tmp/noise.csv")
  [ "$perturbed" -eq 8 ] && ok || fail "noise: $perturbed perturbed rows, expected 8"
  # The phase that comes first alternates: perturbed in splits 0 and 2.
  first=$(awk -F, '$1 ~ /^[0-9]+$/ && !seen[$1]++ {printf "%s", $4}' "$tmp/noise.csv")
  [ "$first" = 1010 ] && ok || fail "noise: first phases $first, expected 1010"
  # Timing waits for every perturbing process's first exchange, with two more
  # posted: at least 3 messages from each of 3 processes per split. The 3 send
  # alike in every phase, so that each message meets its receive.
  messages=$(sed -n 's/^#@perturbation_messages=//p' "$tmp/noise.csv")
  [ "${messages:-0}" -ge 36 ] && [ $(( ${messages:-1} % 3 )) -eq 0 ] && ok ||
    fail "noise: ${messages:-no} perturbation messages, expected a multiple of 3 >= 36"
fi
run_ok noise_ratio0 4 4 "$BINDIR/noise" --ratio 0 --splits 2 --collective bcast --size 64
# A fixed application communicator: 2 ranks time, 2 perturb and 2 idle.
run_ok noise_idle 16 6 "$BINDIR/noise" --application-ranks 2 --ratio 0.5 --splits 4 --reps 2 \
  --perturb-size 64K
if [ -f "$tmp/noise_idle.csv" ]; then
  perturbed=$(grep -c '^[0-9]*,2,2,1,' "$tmp/noise_idle.csv")
  [ "$perturbed" -eq 8 ] && grep -qx '#@idle_ranks=2' "$tmp/noise_idle.csv" && ok ||
    fail "noise: $perturbed perturbed rows of 2 + 2 ranks beside 2 idle, expected 8"
fi
expect_reject 4 "needs 3 perturbing processes beside them, 6 ranks in all; there are 4" \
  "$BINDIR/noise" --application-ranks 3 --ratio 0.5
expect_reject 4 "gives 1 perturbing process" "$BINDIR/noise" --ratio 0.25
expect_reject 4 "--size 12 is not a multiple of 8" "$BINDIR/noise" --size 12
expect_reject 2 "--collective: invalid value 'alltoall', expected one of allreduce|reduce|bcast" \
  "$BINDIR/noise" --collective alltoall

# p2p_concurrent: a pattern of three concurrent links; bad pattern files name the line.
printf 'src,dst,bytes\n0,1,65536\n2,3,131072\n1,2,32768\n' >"$tmp/pattern.csv"
run_ok p2p 15 4 "$BINDIR/p2p_concurrent" --pattern "$tmp/pattern.csv" --max-iterations 5 \
  --min-iterations 5
[ "$(grep -c '^#@link_' "$tmp/p2p.csv")" -eq 3 ] && ok || fail "p2p_concurrent: link summaries"
# Timed from each sender's start, no transfer can read (near) zero, as one did
# when its receiver left the starting barrier after the data had arrived.
awk -F, '!/^#/ && $1 != "link" && $6 <= 1e-6 {bad++} END {exit bad > 0}' "$tmp/p2p.csv" \
  && ok || fail "p2p_concurrent: a transfer of 1 us or less"
for key in late_starts start_spread_max_us clock_rtt_max_us; do
  grep -q "^#@$key=[0-9]" "$tmp/p2p.csv" && ok || fail "p2p_concurrent: no #@$key"
done
printf 'src,dst,bytes\n0,1,65536\n0,1\n' >"$tmp/bad1.csv"
expect_reject 2 "bad1.csv:3: expected 3 fields src,dst,bytes" "$BINDIR/p2p_concurrent" \
  --pattern "$tmp/bad1.csv"
printf 'src,dst,bytes\n0,5,65536\n' >"$tmp/bad2.csv"
expect_reject 2 "bad2.csv:2: ranks 0 -> 5 must differ and be in [0, 2)" \
  "$BINDIR/p2p_concurrent" --pattern "$tmp/bad2.csv"
printf 'from,to,size\n' >"$tmp/bad3.csv"
expect_reject 2 "bad3.csv:1: header must be 'src,dst,bytes'" "$BINDIR/p2p_concurrent" \
  --pattern "$tmp/bad3.csv"
expect_reject 2 "--pattern FILE is required" "$BINDIR/p2p_concurrent"

# loadgen: two pairs at 30 % of 100 Mbit/s for one second, stopped by duration.
run_ok loadgen 4 4 "$BINDIR/loadgen" --duration 1 --load 0.3 --link-mbit 100 --size 16K
# Full load faster than the ranks can send keeps the send window full: the stop must
# still drain (it once waited for its own sends while the peer waited for its receives).
for attempt in 1 2 3; do
  run_ok loadgen 2 2 "$BINDIR/loadgen" --duration 0.5 --load 1 --link-mbit 100000
done
expect_reject 3 "needs an even number of ranks >= 2, got 3" "$BINDIR/loadgen" --duration 1
expect_reject 2 "give --duration or --stop-file" "$BINDIR/loadgen"
expect_reject 2 "--load: invalid value '1.5', expected a number in [0, 1]" "$BINDIR/loadgen" \
  --load 1.5

# barrier: every sample kept.
run_ok barrier 20 3 "$BINDIR/barrier" --iterations 20 --warmup 5

# tcpping: two pairs over TCP sockets; a duration ends the timed loop early, and
# round trips 1 ms apart fit at most 201 times into 0.2 s.
run_ok tcpping 40 4 "$BINDIR/tcpping" --iterations 20 --warmup 5
grep -q '^#@transport=TCP socket' "$tmp/tcpping.csv" && ok || fail "tcpping preamble lacks transport"
run_ok tcpping_short 1 2 "$BINDIR/tcpping" --iterations 1000000000 --duration 0.2 --size 3000 \
  --gap-us 1000
samples=$(grep -vc '^#' "$tmp/tcpping_short.csv")
[ "$samples" -le 202 ] && ok || fail "tcpping: $samples rows with --duration 0.2 --gap-us 1000"
expect_reject 3 "needs an even number of ranks >= 2, got 3" "$BINDIR/tcpping"
expect_reject 2 "--size: invalid value '128K'" "$BINDIR/tcpping" --size 128K
expect_reject 2 "a pair could not set up its TCP connection" "$BINDIR/tcpping" \
  --interface no-such-if0

# libnntcpcc.so sets the congestion control of every TCP socket.
for cc in reno cubic; do
  got=$(LD_PRELOAD="$(realpath "$BINDIR")/libnntcpcc.so" NN_TCP_CONGESTION=$cc python3 -c \
    'import socket; s = socket.socket(); print(s.getsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, 16).rstrip(b"\0").decode())')
  [ "$got" = "$cc" ] && ok || fail "libnntcpcc.so: asked for $cc, socket has '$got'"
done

# ---------------------------------------------------------------- runs that end
# A warm-up ends with the run: once it has lasted --duration, or on a stop request.
start=$(date +%s)
if mpi -n 2 "$BINDIR/pingpong" --warmup 1000000000 --iterations 0 --duration 1 \
     --output "$tmp/warm.csv" 2>"$tmp/err"; then
  check_format "$tmp/warm.csv" 1
  [ $(($(date +%s) - start)) -lt 30 ] || fail "a warm-up of 10^9 exchanges outlasted --duration 1"
else
  fail "a warm-up longer than --duration: $(head -c 400 "$tmp/err")"
fi
mpi -n 2 "$BINDIR/pingpong" --warmup 1000000000 --iterations 10 --stop-file "$tmp/stop-warm" \
  --output "$tmp/warm-stop.csv" 2>"$tmp/err" &
warming=$!
sleep 1
touch "$tmp/stop-warm"
if wait "$warming"; then
  check_format "$tmp/warm-stop.csv" 0
else
  fail "a stop file during the warm-up: $(head -c 400 "$tmp/err")"
fi

# ranks_of MARKER: the pids of the running ranks whose command line holds MARKER.
ranks_of() { pgrep -f -- "^[^ ]*$1" || true; }
# gone_within SECONDS PID...: whether every PID has exited within SECONDS.
gone_within() {
  local deadline=$(($(date +%s) + $1)) pid
  shift
  for pid in "$@"; do
    while kill -0 "$pid" 2>/dev/null; do
      [ "$(date +%s)" -lt "$deadline" ] || return 1
      sleep 0.2
    done
  done
}
# await_ranks COUNT MARKER: wait (10 s at most) until COUNT ranks hold MARKER.
await_ranks() {
  for _ in $(seq 50); do [ "$(ranks_of "$2" | wc -l)" -ge "$1" ] && return; sleep 0.2; done
}

# A process the latency injector is loaded into dies with its launcher, even one
# that never reaches MPI (Open MPI's own watch starts in MPI_Init).
marker="$tmp/orphan-sleep"
ln -s "$(command -v sleep)" "$marker"
"$MPIRUN" "${FLAGS[@]}" -n 2 -x LD_PRELOAD="$(realpath "$BINDIR/libnnlatency.so")" \
  "$marker" 600 >/dev/null 2>&1 &
launcher=$!
await_ranks 2 "$marker"
read -r -a orphans <<<"$(ranks_of "$marker" | tr '\n' ' ')"
kill -KILL "$launcher"
wait "$launcher" 2>/dev/null
if [ "${#orphans[@]}" -eq 2 ] && gone_within 10 "${orphans[@]}"; then
  ok
else
  fail "processes of a killed mpirun outlived it: ${orphans[*]}"
  kill -KILL "${orphans[@]}" 2>/dev/null
fi

# A rank told to terminate ends within its grace even when blocked on a peer
# that never answers (here: stopped).
"$MPIRUN" "${FLAGS[@]}" -n 2 "$BINDIR/pingpong" --warmup 0 --iterations 0 \
  --stop-file "$tmp/never" --output "$tmp/blocked.csv" >/dev/null 2>&1 &
launcher=$!
await_ranks 2 "$BINDIR/pingpong --warmup 0"
read -r -a ranks <<<"$(ranks_of "$BINDIR/pingpong --warmup 0" | tr '\n' ' ')"
if [ "${#ranks[@]}" -eq 2 ]; then
  kill -STOP "${ranks[1]}"
  kill -TERM "${ranks[0]}"
  if gone_within 40 "${ranks[0]}"; then ok; else fail "a blocked rank outlived SIGTERM"; fi
  kill -KILL "${ranks[@]}" 2>/dev/null
else
  fail "the blocked run did not start: ${ranks[*]}"
fi
kill -KILL "$launcher" 2>/dev/null
wait "$launcher" 2>/dev/null
[ ! -e "$tmp/blocked.csv" ] || fail "a run ended by SIGTERM left a result"

# ---------------------------------------------------------------- input files
# A pattern that is a FIFO is refused at once; one saved on Windows reads alike.
mkfifo "$tmp/pattern.fifo"
expect_reject 2 "cannot open pattern file '$tmp/pattern.fifo': not a regular file" \
  "$BINDIR/p2p_concurrent" --pattern "$tmp/pattern.fifo"
printf '\xef\xbb\xbfsrc,dst,bytes\r\n0,1,1000\r\n# a comment\r\n\r\n 1 , 0 , 2000 \r\n' \
  >"$tmp/windows.csv"
if "$BUILD/test_pattern" "$tmp/windows.csv" 2 >"$tmp/links" 2>"$tmp/err" &&
   [ "$(tr '\n' ' ' <"$tmp/links")" = "src,dst,bytes 0,1,1000 1,0,2000 " ]; then
  ok
else
  fail "a pattern with a byte-order mark and CRLF: $(cat "$tmp/links" "$tmp/err")"
fi

# ---------------------------------------------------------------- characterise
# GPCNeT's canaries and congestors on 10 ranks of one host (split per rank): 2
# canaries, 8 congestors. The congestors' windows need Open MPI's pt2pt one-sided
# component: its rdma component fails to make a window over TCP, so the runs
# exclude it (OMPI_MCA_osc=^rdma) as the workflow does.
osc=(-x "OMPI_MCA_osc=^rdma")
small=(--rings 1 --latency-iterations 20 --bandwidth-iterations 2 --allreduce-iterations 20
       --bandwidth-size 16K --warmup 5)
# characterise_rows FILE: the rows of each phase and test, "phase,test count ...", sorted.
characterise_rows() {
  awk -F, '!/^#/ && $1 != "phase" {n[$1 "," $2]++} END {for (k in n) print k, n[k]}' "$1" |
    LC_ALL=C sort | tr '\n' ' '
}
canaries="isolated,allreduce 80 isolated,bandwidth 8 isolated,latency 80"
congested="congested,allreduce 80 congested,bandwidth 8 congested,latency 80"
for congestor in all none; do
  file="$tmp/characterise_$congestor.csv"
  run_ok "characterise_$congestor" 336 10 "${osc[@]}" "$BINDIR/characterise" --rounds 2 \
    --congestor "$congestor" "${small[@]}"
  [ -f "$file" ] || continue
  # Every canary test in both phases; offered rows in the congested phase alone,
  # two per group and round, and only when the congestors run.
  if [ "$congestor" = all ]; then
    offered="congested,offered_a2a 4 congested,offered_get_bcast 4 congested,offered_incast 4 "
    offered+="congested,offered_put_incast 4 "
  else
    offered=
  fi
  expected="$congested $offered$canaries "
  rows=$(characterise_rows "$file")
  [ "$rows" = "$expected" ] && ok ||
    fail "characterise --congestor $congestor: rows '$rows', expected '$expected'"
  for key in split=rank nodes=1 canary_ranks= "congestor=$congestor" groups= \
             "units=latency:us bandwidth:MiB/s allreduce:us offered:MiB/s" rounds_done=2; do
    grep -q "^#@$key" "$file" || fail "characterise --congestor $congestor lacks #@$key"
  done
  # Each rank is a canary or in one group, once.
  ranks=$(sed -n 's/^#@\(canary_ranks\|groups\)=//p' "$file" | tr ' ,' '\n\n' |
    sed 's/^[a-z0-9_]*://' | grep . | sort -n | tr '\n' ' ')
  [ "$ranks" = "0 1 2 3 4 5 6 7 8 9 " ] && ok ||
    fail "characterise --congestor $congestor: canaries and groups hold ranks '$ranks'"
done
grep -Eq '^#@groups=a2a:[0-9]+,[0-9]+ incast:[0-9]+,[0-9]+ put_incast:[0-9]+,[0-9]+ get_bcast:[0-9]+,[0-9]+$' \
  "$tmp/characterise_all.csv" 2>/dev/null && ok ||
  fail "characterise --congestor all: groups $(grep '^#@groups' "$tmp/characterise_all.csv" 2>/dev/null)"
# Each congestor alone, on all 8 congestor ranks: a row per rank, and traffic.
for congestor in a2a incast put_incast get_bcast; do
  file="$tmp/characterise_$congestor.csv"
  run_ok "characterise_$congestor" 176 10 "${osc[@]}" "$BINDIR/characterise" --rounds 1 \
    --congestor "$congestor" "${small[@]}"
  [ -f "$file" ] || continue
  awk -F, -v t="offered_$congestor" '$2 == t {n++; if ($1 == "congested" && $4 == 0) good++;
      if ($7 > 0) moved++} END {exit !(n == 8 && good == 8 && moved >= 7)}' "$file" && ok ||
    fail "characterise --congestor $congestor: offered rows $(grep -c offered "$file")"
done
# Incast over TCP with two connections per peer, as on the testbed: Open MPI never
# completes a synchronous send there, so the step's answer must not be one.
file="$tmp/characterise_incast_tcp.csv"
run_ok characterise_incast_tcp 176 10 "${osc[@]}" -x OMPI_MCA_btl=self,tcp \
  -x OMPI_MCA_btl_tcp_links=2 "$BINDIR/characterise" --rounds 1 --congestor incast "${small[@]}"
[ -f "$file" ] && awk -F, '$2 == "offered_incast" && $7 > 0 {moved++} END {exit moved < 7}' \
  "$file" && ok || fail "characterise incast over TCP: $(grep -c offered_incast "$file" 2>/dev/null)"
# A time limit ends a long run at a round boundary, with as many rows as rounds.
file="$tmp/characterise_limit.csv"
run_ok characterise_limit 176 10 "${osc[@]}" "$BINDIR/characterise" --rounds 100000 \
  --max-seconds 1 "${small[@]}"
if [ -f "$file" ]; then
  done_rounds=$(sed -n 's/^#@rounds_done=//p' "$file")
  rows=$(grep -vc '^#' "$file")
  [ "${done_rounds:-0}" -ge 1 ] && [ "$done_rounds" -lt 100000 ] &&
    [ "$rows" -eq $((176 * done_rounds + 1)) ] && ok ||
    fail "characterise --max-seconds 1: ${done_rounds:-no} rounds done, $rows lines"
fi
# --canaries-first: the canaries on the first ranks (nodes), the congestors shuffled.
file="$tmp/characterise_first.csv"
run_ok characterise_first 176 10 "${osc[@]}" "$BINDIR/characterise" --rounds 1 \
  --canaries-first "${small[@]}"
[ -f "$file" ] && grep -qx '#@canary_ranks=0 1' "$file" && ok ||
  fail "characterise --canaries-first: $(grep '^#@canary_ranks' "$file" 2>/dev/null)"
expect_reject 6 "--congestor all needs at least 10 ranks at --canary-fraction 0.2 (2 canary, 8 congestor: 2 per congestor group), got 6 (2 canary, 4 congestor)" \
  "$BINDIR/characterise"
expect_reject 3 "--congestor a2a needs at least 6 ranks at --canary-fraction 0.2 (2 canary, 2 congestor), got 3 (1 canary, 2 congestor)" \
  "$BINDIR/characterise" --congestor a2a
expect_reject 2 "--canary-fraction 0: expected a number strictly between 0 and 1" \
  "$BINDIR/characterise" --canary-fraction 0
expect_reject 2 "--canary-fraction: invalid value '1.5', expected a number in [0, 1]" \
  "$BINDIR/characterise" --canary-fraction 1.5
expect_reject 2 "--congestor: invalid value 'bogus', expected one of all|none|a2a|incast|put_incast|get_bcast" \
  "$BINDIR/characterise" --congestor bogus
expect_reject 2 "--rounds: invalid value '0', expected an integer in [1, 1000000]" \
  "$BINDIR/characterise" --rounds 0
expect_reject 2 "--allreduce-size 12 is not a multiple of 8" "$BINDIR/characterise" \
  --allreduce-size 12

finish
