#!/usr/bin/env bash
# run-mutex.sh: ns per uncontended pthread_mutex_lock+unlock pair (or per
# malloc(32)+free pair, pthread_rwlock_rdlock+unlock pair, or write() of 8
# bytes to /dev/null: see --family), side by side: bare, shimtrace
# preloaded but dormant, shimtrace recording, and LTTng-UST's matching
# preload wrapper in a started session (default buffers and 8 x 8 MiB).
#
# Usage: bench/run-mutex.sh [--family F] [--pairs N] [--rounds R] [--reps K]
#                           [--buffers K] [--build DIR]
#
#   --family F   what a run times, and against which LTTng-UST wrapper:
#                  pthread  mutex lock+unlock pairs (the default);
#                           LTTng's pthread wrapper
#                  malloc   malloc(32)+free pairs; LTTng's libc wrapper
#                  rwlock   rwlock rdlock+unlock pairs, shimtrace --wrap
#                           pthread; LTTng's pthread wrapper wraps no
#                           rwlock call: its row is its dormant cost
#                  io       write() of 8 bytes to /dev/null, shimtrace
#                           --wrap io; LTTng has no write event: its row
#                           is the libc wrapper's preload cost only
#                  io-stub  as io, but write() is a stub that does not
#                           enter the kernel (bench/stubwrite.c, preloaded
#                           below every wrapper): the wrapper's own cost,
#                           without a system call's drift and cold TLB
#                  syscall  syscall(SYS_getppid), shimtrace --wrap futex:
#                           a number the family passes on unrecorded (its
#                           cost must not show); LTTng has no syscall()
#                           wrapper: its row is the libc wrapper's
#                           preload cost only
#                  futex    syscall(SYS_futex, FUTEX_WAKE_PRIVATE) on a
#                           word nobody waits on, shimtrace --wrap futex:
#                           one event a call; LTTng as for syscall
#   --pairs N    calls (pairs, or writes) per round (default 1000000;
#                io: 20000; io-stub: 10000000)
#   --rounds R   timed rounds per run; a run reports its median (default 5;
#                io: 41)
#   --reps K     runs per configuration; the best median is shown (default
#                3; io: 5)
#   --buffers K  shimtrace record --buffers K (per-process, the default, or
#                per-process: doc/percpu.md)
#   --build DIR  build directory holding core/, wrappers/ and ctl/ (default .)
#
# Each run also times a read of the trace clock (bench/clockread.c: rdtsc
# where the CPU's TSC is constant and non-stop, else clock_gettime), the
# least any event costs, and the report gives recording's cost in clock
# reads (the target: within 1.5 of the untraced call).
#
# Environment: SHIMTRACE_BIN (the CLI, default DIR/ctl/shimtrace) and
# SHIMTRACE_LIBDIR (one directory holding libshimtrace.so and the
# libshimtrace-FAMILY.so wrappers, for an installed shimtrace); CC
# (default cc).
#
# This is a benchmark, not a test: it always exits 0 once it has printed
# its table, whatever the numbers; rows that cannot run say why.

BENCH=run-mutex.sh
FAMILY=pthread
# (empty: the family's default, set below)
PAIRS=
ROUNDS=
REPS=
# shellcheck source=bench/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh" || exit 2

USAGE=8,34
bench_args family:FAMILY:text pairs:PAIRS:count rounds:ROUNDS:count reps:REPS:count \
	buffers:BUFFERS:text -- "$@"
case ${BUFFERS:=per-process} in
per-thread | per-process) ;;
*) die "bad --buffers '$BUFFERS' (per-thread or per-process)" ;;
esac

