#!/usr/bin/env bash
# run-percpu.sh: what a tracer does to threads from their first event on,
# per-thread buffers against per-CPU ones (--buffers per-process), side by side
# with LTTng-UST's pthread wrapper, interleaved, in one run:
#   first lock      a new thread's first lock, from pthread_create until it
#                   is held (us), in a process whose first traced call it
#                   follows closely
#   shared          2 threads started together, 100000 lock+unlock pairs
#                   each on one mutex: wall time (us)
#   200x1000        200 threads started together, 1000 pairs each on their
#                   own mutex: wall time (us), events recorded/lost
#   2000x100        2000 threads, 100 pairs each: the same
#
# Usage: bench/run-percpu.sh [--reps K] [--build DIR]
#
#   --reps K     runs per configuration and row; the median is shown (default 7)
#   --build DIR  build directory holding core/, wrappers/ and ctl/ (default .)
#
# Environment: SHIMTRACE_BIN (the CLI, default DIR/ctl/shimtrace) and
# SHIMTRACE_LIBDIR (for an installed shimtrace), as for run-mutex.sh; CC.
#
# This is a benchmark, not a test: it always exits 0 once it has printed
# its table, whatever the numbers; rows that cannot run say why.

BENCH=run-percpu.sh
REPS=7
# shellcheck source=bench/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh" || exit 2

USAGE=14,17
bench_args reps:REPS:count -- "$@"
bench_start burst
PROG=$TMP/burst

ROWS=(first-lock shared 200x1000 2000x100)
CONFIGS=(bare record percpu lttng)

# args ROW: the program's arguments for it; value ROW: what it keeps
args() {
	case $1 in
	first-lock) echo 1 1 ;;
	shared) echo --shared 2 100000 ;;
	200x1000) echo 200 1000 ;;
	2000x100) echo 2000 100 ;;
	esac
}
value() {
	[[ $1 == first-lock ]] && echo first_lock_us || echo wall_us
}

# shellcheck disable=SC2317 # called by run_all
# one CONFIG ROW REP: one run.
one() {
	local -a prog
	read -r -a prog <<<"$PROG $(args "$2")"
	case $1 in
	bare) bare_run "${prog[@]}" ;;
	record) record_run "--buffers per-thread" "${prog[@]}" ;;
	percpu) record_run "--buffers per-process" "${prog[@]}" ;;
	lttng) lttng_run "" "${prog[@]}" ;;
	esac
	keep "$1" "$2" "$3" "$(value "$2")" ""
}

run_all one

uv=$(ust_version)
echo
echo "### Threads from their first event: per-thread and per-CPU buffers (median of $REPS)"
echo
echo "| row | measure | bare | shimtrace per-thread | shimtrace per-CPU | LTTng-UST${uv:+ $uv} | per-thread events recorded/lost | per-CPU events | LTTng events |"
echo "|---|---|---|---|---|---|---|---|---|"
for row in "${ROWS[@]}"; do
	s="| $row | $([[ $row == first-lock ]] && echo 'first lock, us' || echo 'wall, us')"
	s+=$(median_cells "$row")
	s+=" | ${MED_EV[record,$row]:--} | ${MED_EV[percpu,$row]:--} | ${MED_EV[lttng,$row]:--} |"
	echo "$s"
done
echo
echo "- first lock: from the thread's pthread_create to its first pthread_mutex_lock"
echo "  returning; target: per-CPU within 0.5 ms of bare."
echo "- wall: from the first pthread_create to the last join, the threads' first events"
echo "  included (no warm-up): per-thread buffers are made at a thread's first event, 63 at"
echo "  most a process (the rest lose their events, counted); per-CPU buffers exist from"
echo "  the process's first event, one a CPU ($(getconf _NPROCESSORS_CONF) here)."
echo "- events recorded/lost: of the median run. shimtrace writes 2 events a pair (and the"
echo "  threads' start, create and join events), LTTng 3 a pair."
garbled_note EV
echo
echo "runs (rep order), value (events):"
run_listing
echo
machine_line
load_line
echo "program: ${COMPILE_SHOWN//PROG/burst}"
echo "commands (in a temp dir; ARGS per row: 1 1, --shared 2 100000, 200 1000, 2000 100):"
echo "  bare: ./burst ARGS"
echo "  shimtrace per-thread: $(quoted "$SHIMTRACE") record --buffers per-thread -o DIR -- ./burst ARGS"
echo "  shimtrace per-CPU: $(quoted "$SHIMTRACE") record --buffers per-process -o DIR -- ./burst ARGS"
echo "  LTTng: $(lttng_up_shown); $LTTNG_ENV_SHOWN ./burst ARGS; lttng stop S; lttng destroy S"
[[ -n $LTTNG_SKIP ]] || echo "  lttng-sessiond --daemonize --no-kernel was started unless one answered already"
exit 0
