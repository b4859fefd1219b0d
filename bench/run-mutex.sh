#!/usr/bin/env bash
# run-mutex.sh: ns per uncontended pthread_mutex_lock+unlock pair, side by
# side: bare, shimtrace preloaded but dormant, shimtrace recording, and
# LTTng-UST's pthread wrapper recording (default buffers and 8 x 8 MiB).
#
# Usage: bench/run-mutex.sh [--pairs N] [--rounds R] [--reps K] [--build DIR]
#
#   --pairs N    lock+unlock pairs per round (default 1000000)
#   --rounds R   timed rounds per run; a run reports its median (default 5)
#   --reps K     runs per configuration; the best median is shown (default 3)
#   --build DIR  build directory holding core/, wrappers/ and ctl/ (default .)
#
# Environment: SHIMTRACE_BIN (the CLI, default DIR/ctl/shimtrace) and
# SHIMTRACE_LIBDIR (one directory holding libshimtrace.so and
# libshimtrace-pthread.so, for an installed shimtrace); CC (default cc).
#
# This is a benchmark, not a test: it always exits 0 once it has printed
# its table, whatever the numbers; rows that cannot run say why.

set -u -o pipefail

PAIRS=1000000
ROUNDS=5
REPS=3
BUILD=.

usage() {
	sed -n '4,16s/^# \{0,1\}//p' "${BASH_SOURCE[0]}"
}

die() {
	echo "run-mutex.sh: $*" >&2
	exit 2
}

is_count() {
	[[ $1 =~ ^[1-9][0-9]*$ ]]
}

