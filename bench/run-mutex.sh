#!/usr/bin/env bash
# run-mutex.sh: ns per uncontended pthread_mutex_lock+unlock pair (or,
# --family malloc, per malloc(32)+free pair), side by side: bare, shimtrace
# preloaded but dormant, shimtrace recording, and LTTng-UST's pthread
# wrapper (libc wrapper) recording (default buffers and 8 x 8 MiB).
#
# Usage: bench/run-mutex.sh [--family pthread|malloc] [--pairs N] [--rounds R]
#                           [--reps K] [--build DIR]
#
#   --family F   the pairs: pthread (lock+unlock, the default) or malloc
#                (malloc+free, against LTTng-UST's libc wrapper)
#   --pairs N    pairs per round (default 1000000)
#   --rounds R   timed rounds per run; a run reports its median (default 5)
#   --reps K     runs per configuration; the best median is shown (default 3)
#   --build DIR  build directory holding core/, wrappers/ and ctl/ (default .)
#
# Environment: SHIMTRACE_BIN (the CLI, default DIR/ctl/shimtrace) and
# SHIMTRACE_LIBDIR (one directory holding libshimtrace.so and
# libshimtrace-pthread.so and libshimtrace-malloc.so, for an installed
# shimtrace); CC (default cc).
#
# This is a benchmark, not a test: it always exits 0 once it has printed
# its table, whatever the numbers; rows that cannot run say why.

BENCH=run-mutex.sh
FAMILY=pthread
PAIRS=1000000
ROUNDS=5
REPS=3
# shellcheck source=bench/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh" || exit 2

USAGE=7,20
bench_args family:FAMILY:text pairs:PAIRS:count rounds:ROUNDS:count reps:REPS:count -- "$@"
# The family: the program's mode, shimtrace's library and --wrap, the
# LTTng-UST wrapper and its events, and what interposed calls resolve to.
case $FAMILY in
pthread)
	MODE=() FAMILY_LIB=$PTHREAD_LIB WHAT=pthread_mutex_lock WRAPPER_NAME="pthread wrapper"
	;;
malloc)
	MODE=(--malloc) FAMILY_LIB=$(dirname "$PTHREAD_LIB")/libshimtrace-malloc.so WHAT=malloc
	WRAPPER_NAME="libc wrapper"
	lttng_wrapper liblttng-ust-libc-wrapper.so 'lttng_ust_libc:*'
	;;
*) die "bad --family '$FAMILY' (pthread or malloc)" ;;
esac
bench_start mutex-pairs
PROG=$TMP/mutex-pairs
mkdir "$TMP/empty-rundir"

# Results, by configuration key.
declare -A BEST=() BEST_EVENTS=() WHY=() CMD=() RUNS=() WARN=()
KEYS=(bare disabled record lttng-default lttng-big)
declare -A LABEL=(
	[bare]="bare (no preload)"
	[disabled]="shimtrace preloaded, disabled"
	[record]="shimtrace recording"
	[lttng-default]="lttng-ust $WRAPPER_NAME"
	[lttng-big]="lttng-ust $WRAPPER_NAME"
)
declare -A CONFIG=([lttng-default]="default buffers" [lttng-big]="8x8M subbuf")

# note_run KEY NS EVENTS: keep NS if it is KEY's best so far.
note_run() {
	local key=$1 ns=$2 events=$3
	if [[ ! $ns =~ ^[0-9]+(\.[0-9]+)?$ ]]; then
		WHY[$key]="unavailable (no ns_per_pair in the output)"
		return
	fi
	RUNS[$key]+="${RUNS[$key]:+, }$ns${events:+ ($events)}"
	if [[ -z ${BEST[$key]:-} ]] || (($(calc "$ns < ${BEST[$key]}"))); then
		BEST[$key]=$ns
		BEST_EVENTS[$key]=$events
	fi
}

# ---- configuration 1: bare ----
run_bare() {
	CMD[bare]=$(quoted ./mutex-pairs "${MODE[@]}" "$PAIRS" "$ROUNDS")
	if ! "$PROG" "${MODE[@]}" "$PAIRS" "$ROUNDS" >out 2>err; then
		WHY[bare]="unavailable ($(last_line err))"
		return
	fi
	note_run bare "$(field ns_per_pair out)" ""
}

