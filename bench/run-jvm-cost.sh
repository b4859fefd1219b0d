#!/usr/bin/env bash
# run-jvm-cost.sh: what the JVM agent (libshimtrace-jvm.so) costs a Java
# program when no session records, and when one does (bench/java/JvmCost.java):
#   bare        java, no agent
#   loaded      the core preloaded and -agentpath, as record --wrap jvm
#               gives them, with no daemon: nothing is recorded, the
#               callbacks read their masks and return
#   recording   shimtrace record --wrap jvm (its default events: every
#               contended enter and wait, the threads; not the lock order)
# Each row: ns per synchronized block, contended (THREADS threads, one
# monitor), uncontended and elided (a lock C2 removes), the median of
# five rounds, best of K runs; and the JVM's wall time for the run.
#
# Usage: bench/run-jvm-cost.sh [--reps K] [--threads T] [--ops N] [--build DIR]
#
#   --reps K      runs of each; the best is shown (default 3)
#   --threads T   threads of the contended loop (default 4)
#   --ops N       synchronized blocks per round (default 20000000)
#   --build DIR   build directory (default .)
#
# This is a benchmark, not a test: it always exits 0 once it has printed
# its table.

BENCH=run-jvm-cost.sh
REPS=3
THREADS=4
OPS=20000000
# shellcheck source=bench/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh" || exit 2

USAGE=13,18
bench_args reps:REPS:count threads:THREADS:count ops:OPS:count -- "$@"
AGENT=${SHIMTRACE_LIBDIR:-$BUILD/wrappers/.libs}/libshimtrace-jvm.so
[[ -f $AGENT ]] || die "no $AGENT (configure found no JDK?)"
command -v javac >/dev/null || die "no javac"
bench_tmp
javac -d "$TMP" "$HERE/java/JvmCost.java" || die "cannot compile JvmCost.java"
cd "$TMP" || die "cannot enter $TMP"
mkdir empty-rundir

declare -A BEST=()
# best ROW FIELD VALUE
best() {
	local k="$1.$2"
	if [[ -z ${BEST[$k]:-} ]] || (($(calc "$3 < ${BEST[$k]}"))); then
		BEST[$k]=$3
	fi
}

run() {
	local row=$1 start end f
	shift
	start=$(date +%s%N)
	"$@" >out 2>err || die "$row failed: $(last_line err)"
	end=$(date +%s%N)
	for f in contended_ns uncontended_ns elided_ns; do
		best "$row" "$f" "$(sed -En "s/(^|.* )$f=([0-9.]*).*/\2/p" out)"
	done
	best "$row" wall_ms "$(calc "($end - $start) / 1000000")"
}

for ((rep = 1; rep <= REPS; rep++)); do
	echo "run $rep/$REPS" >&2
	run bare java -cp . JvmCost "$THREADS" "$OPS"
	run loaded env SHIMTRACE_RUNDIR="$TMP/empty-rundir" LD_PRELOAD="$CORE_LIB" \
		JAVA_TOOL_OPTIONS="-agentpath:$AGENT" java -cp . JvmCost "$THREADS" "$OPS"
	run recording "$SHIMTRACE" record -q --wrap jvm -o "$TMP/t" -- java -cp . JvmCost "$THREADS" "$OPS"
	rm -rf "$TMP/t"
done

echo
echo "ns per synchronized block (best of $REPS runs, each the median of 5 rounds of $OPS; contended: $THREADS threads)"
printf '%-10s %12s %14s %10s %10s\n' "" contended uncontended elided wall_ms
for row in bare loaded recording; do
	printf '%-10s %12s %14s %10s %10s\n' "$row" "${BEST[$row.contended_ns]:--}" \
		"${BEST[$row.uncontended_ns]:--}" "${BEST[$row.elided_ns]:--}" "${BEST[$row.wall_ms]:--}"
done
machine_line
load_line