# The family: the program's mode; shimtrace's wrapper library and --wrap;
# the call impl= names and the calls in one pair (CALLS, for the per-call
# columns); the LTTng-UST wrapper, its events and how many it writes a
# pair (LTTNG_PER_PAIR), or, when it wraps none of these calls, what its
# row shows instead (LTTNG_NONE, empty when it records them); and the
# defaults. A write() to /dev/null costs about 1.2 to 1.8 us on the shared
# VM, and that cost drifts with the other work: many short rounds, whose
# median leaves out the rounds other work hit, and more runs.
LTTNG_NONE=
# io, io-stub: a row for an empty forwarding write() wrapper (FORWARD).
FORWARD=
# io-stub: the preloaded stub write() every configuration runs on, and
# the object the --ref calls must resolve to.
STUB=
REF_IMPL='libc*'
# (the object the unwrapped call resolves to: the --ref calls' by default)
LIBC_IMPL=
case $FAMILY in
pthread)
	MODE=() WRAP=pthread WHAT=pthread_mutex_lock UNIT=pair CALLS=2
	LTTNG_PER_PAIR=3 LTTNG_EVENTS_ARE="lock_req, lock_acq, unlock"
	;;
malloc)
	MODE=(--malloc) WRAP=malloc WHAT=malloc UNIT=pair CALLS=2
	lttng_wrapper liblttng-ust-libc-wrapper.so 'lttng_ust_libc:*'
	LTTNG_PER_PAIR=2 LTTNG_EVENTS_ARE="malloc, free"
	;;
rwlock)
	MODE=(--rwlock) WRAP=pthread WHAT=pthread_rwlock_rdlock UNIT=pair CALLS=2
	LTTNG_NONE="wraps no rwlock call: its dormant cost"
	;;
io)
	MODE=(--write --bytes 8) WRAP=io WHAT=write UNIT=write CALLS=1
	lttng_wrapper liblttng-ust-libc-wrapper.so 'lttng_ust_libc:*'
	LTTNG_NONE="no write event: its preload cost only"
	FORWARD=yes
	: "${PAIRS:=20000}" "${ROUNDS:=41}" "${REPS:=5}"
	;;
io-stub)
	MODE=(--write --bytes 8) WRAP=io WHAT=write UNIT=write CALLS=1
	lttng_wrapper liblttng-ust-libc-wrapper.so 'lttng_ust_libc:*'
	LTTNG_NONE="no write event: its preload cost only"
	STUB=yes REF_IMPL='stubwrite*' FORWARD=yes
	: "${PAIRS:=10000000}"
	;;
syscall | futex)
	MODE=(--"$FAMILY") WRAP=futex WHAT=syscall UNIT=call CALLS=1
	lttng_wrapper liblttng-ust-libc-wrapper.so 'lttng_ust_libc:*'
	LTTNG_NONE="no syscall() wrapper: its preload cost only"
	# (the --ref rounds make the system call inline: mutex-pairs's own)
	REF_IMPL='mutex-pairs*' LIBC_IMPL='libc*'
	EVENTS_PER_CALL=$([[ $FAMILY == futex ]] && echo 1 || echo 0)
	: "${PAIRS:=200000}" "${ROUNDS:=11}"
	;;
*) die "bad --family '$FAMILY' (pthread, malloc, rwlock, io, io-stub, syscall or futex)" ;;
esac
: "${PAIRS:=1000000}" "${ROUNDS:=5}" "${REPS:=3}"
# (next to the pthread wrapper, wherever bench_paths found that)
FAMILY_LIB=$(dirname "$PTHREAD_LIB")/libshimtrace-$WRAP.so
case $LTTNG_WRAPPER in
*pthread*) WRAPPER_NAME="pthread wrapper" ;;
*) WRAPPER_NAME="libc wrapper" ;;
esac
# What each run gives the program: the family's mode, --ref (a reference
# round of unwrapped libc calls beside each round, for the in-process
# column), the calls per round and the rounds.
ARGS=("${MODE[@]}" --ref "$PAIRS" "$ROUNDS")

