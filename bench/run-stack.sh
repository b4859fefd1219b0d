#!/usr/bin/env bash
# run-stack.sh: what call stacks (record --stack N) cost, in one run:
#   contended path  the unwind a wait event makes (st_stack_capture) for
#                   N = 1 to 32 frames from a stack 40 frames deep, beside
#                   a contended lock's hand-off (a thread woken through a
#                   futex by another: the least a wait that blocks takes)
#                   and a read of the trace clock (bench/stackcost.c)
#   uncontended     mutex lock+unlock pairs recorded with --stack 0 and
#                   --stack 4 (the default), and bare: no wait event, so
#                   no unwind; the two recordings must agree
#
# Usage: bench/run-stack.sh [--reps K] [--build DIR]
#
#   --reps K     runs of each; the best median is shown (default 3)
#   --build DIR  build directory holding core/, wrappers/ and ctl/ (default .)
#
# Environment: SHIMTRACE_BIN and SHIMTRACE_LIBDIR, as for run-mutex.sh; CC.
#
# This is a benchmark, not a test: it always exits 0 once it has printed
# its table.

BENCH=run-stack.sh
REPS=3
# shellcheck source=bench/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh" || exit 2

USAGE=12,15
bench_args reps:REPS:count -- "$@"
bench_start stackcost mutex-pairs clockread
mkdir "$TMP/empty-rundir"

# best VAR VALUE: VAR = VALUE if it is lower (or VAR is empty).
best() {
	if [[ -z ${!1:-} ]] || (($(calc "$2 < ${!1}"))); then
		printf -v "$1" '%s' "$2"
	fi
}

declare -A CAP=() FRAMES=()
HANDOFF= PAIR_BARE= PAIR_S0= PAIR_S4=
for ((rep = 1; rep <= REPS; rep++)); do
	echo "run $rep/$REPS: unwinds" >&2
	env SHIMTRACE_RUNDIR="$TMP/empty-rundir" SHIMTRACE_STACK_DEPTH=32 LD_PRELOAD="$CORE_LIB" \
		./stackcost 40 5 >out 2>err || die "stackcost failed: $(last_line err)"
	while read -r line; do
		case $line in
		depth=*)
			d=$(sed -n 's/depth=\([0-9]*\).*/\1/p' <<<"$line")
			FRAMES[$d]=$(sed -n 's/.*frames=\([0-9]*\).*/\1/p' <<<"$line")
			best "CAP[$d]" "$(sed -n 's/.*ns=\([0-9.]*\).*/\1/p' <<<"$line")"
			;;
		handoff_ns=*) best HANDOFF "${line#handoff_ns=}" ;;
		esac
	done <out
	bench_clock_read
	echo "run $rep/$REPS: uncontended pairs" >&2
	./mutex-pairs 1000000 5 >out 2>err && best PAIR_BARE "$(out_field ns_per_pair)"
	for s in 0 4; do
		env -u SHIMTRACE_RUNDIR "$SHIMTRACE" record --stack $s -o "$TMP/t$s" -- \
			./mutex-pairs 1000000 5 >out 2>err && best "PAIR_S$s" "$(out_field ns_per_pair)"
		rm -rf "$TMP/t$s"
	done
done

echo
echo "contended path: an unwind of N frames, from a stack 40 frames deep (best of $REPS runs, each the median of 5 rounds of 20000)"
printf '%8s %8s %12s %14s %16s\n' frames found "ns/unwind" "x a hand-off" "x a clock read"
for d in 1 2 4 8 16 32; do
	v=${CAP[$d]:-}
	is_num "$v" || { printf '%8s %s\n' "$d" unavailable; continue; }
	printf '%8s %8s %12.1f %14.2f %16.1f\n' "$d" "${FRAMES[$d]}" "$v" \
		"$(calc "$v / $HANDOFF")" "$(calc "$v / $CLOCK_TSC")"
done
printf 'a contended hand-off (futex wake to woken thread): %.1f ns; a clock read (rdtsc): %.2f ns\n' \
	"$HANDOFF" "$CLOCK_TSC"
is_num "${CAP[8]:-}" && is_num "${CAP[1]:-}" &&
	printf 'each frame past the first: about %.0f ns\n' "$(calc "(${CAP[8]} - ${CAP[1]}) / 7")"
echo
echo "uncontended path: ns per mutex lock+unlock pair (best of $REPS medians of 5 rounds of 1000000)"
printf '  bare %s   record --stack 0: %s   record --stack 4: %s\n' "${PAIR_BARE:--}" "${PAIR_S0:--}" \
	"${PAIR_S4:--}"
echo
machine_line
load_line
echo "commands (in a temp dir): SHIMTRACE_STACK_DEPTH=32 LD_PRELOAD=libshimtrace.so ./stackcost 40 5;" \
	"./mutex-pairs 1000000 5; shimtrace record --stack 0|4 -- ./mutex-pairs 1000000 5"
exit 0
