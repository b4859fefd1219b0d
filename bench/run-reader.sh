#!/usr/bin/env bash
# run-reader.sh: how fast a trace is read, on two traces recorded with
# shimtrace (--blocking: none lost):
#
#   one-lock    N mutex lock+unlock pairs of one thread (2N events);
#   many-locks  a server's shape (many-locks.c): T threads, L mutexes, 200
#               call sites, M rounds (about 2.2M events, some of them
#               waits: real contention), built with -g as a server with
#               its debug information is.
#
# On each, times `shimtrace report locks` (the reader, the lock statistics
# and the symbolisation), `shimtrace view > /dev/null` and `babeltrace2 DIR
# > /dev/null`, and prints the best wall time of each, its events per
# second, and the ratio to babeltrace2's.
#
# Usage: bench/run-reader.sh [--pairs N] [--rounds M] [--threads T] [--locks L]
#                            [--reps K] [--bt-reps B] [--build DIR]
#
#   --pairs N    one-lock: lock+unlock pairs (default 5000000: 10M events)
#   --rounds M   many-locks: rounds (default 4500000: about 10M events)
#   --threads T  many-locks: threads (default 30)
#   --locks L    many-locks: mutexes (default 1000)
#   --reps K     runs of each shimtrace reader; the best is shown (default 3)
#   --bt-reps B  runs of babeltrace2, 25 times slower (default 1; 0: none)
#   --build DIR  build directory holding core/, wrappers/ and ctl/ (default .)
#
# Environment: SHIMTRACE_BIN, SHIMTRACE_LIBDIR (an installed shimtrace); CC.
#
# This is a benchmark, not a test: it always exits 0 once it has printed
# its tables, whatever the numbers; a reader that cannot run says why.

BENCH=run-reader.sh
PAIRS=5000000
ROUNDS=4500000
THREADS=30
LOCKS=1000
REPS=3
BT_REPS=1
# shellcheck source=bench/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh" || exit 2

USAGE=16,25
bench_args pairs:PAIRS:count rounds:ROUNDS:count threads:THREADS:count locks:LOCKS:count \
	reps:REPS:count bt-reps:BT_REPS:text -- "$@"
[[ $BT_REPS == 0 ]] || is_count "$BT_REPS" || die "bad --bt-reps '$BT_REPS'"
bench_start mutex-pairs many-locks
# (call sites as function and line, as a server's with its debug information)
compile "$TMP/many-locks" "$HERE/many-locks.c" -g

declare -A CMD=(
	[one-lock]="./mutex-pairs $PAIRS 1"
	[many-locks]="./many-locks --threads $THREADS --locks $LOCKS $ROUNDS"
)
TRACES=(one-lock many-locks)
READERS=("shimtrace report locks" "shimtrace view" "babeltrace2")
declare -A BEST=() WHY=() EVENTS=() BYTES=()

# time_reader KEY REPS COMMAND...: best wall time of REPS runs, in ns.
time_reader() {
	local key=$1 runs=$2 t0 t1 d
	shift 2
	for _ in $(seq "$runs"); do
		t0=$(now_ns)
		if ! "$@" >/dev/null 2>"$TMP/err"; then
			WHY[$key]="failed: $(head -c 200 "$TMP/err")"
			return
		fi
		t1=$(now_ns)
		d=$((t1 - t0))
		[[ -z ${BEST[$key]:-} || $d -lt ${BEST[$key]} ]] && BEST[$key]=$d
	done
}

# read_trace NAME: records trace NAME, times its readers, removes it.
read_trace() {
	local name=$1 dir=$TMP/trace-$1 events
	# shellcheck disable=SC2086 # the command's words
	"$SHIMTRACE" record -q --blocking -o "$dir" -- ${CMD[$name]} >/dev/null ||
		die "cannot record the $name trace"
	events=$("$SHIMTRACE" report locks --json "$dir" |
		sed -n 's/^{"trace": "[^"]*", "events": \([0-9]*\),.*/\1/p')
	is_count "${events:-0}" || die "cannot count the $name trace's events"
	EVENTS[$name]=$events
	BYTES[$name]=$(du -sb "$dir" | cut -f1)
	time_reader "$name/shimtrace report locks" "$REPS" "$SHIMTRACE" report locks "$dir"
	time_reader "$name/shimtrace view" "$REPS" "$SHIMTRACE" view "$dir"
	if ! command -v babeltrace2 >/dev/null; then
		WHY[$name/babeltrace2]="skipped: babeltrace2 is not installed"
	elif ((BT_REPS == 0)); then
		WHY[$name/babeltrace2]="skipped: --bt-reps 0"
	else
		time_reader "$name/babeltrace2" "$BT_REPS" babeltrace2 "$dir"
	fi
	rm -rf "$dir"
}

# table NAME: the readers' rows for trace NAME.
table() {
	local name=$1 r key vs bt=${BEST[$1/babeltrace2]:-}
	printf '%s: %s events (%s bytes): %s\n' "$name" "${EVENTS[$name]}" "${BYTES[$name]}" \
		"${CMD[$name]}"
	printf '  %-26s %12s %16s %14s\n' reader "best s" "events/s" "x babeltrace2"
	for r in "${READERS[@]}"; do
		key=$name/$r
		if [[ -n ${WHY[$key]:-} ]]; then
			printf '  %-26s %s\n' "$r" "${WHY[$key]}"
			continue
		fi
		vs=-
		[[ -n $bt ]] && vs=$(fmt '%.1f' "$bt / ${BEST[$key]}")
		printf '  %-26s %12s %16s %14s\n' "$r" "$(fmt '%.3f' "${BEST[$key]} / 1e9")" \
			"$(fmt '%.0f' "${EVENTS[$name]} * 1e9 / ${BEST[$key]}")" "$vs"
	done
}

for t in "${TRACES[@]}"; do
	read_trace "$t"
done
printf '%s: best of %s runs (babeltrace2: of %s)\n' "$BENCH" "$REPS" "$BT_REPS"
for t in "${TRACES[@]}"; do
	printf '\n'
	table "$t"
done
printf '\n%s\n%s\n' "$(machine_line)" "$(load_line)"
printf 'traces: %s record -q --blocking -o DIR -- COMMAND\n' "$SHIMTRACE"