bench_start mutex-pairs clockread
PROG=$TMP/mutex-pairs
mkdir "$TMP/empty-rundir"
if [[ -n $STUB ]]; then
	"${CC:-cc}" -O2 -shared -fPIC -o "$TMP/stubwrite.so" "$HERE/stubwrite.c" ||
		die "cannot compile $HERE/stubwrite.c"
	STUB=$TMP/stubwrite.so
	LTTNG_ENV[0]+=":$STUB"
	LTTNG_ENV_SHOWN=${LTTNG_ENV_SHOWN/LD_PRELOAD=$LTTNG_WRAPPER/LD_PRELOAD=$LTTNG_WRAPPER:stubwrite.so}
fi
if [[ -n $FORWARD ]]; then
	"${CC:-cc}" -O2 -shared -fPIC -o "$TMP/forwardwrite.so" "$HERE/forwardwrite.c" -ldl ||
		die "cannot compile $HERE/forwardwrite.c"
fi

# Results, by configuration key: the best median (BEST) and the events of
# that run, every run's median, over_ref and events (RUNS), and the
# over_ref of each run (OVER, "KEY,REP"), whose median is shown.
declare -A BEST=() BEST_EVENTS=() WHY=() CMD=() RUNS=() WARN=() OVER=()
KEYS=(bare disabled record lttng-default)
[[ -n $FORWARD ]] && KEYS=(bare forward disabled record lttng-default)
# A channel big enough for every event matters only when LTTng writes some.
[[ -z $LTTNG_NONE ]] && KEYS+=(lttng-big)
declare -A LABEL=(
	[bare]="bare (no preload)"
	[forward]="an empty forwarding write() preloaded (the floor)"
	[disabled]="shimtrace preloaded, disabled"
	[record]="shimtrace recording$([[ $BUFFERS == per-process ]] && echo " (per-process)")"
	[lttng-default]="lttng-ust $WRAPPER_NAME"
	[lttng-big]="lttng-ust $WRAPPER_NAME"
)
declare -A CONFIG=([lttng-default]="default buffers" [lttng-big]="8x8M subbuf")

# note_run KEY REP: keep the run's median (ns_per_UNIT in out) if it is
# KEY's best so far, with EVENTS (recorded/lost, or empty); its over_ref.
note_run() {
	local key=$1 rep=$2 events=$3 ns over
	ns=$(out_field "ns_per_$UNIT")
	# (out_field takes no sign, and over_ref can be below 0)
	over=$(out_field_text over_ref)
	if ! is_num "$ns"; then
		WHY[$key]="unavailable (no ns_per_$UNIT in the output)"
		return
	fi
	is_num "$over" && OVER[$key,$rep]=$over
	# (the reference calls must bypass every wrapper, or over_ref is 0)
	# shellcheck disable=SC2053 # REF_IMPL is a glob on purpose
	[[ $(out_field_text ref_impl) == $REF_IMPL ]] ||
		WARN[$key]+="${WARN[$key]:+; }the --ref calls resolved to $(out_field_text ref_impl), not $REF_IMPL"
	RUNS[$key]+="${RUNS[$key]:+, }$ns/${over:-?}${events:+ ($events)}"
	if [[ -z ${BEST[$key]:-} ]] || (($(calc "$ns < ${BEST[$key]}"))); then
		BEST[$key]=$ns
		BEST_EVENTS[$key]=$events
	fi
}

# check_impl KEY PATTERN: a warning unless the run's impl= matches PATTERN.
check_impl() {
	local impl
	impl=$(out_field_text impl)
	# shellcheck disable=SC2053 # PATTERN is a glob on purpose
	[[ $impl == $2 ]] || WARN[$1]="$WHAT resolved to $impl, expected $2"
}

# out_field_text NAME: the value NAME=... (any text) the run printed.
out_field_text() {
	cat out err 2>/dev/null | sed -n "s/.*\\b$1=\\([^ ]*\\).*/\\1/p" | head -n 1
}

