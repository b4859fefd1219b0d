# shellcheck shell=bash disable=SC2034,SC2153 # variables set for, and by, the sourcing script
# lib.sh: what the bench/run-*.sh scripts share, sourced by each of them:
# argument checks, the temp dir and its cleanup, number helpers, a private
# shimtraced, LTTng sessions, and the machine line.
#
# The sourcing script sets BENCH (its name, for messages) first; this file
# sets HERE (the bench/ directory) and BUILD (the build directory, . unless
# --build says otherwise). The cleanup on exit stops what these variables
# name, each only if set: BG_PID (a background program of ours), DAEMON_PID
# (our shimtraced), LTTNG_SESSION (an LTTng session we created),
# SESSIOND_PID (an lttng-sessiond we started); then it removes TMP.

set -u -o pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd) || {
	echo "$BENCH: cannot find the bench directory" >&2
	exit 2
}
BUILD=.

die() {
	echo "$BENCH: $*" >&2
	exit 2
}

is_count() {
	[[ $1 =~ ^[1-9][0-9]*$ ]]
}

# ---- options ----

# bench_args SPEC... -- ARGS...: the script's options. A SPEC is
# NAME:VAR:KIND for an option --NAME VALUE stored in VAR, KIND count (a
# positive integer) or text; --build DIR (into BUILD, checked, and
# bench_paths run for it) is every script's. A count the script left
# empty before the call and no option gave stays empty, for the script to
# fill in a default that depends on another option (an empty value given
# on the command line is refused). -h/--help prints the lines USAGE (a
# sed range such as 7,18) of the script's header comment.
bench_args() {
	local -a spec=(build:BUILD:text)
	local s name var kind found
	while (($#)) && [[ $1 != -- ]]; do
		spec+=("$1")
		shift
	done
	shift
	while (($#)); do
		if [[ $1 == -h || $1 == --help ]]; then
			sed -n "${USAGE}s/^# \{0,1\}//p" "$0"
			exit 0
		fi
		found=
		for s in "${spec[@]}"; do
			IFS=: read -r name var kind <<<"$s"
			[[ $1 == "--$name" ]] || continue
			if (($# < 2)) || [[ -z $2 ]]; then
				die "--$name needs a value"
			fi
			printf -v "$var" '%s' "$2"
			found=1
			break
		done
		[[ -n $found ]] || die "unknown option '$1' (see --help)"
		shift 2
	done
	for s in "${spec[@]}"; do
		IFS=: read -r name var kind <<<"$s"
		if [[ $kind == count && -n ${!var} ]] && ! is_count "${!var}"; then
			die "bad --$name '${!var}'"
		fi
	done
	[[ -d $BUILD ]] || die "no build directory '$BUILD'"
	BUILD=$(cd "$BUILD" && pwd) || die "cannot enter '$BUILD'"
	bench_paths "$BUILD"
}

# count_list ARRAY OPTION VALUE [MAX]: the counts in VALUE (separated by
# blanks) into ARRAY; a one-line error naming OPTION for an empty list or
# a bad count (above MAX, if given).
count_list() {
	local -n list=$1
	local c
	read -r -a list <<<"$3"
	((${#list[@]})) || die "$2 is empty"
	for c in "${list[@]}"; do
		if ! is_count "$c" || { [[ -n ${4:-} ]] && ((c > $4)); }; then
			die "bad count '$c' in $2${4:+ (1 to $4)}"
		fi
	done
}

# ---- where shimtrace is ----

# bench_paths BUILD: CORE_LIB, PTHREAD_LIB, PRELOAD, SHIMTRACE and
# SHIMTRACED for the build directory BUILD, or for an installed shimtrace
# named by SHIMTRACE_LIBDIR, SHIMTRACE_BIN and SHIMTRACED_BIN.
bench_paths() {
	if [[ -n ${SHIMTRACE_LIBDIR:-} ]]; then
		CORE_LIB=$SHIMTRACE_LIBDIR/libshimtrace.so
		PTHREAD_LIB=$SHIMTRACE_LIBDIR/libshimtrace-pthread.so
	else
		CORE_LIB=$1/core/.libs/libshimtrace.so
		PTHREAD_LIB=$1/wrappers/.libs/libshimtrace-pthread.so
	fi
	PRELOAD=$CORE_LIB:$PTHREAD_LIB
	SHIMTRACE=${SHIMTRACE_BIN:-$1/ctl/shimtrace}
	SHIMTRACED=${SHIMTRACED_BIN:-$(dirname "$SHIMTRACE")/shimtraced}
}
# lttng_wrapper LIB EVENTS: the LTTng-UST wrapper library the LTTng rows
# preload, and the events they enable (default: the pthread wrapper).
# How a program runs under LTTng: the wrapper preloaded, and lttng-ust's
# constructor waiting for the session daemon to set up its buffers (up to
# a minute instead of 3 s): with large buffers on a busy machine the
# registration takes longer, and the program would start unrecorded.
lttng_wrapper() {
	LTTNG_WRAPPER=$1
	LTTNG_EVENTS=$2
	LTTNG_ENV=(LD_PRELOAD="$LTTNG_WRAPPER" LTTNG_UST_REGISTER_TIMEOUT=60000)
	LTTNG_ENV_SHOWN="LD_PRELOAD=$LTTNG_WRAPPER LTTNG_UST_REGISTER_TIMEOUT=60000"
}
lttng_wrapper liblttng-ust-pthread-wrapper.so 'lttng_ust_pthread:*'

# ---- temp dir and cleanup (also on Ctrl-C) ----

BG_PID=
DAEMON_PID=
LTTNG_SESSION=
SESSIOND_PID=
TMP=

# alive PID: PID runs (a zombie child of ours does not count).
alive() {
	local stat
	stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
	stat=${stat##*) }
	[[ ${stat:0:1} != Z ]]
}

# stop_pid PID: SIGTERM, then wait up to 5 s for PID to go away (and reap
# it if it is our child). False if it is still there.
stop_pid() {
	kill "$1" 2>/dev/null || return 0
	for _ in $(seq 50); do
		alive "$1" || break
		sleep 0.1
	done
	alive "$1" && return 1
	wait "$1" 2>/dev/null
	return 0
}

# shellcheck disable=SC2317 # called by the EXIT trap
bench_cleanup() {
	trap - EXIT INT TERM
	if [[ -n $BG_PID ]]; then
		kill "$BG_PID" 2>/dev/null
		wait "$BG_PID" 2>/dev/null
	fi
	[[ -n $DAEMON_PID ]] && stop_pid "$DAEMON_PID"
	[[ -n $LTTNG_SESSION ]] && lttng destroy "$LTTNG_SESSION" >/dev/null 2>&1
	[[ -n $SESSIOND_PID ]] && stop_pid "$SESSIOND_PID"
	[[ -n $TMP ]] && rm -rf "$TMP"
}

# bench_tmp: a new temp dir in TMP, removed (with what runs) on exit.
bench_tmp() {
	TMP=$(mktemp -d "${TMPDIR:-/tmp}/shimtrace-bench.XXXXXX") || die "mktemp failed"
	trap bench_cleanup EXIT
	trap 'exit 130' INT
	trap 'exit 143' TERM
}

# compile OUT SRC [FLAGS...]: SRC built into OUT the way the tables say (and FLAGS).
compile() {
	"${CC:-cc}" -O2 -std=gnu11 -Wall -Wextra -pthread "${@:3}" -o "$1" "$2" -ldl ||
		die "cannot compile $2"
}
COMPILE_SHOWN="${CC:-cc} -O2 -std=gnu11 -Wall -Wextra -pthread -o PROG PROG.c -ldl"

# bench_start PROGRAM...: a temp dir (bench_tmp), each PROGRAM built from
# bench/PROGRAM.c into $TMP/PROGRAM, and the shell in $TMP.
bench_start() {
	local p
	for p in "$@"; do
		[[ -f $HERE/$p.c ]] || die "missing $HERE/$p.c"
	done
	bench_tmp
	for p in "$@"; do
		compile "$TMP/$p" "$HERE/$p.c"
	done
	cd "$TMP" || die "cannot enter $TMP"
}

# ---- text and numbers ----

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
	l=${l//|/\\|}
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

# is_num STRING: a plain decimal number.
is_num() {
	[[ $1 =~ ^-?[0-9]+(\.[0-9]+)?$ ]]
}

# ratio VALUE BASE: "1.23x", "-" when either is missing.
ratio() {
	if ! is_num "${1:-}" || ! is_num "${2:-}" || (($(calc "$2 <= 0"))); then
		printf -- -
	elif (($(calc "$1 < 10 * $2"))); then
		fmt '%.2fx' "$1 / $2"
	else
		fmt '%.1fx' "$1 / $2"
	fi
}

# median: the median of the numbers on standard input, one a line.
median() {
	sort -g | awk '{ v[NR] = $1 } END { if (NR) print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'
}

# median_at VALUES...: the index (0-based) of the median of VALUES, the
# lower of the two middle ones for an even count, so that the numbers of
# that one run (events, lost) can be shown with it.
median_at() {
	local i
	for i in $(seq 0 $(($# - 1))); do
		printf '%s %s\n' "${@:i+1:1}" "$i"
	done | sort -g -k1,1 | awk '{ v[NR] = $2 } END { if (NR) print v[int((NR + 1) / 2)] }'
}

# now_ns: the wall clock in ns since the epoch, read without a fork when
# bash has EPOCHREALTIME (microsecond resolution), else from date(1).
now_ns() {
	local t=${EPOCHREALTIME:-}
	if [[ $t =~ ^([0-9]+)[.,]([0-9]{6})$ ]]; then
		printf '%s%s000' "${BASH_REMATCH[1]}" "${BASH_REMATCH[2]}"
	else
		date +%s%N
	fi
}

# cpu_ticks PID...: the user + system time the processes used so far, in
# clock ticks (getconf CLK_TCK a second), all their threads included.
cpu_ticks() {
	local pid stat sum=0 f
	for pid in "$@"; do
		stat=$(cat "/proc/$pid/stat" 2>/dev/null) || continue
		read -r -a f <<<"${stat##*) }"
		# after "(comm) ": state is field 3, utime 14 and stime 15
		sum=$((sum + f[11] + f[12]))
	done
	printf '%s' "$sum"
}

# bench_clock_read: times a read of each clock once more with clockread
# (bench/clockread.c; bench_start must have built it), keeping the best
# of the calls so far: CLOCK_TSC (rdtsc) and CLOCK_MONO (clock_gettime),
# in ns; TRACE_CLOCK, the clock the daemon picks here (rdtsc or
# monotonic), and CLOCK_TRACE, the cost of a read of it: the floor of
# any event.
CLOCK_TSC='' CLOCK_MONO='' TRACE_CLOCK='' CLOCK_TRACE=''
bench_clock_read() {
	local line v
	line=$("$TMP/clockread") || return
	v=$(sed -n 's/.*rdtsc_ns=\([0-9.]*\).*/\1/p' <<<"$line")
	[[ -z $CLOCK_TSC ]] || (($(calc "$v < $CLOCK_TSC"))) && CLOCK_TSC=$v
	v=$(sed -n 's/.*monotonic_ns=\([0-9.]*\).*/\1/p' <<<"$line")
	[[ -z $CLOCK_MONO ]] || (($(calc "$v < $CLOCK_MONO"))) && CLOCK_MONO=$v
	TRACE_CLOCK=$(sed -n 's/.*trace_clock=\([a-z]*\).*/\1/p' <<<"$line")
	CLOCK_TRACE=$CLOCK_MONO
	[[ $TRACE_CLOCK == rdtsc ]] && CLOCK_TRACE=$CLOCK_TSC
	return 0
}

# clock_text: "a read of the trace clock (rdtsc) costs 7.64 ns here
# (rdtsc 7.64, clock_gettime 16.19)", after bench_clock_read.
clock_text() {
	printf 'a read of the trace clock (%s) costs %s ns here (rdtsc %s, clock_gettime %s)' \
		"$TRACE_CLOCK" "$(fmt '%.2f' "$CLOCK_TRACE")" "$(fmt '%.2f' "$CLOCK_TSC")" \
		"$(fmt '%.2f' "$CLOCK_MONO")"
}

# record_summary FILE: "RECORDED LOST PROCESSES" from the "N events
# recorded, L lost, from P processes" line that record and stop print.
record_summary() {
	sed -n 's/.* \([0-9][0-9]*\) events recorded, \([0-9][0-9]*\) lost, from \([0-9][0-9]*\) process.*/\1 \2 \3/p' \
		"$1" | head -n 1
}

# ---- a private shimtraced ----

# st ARGS...: the shimtrace CLI, talking to our private daemon in RUNDIR.
st() {
	env -u SHIMTRACE_DISABLE SHIMTRACE_RUNDIR="$RUNDIR" "$SHIMTRACE" "$@"
}

# Start our private shimtraced in RUNDIR, in the foreground (a child of
# ours, its warnings in shimtraced.log); ready once `shimtrace status`
# answers. On failure, sets DAEMON_SKIP to the reason.
start_shimtraced() {
	if [[ ! -x $SHIMTRACED ]]; then
		DAEMON_SKIP="unavailable (no shimtraced at $SHIMTRACED)"
		return 1
	fi
	if [[ ! -x $SHIMTRACE ]]; then
		DAEMON_SKIP="unavailable (no shimtrace CLI at $SHIMTRACE)"
		return 1
	fi
	mkdir -p "$RUNDIR"
	env -u SHIMTRACE_DISABLE "$SHIMTRACED" --rundir "$RUNDIR" --foreground --log-level warning \
		>shimtraced.log 2>&1 &
	DAEMON_PID=$!
	for _ in $(seq 50); do
		if ! alive "$DAEMON_PID"; then
			wait "$DAEMON_PID"
			DAEMON_SKIP="unavailable (shimtraced exited $?: $(last_line shimtraced.log))"
			DAEMON_PID=
			return 1
		fi
		st status >status.out 2>&1 && return 0
		sleep 0.1
	done
	DAEMON_SKIP="unavailable (shimtraced does not answer: $(last_line status.out))"
	return 1
}

# Stop our shimtraced (SIGTERM) and say how that went in DAEMON_END.
stop_shimtraced() {
	local rc
	[[ -n $DAEMON_PID ]] || return 0
	if ! alive "$DAEMON_PID"; then
		wait "$DAEMON_PID"
		rc=$?
		DAEMON_END="WARNING: shimtraced died during the run (exit status $rc)"
	else
		kill "$DAEMON_PID"
		for _ in $(seq 50); do
			alive "$DAEMON_PID" || break
			sleep 0.1
		done
		if alive "$DAEMON_PID"; then
			DAEMON_END="WARNING: shimtraced still runs 5 s after SIGTERM"
			return 1
		fi
		wait "$DAEMON_PID"
		rc=$?
		DAEMON_END="shimtraced exited with status $rc on SIGTERM"
		((rc == 0)) || DAEMON_END="WARNING: $DAEMON_END"
	fi
	DAEMON_PID=
}

# ---- LTTng ----

# lttng_missing: true when lttng-tools or the pthread wrapper is missing.
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

# lttng_pidfile: where lttng-sessiond writes its pid.
lttng_pidfile() {
	if (($(id -u) == 0)); then
		printf '%s' /var/run/lttng/lttng-sessiond.pid
	else
		printf '%s' "${LTTNG_HOME:-$HOME}/.lttng/lttng-sessiond.pid"
	fi
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
	pidfile=$(lttng_pidfile)
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

# lttng_setup: LTTNG_SKIP says why LTTng rows cannot run, empty if they
# can (a session daemon answers, started by us if none did).
lttng_setup() {
	LTTNG_SKIP=
	if lttng_missing; then
		LTTNG_SKIP="skipped: lttng-tools/liblttng-ust-dev not installed"
	else
		ensure_sessiond
	fi
}

# lttng_consumerd_pids: the lttng-consumerd processes under the session
# daemon (from its pid file), whose CPU time is LTTng's drain work.
lttng_consumerd_pids() {
	local sessiond p stat ppid
	sessiond=$(cat "$(lttng_pidfile)" 2>/dev/null) || return 0
	for p in /proc/[0-9]*; do
		[[ $(cat "$p/comm" 2>/dev/null) == lttng-consumerd ]] || continue
		# the consumer's parent is the session daemon, or its child
		stat=$(cat "$p/stat" 2>/dev/null) || continue
		read -r _ ppid _ <<<"${stat##*) }"
		if [[ $ppid == "$sessiond" ]] ||
			[[ $(sed -n 's/^PPid:[[:space:]]*//p' "/proc/$ppid/status" 2>/dev/null) == "$sessiond" ]]; then
			printf '%s\n' "${p#/proc/}"
		fi
	done
}

# lttng_up NAME DIR [SUBBUF NUM]: a started session NAME writing into DIR
# (or sending to the relay daemon at DIR, a net:// URL), with LTTNG_EVENTS
# (lttng_wrapper) in the default channel, or in a channel of NUM
# sub-buffers of SUBBUF; commands logged to lttng.log. Sets LTTNG_SESSION.
lttng_up() {
	local name=$1 dir=$2 out
	local -a chan=()
	if [[ $dir == net://* ]]; then
		out=--set-url=$dir
	else
		rm -rf "$dir"
		out=--output=$dir
	fi
	: >lttng.log
	lttng create "$name" "$out" >>lttng.log 2>&1 || return 1
	LTTNG_SESSION=$name
	if (($# == 4)); then
		lttng enable-channel -u -s "$name" --subbuf-size "$3" --num-subbuf "$4" chan >>lttng.log 2>&1 || return 1
		chan=(-c chan)
	fi
	lttng enable-event -u -s "$name" "${chan[@]}" "$LTTNG_EVENTS" >>lttng.log 2>&1 &&
		lttng start "$name" >>lttng.log 2>&1
}

# lttng_up_shown [SUBBUF NUM]: the commands of lttng_up, for the tables.
# shellcheck disable=SC2120 # the arguments are optional
lttng_up_shown() {
	local s="lttng create S --output=DIR"
	(($# == 2)) && s+="; lttng enable-channel -u -s S --subbuf-size $1 --num-subbuf $2 chan"
	s+="; lttng enable-event -u -s S$( (($# == 2)) && printf ' -c chan') '$LTTNG_EVENTS'; lttng start S"
	printf '%s' "$s"
}

# lttng_down: stop (output in lttng-stop.log) and destroy LTTNG_SESSION.
lttng_down() {
	lttng stop "$LTTNG_SESSION" >lttng-stop.log 2>&1
	lttng destroy "$LTTNG_SESSION" >>lttng-stop.log 2>&1
	LTTNG_SESSION=
}

# lttng_lost: the discarded count that lttng stop/destroy warned about.
# LTTng 2.13 sometimes reports 2^63 + N when threads of a per-UID channel
# lose events on several CPUs (the packets' discarded counts then go
# backwards); that is shown as "N*" (LTTNG_GARBLED_NOTE explains the star),
# a count of 2^64 or more as "garbled*".
lttng_lost() {
	local lost hi lo
	lost=$(grep -oE '[0-9]+ events were discarded' lttng-stop.log | grep -oE '^[0-9]+' | sort -n | tail -n 1)
	lost=${lost:-0}
	if ((${#lost} > 19)); then
		lost="garbled*"
	elif ((${#lost} == 19)); then
		# lost - 2^63 (9223372036854775808), in two halves that fit in
		# bash's integers
		hi=$((10#${lost:0:10} - 9223372036))
		lo=$((10#${lost:10} - 854775808))
		((hi > 0 || (hi == 0 && lo >= 0))) && lost="$((hi * 1000000000 + lo))*"
	fi
	printf '%s' "$lost"
}
LTTNG_GARBLED_NOTE="* LTTng reported 2^63 + this many discarded events (or more than 2^64: garbled); its discarded counts are not reliable when threads of one per-UID channel lose events on several CPUs"

# lttng_count DIR: the events of the trace in DIR (babeltrace2's counter
# sink), "?" without babeltrace2.
lttng_count() {
	local n
	command -v babeltrace2 >/dev/null || {
		printf '?'
		return
	}
	n=$(babeltrace2 "$1" -c sink.utils.counter -p step=+0 2>/dev/null |
		awk '/ Event messages$/ { n = $1 } END { print n }')
	printf '%s' "${n:-?}"
}

# ust_version: lttng-ust's version from dpkg, empty if unknown.
ust_version() {
	local v
	v=$(dpkg-query -W -f '${Version}' liblttng-ust1 2>/dev/null)
	printf '%s' "${v%%-*}"
}

# machine_line: CPU, CPUs, kernel, glibc and LTTng.
machine_line() {
	local cpu glibc lttng_version
	cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)
	glibc=$(getconf GNU_LIBC_VERSION 2>/dev/null || echo "glibc ?")
	lttng_version=$(lttng --version 2>/dev/null | head -n 1)
	printf 'machine: %s, %s CPUs, kernel %s, %s%s\n' "${cpu:-unknown CPU}" "$(nproc)" "$(uname -r)" \
		"$glibc" "${lttng_version:+, $lttng_version}"
}

# load_line: the load averages now, to say how busy the machine was (other
# work on it shows in the numbers).
load_line() {
	local l
	read -r -a l </proc/loadavg
	printf 'load average at the end (1/5/15 min): %s %s %s\n' "${l[0]}" "${l[1]}" "${l[2]}"
}

# ---- one run of a program: bare, under shimtrace record, under LTTng ----
# Each takes the program and its arguments, leaves its output in out and
# err, the wall clock around the whole command in RUN_T0 and RUN_T1 (ns),
# RUN_EVENTS ("recorded/lost", empty for bare) and, when it failed,
# RUN_WHY (a table cell saying why).
RUN_T0=0 RUN_T1=0 RUN_WHY='' RUN_EVENTS=''

bare_run() {
	RUN_WHY='' RUN_EVENTS=''
	RUN_T0=$(now_ns)
	env -u LD_PRELOAD "$@" >out 2>err || RUN_WHY="unavailable ($(last_line err))"
	RUN_T1=$(now_ns)
}

# record_run "RECORD OPTIONS" PROG ARGS...: under `shimtrace record`, the
# trace in $TMP/shimtrace-trace, removed after.
record_run() {
	local dir=$TMP/shimtrace-trace rc
	local -a opt sum
	read -r -a opt <<<"$1"
	shift
	RUN_WHY='' RUN_EVENTS=''
	if [[ ! -x $SHIMTRACE ]]; then
		RUN_WHY="unavailable (no shimtrace CLI at $SHIMTRACE)"
		return
	fi
	rm -rf "$dir"
	RUN_T0=$(now_ns)
	env -u SHIMTRACE_RUNDIR -u SHIMTRACE_DISABLE -u LD_PRELOAD \
		"$SHIMTRACE" record "${opt[@]}" -o "$dir" -- "$@" >out 2>err
	rc=$?
	RUN_T1=$(now_ns)
	rm -rf "$dir"
	if ((rc != 0)); then
		RUN_WHY="unavailable (record exited $rc: $(last_line err))"
		return
	fi
	read -r -a sum <<<"$(record_summary err)"
	RUN_EVENTS="${sum[0]:-?}/${sum[1]:-?}"
}

# lttng_run "SUBBUF NUM" PROG ARGS...: in a new LTTng session (default
# channel when "SUBBUF NUM" is empty) with the pthread wrapper preloaded;
# the events are counted after RUN_T1, and the trace removed.
lttng_run() {
	local dir=$TMP/lttng-trace
	local -a chan
	read -r -a chan <<<"$1"
	shift
	RUN_WHY='' RUN_EVENTS=''
	if [[ -n $LTTNG_SKIP ]]; then
		RUN_WHY=$LTTNG_SKIP
		return
	fi
	RUN_T0=$(now_ns)
	if ! lttng_up "shimtrace-bench-$$" "$dir" "${chan[@]}"; then
		RUN_WHY="unavailable ($(last_line lttng.log))"
	elif ! env "${LTTNG_ENV[@]}" "$@" >out 2>err; then
		RUN_WHY="unavailable ($(last_line err))"
	fi
	lttng_down
	RUN_T1=$(now_ns)
	[[ -z $RUN_WHY ]] && RUN_EVENTS="$(lttng_count "$dir")/$(lttng_lost)"
	rm -rf "$dir"
}

# ---- runs by configuration, row and repetition, and their medians ----
# The script sets CONFIGS (bare record lttng), ROWS and REPS, and keeps
# each run with keep; medians then fills MED, MED2, MED3 and MED_EV.

declare -A VAL=() VAL2=() VAL3=() EV=() WHY=() WARN=() MED=() MED2=() MED3=() MED_EV=()

# out_field NAME: the number NAME=... that the run printed (in out or err).
out_field() {
	cat out err 2>/dev/null | sed -n "s/.*\\b$1=\\([0-9.]*\\).*/\\1/p" | head -n 1
}

# keep CONFIG ROW REP NAME SECOND [THIRD]: the run just made (RUN_*), its
# value NAME=... from out/err, SECOND (a number, or empty) beside it, and
# the value THIRD=... from out/err if asked. A run that failed marks the
# row unavailable for CONFIG.
keep() {
	local cfg=$1 row=$2 rep=$3 v impl
	if [[ -n $RUN_WHY ]]; then
		WHY[$cfg,$row]=$RUN_WHY
		return
	fi
	v=$(out_field "$4")
	if ! is_num "$v"; then
		WHY[$cfg,$row]="unavailable (no $4 in the output: $(last_line err))"
		return
	fi
	impl=$(cat out err | sed -n "s/.*\\b$4=.* impl=\\([^ ]*\\).*/\\1/p" | head -n 1)
	case $cfg in
	bare) [[ $impl == libc* ]] || WARN[$cfg]="pthread_mutex_lock resolved to $impl" ;;
	record) [[ $impl == *shimtrace* ]] || WARN[$cfg]="pthread_mutex_lock was not interposed (impl=$impl)" ;;
	lttng) [[ $impl == *lttng* ]] || WARN[$cfg]="pthread_mutex_lock was not interposed (impl=$impl)" ;;
	esac
	VAL[$cfg,$row,$rep]=$v
	VAL2[$cfg,$row,$rep]=$5
	(($# > 5)) && VAL3[$cfg,$row,$rep]=$(out_field "$6")
	EV[$cfg,$row,$rep]=$RUN_EVENTS
}

# check_events CONFIG ROW REP PAIRS: a warning when the run's events,
# recorded plus lost, are fewer than its PAIRS (all its lock+unlock pairs,
# warm-up included) make: 2 a pair for shimtrace (record), 3 for LTTng.
# Fewer means the tracer did not see all of the program.
check_events() {
	local ev=${EV[$1,$2,$3]:-} rec lost min
	case $1 in
	record) min=$((2 * $4)) ;;
	lttng) min=$((3 * $4)) ;;
	*) return 0 ;;
	esac
	[[ -n $ev ]] || return 0
	rec=${ev%%/*}
	lost=${ev#*/}
	lost=${lost%'*'}
	if ! is_count "$rec"; then
		WARN[$1]+="${WARN[$1]:+; }run $3 of $2: events not counted ($ev)"
	elif [[ $lost =~ ^[0-9]+$ ]] && ((rec + lost < min)); then
		WARN[$1]+="${WARN[$1]:+; }run $3 of $2: $rec recorded + $lost lost < $min expected"
	fi
}

# run_all RUNNER: lttng_setup, then RUNNER CONFIG ROW REP for every one,
# interleaved (REPS passes over the rows, each row's configurations one
# after the other), then medians.
run_all() {
	local rep row cfg
	lttng_setup
	for ((rep = 1; rep <= REPS; rep++)); do
		for row in "${ROWS[@]}"; do
			for cfg in "${CONFIGS[@]}"; do
				[[ -n ${WHY[$cfg,$row]:-} ]] && continue
				echo "run $rep/$REPS: $row $cfg" >&2
				"$1" "$cfg" "$row" "$rep"
			done
		done
	done
	medians
}

# values ARRAY CONFIG ROW: the runs' values, one a line, in rep order.
values() {
	local -n arr=$1
	local rep
	for ((rep = 1; rep <= REPS; rep++)); do
		[[ -n ${arr[$2,$3,$rep]:-} ]] && printf '%s\n' "${arr[$2,$3,$rep]}"
	done
}

# medians: MED and MED_EV (the events of the run with the median value),
# MED2 and MED3 (the medians of the second and third values), by CONFIG,ROW.
medians() {
	local row cfg i
	local -a v reps
	for row in "${ROWS[@]}"; do
		for cfg in "${CONFIGS[@]}"; do
			mapfile -t v < <(values VAL "$cfg" "$row")
			((${#v[@]})) || continue
			mapfile -t reps < <(for ((i = 1; i <= REPS; i++)); do
				[[ -n ${VAL[$cfg,$row,$i]:-} ]] && echo "$i"
			done)
			i=$(median_at "${v[@]}")
			MED[$cfg,$row]=${v[i]}
			MED_EV[$cfg,$row]=${EV[$cfg,$row,${reps[i]}]:-}
			MED2[$cfg,$row]=$(values VAL2 "$cfg" "$row" | median)
			MED3[$cfg,$row]=$(values VAL3 "$cfg" "$row" | median)
		done
	done
}

# cell VALUE: "%.1f", or "-" when missing.
cell() {
	if is_num "${1:-}"; then fmt '%.1f' "$1"; else printf -- -; fi
}

# over CONFIG ROW: CONFIG's median minus bare's, empty when either is missing.
over() {
	if is_num "${MED[$1,$2]:-}" && is_num "${MED[bare,$2]:-}"; then
		calc "${MED[$1,$2]} - ${MED[bare,$2]}"
	fi
}

# median_cells ROW: a cell for each of CONFIGS: its median, or why it has
# none.
median_cells() {
	local cfg
	for cfg in "${CONFIGS[@]}"; do
		if [[ -n ${MED[$cfg,$1]:-} ]]; then
			printf ' | %s' "$(cell "${MED[$cfg,$1]}")"
		else
			printf ' | %s' "${WHY[$cfg,$1]:-unavailable}"
		fi
	done
}

# compare_cells ROW: the table cells common to run-length and run-threads:
# the three medians, both overheads, LTTng's over shimtrace's, both tools'
# events, and the three second values.
compare_cells() {
	local row=$1 cfg o_st o_lt s
	s=$(median_cells "$row")
	o_st=$(over record "$row")
	o_lt=$(over lttng "$row")
	s+=" | $(cell "$o_st") | $(cell "$o_lt") | $(ratio "$o_lt" "$o_st")"
	s+=" | ${MED_EV[record,$row]:--} | ${MED_EV[lttng,$row]:--}"
	for cfg in "${CONFIGS[@]}"; do
		s+=" | $(cell "${MED2[$cfg,$row]:-}")"
	done
	printf '%s |' "$s"
}

# run_listing: every run, in rep order: value/second[/third] (events).
run_listing() {
	local row cfg rep s
	for row in "${ROWS[@]}"; do
		for cfg in "${CONFIGS[@]}"; do
			s=
			for ((rep = 1; rep <= REPS; rep++)); do
				[[ -n ${VAL[$cfg,$row,$rep]:-} ]] || continue
				s+="${s:+, }$(cell "${VAL[$cfg,$row,$rep]}")/$(cell "${VAL2[$cfg,$row,$rep]}")"
				[[ -n ${VAL3[$cfg,$row,$rep]:-} ]] && s+="/$(cell "${VAL3[$cfg,$row,$rep]}")"
				[[ -n ${EV[$cfg,$row,$rep]:-} ]] && s+=" (${EV[$cfg,$row,$rep]})"
			done
			[[ -n $s ]] && echo "  $row $cfg: $s"
		done
	done
	for cfg in "${CONFIGS[@]}"; do
		[[ -n ${WARN[$cfg]:-} ]] && echo "  WARNING $cfg: ${WARN[$cfg]}"
	done
}

# garbled_note ARRAY: LTTNG_GARBLED_NOTE as a bullet, if a value of the
# associative array ARRAY (events "recorded/lost", or lost counts) has the
# star of a garbled LTTng lost count.
garbled_note() {
	local -n vals=$1
	local k
	for k in "${!vals[@]}"; do
		if [[ ${vals[$k]} == *'*' ]]; then
			echo "- $LTTNG_GARBLED_NOTE."
			return
		fi
	done
}
