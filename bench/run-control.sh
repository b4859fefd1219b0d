#!/usr/bin/env bash
# run-control.sh: what the control plane costs, side by side with LTTng-UST:
# the dormant cost in a single-threaded program (no daemon, registered, a
# session active), process start, and the latency of `shimtrace start`.
#
# Usage: bench/run-control.sh [--pairs N] [--rounds R] [--reps K]
#                             [--spawns S] [--enables E] [--build DIR]
#
#   --pairs N    lock+unlock pairs (and write() calls) per round (default 1000000)
#   --rounds R   timed rounds per run; a run reports its median (default 5)
#   --reps K     runs per configuration; the best median is shown (default 3)
#   --spawns S   timed starts of /usr/bin/true per process start run (default 300)
#   --enables E  enable latency measurements, each in a new session (default 5)
#   --build DIR  build directory holding core/, wrappers/ and ctl/ (default .)
#
# Environment: SHIMTRACE_BIN (the CLI, default DIR/ctl/shimtrace),
# SHIMTRACED_BIN (the daemon, default shimtraced next to the CLI) and
# SHIMTRACE_LIBDIR (one directory holding libshimtrace.so and
# libshimtrace-pthread.so, for an installed shimtrace); CC (default cc).
#
# This is a benchmark, not a test: it always exits 0 once it has printed
# its tables, whatever the numbers; rows that cannot run say why.

BENCH=run-control.sh
PAIRS=1000000
ROUNDS=5
REPS=3
SPAWNS=300
ENABLES=5
# shellcheck source=bench/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh" || exit 2

USAGE=6,19
bench_args pairs:PAIRS:count rounds:ROUNDS:count reps:REPS:count spawns:SPAWNS:count \
	enables:ENABLES:count -- "$@"
TRUE_BIN=/usr/bin/true
bench_start mutex-pairs spawn
RUNDIR=$TMP/rundir # our private shimtraced listens here
PROG=$TMP/mutex-pairs
SPAWN=$TMP/spawn
mkdir "$TMP/empty-rundir" "$RUNDIR" || die "cannot create the run directories"

# The environment of a configuration, for env(1): ENVV for KEY.
env_of() {
	case $1 in
	bare | idle) ENVV=() ;;
	dormant) ENVV=(SHIMTRACE_RUNDIR="$TMP/empty-rundir" LD_PRELOAD="$PRELOAD") ;;
	registered | session | session-all) ENVV=(SHIMTRACE_RUNDIR="$RUNDIR" LD_PRELOAD="$PRELOAD") ;;
	lttng) ENVV=(LD_PRELOAD="$LTTNG_WRAPPER") ;;
	esac
}

# run_env KEY COMMAND...: COMMAND in KEY's environment, nothing else of
# ours (or the caller's LD_PRELOAD) leaking in.
run_env() {
	local -a ENVV
	env_of "$1"
	shift
	env -u SHIMTRACE_DISABLE -u SHIMTRACE_RUNDIR -u LD_PRELOAD "${ENVV[@]}" "$@"
}

