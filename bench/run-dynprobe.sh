#!/usr/bin/env bash
# run-dynprobe.sh: what a dynamic probe costs the function it is planted
# in, side by side with a generated wrapper, a bpftrace uprobe and
# uftrace's dynamic patching, in one run. ns per call of bench_fn (first
# instruction RIP-relative) and bench_plain (none; uftrace patches only
# this one), and per uncontended mutex lock+unlock pair (two wrapper
# events), each the median of ROUNDS rounds of N calls (bench/probecost.c):
#
#   bare        preloaded (core, pthread wrapper), no probe, nothing enabled
#   disabled    enable --function on both (a session created, not started):
#               jump and trampoline in, tracepoint off
#   recorded    the session started: every call recorded (arg0..arg5,
#               caller), and the mutex pairs (pthread:mutex_lock/unlock)
#   removed     disable probe:... --pid: the original bytes back
#   bpftrace    not preloaded; a uprobe on each function counting calls
#               (@[probe] = count()), the least a uprobe program does
#   uftrace     uftrace record -P bench_plain --no-libcall (entry and exit)
#
# Usage: bench/run-dynprobe.sh [--calls N] [--rounds R] [--build DIR]
#
#   --calls N    calls per round (default 200000)
#   --rounds R   rounds per phase; the median is shown (default 5)
#   --build DIR  build directory (default .)
#
# A benchmark, not a test: it always exits 0 once it has printed its
# table; rows that cannot run say why.

BENCH=run-dynprobe.sh
CALLS=200000
ROUNDS=5
# shellcheck source=bench/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh" || exit 2
USAGE=20,26
bench_args calls:CALLS:count rounds:ROUNDS:count -- "$@"
bench_paths "$BUILD"
DYNPROBE_LIB=$(dirname "$PTHREAD_LIB")/libshimtrace-dynprobe.so
[[ -r $DYNPROBE_LIB ]] || die "cannot find $DYNPROBE_LIB (build first)"
bench_start probecost

# phase NAME: one line to the program, its answer into $TMP/NAME
phase() {
	echo "$1" >&"$TO_PROG"
	for _ in $(seq 6000); do
		grep -q "^$1 " prog.out && break
		sleep 0.01
	done
	grep "^$1 " prog.out >"$1" || die "no answer for phase $1"
}

# ---- shimtrace ----
export SHIMTRACE_RUNDIR=$TMP/run
"$SHIMTRACED" --rundir "$SHIMTRACE_RUNDIR" --log-level warning || die "shimtraced does not start"
DAEMON_PID=$(cat "$SHIMTRACE_RUNDIR/shimtraced.pid")
"$SHIMTRACE" create b -o "$TMP/trace" --buffer-size 256M >/dev/null || die "create failed"
"$SHIMTRACE" enable 'pthread:mutex_lock' 'pthread:mutex_unlock' >/dev/null
mkfifo to_prog
LD_PRELOAD=$PRELOAD ./probecost "$CALLS" "$ROUNDS" <to_prog >prog.out &
BG_PID=$!
exec {TO_PROG}>to_prog
for _ in $(seq 500); do grep -q '^ready' prog.out && break; sleep 0.01; done
P=$(sed -n 's/^ready //p' prog.out)
[[ -n $P ]] || die "probecost does not start"
phase bare
for f in bench_fn bench_plain; do
	"$SHIMTRACE" enable "$f" --pid "$P" --function "$f" >"plant.$f" 2>&1 ||
		die "enable --function $f: $(cat "plant.$f")"
done
phase disabled
"$SHIMTRACE" start >/dev/null
phase recorded
"$SHIMTRACE" stop >stop.out
for f in bench_fn bench_plain; do
	"$SHIMTRACE" disable "probe:$f" --pid "$P" >/dev/null || die "disable $f failed"
done
phase removed
exec {TO_PROG}>&-
wait "$BG_PID"
BG_PID=
stop_pid "$DAEMON_PID"
DAEMON_PID=
RECORDED=$(sed -n 's/.*: \([0-9]*\) events recorded, \([0-9]*\) lost.*/\1 recorded, \2 lost/p' stop.out)

# ---- bpftrace ----
BPF_WHY=
if ! command -v bpftrace >/dev/null; then
	BPF_WHY="bpftrace is not installed (apt-get install bpftrace)"
