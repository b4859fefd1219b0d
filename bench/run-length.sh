#!/usr/bin/env bash
# run-length.sh: does a short run cost as much per event as a long one?
# An uncontended lock+unlock loop of one thread for 100k, 1M and 10M pairs,
# default buffers and --buffer-size 512M, each bare, under shimtrace record
# and under LTTng-UST's pthread wrapper, interleaved, in one run.
#
# Usage: bench/run-length.sh [--lengths "N..."] [--big SIZE] [--reps K]
#                            [--warm W] [--build DIR]
#
#   --lengths "N..."  pairs per run, shortest first (default "100000 1000000 10000000")
#   --big SIZE        the large buffer: shimtrace --buffer-size SIZE, LTTng
#                     8 sub-buffers of SIZE/8 (default 512M)
#   --reps K          runs per configuration; the median is shown (default 5)
#   --warm W          untimed pairs before the timed ones (default 1000)
#   --build DIR       build directory holding core/, wrappers/ and ctl/ (default .)
#
# Environment: SHIMTRACE_BIN (the CLI, default DIR/ctl/shimtrace) and
# SHIMTRACE_LIBDIR (for an installed shimtrace), as for run-mutex.sh; CC.
#
# This is a benchmark, not a test: it always exits 0 once it has printed
# its table, whatever the numbers; rows that cannot run say why.

BENCH=run-length.sh
LENGTHS="100000 1000000 10000000"
BIG=512M
REPS=5
WARM=1000
# shellcheck source=bench/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh" || exit 2

USAGE=7,18
bench_args lengths:LENGTHS:text big:BIG:text reps:REPS:count warm:WARM:count -- "$@"
count_list LENS --lengths "$LENGTHS"
# BIG in bytes, for LTTng's sub-buffers
[[ $BIG =~ ^([1-9][0-9]*)([KMG]?)$ ]] || die "bad --big '$BIG' (a size such as 512M)"
case ${BASH_REMATCH[2]} in
K) BIG_BYTES=$((BASH_REMATCH[1] << 10)) ;;
M) BIG_BYTES=$((BASH_REMATCH[1] << 20)) ;;
G) BIG_BYTES=$((BASH_REMATCH[1] << 30)) ;;
*) BIG_BYTES=${BASH_REMATCH[1]} ;;
esac
bench_start mutex-pairs
PROG=$TMP/mutex-pairs

# A row is "PAIRS:BUF", BUF default or big; a configuration is bare,
# record or lttng. A run keeps the CPU ns per pair of the timed loop,
# second the whole command's wall time per pair, third the timed loop's
# wall time per pair.
ROWS=()
for buf in default big; do
	for n in "${LENS[@]}"; do
		ROWS+=("$n:$buf")
	done
done
CONFIGS=(bare record lttng)
# and what the thread met in its timed loop: page faults, voluntary context
# switches (waits) and involuntary ones (preemptions)
declare -A FLT=() VCSW=() IVCSW=()