# shown_env KEY: KEY's environment as the commands show it.
shown_env() {
	local -a ENVV
	local s=
	env_of "$1"
	((${#ENVV[@]})) && printf -v s '%q ' "${ENVV[@]}"
	printf '%s' "${s//$TMP/\$TMP}"
}

# why_not KEY: why KEY cannot run (empty if it can).
why_not() {
	case $1 in
	dormant | registered | session | session-all)
		if [[ ! -f $CORE_LIB ]]; then
			echo "unavailable (no $CORE_LIB)"
		elif [[ ! -f $PTHREAD_LIB ]]; then
			echo "unavailable (no $PTHREAD_LIB)"
		elif [[ $1 != dormant && -n $DAEMON_SKIP ]]; then
			echo "$DAEMON_SKIP"
		fi
		;;
	lttng) [[ -n $LTTNG_SKIP ]] && echo "$LTTNG_SKIP" ;;
	esac
}

# session_up NAME DIR PATTERN [ENABLE-OPTIONS...]: create, enable, start a
# session in our daemon; output appended to session.log.
session_up() {
	local name=$1 dir=$2 pattern=$3
	shift 3
	rm -rf "$dir"
	st create "$name" -o "$dir" >>session.log 2>&1 &&
		st enable -s "$name" "$@" "$pattern" >>session.log 2>&1 &&
		st start "$name" >>session.log 2>&1
}

# session_down NAME: stop (output in session-stop.log) and destroy.
session_down() {
	st stop "$1" >session-stop.log 2>&1
	st destroy "$1" >>session.log 2>&1
}

# stop_summary: "recorded/lost from P processes" from session-stop.log's
# "N events recorded, L lost, from P processes".
stop_summary() {
	sed -n 's/.* \([0-9][0-9]*\) events recorded, \([0-9][0-9]*\) lost, from \([0-9][0-9]*\) process.*/\1 \2 \3/p' \
		session-stop.log | head -n 1
}

# start_bg KEY: a long mutex-pairs in the background in KEY's environment;
# it would take a minute to finish and is killed by stop_bg. A simple
# command, not a function: BG_PID is mutex-pairs itself (env execs it), not
# a subshell whose death would leave it running.
start_bg() {
	local -a ENVV
	env_of "$1"
	env -u SHIMTRACE_DISABLE -u SHIMTRACE_RUNDIR -u LD_PRELOAD "${ENVV[@]}" \
		"$PROG" 4000000000 1 >bg.out 2>&1 &
	BG_PID=$!
}

stop_bg() {
	[[ -n $BG_PID ]] || return 0
	kill "$BG_PID" 2>/dev/null
	wait "$BG_PID" 2>/dev/null
	BG_PID=
}

# wait_registered KEY PID: until the daemon of KEY lists PID (3 s at most).
# grep reads everything: grep -q would SIGPIPE the lister under pipefail.
wait_registered() {
	local key=$1 pid=$2
	for _ in $(seq 60); do
		kill -0 "$pid" 2>/dev/null || return 1
		if [[ $key == lttng ]]; then
			lttng list -u 2>/dev/null | grep "^PID: $pid " >/dev/null && return 0
		else
			st list -p "$pid" 2>/dev/null | grep "^pid $pid " >/dev/null && return 0
		fi
		sleep 0.05
	done
	return 1
}

# ============ table 1: dormant cost in a single-threaded program ============

declare -A BEST=() RUNS=() WHY=() WARN=() NOTE=() CMD=()
KEYS1=(bare idle dormant registered session lttng)
declare -A LABEL1=(
	[bare]="bare (no preload)"
	[idle]="bare + one idle thread"
	[dormant]="shimtrace preloaded, no daemon"
	[registered]="shimtrace preloaded, registered, no session"
	[session]="shimtrace preloaded, registered, a session enabling nothing:*"
	[lttng]="lttng-ust pthread wrapper, sessiond running, no session"
)

# note_best KEY MODE NS: keep NS if it is KEY's best so far in MODE
# (pair or write); BEST and RUNS are indexed by MODE,KEY.
note_best() {
	local k=$2,$1 ns=$3
	RUNS[$k]+="${RUNS[$k]:+, }$ns"
	if [[ -z ${BEST[$k]:-} ]] || (($(calc "$ns < ${BEST[$k]}"))); then
		BEST[$k]=$ns
	fi
}

# run_dormant KEY REP: one run of each mode (pairs, write) for KEY.
run_dormant() {
	local key=$1 rep=$2 mode ns impl session dir summary
	local -a args
	session=ctl_bench_$$_idle_$rep
	dir=$TMP/idle-trace
	if [[ $key == session ]] && ! session_up "$session" "$dir" 'nothing:*'; then
		WHY[$key]="unavailable ($(last_line session.log))"
		st destroy "$session" >/dev/null 2>&1
		return
	fi
	for mode in pair write; do
		args=("$PAIRS" "$ROUNDS")
		[[ $mode == write ]] && args=(--write "${args[@]}")
		[[ $key == idle ]] && args=(--idle-thread "${args[@]}")
		if ! run_env "$key" "$PROG" "${args[@]}" >out 2>err; then
			WHY[$key]="unavailable ($(last_line err))"
			break
		fi
		ns=$(field "ns_per_$mode" out)
		if ! is_num "$ns"; then
			WHY[$key]="unavailable (no ns_per_$mode in the output)"
			break
		fi
		note_best "$key" "$mode" "$ns"
		impl=$(field impl out)
		if [[ $mode == pair ]]; then
			case $key in
			bare | idle) [[ $impl == libc* ]] || WARN[$key]="pthread_mutex_lock resolved to $impl" ;;
			lttng) [[ $impl == *lttng* ]] || WARN[$key]="pthread_mutex_lock was not interposed (impl=$impl)" ;;
			*) [[ $impl == *shimtrace* ]] || WARN[$key]="pthread_mutex_lock was not interposed (impl=$impl)" ;;
			esac
		fi
	done
	if [[ $key == session ]]; then
		session_down "$session"
		# The session selects every process (nothing:* has no filter), so
		# a registered process gets its statedump into the trace.
		read -r -a summary <<<"$(stop_summary)"
		if [[ ${summary[2]:-} != 2 ]]; then
			WARN[$key]="the session saw ${summary[2]:-?} processes, expected 2 (pairs and write runs): $(last_line session-stop.log)"
		fi
		rm -rf "$dir"
	fi
}