while (($#)); do
	case $1 in
	--pairs) (($# >= 2)) || die "--pairs needs a value"; PAIRS=$2; shift 2 ;;
	--rounds) (($# >= 2)) || die "--rounds needs a value"; ROUNDS=$2; shift 2 ;;
	--reps) (($# >= 2)) || die "--reps needs a value"; REPS=$2; shift 2 ;;
	--build) (($# >= 2)) || die "--build needs a value"; BUILD=$2; shift 2 ;;
	-h | --help) usage; exit 0 ;;
	*) usage >&2; exit 2 ;;
	esac
done
is_count "$PAIRS" || die "bad --pairs '$PAIRS'"
is_count "$ROUNDS" || die "bad --rounds '$ROUNDS'"
is_count "$REPS" || die "bad --reps '$REPS'"
[[ -d $BUILD ]] || die "no build directory '$BUILD'"
BUILD=$(cd "$BUILD" && pwd) || die "cannot enter '$BUILD'"

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd) || die "cannot find the script's directory"
SRC=$HERE/mutex-pairs.c
[[ -f $SRC ]] || die "missing $SRC"

if [[ -n ${SHIMTRACE_LIBDIR:-} ]]; then
	CORE_LIB=$SHIMTRACE_LIBDIR/libshimtrace.so
	PTHREAD_LIB=$SHIMTRACE_LIBDIR/libshimtrace-pthread.so
else
	CORE_LIB=$BUILD/core/.libs/libshimtrace.so
	PTHREAD_LIB=$BUILD/wrappers/.libs/libshimtrace-pthread.so
fi
SHIMTRACE=${SHIMTRACE_BIN:-$BUILD/ctl/shimtrace}
LTTNG_WRAPPER=liblttng-ust-pthread-wrapper.so

# ---- temp dir and cleanup (also on Ctrl-C) ----
TMP=$(mktemp -d "${TMPDIR:-/tmp}/shimtrace-bench.XXXXXX") || die "mktemp failed"
LTTNG_SESSION=   # a session we created that still exists
SESSIOND_PID=    # a lttng-sessiond we started

# shellcheck disable=SC2317 # called by the EXIT trap
cleanup() {
	trap - EXIT INT TERM
	if [[ -n $LTTNG_SESSION ]]; then
		lttng destroy "$LTTNG_SESSION" >/dev/null 2>&1
	fi
	if [[ -n $SESSIOND_PID ]]; then
		kill "$SESSIOND_PID" 2>/dev/null
		for _ in $(seq 50); do
			kill -0 "$SESSIOND_PID" 2>/dev/null || break
			sleep 0.1
		done
	fi
	rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

PROG=$TMP/mutex-pairs
"${CC:-cc}" -O2 -std=gnu11 -Wall -Wextra -o "$PROG" "$SRC" -ldl ||
	die "cannot compile $SRC"
mkdir "$TMP/empty-rundir"
cd "$TMP" || die "cannot enter $TMP"

# ---- helpers ----

# quoted COMMAND...: the command as one shell-quoted line.
quoted() {
	local s
	printf -v s '%q ' "$@"
	printf '%s' "${s% }"
}

# field NAME FILE: the value of NAME=... in FILE's first line that has it.
field() {
	sed -n "s/.*\\b$1=\\([^ ]*\\).*/\\1/p" "$2" | head -n 1
}

# last_line FILE: FILE's last non-blank line, shortened for a table cell.
last_line() {
	local l
	l=$(grep -v '^[[:space:]]*$' "$1" 2>/dev/null | tail -n 1)
	l=${l//$'\t'/ }
	((${#l} > 70)) && l="${l:0:67}..."
	printf '%s' "${l:-no output}"
}

# calc EXPR: awk arithmetic, for floats.
calc() {
	awk "BEGIN { print ($1) }"
}

# fmt FORMAT EXPR: EXPR computed by awk, printed with printf FORMAT.
fmt() {
	awk "BEGIN { printf(\"$1\", $2) }"
}

# Results, by configuration key.
declare -A BEST=() BEST_EVENTS=() WHY=() CMD=() RUNS=() WARN=()
KEYS=(bare disabled record lttng-default lttng-big)
declare -A LABEL=(
	[bare]="bare (no preload)"
	[disabled]="shimtrace preloaded, disabled"
	[record]="shimtrace recording"
	[lttng-default]="lttng-ust pthread wrapper"
	[lttng-big]="lttng-ust pthread wrapper"
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
	CMD[bare]=$(quoted ./mutex-pairs "$PAIRS" "$ROUNDS")
	if ! "$PROG" "$PAIRS" "$ROUNDS" >out 2>err; then
		WHY[bare]="unavailable ($(last_line err))"
		return
	fi
	note_run bare "$(field ns_per_pair out)" ""
}

# ---- configuration 2: shimtrace preloaded, no daemon to find ----
run_disabled() {
	local impl preload=$CORE_LIB:$PTHREAD_LIB
	CMD[disabled]="SHIMTRACE_RUNDIR=$(quoted "$TMP/empty-rundir") LD_PRELOAD=$(quoted "$preload") ${CMD[bare]}"
	if [[ ! -f $CORE_LIB || ! -f $PTHREAD_LIB ]]; then
		WHY[disabled]="unavailable (no $( [[ -f $CORE_LIB ]] && echo "$PTHREAD_LIB" || echo "$CORE_LIB"))"
		return
	fi
	if ! env -u SHIMTRACE_DISABLE SHIMTRACE_RUNDIR="$TMP/empty-rundir" LD_PRELOAD="$preload" \
		"$PROG" "$PAIRS" "$ROUNDS" >out 2>err; then
		WHY[disabled]="unavailable ($(last_line err))"
		return
	fi
	impl=$(field impl out)
	[[ $impl == *shimtrace* ]] || WARN[disabled]="pthread_mutex_lock was not interposed (impl=$impl)"
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
	CMD[record]="$(quoted "$SHIMTRACE" record -o "$dir" --) ${CMD[bare]}"
	if [[ ! -x $SHIMTRACE ]]; then
		WHY[record]="unavailable (no shimtrace CLI at $SHIMTRACE)"
		return
	fi
	rm -rf "$dir"
	env -u SHIMTRACE_RUNDIR -u SHIMTRACE_DISABLE \
		"$SHIMTRACE" record -o "$dir" -- ./mutex-pairs "$PAIRS" "$ROUNDS" >out 2>err
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
	[[ $impl == *shimtrace* ]] || WARN[record]="pthread_mutex_lock was not interposed (impl=$impl)"
	note_run record "$ns" "$(shimtrace_events "$dir")"
	unset 'WHY[record]'
	rm -rf "$dir"
}

# ---- configuration 4: LTTng-UST pthread wrapper ----
lttng_missing() {
	local ldc
	command -v lttng >/dev/null && command -v lttng-sessiond >/dev/null || return 0
	for ldc in ldconfig /sbin/ldconfig /usr/sbin/ldconfig; do
		# awk reads everything: grep -q would SIGPIPE ldconfig under pipefail.
		if "$ldc" -p 2>/dev/null | awk -v lib="$LTTNG_WRAPPER" '$1 == lib { f = 1 } END { exit !f }'; then
			return 1
		fi
	done
	return 0
}

# Start a session daemon unless one answers already; remember its pid only
# if we started it. On failure, sets LTTNG_SKIP to the reason.
ensure_sessiond() {
	local pidfile pid
	lttng list >/dev/null 2>&1 && return 0
	if ! lttng-sessiond --daemonize --no-kernel >sessiond.log 2>&1; then
		LTTNG_SKIP="unavailable (lttng-sessiond: $(last_line sessiond.log))"
		return 1
	fi
	if (($(id -u) == 0)); then
		pidfile=/var/run/lttng/lttng-sessiond.pid
	else
		pidfile=${LTTNG_HOME:-$HOME}/.lttng/lttng-sessiond.pid
	fi
	pid=$(cat "$pidfile" 2>/dev/null)
	if [[ $pid =~ ^[0-9]+$ && $(cat "/proc/$pid/comm" 2>/dev/null) == lttng-sessiond ]]; then
		SESSIOND_PID=$pid
	else
		echo "warning: started lttng-sessiond but found no pid in $pidfile; it is left running" >&2
	fi
	lttng list >/dev/null 2>&1 && return 0
	LTTNG_SKIP="unavailable (lttng-sessiond does not answer)"
	return 1
}

# lttng_cmd LOG ARGS...: run lttng ARGS, output appended to LOG.
lttng_cmd() {
	local log=$1
	shift
	lttng "$@" >>"$log" 2>&1
}

run_lttng() {
	local key=$1 rep=$2 session dir ns recorded lost log=$TMP/lttng.log
	local -a chan=()
	session=shimtrace-bench-$$-$key-$rep
	dir=$TMP/lttng-trace
	CMD[$key]="lttng create SESSION --output=DIR"
	if [[ $key == lttng-big ]]; then
		CMD[$key]+="; lttng enable-channel -u -s SESSION --subbuf-size 8M --num-subbuf 8 chan"
		chan=(-c chan)
	fi
	CMD[$key]+="; lttng enable-event -u -s SESSION ${chan[*]}${chan[*]:+ }'lttng_ust_pthread:*'; lttng start SESSION"
	CMD[$key]+="; LD_PRELOAD=$LTTNG_WRAPPER ${CMD[bare]}; lttng stop SESSION; lttng destroy SESSION"
	if [[ -n ${LTTNG_SKIP:-} ]]; then
		WHY[$key]=$LTTNG_SKIP
		return
	fi
	rm -rf "$dir"
	: >"$log"
	if ! lttng_cmd "$log" create "$session" --output="$dir"; then
		WHY[$key]="unavailable (lttng create: $(last_line "$log"))"
		return
	fi
	LTTNG_SESSION=$session
	if ((${#chan[@]})) &&
		! lttng_cmd "$log" enable-channel -u -s "$session" --subbuf-size 8M --num-subbuf 8 chan; then
		WHY[$key]="unavailable (lttng enable-channel: $(last_line "$log"))"
	elif ! lttng_cmd "$log" enable-event -u -s "$session" "${chan[@]}" 'lttng_ust_pthread:*' ||
		! lttng_cmd "$log" start "$session"; then
		WHY[$key]="unavailable ($(last_line "$log"))"
	elif ! LD_PRELOAD=$LTTNG_WRAPPER "$PROG" "$PAIRS" "$ROUNDS" >out 2>err; then
		WHY[$key]="unavailable ($(last_line err))"
	fi
	: >"$TMP/lttng-stop.log"
	lttng_cmd "$TMP/lttng-stop.log" stop "$session"
	lttng_cmd "$TMP/lttng-stop.log" destroy "$session"
	LTTNG_SESSION=
	[[ -n ${WHY[$key]:-} ]] && return

	ns=$(field ns_per_pair out)
	[[ $(field impl out) == *lttng* ]] || WARN[$key]="pthread_mutex_lock was not interposed (impl=$(field impl out))"
	# "Warning: N events were discarded" from lttng stop/destroy.
	lost=$(grep -oE '[0-9]+ events were discarded' "$TMP/lttng-stop.log" | grep -oE '^[0-9]+' | sort -n | tail -n 1)
	lost=${lost:-0}
	recorded='?'
	if command -v babeltrace2 >/dev/null; then
		recorded=$(babeltrace2 "$dir" -c sink.utils.counter 2>/dev/null |
			awk '/ Event messages$/ { n = $1 } END { print n }')
		recorded=${recorded:-'?'}
	fi
	[[ $recorded == 0 ]] && WARN[$key]="LTTng recorded no event"
	note_run "$key" "$ns" "$recorded/$lost"
	rm -rf "$dir"
}

# ---- run: configurations interleaved, REPS times ----
LTTNG_SKIP=
if lttng_missing; then
	LTTNG_SKIP="skipped: lttng-tools/liblttng-ust-dev not installed"
else
	ensure_sessiond
fi

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
ust_version=$(dpkg-query -W -f '${Version}' liblttng-ust1 2>/dev/null)
ust_version=${ust_version%%-*}
if [[ -n $ust_version ]]; then
	LABEL[lttng-default]="lttng-ust $ust_version pthread wrapper"
	LABEL[lttng-big]="lttng-ust $ust_version pthread wrapper"
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
echo "  lttng events: 3 per pair (lock_req, lock_acq, unlock), warm-up included; lost = discarded count from 'lttng stop'"

cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)
glibc=$(getconf GNU_LIBC_VERSION 2>/dev/null || echo "glibc ?")
lttng_version=$(lttng --version 2>/dev/null | head -n 1)
echo
echo "machine: ${cpu:-unknown CPU}, $(nproc) CPUs, kernel $(uname -r), ${glibc}${lttng_version:+, $lttng_version}"
echo "program: $(quoted "${CC:-cc}" -O2 -std=gnu11 -Wall -Wextra -o mutex-pairs "$SRC" -ldl)"
echo "commands (run in a temp dir):"
for key in "${KEYS[@]}"; do
	echo "  ${key}: ${CMD[$key]}"
done
exit 0
