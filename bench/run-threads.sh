#!/usr/bin/env bash
# run-threads.sh: does recording cost more per event as threads are added?
# T threads (1, 2, 4, 8, 16), each locking and unlocking a mutex of its own
# N times, bare, under shimtrace record and under LTTng-UST's pthread
# wrapper, interleaved, in one run; counted in core-ns per operation (the
# CPU time of all the threads over all their operations), so that 16
# threads on 2 cores can be compared with one.
#
# Usage: bench/run-threads.sh [--threads "T..."] [--ops N] [--reps K]
#                             [--warm W] [--build DIR]
#
#   --threads "T..."  thread counts, fewest first (default "1 2 4 8 16")
#   --ops N           lock+unlock pairs per thread (default 500000)
#   --reps K          runs per configuration; the median is shown (default 5)
#   --warm W          untimed pairs per thread before the timed ones (default 1000)
#   --build DIR       build directory holding core/, wrappers/ and ctl/ (default .)
#
# Environment: SHIMTRACE_BIN (the CLI, default DIR/ctl/shimtrace) and
# SHIMTRACE_LIBDIR (for an installed shimtrace), as for run-mutex.sh; CC.
#
# This is a benchmark, not a test: it always exits 0 once it has printed
# its table, whatever the numbers; rows that cannot run say why.

BENCH=run-threads.sh
THREADS="1 2 4 8 16"
OPS=500000
REPS=5
WARM=1000
# shellcheck source=bench/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh" || exit 2

USAGE=9,19
bench_args threads:THREADS:text ops:OPS:count reps:REPS:count warm:WARM:count -- "$@"
count_list ROWS --threads "$THREADS" 256
bench_start threads
PROG=$TMP/threads

# A row is a thread count; a run keeps core-ns per op and, second, wall
# ns per op (first thread's start to last thread's end, over all ops).
CONFIGS=(bare record lttng)

# shellcheck disable=SC2317 # called by run_all
# one CONFIG ROW REP: one run.
one() {
	local -a prog=("$PROG" --warm "$WARM" "$2" "$OPS")
	case $1 in
	bare) bare_run "${prog[@]}" ;;
	record) record_run "" "${prog[@]}" ;;
	lttng) lttng_run "" "${prog[@]}" ;;
	esac
	keep "$1" "$2" "$3" core_ns_per_op "$(field wall_ns_per_op out)"
	check_events "$1" "$2" "$3" $(($2 * (OPS + WARM)))
}

run_all one

uv=$(ust_version)
echo
echo "### Threads: core-ns per lock+unlock pair, each thread its own mutex, $OPS pairs a thread (median of $REPS)"
echo
echo "| threads | bare | shimtrace | LTTng-UST${uv:+ $uv} | shimtrace overhead | LTTng overhead | LTTng / shimtrace overhead | shimtrace events recorded/lost | LTTng events recorded/lost | wall ns/op: bare | wall: shimtrace | wall: LTTng |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
for row in "${ROWS[@]}"; do
	echo "| $row$(compare_cells "$row")"
done
echo
echo "- bare, shimtrace, LTTng-UST: CPU time of the timed loops of all threads"
echo "  (CLOCK_THREAD_CPUTIME_ID, user and kernel), divided by all their pairs: core-ns, the"
echo "  same whatever the number of cores. Each thread first does $WARM untimed pairs (its"
echo "  tracer buffer set up), then waits for the others on a barrier. The consumer's CPU"
echo "  time is not in it (for it, see run-drain.sh)."
echo "- overhead: recording minus bare, core-ns per pair; LTTng / shimtrace overhead > 1 means"
echo "  shimtrace costs less. shimtrace writes 2 events a pair, LTTng 3."
echo "- wall ns/op: from the first thread's start to the last one's end, over all pairs (on"
echo "  $(nproc) cores, about core-ns / $(nproc) once there are as many threads)."
echo "- events recorded/lost: of the median run, warm-up included; default buffers (shimtrace"
echo "  32 MiB a thread, LTTng its default per-CPU channel)."
garbled_note EV

first=${ROWS[0]}
last=${ROWS[${#ROWS[@]} - 1]}
echo
printf -- '-> per-pair recording overhead at %s threads / at %s: shimtrace %s (target: at most 1.5x), LTTng-UST %s\n' \
	"$last" "$first" "$(ratio "$(over record "$last")" "$(over record "$first")")" \
	"$(ratio "$(over lttng "$last")" "$(over lttng "$first")")"

echo
echo "runs (rep order), core-ns / wall ns per pair, events recorded/lost:"
run_listing

echo
machine_line
load_line
echo "program: ${COMPILE_SHOWN//PROG/threads}"
echo "commands (in a temp dir; T threads):"
echo "  bare: ./threads --warm $WARM T $OPS"
echo "  shimtrace: $(quoted "$SHIMTRACE") record -o DIR -- ./threads --warm $WARM T $OPS"
echo "  LTTng: $(lttng_up_shown); $LTTNG_ENV_SHOWN ./threads --warm $WARM T $OPS; lttng stop S; lttng destroy S"
[[ -n $LTTNG_SKIP ]] || echo "  lttng-sessiond --daemonize --no-kernel was started unless one answered already"
exit 0