# check_registration KEY: does a preloaded mutex-pairs show up in KEY's
# daemon? Sets NOTE[KEY] or WARN[KEY].
check_registration() {
	local key=$1 session=ctl_bench_$$_check dir=$TMP/check-trace
	if [[ $key == session ]] && ! session_up "$session" "$dir" 'nothing:*'; then
		WARN[$key]="registration check: no session ($(last_line session.log))"
		return
	fi
	start_bg "$key"
	if wait_registered "$key" "$BG_PID"; then
		if [[ $key == lttng ]]; then
			NOTE[$key]="\`lttng list -u\` showed the pid"
		else
			NOTE[$key]="\`shimtrace list -p PID\` showed it"
		fi
	else
		WARN[$key]="a preloaded mutex-pairs (pid $BG_PID) did not register within 3 s: $(last_line bg.out)"
	fi
	stop_bg
	if [[ $key == session ]]; then
		session_down "$session"
		rm -rf "$dir"
	fi
}

# ---- start the daemons ----
DAEMON_SKIP=
start_shimtraced
lttng_setup

for key in "${KEYS1[@]}"; do
	w=$(why_not "$key")
	[[ -n $w ]] && WHY[$key]=$w
done
for key in registered session lttng; do
	[[ -z ${WHY[$key]:-} ]] && check_registration "$key"
done

for ((rep = 1; rep <= REPS; rep++)); do
	for key in "${KEYS1[@]}"; do
		[[ -n ${WHY[$key]:-} ]] && continue
		echo "dormant $rep/$REPS: ${LABEL1[$key]}" >&2
		run_dormant "$key" "$rep"
	done
done

# ============ table 2: process start ============

declare -A SP_MEAN=() SP_MEDIAN=() SP_MIN=() SP_RUNS=() SP_WHY=() SP_WARN=() SP_EVENTS=()
KEYS2=(bare dormant registered session-all lttng)
declare -A LABEL2=(
	[bare]="bare (no preload)"
	[dormant]="shimtrace preloaded, no daemon"
	[registered]="shimtrace preloaded, daemon running, no session"
	[session-all]="shimtrace preloaded, a session with pthread:* for all"
	[lttng]="lttng-ust pthread wrapper, sessiond running, no session"
)