# shellcheck disable=SC2317,SC2034 # called by run_all; FLT... are read through values
# one CONFIG ROW REP: one run.
one() {
	local cfg=$1 row=$2 rep=$3 n=${2%%:*} extra=
	local -a prog=("$PROG" --warm "$WARM" "${2%%:*}" 1)
	case $cfg in
	bare) bare_run "${prog[@]}" ;;
	record)
		[[ ${row#*:} == big ]] && extra="--buffer-size $BIG"
		record_run "$extra" "${prog[@]}"
		;;
	lttng)
		[[ ${row#*:} == big ]] && extra="$((BIG_BYTES / 8)) 8"
		lttng_run "$extra" "${prog[@]}"
		;;
	esac
	keep "$cfg" "$row" "$rep" cpu_ns "$(calc "($RUN_T1 - $RUN_T0) / $n")" ns_per_pair
	[[ -n ${VAL[$cfg,$row,$rep]:-} ]] || return
	FLT[$cfg,$row,$rep]=$(out_field minflt)
	VCSW[$cfg,$row,$rep]=$(out_field vcsw)
	IVCSW[$cfg,$row,$rep]=$(out_field ivcsw)
	check_events "$cfg" "$row" "$rep" $((n + WARM))
}

run_all one

uv=$(ust_version)
echo
echo "### Run length: ns per uncontended lock+unlock pair, one thread (median of $REPS)"
echo
echo "| pairs | buffers | bare | shimtrace | LTTng-UST${uv:+ $uv} | shimtrace overhead | LTTng overhead | LTTng / shimtrace overhead | shimtrace events recorded/lost | LTTng events recorded/lost | whole command: bare | whole: shimtrace | whole: LTTng |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|"
for row in "${ROWS[@]}"; do
	if [[ ${row#*:} == big ]]; then
		bufs="$BIG (LTTng 8 x $((BIG_BYTES / 8 >> 20))M)"
	else
		bufs="default"
	fi
	echo "| ${row%%:*} | $bufs$(compare_cells "$row")"
done
echo
echo "- bare, shimtrace, LTTng-UST: CPU ns per pair of the timed loop, measured inside the"
echo "  program (CLOCK_THREAD_CPUTIME_ID around the N pairs, after $WARM untimed warm-up pairs):"
echo "  process start, tracer and buffer set-up and the end of the trace are not in it; the"
echo "  first writes into each page of a trace buffer are (page faults are CPU time of the"
echo "  thread). Time the thread waited for a core is not: the machine is shared. The loop"
echo "  never blocks (discard mode), so on an idle machine this is its wall time too; the loop's"
echo "  wall time (CLOCK_MONOTONIC) is in the second table and in the runs below."
echo "- overhead: recording minus bare, ns per pair; LTTng / shimtrace overhead > 1 means"
echo "  shimtrace costs less. shimtrace writes 2 events a pair, LTTng 3 (lock_req, lock_acq,"
echo "  unlock); events include the warm-up's."
echo "- whole command: wall time of everything a user runs, divided by the pairs: bare is the"
echo "  program's process; shimtrace is \`shimtrace record ... -- PROG\` (its private consumer, the"
echo "  drain and the trace's end included); LTTng is lttng create/enable/start, the preloaded"
echo "  program, lttng stop/destroy (the session daemon already running; counting not included;"
echo "  the program waits for lttng-ust's registration, LTTNG_UST_REGISTER_TIMEOUT=60000)."
echo "- events recorded/lost are those of the median run: shimtrace's from its record summary,"
echo "  LTTng's recorded from babeltrace2's counter sink and lost from \`lttng stop\`'s warning."
echo "  A run that loses events costs less per pair than one that writes them all: an event"
echo "  lost to a full buffer is counted, not written."
garbled_note EV

short=${LENS[0]}
long=${LENS[${#LENS[@]} - 1]}
echo
echo "### Short-run penalty: ns per pair at $short pairs / at $long pairs (medians)"
echo
echo "| buffers | measure | bare | shimtrace | LTTng-UST |"
echo "|---|---|---|---|---|"
for buf in default big; do
	for m in MED MED3 MED2; do
		declare -n med=$m
		case $m in
		MED) what="timed loop, CPU" ;;
		MED3) what="timed loop, wall" ;;
		MED2) what="whole command, wall" ;;
		esac
		line="| $([[ $buf == big ]] && echo "$BIG" || echo default) | $what"
		for cfg in "${CONFIGS[@]}"; do
			line+=" | $(ratio "${med[$cfg,$short:$buf]:-}" "${med[$cfg,$long:$buf]:-}")"
		done
		unset -n med
		echo "$line |"
	done
done
echo
echo "(target for shimtrace's timed loop: at most 1.3x; the whole command also pays each tool's fixed"
echo "start and stop once, which a short run spreads over fewer pairs)"

echo
echo "### Timed loop: page faults / waits / preemptions of the thread (medians)"
echo
echo "| pairs | buffers | bare | shimtrace | LTTng-UST |"
echo "|---|---|---|---|---|"
for row in "${ROWS[@]}"; do
	line="| ${row%%:*} | $([[ ${row#*:} == big ]] && echo "$BIG" || echo default)"
	for cfg in "${CONFIGS[@]}"; do
		line+=" | $(values FLT "$cfg" "$row" | median) / $(values VCSW "$cfg" "$row" | median)"
		line+=" / $(values IVCSW "$cfg" "$row" | median)"
	done
	echo "$line |"
done
echo
echo "(getrusage RUSAGE_THREAD around the timed loop: minor page faults, voluntary context switches"
echo "and involuntary ones, in all of the loop's N pairs)"

echo
echo "runs (rep order), ns per pair: timed loop CPU / whole command wall / timed loop wall, events recorded/lost:"
run_listing

echo
machine_line
load_line
echo "program: ${COMPILE_SHOWN//PROG/mutex-pairs}"
echo "commands (in a temp dir; N pairs, W=$WARM):"
echo "  bare: ./mutex-pairs --warm $WARM N 1"
echo "  shimtrace: $(quoted "$SHIMTRACE") record [--buffer-size $BIG] -o DIR -- ./mutex-pairs --warm $WARM N 1"
echo "  LTTng default: $(lttng_up_shown); $LTTNG_ENV_SHOWN ./mutex-pairs --warm $WARM N 1; lttng stop S; lttng destroy S"
echo "  LTTng $BIG: $(lttng_up_shown "$((BIG_BYTES / 8))" 8); (the same)"
[[ -n $LTTNG_SKIP ]] || echo "  lttng-sessiond --daemonize --no-kernel was started unless one answered already"
exit 0