# check_count KEY EVENTS PER_PAIR: a warning when EVENTS (recorded/lost)
# add up to fewer than PER_PAIR events for each timed call pair: the tracer
# did not see all of the program.
check_count() {
	local rec=${2%%/*} lost=${2#*/} min=$(($3 * PAIRS * ROUNDS))
	is_count "$rec" && [[ $lost =~ ^[0-9]+$ ]] || return 0
	((rec + lost >= min)) ||
		WARN[$1]+="${WARN[$1]:+; }$rec recorded + $lost lost < $min expected"
}

# ---- configuration 1: bare ----
run_bare() {
	CMD[bare]=$(quoted ./mutex-pairs "${ARGS[@]}")
	if ! env ${STUB:+LD_PRELOAD="$STUB"} "$PROG" "${ARGS[@]}" >out 2>err; then
		WHY[bare]="unavailable ($(last_line err))"
		return
	fi
	check_impl bare "${LIBC_IMPL:-$REF_IMPL}"
	note_run bare "$1" ""
}

# ---- configuration 1b: the least a preloaded wrapper can be ----
run_forward() {
	local preload=$TMP/forwardwrite.so${STUB:+:$STUB}
	CMD[forward]="LD_PRELOAD=forwardwrite.so${STUB:+:stubwrite.so} ${CMD[bare]}"
	if ! env LD_PRELOAD="$preload" "$PROG" "${ARGS[@]}" >out 2>err; then
		WHY[forward]="unavailable ($(last_line err))"
		return
	fi
	check_impl forward 'forwardwrite*'
	note_run forward "$1" ""
}

# ---- configuration 2: shimtrace preloaded, no daemon to find ----
run_disabled() {
	local preload=$CORE_LIB:$FAMILY_LIB${STUB:+:$STUB}
	CMD[disabled]="SHIMTRACE_RUNDIR=$(quoted "$TMP/empty-rundir") LD_PRELOAD=$(quoted "$preload") ${CMD[bare]}"
	if [[ ! -f $CORE_LIB || ! -f $FAMILY_LIB ]]; then
		WHY[disabled]="unavailable (no $( [[ -f $CORE_LIB ]] && echo "$FAMILY_LIB" || echo "$CORE_LIB"))"
		return
	fi
	if ! env -u SHIMTRACE_DISABLE SHIMTRACE_RUNDIR="$TMP/empty-rundir" LD_PRELOAD="$preload" \
		"$PROG" "${ARGS[@]}" >out 2>err; then
		WHY[disabled]="unavailable ($(last_line err))"
		return
	fi
	check_impl disabled '*shimtrace*'
	note_run disabled "$1" ""
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
	local dir=$TMP/shimtrace-trace rc events
	CMD[record]="$(quoted "$SHIMTRACE" record --wrap "$WRAP" --buffers "$BUFFERS" -o "$dir" --) ${CMD[bare]}"
	if [[ ! -x $SHIMTRACE ]]; then
		WHY[record]="unavailable (no shimtrace CLI at $SHIMTRACE)"
		return
	fi
	rm -rf "$dir"
	if [[ -n $STUB ]]; then
		# the stub for the program only, after the libraries record
		# preloads (not for record, nor a daemon it starts)
		CMD[record]="$(quoted "$SHIMTRACE" record --wrap "$WRAP" --buffers "$BUFFERS" -o "$dir" --) sh -c 'LD_PRELOAD=\$LD_PRELOAD:stubwrite.so exec \"\$@\"' sh ${CMD[bare]}"
		env -u SHIMTRACE_RUNDIR -u SHIMTRACE_DISABLE \
			"$SHIMTRACE" record --wrap "$WRAP" --buffers "$BUFFERS" -o "$dir" -- \
			sh -c 'LD_PRELOAD=$LD_PRELOAD:'"$STUB"' exec "$@"' sh ./mutex-pairs "${ARGS[@]}" >out 2>err
	else
		env -u SHIMTRACE_RUNDIR -u SHIMTRACE_DISABLE \
			"$SHIMTRACE" record --wrap "$WRAP" --buffers "$BUFFERS" -o "$dir" -- ./mutex-pairs "${ARGS[@]}" >out 2>err
	fi
	rc=$?
	if ((rc != 0)); then
		WHY[record]="unavailable (record exited $rc: $(last_line err))"
		return
	fi
	check_impl record '*shimtrace*'
	events=$(shimtrace_events "$dir")
	# every family's wrapper writes 2 events a pair (or a write: its
	# write_begin and write; a futex wake 1, a getppid none)
	check_count record "$events" "${EVENTS_PER_CALL:-2}"
	note_run record "$1" "$events"
	rm -rf "$dir"
}