# run_spawn KEY REP: one run of SPAWNS starts of /usr/bin/true for KEY.
run_spawn() {
	local key=$1 rep=$2 session dir mean med min summary
	session=ctl_bench_$$_spawn_$rep
	dir=$TMP/spawn-trace
	if [[ $key == session-all ]] && ! session_up "$session" "$dir" 'pthread:*'; then
		SP_WHY[$key]="unavailable ($(last_line session.log))"
		st destroy "$session" >/dev/null 2>&1
		return
	fi
	if ! run_env "$key" "$SPAWN" "$SPAWNS" "$TRUE_BIN" >out 2>err; then
		SP_WHY[$key]="unavailable ($(last_line err))"
	fi
	if [[ $key == session-all ]]; then
		session_down "$session"
		read -r -a summary <<<"$(stop_summary)"
		# Every start registers, and so does the spawn driver itself.
		if [[ ${summary[2]:-0} -lt $((SPAWNS + 20 + 1)) ]]; then
			SP_WARN[$key]="the session saw ${summary[2]:-?} processes, expected $((SPAWNS + 20 + 1)): $(last_line session-stop.log)"
		fi
		SP_EVENTS[$key]="${summary[0]:-?} events, ${summary[1]:-?} lost, ${summary[2]:-?} processes"
		rm -rf "$dir"
	fi
	[[ -n ${SP_WHY[$key]:-} ]] && return
	mean=$(field us_mean out)
	med=$(field us_median out)
	min=$(field us_min out)
	if ! is_num "$mean" || ! is_num "$med" || ! is_num "$min"; then
		SP_WHY[$key]="unavailable (no us_mean/us_median in the output)"
		return
	fi
	SP_RUNS[$key]+="${SP_RUNS[$key]:+, }$mean/$med"
	if [[ -z ${SP_MEDIAN[$key]:-} ]] || (($(calc "$med < ${SP_MEDIAN[$key]}"))); then
		SP_MEAN[$key]=$mean
		SP_MEDIAN[$key]=$med
		SP_MIN[$key]=$min
	fi
}

[[ -x $TRUE_BIN ]] || die "no $TRUE_BIN"
for key in "${KEYS2[@]}"; do
	w=$(why_not "$key")
	[[ -n $w ]] && SP_WHY[$key]=$w
done
for ((rep = 1; rep <= REPS; rep++)); do
	for key in "${KEYS2[@]}"; do
		[[ -n ${SP_WHY[$key]:-} ]] && continue
		echo "spawn $rep/$REPS: ${LABEL2[$key]}" >&2
		run_spawn "$key" "$rep"
	done
done

# ============ table 3: enable latency ============

declare -a EN_START=() EN_FIRST=() EN_STOP=() EN_SPAN=() EN_EVENTS=() EN_WHY=()