# ---- configuration 2: shimtrace preloaded, no daemon to find ----
run_disabled() {
	local impl preload=$CORE_LIB:$FAMILY_LIB
	CMD[disabled]="SHIMTRACE_RUNDIR=$(quoted "$TMP/empty-rundir") LD_PRELOAD=$(quoted "$preload") ${CMD[bare]}"
	if [[ ! -f $CORE_LIB || ! -f $FAMILY_LIB ]]; then
		WHY[disabled]="unavailable (no $( [[ -f $CORE_LIB ]] && echo "$FAMILY_LIB" || echo "$CORE_LIB"))"
		return
	fi
	if ! env -u SHIMTRACE_DISABLE SHIMTRACE_RUNDIR="$TMP/empty-rundir" LD_PRELOAD="$preload" \
		"$PROG" "${MODE[@]}" "$PAIRS" "$ROUNDS" >out 2>err; then
		WHY[disabled]="unavailable ($(last_line err))"
		return
	fi
	impl=$(field impl out)
	[[ $impl == *shimtrace* ]] || WARN[disabled]="$WHAT was not interposed (impl=$impl)"
	note_run disabled "$(field ns_per_pair out)" ""
}

# shimtrace_events DIR: "recorded/lost" for a shimtrace trace, from
# `shimtrace view` when it exists, else from the summary that `shimtrace
# record` printed (in file err); "?" where unknown.
shimtrace_events() {
	local dir=$1 recorded='?' lost='?' line n
	# The last line with "<number> events" (a later hint may say "events").
	line=$(grep -iE '[0-9]+[[:space:]]*events?' err | tail -n 1)
	if [[ -n $line ]]; then
		n=$(grep -oiE '[0-9]+[[:space:]]*(events?|recorded)' <<<"$line" | head -n 1 | grep -oE '[0-9]+')
		[[ -n $n ]] && recorded=$n
		n=$(grep -oiE '[0-9]+[[:space:]]*(events?[[:space:]]*)?(lost|dropped|discarded)|(lost|dropped|discarded)[^0-9]*[0-9]+' <<<"$line" |
			head -n 1 | grep -oE '[0-9]+')
		[[ -n $n ]] && lost=$n
	fi
	if n=$("$SHIMTRACE" view "$dir" 2>/dev/null | wc -l) && ((n > 0)); then
		recorded=$n
	fi
	printf '%s/%s' "$recorded" "$lost"
}

# ---- configuration 3: shimtrace record ----
run_record() {
	local dir=$TMP/shimtrace-trace rc impl ns
	CMD[record]="$(quoted "$SHIMTRACE" record --wrap "$FAMILY" -o "$dir" --) ${CMD[bare]}"
	if [[ ! -x $SHIMTRACE ]]; then
		WHY[record]="unavailable (no shimtrace CLI at $SHIMTRACE)"
		return
	fi
	rm -rf "$dir"
	env -u SHIMTRACE_RUNDIR -u SHIMTRACE_DISABLE \
		"$SHIMTRACE" record --wrap "$FAMILY" -o "$dir" -- ./mutex-pairs "${MODE[@]}" "$PAIRS" "$ROUNDS" >out 2>err
	rc=$?
	ns=$(cat out err | sed -n 's/.*ns_per_pair=\([0-9.]*\).*/\1/p' | head -n 1)
	if ((rc != 0)); then
		WHY[record]="unavailable (record exited $rc: $(last_line err))"
		return
	fi
	if [[ -z $ns ]]; then
		WHY[record]="unavailable (no ns_per_pair in its output)"
		return
	fi
	impl=$(cat out err | sed -n 's/.*ns_per_pair=.* impl=\([^ ]*\).*/\1/p' | head -n 1)
	[[ $impl == *shimtrace* ]] || WARN[record]="$WHAT was not interposed (impl=$impl)"
	note_run record "$ns" "$(shimtrace_events "$dir")"
	unset 'WHY[record]'
	rm -rf "$dir"
}

# ---- configuration 4: LTTng-UST pthread wrapper ----
run_lttng() {
	local key=$1 rep=$2 dir=$TMP/lttng-trace ns recorded
	local -a chan=()
	[[ $key == lttng-big ]] && chan=(8M 8)
	CMD[$key]="$(lttng_up_shown "${chan[@]}"); $LTTNG_ENV_SHOWN ${CMD[bare]}; lttng stop S; lttng destroy S"
	if [[ -n ${LTTNG_SKIP:-} ]]; then
		WHY[$key]=$LTTNG_SKIP
		return
	fi
	if ! lttng_up "shimtrace-bench-$$-$key-$rep" "$dir" "${chan[@]}"; then
		WHY[$key]="unavailable ($(last_line lttng.log))"
	elif ! env "${LTTNG_ENV[@]}" "$PROG" "${MODE[@]}" "$PAIRS" "$ROUNDS" >out 2>err; then
		WHY[$key]="unavailable ($(last_line err))"
	fi
	lttng_down
	[[ -n ${WHY[$key]:-} ]] && return

	ns=$(field ns_per_pair out)
	[[ $(field impl out) == *lttng* ]] || WARN[$key]="$WHAT was not interposed (impl=$(field impl out))"
	recorded=$(lttng_count "$dir")
	[[ $recorded == 0 ]] && WARN[$key]="LTTng recorded no event"
	note_run "$key" "$ns" "$recorded/$(lttng_lost)"
	rm -rf "$dir"
}