# ---- configuration 4: LTTng-UST's wrapper in a started session ----
run_lttng() {
	local key=$1 rep=$2 dir=$TMP/lttng-trace events
	local -a chan=()
	[[ $key == lttng-big ]] && chan=(8M 8)
	CMD[$key]="$(lttng_up_shown "${chan[@]}"); $LTTNG_ENV_SHOWN ${CMD[bare]}; lttng stop S; lttng destroy S"
	if [[ -n ${LTTNG_SKIP:-} ]]; then
		WHY[$key]=$LTTNG_SKIP
		return
	fi
	if ! lttng_up "shimtrace-bench-$$-$key-$rep" "$dir" "${chan[@]}"; then
		WHY[$key]="unavailable ($(last_line lttng.log))"
	elif ! env "${LTTNG_ENV[@]}" "$PROG" "${ARGS[@]}" >out 2>err; then
		WHY[$key]="unavailable ($(last_line err))"
	fi
	lttng_down
	[[ -n ${WHY[$key]:-} ]] && return

	events="$(lttng_count "$dir")/$(lttng_lost)"
	if [[ -n $LTTNG_NONE ]]; then
		# LTTng wraps none of the timed calls: they go to libc.
		check_impl "$key" "${LIBC_IMPL:-$REF_IMPL}"
	else
		check_impl "$key" '*lttng*'
		check_count "$key" "$events" "$LTTNG_PER_PAIR"
	fi
	note_run "$key" "$rep" "$events"
	rm -rf "$dir"
}

# ---- run: configurations interleaved, REPS times ----
lttng_setup

# A clock read, the floor of any event (bench_clock_read), each rep among
# the configurations' runs: the best of the reps.
for ((rep = 1; rep <= REPS; rep++)); do
	echo "run $rep/$REPS: clock reads" >&2
	bench_clock_read
	for key in "${KEYS[@]}"; do
		echo "run $rep/$REPS: ${LABEL[$key]}${CONFIG[$key]:+ (${CONFIG[$key]})}" >&2
		case $key in
		bare) run_bare "$rep" ;;
		forward) run_forward "$rep" ;;
		disabled) run_disabled "$rep" ;;
		record) run_record "$rep" ;;
		lttng-*) run_lttng "$key" "$rep" ;;
		esac
	done
done

# ---- report ----
ust_version=$(ust_version)
for key in lttng-default lttng-big; do
	LABEL[$key]="lttng-ust${ust_version:+ $ust_version} $WRAPPER_NAME${LTTNG_NONE:+ ($LTTNG_NONE)}"
done

# MED_OVER[KEY]: the median over_ref of KEY's runs.
declare -A MED_OVER=()
for key in "${KEYS[@]}"; do
	MED_OVER[$key]=$(for ((rep = 1; rep <= REPS; rep++)); do
		[[ -n ${OVER[$key,$rep]:-} ]] && echo "${OVER[$key,$rep]}"
	done | median)
done

