#!/usr/bin/env bash
# run-reader.sh: how fast a trace is read. Records N mutex lock+unlock
# pairs of one thread (2N events, --blocking: none lost) with shimtrace,
# then times, on that same trace, `shimtrace report locks` (the reader, the
# lock statistics and the symbolisation), `shimtrace view > /dev/null` and
# `babeltrace2 DIR > /dev/null`, each K times, and prints the best wall
# time and the events per second of each, and the ratio to babeltrace2.
#
# Usage: bench/run-reader.sh [--pairs N] [--reps K] [--build DIR]
#
#   --pairs N    lock+unlock pairs recorded (default 5000000: 10M events)
#   --reps K     runs of each reader; the best is shown (default 3)
#   --build DIR  build directory holding core/, wrappers/ and ctl/ (default .)
#
# Environment: SHIMTRACE_BIN, SHIMTRACE_LIBDIR (an installed shimtrace); CC.
#
# This is a benchmark, not a test: it always exits 0 once it has printed
# its table, whatever the numbers; a reader that cannot run says why.

BENCH=run-reader.sh
PAIRS=5000000
REPS=3
# shellcheck source=bench/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh" || exit 2

USAGE=9,15
bench_args pairs:PAIRS:count reps:REPS:count -- "$@"
bench_start mutex-pairs
DIR=$TMP/trace

"$SHIMTRACE" record -q --blocking -o "$DIR" -- ./mutex-pairs "$PAIRS" 1 >/dev/null ||
	die "cannot record the trace"
EVENTS=$("$SHIMTRACE" report locks --json "$DIR" | sed -n 's/^{"trace": "[^"]*", "events": \([0-9]*\),.*/\1/p')
is_count "${EVENTS:-0}" || die "cannot count the trace's events"
BYTES=$(du -sb "$DIR" | cut -f1)

declare -A BEST=() WHY=()
READERS=("shimtrace report locks" "shimtrace view" "babeltrace2")
# time_reader NAME COMMAND...: best wall time of REPS runs, in ns.
time_reader() {
	local name=$1 t0 t1 d
	shift
	for _ in $(seq "$REPS"); do
		t0=$(now_ns)
		if ! "$@" >/dev/null 2>"$TMP/err"; then
			WHY[$name]="failed: $(head -c 200 "$TMP/err")"
			return
		fi
		t1=$(now_ns)
		d=$((t1 - t0))
		[[ -z ${BEST[$name]:-} || $d -lt ${BEST[$name]} ]] && BEST[$name]=$d
	done
}
time_reader "shimtrace report locks" "$SHIMTRACE" report locks "$DIR"
time_reader "shimtrace view" "$SHIMTRACE" view "$DIR"
if command -v babeltrace2 >/dev/null; then
	time_reader babeltrace2 babeltrace2 "$DIR"
else
	WHY[babeltrace2]="skipped: babeltrace2 is not installed"
fi

printf '%s: reading a trace of %s events (%s bytes, %s pairs of one thread)\n\n' \
	"$BENCH" "$EVENTS" "$BYTES" "$PAIRS"
printf '%-26s %12s %16s %14s\n' reader "best s" "events/s" "x babeltrace2"
for r in "${READERS[@]}"; do
	if [[ -n ${WHY[$r]:-} ]]; then
		printf '%-26s %s\n' "$r" "${WHY[$r]}"
		continue
	fi
	vs=-
	[[ -n ${BEST[babeltrace2]:-} ]] && vs=$(fmt '%.1f' "${BEST[babeltrace2]} / ${BEST[$r]}")
	printf '%-26s %12s %16s %14s\n' "$r" "$(fmt '%.3f' "${BEST[$r]} / 1e9")" \
		"$(fmt '%.0f' "$EVENTS * 1e9 / ${BEST[$r]}")" "$vs"
done
printf '\n%s\n%s\n' "$(machine_line)" "$(load_line)"
printf 'trace: %s record -q --blocking -o DIR -- ./mutex-pairs %s 1\n' "$SHIMTRACE" "$PAIRS"