# ---- run: configurations interleaved, REPS times ----
lttng_setup

for ((rep = 1; rep <= REPS; rep++)); do
	for key in "${KEYS[@]}"; do
		echo "run $rep/$REPS: ${LABEL[$key]}${CONFIG[$key]:+ (${CONFIG[$key]})}" >&2
		case $key in
		bare) run_bare ;;
		disabled) run_disabled ;;
		record) run_record ;;
		lttng-*) run_lttng "$key" "$rep" ;;
		esac
	done
done

# ---- report ----
ust_version=$(ust_version)
if [[ -n $ust_version ]]; then
	LABEL[lttng-default]="lttng-ust $ust_version $WRAPPER_NAME"
	LABEL[lttng-big]="lttng-ust $ust_version $WRAPPER_NAME"
fi

bare=${BEST[bare]:-}
echo
printf '%-38s %9s %9s   %s\n' configuration ns/pair "vs bare" "events recorded/lost"
for key in "${KEYS[@]}"; do
	if [[ -z ${BEST[$key]:-} ]]; then
		printf '%-38s %s\n' "${LABEL[$key]}" "${WHY[$key]:-unavailable}"
		continue
	fi
	ratio=-
	if [[ -n $bare ]]; then
		if (($(calc "${BEST[$key]} < 10 * $bare"))); then
			ratio=$(fmt '%.2fx' "${BEST[$key]} / $bare")
		else
			ratio=$(fmt '%.1fx' "${BEST[$key]} / $bare")
		fi
	fi
	events=${BEST_EVENTS[$key]:--}
	[[ -n ${CONFIG[$key]:-} ]] && events+=" (${CONFIG[$key]})"
	printf '%-38s %9.2f %9s   %s\n' "${LABEL[$key]}" "${BEST[$key]}" "$ratio" "$events"
done

lttng_ref=
for key in lttng-big lttng-default; do
	if [[ -n ${BEST[$key]:-} ]]; then
		lttng_ref=$key
		break
	fi
done
if [[ -n ${BEST[record]:-} && -n $lttng_ref ]]; then
	printf -- '-> shimtrace recording is %s faster per pair than lttng-ust (%s)\n' \
		"$(fmt '%.1fx' "${BEST[$lttng_ref]} / ${BEST[record]}")" "${CONFIG[$lttng_ref]}"
	for key in record "$lttng_ref"; do
		lost=${BEST_EVENTS[$key]#*/}
		[[ $lost == 0 ]] ||
			echo "   (${LABEL[$key]}: ${lost} events lost or unknown in that run; compare with care)"
	done
else
	echo "-> shimtrace vs lttng-ust: not compared (a recording row is unavailable)"
fi
if [[ -n $bare && -n ${BEST[disabled]:-} ]]; then
	per_call=$(calc "(${BEST[disabled]} - $bare) / 2")
	verdict=within
	(($(calc "$per_call <= 2"))) || verdict=ABOVE
	printf -- '-> disabled overhead: (%.2f - %.2f) / 2 = %.2f ns per call (%s the 2 ns target)\n' \
		"${BEST[disabled]}" "$bare" "$per_call" "$verdict"
fi

echo
echo "best of $REPS runs; each run reports the median of $ROUNDS rounds of $PAIRS pairs"
for key in "${KEYS[@]}"; do
	[[ -n ${RUNS[$key]:-} ]] && echo "  ${key} runs: ${RUNS[$key]}"
	[[ -n ${WARN[$key]:-} ]] && echo "  WARNING ${key}: ${WARN[$key]}"
done
if [[ $FAMILY == malloc ]]; then
	echo "  lttng events: 2 per pair (malloc, free), warm-up included; lost = discarded count from 'lttng stop'"
else
	echo "  lttng events: 3 per pair (lock_req, lock_acq, unlock), warm-up included; lost = discarded count from 'lttng stop'"
fi

echo
machine_line
echo "program: ${COMPILE_SHOWN//PROG/mutex-pairs}"
echo "commands (run in a temp dir):"
for key in "${KEYS[@]}"; do
	echo "  ${key}: ${CMD[$key]}"
done
exit 0