# stamp_ns "YYYY-MM-DD HH:MM:SS.nnnnnnnnn": ns since the epoch. view prints
# local time, as date -d reads it.
stamp_ns() {
	local sec frac
	[[ $1 =~ ^([0-9]{4}-[0-9]{2}-[0-9]{2}\ [0-9]{2}:[0-9]{2}:[0-9]{2})\.([0-9]{1,9})$ ]] || return 1
	frac=${BASH_REMATCH[2]}
	while ((${#frac} < 9)); do frac+=0; done
	sec=$(date -d "${BASH_REMATCH[1]}" +%s) || return 1
	printf '%s' $((sec * 1000000000 + 10#$frac))
}

# event_span DIR: "FIRST LAST", the earliest and latest pthread:mutex_lock
# of the trace in DIR, in ns since the epoch.
event_span() {
	local span first last
	# Fixed-width "YYYY-MM-DD HH:MM:SS.nnnnnnnnn": string order is time order.
	span=$(st view "$1" 2>/dev/null |
		awk '/^\[[0-9-]+ [0-9:]+\.[0-9]+\] .* pthread:mutex_lock / {
			t = substr($0, 2, index($0, "]") - 2)
			if (m == "" || t < m) m = t
			if (t > l) l = t
		} END { print m "|" l }')
	first=$(stamp_ns "${span%|*}") && last=$(stamp_ns "${span#*|}") || return 1
	printf '%s %s' "$first" "$last"
}

# run_enable I: one enable latency measurement.
run_enable() {
	local i=$1 session dir=$TMP/enable-trace t0 t1 t2 t3 span summary
	session=ctl_bench_$$_enable_$i
	start_bg registered
	if ! wait_registered registered "$BG_PID"; then
		EN_WHY[i]="mutex-pairs did not register within 3 s ($(last_line bg.out))"
		stop_bg
		return
	fi
	rm -rf "$dir"
	if ! st create "$session" -o "$dir" >>session.log 2>&1 ||
		! st enable -s "$session" 'pthread:mutex_lock' >>session.log 2>&1; then
		EN_WHY[i]="unavailable ($(last_line session.log))"
		st destroy "$session" >/dev/null 2>&1
		stop_bg
		return
	fi
	t0=$(now_ns)
	st start "$session" >start.log 2>&1
	t1=$(now_ns)
	sleep 0.3
	t2=$(now_ns)
	st stop "$session" >session-stop.log 2>&1
	t3=$(now_ns)
	st destroy "$session" >>session.log 2>&1
	stop_bg
	read -r -a summary <<<"$(stop_summary)"
	EN_EVENTS[i]="${summary[0]:-?}/${summary[1]:-?}"
	if ! grep -q started start.log; then
		EN_WHY[i]="shimtrace start failed: $(last_line start.log)"
	elif ! grep -q stopped session-stop.log; then
		EN_WHY[i]="shimtrace stop failed: $(last_line session-stop.log)"
	elif ! read -r -a span <<<"$(event_span "$dir")" || ((${#span[@]} != 2)); then
		EN_WHY[i]="no pthread:mutex_lock event in the trace ($(last_line session-stop.log))"
	else
		# in us
		EN_START[i]=$(((t1 - t0) / 1000))
		EN_FIRST[i]=$(((span[0] - t0) / 1000))
		EN_STOP[i]=$(((t3 - t2) / 1000))
		EN_SPAN[i]=$(((span[1] - span[0]) / 1000))
	fi
	rm -rf "$dir"
}

EN_SKIP=$(why_not registered)
if [[ -z $EN_SKIP ]]; then
	for ((i = 1; i <= ENABLES; i++)); do
		echo "enable $i/$ENABLES" >&2
		run_enable "$i"
	done
fi
DAEMON_END=
stop_shimtraced

# ============ report ============

ust_version=$(ust_version)
if [[ -n $ust_version ]]; then
	LABEL1[lttng]="lttng-ust $ust_version pthread wrapper, sessiond running, no session"
	LABEL2[lttng]="lttng-ust $ust_version pthread wrapper, sessiond running, no session"
fi

# ---- table 1 ----
echo
echo "### Dormant cost in a single-threaded program"
echo
echo "| configuration | ns/pair | vs bare | ns/write | vs bare | registered |"
echo "|---|---|---|---|---|---|"
for key in "${KEYS1[@]}"; do
	if [[ -z ${BEST[pair,$key]:-} || -z ${BEST[write,$key]:-} ]]; then
		echo "| ${LABEL1[$key]} | ${WHY[$key]:-unavailable} | | | | |"
		continue
	fi
	reg=-
	case $key in
	registered | session | lttng) reg=${NOTE[$key]:-NO (see the warnings)} ;;
	dormant) reg="no (no daemon)" ;;
	esac
	printf '| %s | %.2f | %s | %.2f | %s | %s |\n' "${LABEL1[$key]}" \
		"${BEST[pair,$key]}" "$(ratio "${BEST[pair,$key]}" "${BEST[pair,bare]:-}")" \
		"${BEST[write,$key]}" "$(ratio "${BEST[write,$key]}" "${BEST[write,bare]:-}")" "$reg"
done
echo
if [[ -n ${BEST[pair,bare]:-} && -n ${BEST[write,bare]:-} && -n ${BEST[pair,idle]:-} && -n ${BEST[write,idle]:-} ]]; then
	printf -- '-> an idle thread costs %.2f ns per pair and %.2f ns per write() (glibc off its single-threaded paths)\n' \
		"$(calc "${BEST[pair,idle]} - ${BEST[pair,bare]}")" "$(calc "${BEST[write,idle]} - ${BEST[write,bare]}")"
fi
for key in dormant registered session lttng; do
	[[ -n ${BEST[pair,$key]:-} && -n ${BEST[write,$key]:-} && -n ${BEST[pair,bare]:-} && -n ${BEST[write,bare]:-} ]] || continue
	printf -- '-> %s: %+.2f ns per pair over bare (%+.2f per call), %+.2f ns per write()\n' "${LABEL1[$key]}" \
		"$(calc "${BEST[pair,$key]} - ${BEST[pair,bare]}")" "$(calc "(${BEST[pair,$key]} - ${BEST[pair,bare]}) / 2")" \
		"$(calc "${BEST[write,$key]} - ${BEST[write,bare]}")"
done
echo "best of $REPS runs; each run reports the median of $ROUNDS rounds of $PAIRS pairs (or write() calls to /dev/null)"
for key in "${KEYS1[@]}"; do
	[[ -n ${RUNS[pair,$key]:-} ]] && echo "  ${key} runs ns/pair: ${RUNS[pair,$key]}; ns/write: ${RUNS[write,$key]:-}"
	[[ -n ${WARN[$key]:-} ]] && echo "  WARNING ${key}: ${WARN[$key]}"
done

# ---- table 2 ----
echo
echo "### Process start ($TRUE_BIN, posix_spawn + waitpid)"
echo
echo "| configuration | mean us | median us | min us | extra vs bare (mean) | extra vs bare (median) |"
echo "|---|---|---|---|---|---|"
# extra VALUE BASE: "+123 us (+0.12 ms)".
extra() {
	is_num "${2:-}" || {
		printf -- -
		return
	}
	fmt '%+.0f us (%+.2f ms)' "$1 - $2, ($1 - $2) / 1000"
}
for key in "${KEYS2[@]}"; do
	if [[ -z ${SP_MEDIAN[$key]:-} ]]; then
		echo "| ${LABEL2[$key]} | ${SP_WHY[$key]:-unavailable} | | | | |"
		continue
	fi
	if [[ $key == bare ]]; then
		ex_mean=-
		ex_med=-
	else
		ex_mean=$(extra "${SP_MEAN[$key]}" "${SP_MEAN[bare]:-}")
		ex_med=$(extra "${SP_MEDIAN[$key]}" "${SP_MEDIAN[bare]:-}")
	fi
	printf '| %s | %.1f | %.1f | %.1f | %s | %s |\n' "${LABEL2[$key]}" \
		"${SP_MEAN[$key]}" "${SP_MEDIAN[$key]}" "${SP_MIN[$key]}" "$ex_mean" "$ex_med"
done
echo
echo "the run with the lowest median of $REPS, each $SPAWNS starts after 20 warm-ups"
for key in "${KEYS2[@]}"; do
	[[ -n ${SP_RUNS[$key]:-} ]] && echo "  ${key} runs mean/median us: ${SP_RUNS[$key]}"
	[[ -n ${SP_EVENTS[$key]:-} ]] && echo "  ${key} last session: ${SP_EVENTS[$key]}"
	[[ -n ${SP_WARN[$key]:-} ]] && echo "  WARNING ${key}: ${SP_WARN[$key]}"
done

# ---- table 3 ----
echo
echo "### Enable latency (shimtrace start to the first event of a running process)"
echo
echo "| run | \`shimtrace start\` took (ms) | first event after (ms) | \`shimtrace stop\` took (ms) | first to last event (ms) | events recorded/lost |"
echo "|---|---|---|---|---|---|"
# ms US: microseconds as milliseconds, 3 decimals.
ms() {
	fmt '%.3f' "$1 / 1000"
}
if [[ -n $EN_SKIP ]]; then
	echo "| - | $EN_SKIP | | | | |"
else
	for ((i = 1; i <= ENABLES; i++)); do
		if [[ -n ${EN_WHY[i]:-} ]]; then
			echo "| $i | ${EN_WHY[i]} | | | | ${EN_EVENTS[i]:--} |"
		else
			echo "| $i | $(ms "${EN_START[i]}") | $(ms "${EN_FIRST[i]}") | $(ms "${EN_STOP[i]}") | $(ms "${EN_SPAN[i]}") | ${EN_EVENTS[i]} |"
		fi
	done
	if ((${#EN_FIRST[@]})); then
		printf '| median | %s | %s | %s | %s | |\n' \
			"$(ms "$(printf '%s\n' "${EN_START[@]}" | median)")" \
			"$(ms "$(printf '%s\n' "${EN_FIRST[@]}" | median)")" \
			"$(ms "$(printf '%s\n' "${EN_STOP[@]}" | median)")" \
			"$(ms "$(printf '%s\n' "${EN_SPAN[@]}" | median)")"
	fi
fi
echo
echo "times from the wall clock just before \`shimtrace start\` (bash's EPOCHREALTIME, else date +%s%N), each"
echo "command's own process start included; the first event is the earliest pthread:mutex_lock in"
echo "\`shimtrace view\` (wall clock); stop came 300 ms after start returned, so first to last event"
echo "should be about 300 ms + start + stop"

# ---- machine and commands ----
echo
machine_line
echo "programs: ${COMPILE_SHOWN//PROG/mutex-pairs}"
echo "          ${COMPILE_SHOWN//PROG/spawn}"
echo "commands (run in a temp dir \$TMP; PRELOAD=$PRELOAD):"
echo "  daemon: $(quoted "$SHIMTRACED") --rundir \$TMP/rundir --foreground --log-level warning & (SIGTERM at the end)"
[[ -z $LTTNG_SKIP ]] && echo "  lttng: lttng-sessiond --daemonize --no-kernel, unless a session daemon answers already"
for key in "${KEYS1[@]}"; do
	a="$PAIRS $ROUNDS"
	[[ $key == idle ]] && a="--idle-thread $a"
	env_s=$(shown_env "$key")
	env_s=${env_s//"$PRELOAD"/\$PRELOAD}
	CMD[$key]="${env_s}./mutex-pairs $a; ${env_s}./mutex-pairs --write $a"
	[[ $key == session ]] && CMD[$key]="shimtrace create S -o DIR; shimtrace enable -s S 'nothing:*'; shimtrace start S; ${CMD[$key]}; shimtrace stop S; shimtrace destroy S"
	echo "  1 ${key}: ${CMD[$key]}"
done
for key in "${KEYS2[@]}"; do
	env_s=$(shown_env "$key")
	env_s=${env_s//"$PRELOAD"/\$PRELOAD}
	c="${env_s}./spawn $SPAWNS $TRUE_BIN"
	[[ $key == session-all ]] && c="shimtrace create S -o DIR; shimtrace enable -s S 'pthread:*'; shimtrace start S; $c; shimtrace stop S; shimtrace destroy S"
	echo "  2 ${key}: $c"
done
echo "  3 enable: SHIMTRACE_RUNDIR=\$TMP/rundir LD_PRELOAD=\$PRELOAD ./mutex-pairs 4000000000 1 & (until shimtrace list -p PID shows it);"
echo "    shimtrace create S -o DIR; shimtrace enable -s S pthread:mutex_lock; T0; shimtrace start S; T1; sleep 0.3;"
echo "    shimtrace stop S; shimtrace destroy S; kill PID; shimtrace view DIR (earliest pthread:mutex_lock)"
echo "  (every shimtrace command with SHIMTRACE_RUNDIR=\$TMP/rundir)"
if [[ -z $DAEMON_SKIP ]]; then
	echo
	echo "daemon: ${DAEMON_END:-not stopped}; its log (warnings and errors): $(grep -c . shimtraced.log) lines"
	head -n 10 shimtraced.log | sed 's/^/  /'
fi
exit 0