# added KEY: KEY's best median minus bare's, per call; empty if missing.
added() {
	if is_num "${BEST[$1]:-}" && is_num "${BEST[bare]:-}"; then
		calc "(${BEST[$1]} - ${BEST[bare]}) / $CALLS"
	fi
}

# added_in KEY: KEY's median over_ref minus bare's, per call.
added_in() {
	if is_num "${MED_OVER[$1]:-}" && is_num "${MED_OVER[bare]:-}"; then
		calc "(${MED_OVER[$1]} - ${MED_OVER[bare]}) / $CALLS"
	fi
}

# num2 VALUE: "%.2f", or "-" when missing.
num2() {
	if is_num "${1:-}"; then fmt '%.2f' "$1"; else printf -- -; fi
}

width=13
for key in "${KEYS[@]}"; do
	((${#LABEL[$key]} > width)) && width=${#LABEL[$key]}
done
bare=${BEST[bare]:-}
echo
printf "%-${width}s %9s %8s %13s %13s %15s   %s\n" configuration "ns/$UNIT" "vs bare" \
	"added ns/call" "in-proc added" "LTTng/shimtrace" "events recorded/lost"
for key in "${KEYS[@]}"; do
	if [[ -z ${BEST[$key]:-} ]]; then
		printf "%-${width}s %s\n" "${LABEL[$key]}" "${WHY[$key]:-unavailable}"
		continue
	fi
	cmp=-
	if [[ $key == lttng-* && -z $LTTNG_NONE ]]; then
		cmp=$(ratio "$(added "$key")" "$(added record)")
	elif [[ $key == lttng-* ]]; then
		cmp="n/a"
	fi
	events=${BEST_EVENTS[$key]:--}
	[[ -n ${CONFIG[$key]:-} ]] && events+=" (${CONFIG[$key]})"
	printf "%-${width}s %9.2f %8s %13s %13s %15s   %s\n" "${LABEL[$key]}" "${BEST[$key]}" \
		"$(ratio "${BEST[$key]}" "$bare")" "$(num2 "$(added "$key")")" \
		"$(num2 "$(added_in "$key")")" "$cmp" "$events"
done

lttng_ref=
for key in lttng-big lttng-default; do
	if [[ -n ${BEST[$key]:-} ]]; then
		lttng_ref=$key
		break
	fi
done
if [[ -n $LTTNG_NONE ]]; then
	echo "-> shimtrace vs lttng-ust: not compared (lttng-ust's $WRAPPER_NAME: $LTTNG_NONE)"
elif [[ -n ${BEST[record]:-} && -n $lttng_ref ]]; then
	printf -- '-> recording adds %s ns per call with shimtrace, %s with lttng-ust (%s): %s less (in-process: %s, %s: %s)\n' \
		"$(num2 "$(added record)")" "$(num2 "$(added "$lttng_ref")")" "${CONFIG[$lttng_ref]}" \
		"$(ratio "$(added "$lttng_ref")" "$(added record)")" "$(num2 "$(added_in record)")" \
		"$(num2 "$(added_in "$lttng_ref")")" "$(ratio "$(added_in "$lttng_ref")" "$(added_in record)")"
	echo "   (target: shimtrace's added cost at least 4x below lttng-ust's)"
	for key in record "$lttng_ref"; do
		lost=${BEST_EVENTS[$key]#*/}
		[[ $lost == 0 ]] ||
			echo "   (${LABEL[$key]}: ${lost} events lost or unknown in that run; compare with care)"
	done
else
	echo "-> shimtrace vs lttng-ust: not compared (a recording row is unavailable)"
fi
# Recording against the clock read: an event reads the clock once.
if [[ -n $CLOCK_TSC && -n ${BEST[record]:-} ]]; then
	clk=$CLOCK_TRACE
	echo "-> $(clock_text);"
	printf -- '   recording adds %s clock reads a call (in-process %s; target: within 1.5)\n' \
		"$(num2 "$(calc "$(added record) / $clk")")" \
		"$(is_num "$(added_in record)" && num2 "$(calc "$(added_in record) / $clk")" || printf -)"
	# (issue 23 measured "a clock read" at 15 to 20 ns here: clock_gettime's
	# cost, not rdtsc's; both are given)
	[[ $TRACE_CLOCK == rdtsc ]] &&
		printf -- '   or %s reads of clock_gettime (%s ns)\n' \
			"$(num2 "$(calc "$(added record) / $CLOCK_MONO")")" "$(num2 "$CLOCK_MONO")"
fi
# verdict VALUE: VALUE (ns a call) against the dormant target, 2 ns.
verdict() {
	if ! is_num "$1"; then
		printf 'not measured'
	elif (($(calc "$1 < 0"))); then
		printf 'below bare: noise, within'
	elif (($(calc "$1 <= 2"))); then
		printf 'within'
	else
		printf 'ABOVE'
	fi
}
if [[ -n $STUB ]]; then
	echo "-> write() is a stub that does not enter the kernel (stubwrite.so, preloaded last): the"
	echo "   rows time the wrappers themselves; run --family io for the real system call"
fi
if [[ -n $bare && -n ${BEST[disabled]:-} ]]; then
	printf -- '-> disabled overhead: (%.2f - %.2f) / %s = %s ns per call (%s the 2 ns target); in-process %s (%s)\n' \
		"${BEST[disabled]}" "$bare" "$CALLS" "$(num2 "$(added disabled)")" "$(verdict "$(added disabled)")" \
		"$(num2 "$(added_in disabled)")" "$(verdict "$(added_in disabled)")"
fi
if [[ -n ${BEST[forward]:-} && -n ${BEST[disabled]:-} ]]; then
	printf -- '-> disabled over the empty forwarder: %s ns per call, in-process %s (what the\n' \
		"$(num2 "$(calc "$(added disabled) - $(added forward)")")" \
		"$(num2 "$(calc "$(added_in disabled) - $(added_in forward)")")"
	echo "   tracepoint's load and branch add to the least any preloaded wrapper costs)"
fi

echo
echo "best of $REPS runs; each run reports the median of $ROUNDS rounds of $PAIRS ${UNIT}s"
echo "  added ns/call: (best median - bare's) / $CALLS calls a $UNIT"
echo "  in-proc added: each round is paired with one of the same calls made to libc's own"
echo "  functions in the same process (mutex-pairs --ref); the median of the rounds'"
echo "  differences (over_ref), median of the runs, minus bare's, / $CALLS: what the wrapper"
echo "  adds to a call, without the drift between runs (but also without what the tracer"
echo "  costs the whole process, such as its threads)"
echo "  LTTng/shimtrace: lttng-ust's added ns/call over shimtrace recording's (> 1: shimtrace costs less)"
echo "  runs (ns/$UNIT / over_ref, events):"
for key in "${KEYS[@]}"; do
	[[ -n ${RUNS[$key]:-} ]] && echo "  ${key}: ${RUNS[$key]}"
	[[ -n ${WARN[$key]:-} ]] && echo "  WARNING ${key}: ${WARN[$key]}"
done
if [[ -n $LTTNG_NONE ]]; then
	echo "  lttng events: none of the timed calls is wrapped ($LTTNG_EVENTS enabled); the count is the program's other calls"
else
	echo "  lttng events: $LTTNG_PER_PAIR per pair ($LTTNG_EVENTS_ARE), warm-up included; lost = discarded count from 'lttng stop'"
fi
echo "  shimtrace events: 2 per $UNIT, warm-up and the program's other traced calls included"
garbled_note BEST_EVENTS

echo
machine_line
load_line
echo "program: ${COMPILE_SHOWN//PROG/mutex-pairs}"
echo "commands (run in a temp dir):"
for key in "${KEYS[@]}"; do
	echo "  ${key}: ${CMD[$key]}"
done
exit 0
