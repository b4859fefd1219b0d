#!/usr/bin/env bash
# run-java-tracepoint.sh: what a Java tracepoint (org.shimtrace.Tracepoint)
# costs, off and recorded, in one JVM run. ns per iteration of a loop whose
# work is a short dependency chain (bench/TpBench.java), median of ROUNDS
# rounds of N iterations, after as many untimed rounds for the JIT:
#
#   empty          the loop alone
#   off, checked   + if (tp.enabled()) tp.fire(i, x): no session records it
#   off, fired     + tp.fire(i, x) without the check
#   off, String    + if (tp2.enabled()) tp2.fire(i, "GET /index.html")
#   recorded ...   the same, a session of our shimtraced recording bench:*
#                  (tp: two long fields; tp2: a long and a 15-byte String)
#
# Usage: bench/run-java-tracepoint.sh [--calls N] [--rounds R] [--build DIR]
#
#   --calls N    iterations per round (default 200000)
#   --rounds R   rounds per row; the median is shown (default 5)
#   --build DIR  build directory, configured with a JDK (default .)
#
# Environment: JAVA (default: java beside the javac configure found, else
# on the PATH), SHIMTRACE_BIN and SHIMTRACE_LIBDIR as for run-mutex.sh.
# A benchmark, not a test: it always exits 0 once it has printed its table.

BENCH=run-java-tracepoint.sh
CALLS=200000
ROUNDS=5
# shellcheck source=bench/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh" || exit 2
USAGE=14,21
bench_args calls:CALLS:count rounds:ROUNDS:count -- "$@"
bench_paths "$BUILD"
JAR=$BUILD/java/shimtrace.jar
JNI_LIB=$BUILD/java/.libs/libshimtrace-java.so
[[ -n ${SHIMTRACE_LIBDIR:-} ]] && JNI_LIB=$SHIMTRACE_LIBDIR/libshimtrace-java.so
[[ -r $JAR && -r $JNI_LIB ]] || die "cannot find $JAR and $JNI_LIB (configure found no JDK? build first)"
JAVAC=$(sed -n 's/^JAVAC = //p' "$BUILD/Makefile" 2>/dev/null)
JAVAC=${JAVAC:-javac}
JAVA=${JAVA:-$(dirname "$JAVAC")/java}
[[ -x $JAVA ]] || JAVA=java
bench_tmp
cd "$TMP" || die "cannot enter $TMP"
"$JAVAC" -cp "$JAR" -d . "$HERE/TpBench.java" || die "cannot compile TpBench.java"

RUNDIR=$TMP/run
start_shimtraced || die "shimtraced: $DAEMON_SKIP"
st create b -o "$TMP/trace" --buffer-size 256M >/dev/null || die "create failed"
st enable 'bench:*' >/dev/null || die "enable failed"
mkfifo to_prog
SHIMTRACE_RUNDIR=$RUNDIR "$JAVA" -Dshimtrace.lib="$JNI_LIB" -cp "$JAR:." TpBench "$CALLS" "$ROUNDS" \
	<to_prog >prog.out 2>prog.err &
BG_PID=$!
exec {TO_PROG}>to_prog
for _ in $(seq 6000); do
	grep -q '^off done' prog.out && break
	alive "$BG_PID" || die "TpBench failed: $(head -3 prog.err)"
	sleep 0.05
done
st start >/dev/null || die "start failed"
echo go >&"$TO_PROG"
wait "$BG_PID" || die "TpBench failed: $(head -3 prog.err)"
BG_PID=
exec {TO_PROG}>&-
st stop >stop.out 2>&1
read -r RECORDED LOST _ < <(record_summary stop.out)
stop_shimtraced

# ---- the table ----
num() { awk -v r="$1" -v k="$2" '$1 == r { print $k }' prog.out; }
row() { printf '| %-48s | %8s | %8s | %8s | %8s |\n' "$@"; }
line() {
	local e=$3
	row "$1" "$(num "$2" 2)" "$(fmt '%+.2f' "$(num "$2" 2) - $(num "$e" 2)")" "$(num "$2" 3)" "$(num "$2" 4)"
}
echo "Java tracepoints: ns per iteration, median of $ROUNDS rounds of $CALLS ($(nproc) CPUs:" \
	"$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); $("$JAVA" -version 2>&1 | head -1))"
echo
row "loop" "median" "added" "min" "max"
row "---" "---" "---" "---" "---"
line "empty" empty empty
line "off: if (tp.enabled()) tp.fire(i, x)" off_checked empty
line "off: tp.fire(i, x)" off_fired empty
line "off: if (tp2.enabled()) tp2.fire(i, \"...\")" off_named empty
line "empty (again, the session started)" empty_on empty_on
line "recorded: if (tp.enabled()) tp.fire(i, x)" on_checked empty_on
line "recorded: tp.fire(i, x)" on_fired empty_on
line "recorded: if (tp2.enabled()) tp2.fire(i, \"...\")" on_named empty_on
echo
echo "recorded: ${RECORDED:-?} events, ${LOST:-?} lost (session stop; 3 x $((2 * ROUNDS)) x $CALLS fired" \
	"in the recorded rows, the untimed rounds included)"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