else
	rm -f to_prog prog.out
	mkfifo to_prog
	./probecost "$CALLS" "$ROUNDS" <to_prog >prog.out &
	BG_PID=$!
	exec {TO_PROG}>to_prog
	for _ in $(seq 500); do grep -q '^ready' prog.out && break; sleep 0.01; done
	phase untraced
	bpftrace -e "uprobe:$TMP/probecost:bench_fn, uprobe:$TMP/probecost:bench_plain { @[probe] = count(); }" \
		>bpf.out 2>&1 &
	BPF_PID=$!
	for _ in $(seq 1000); do grep -q 'Attaching' bpf.out && break; sleep 0.01; done
	sleep 0.5
	if alive "$BPF_PID" && grep -q Attaching bpf.out; then
		phase bpftrace
		kill -INT "$BPF_PID"
	else
		BPF_WHY="bpftrace could not attach: $(grep -v '^$' bpf.out | head -1)"
	fi
	wait "$BPF_PID" 2>/dev/null
	exec {TO_PROG}>&-
	wait "$BG_PID"
	BG_PID=
fi

# ---- uftrace ----
UF_WHY=
if ! command -v uftrace >/dev/null; then
	UF_WHY="uftrace is not installed (apt-get install uftrace)"
elif ! echo uftrace | uftrace record --no-libcall -d "$TMP/uftrace.data" -P bench_plain \
	./probecost "$CALLS" "$ROUNDS" >uf.out 2>uf.err; then
	UF_WHY="uftrace failed: $(head -1 uf.err)"
else
	grep '^uftrace ' uf.out >uftrace
fi
UF_FN_WHY="its dynamic patching refuses a RIP-relative first instruction"

# ---- the table ----
num() { field "$1" "$2"; }
sub() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%+.2f", a - b }'; }
row() { printf '| %-45s | %9s | %9s | %11s | %9s | %10s | %8s |\n' "$@"; }
B_FN=$(num fn_ns bare) B_PL=$(num plain_ns bare) B_MU=$(num mutex_ns bare)
echo "dynamic probes: ns per call, median of $ROUNDS rounds of $CALLS calls ($(nproc) CPUs: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'))"
echo
row configuration "bench_fn" added "bench_plain" added "mutex pair" added
row "---" "---" "---" "---" "---" "---" "---"
row "shimtrace: no probe (preloaded, dormant)" "$B_FN" "" "$B_PL" "" "$B_MU" ""
for p in disabled recorded removed; do
	case $p in
	disabled) what="shimtrace: probe planted, tracepoint off" ;;
	recorded) what="shimtrace: probe recorded; wrappers recorded" ;;
	removed) what="shimtrace: probe removed" ;;
	esac
	row "$what" "$(num fn_ns $p)" "$(sub "$(num fn_ns $p)" "$B_FN")" "$(num plain_ns $p)" \
		"$(sub "$(num plain_ns $p)" "$B_PL")" "$(num mutex_ns $p)" "$(sub "$(num mutex_ns $p)" "$B_MU")"
done
if [[ -z $BPF_WHY ]]; then
	U_FN=$(num fn_ns untraced) U_PL=$(num plain_ns untraced)
	row "untraced (for bpftrace)" "$U_FN" "" "$U_PL" "" "$(num mutex_ns untraced)" ""
	row "bpftrace uprobe, count()" "$(num fn_ns bpftrace)" "$(sub "$(num fn_ns bpftrace)" "$U_FN")" \
		"$(num plain_ns bpftrace)" "$(sub "$(num plain_ns bpftrace)" "$U_PL")" "" ""
else
	row "bpftrace: skipped, $BPF_WHY" "" "" "" "" "" ""
fi
if [[ -z $UF_WHY ]]; then
	row "uftrace -P bench_plain (entry+exit)" "(refused)" "" "$(num plain_ns uftrace)" \
		"$(sub "$(num plain_ns uftrace)" "$B_PL")" "" ""
	echo
	echo "uftrace on bench_fn: $UF_FN_WHY."
else
	row "uftrace: skipped, $UF_WHY" "" "" "" "" "" ""
fi
echo
HIT=$(sub "$(num fn_ns recorded)" "$B_FN") EV=$(awk -v a="$(num mutex_ns recorded)" -v b="$B_MU" 'BEGIN { printf "%.2f", (a - b) / 2 }')
echo "shimtrace's recorded phase: $RECORDED (session stop). A probe hit records 48 bytes of"
echo "arguments and the caller; a wrapper event (half a mutex pair's added cost) its object and"
echo "caller: a hit on bench_fn adds $HIT ns, a wrapper event +$EV ns:" \
	"$(awk -v a="$HIT" -v b="$EV" 'BEGIN { printf "%.2f", a / b }') times (the target: within 2)."
echo "probe plans: $(grep 'a jump' plant.bench_fn)"
echo "             $(grep 'a jump' plant.bench_plain)"
