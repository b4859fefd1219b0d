#!/usr/bin/env bash
# run-relay.sh: does a trace streamed to lttng-relayd on loopback keep up
# with the same trace written to disk (issue 25)? One thread locks and
# unlocks a mutex N times (mutex-pairs N 1), recorded four ways:
#
#   shimtrace, disk    shimtrace record -q -o DIR
#   shimtrace, relayd  shimtrace record -q --set-url net://127.0.0.1:CTRL:DATA
#   LTTng-UST, disk    lttng create S --output=DIR, the pthread wrapper
#   LTTng-UST, relayd  lttng create S --set-url net://127.0.0.1:CTRL:DATA
#
# to an lttng-relayd the script starts on free loopback ports, its output
# in the temp dir beside the disk runs' trace. A run's wall time goes from
# its first command (record; lttng create) to the trace complete where it
# goes (record returned; lttng stop and destroy returned); its events
# are counted in the trace there, with babeltrace2. Prints events per
# second of each, and the ratios of shimtrace's relay to its disk and to
# LTTng's relay.
#
# Usage: bench/run-relay.sh [--pairs N] [--reps K] [--build DIR]
#
#   --pairs N    lock+unlock pairs per run (default 10000000; shimtrace
#                writes 2 events a pair, LTTng-UST 3)
#   --reps K     runs of each of the four; the median run is shown (default 3)
#   --build DIR  build directory holding core/, wrappers/ and ctl/ (default .)
#
# Environment: SHIMTRACE_BIN, SHIMTRACE_LIBDIR (an installed shimtrace); CC.
# Needs lttng-relayd (Debian lttng-tools) for the relayd rows, and
# liblttng-ust-dev and babeltrace2 for LTTng's; rows that cannot run say
# why.
#
# This is a benchmark, not a test: it always exits 0 once it has printed
# its table, whatever the numbers.

BENCH=run-relay.sh
PAIRS=10000000
REPS=3
# shellcheck source=bench/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh" || exit 2

USAGE=19,24
bench_args pairs:PAIRS:count reps:REPS:count -- "$@"
bench_start mutex-pairs clockread
PROG=$TMP/mutex-pairs
DISK=$TMP/trace
RELAY_OUT=$TMP/relay
# (mutex-pairs warms up on N pairs, at most 100000, before its round)
WARM=$((PAIRS < 100000 ? PAIRS : 100000))

# Our lttng-relayd is BG_PID, which lib.sh's cleanup stops; an LTTng
# session sending to it is destroyed first, while the relay still answers.
# shellcheck disable=SC2317 # called by the EXIT trap
relay_cleanup() {
	if [[ -n $LTTNG_SESSION ]]; then
		lttng destroy "$LTTNG_SESSION" >/dev/null 2>&1
		LTTNG_SESSION=
	fi
	bench_cleanup
}
trap relay_cleanup EXIT

CONFIGS=(st-disk st-relay lt-disk lt-relay)
declare -A TOOL=([st-disk]=shimtrace [st-relay]=shimtrace [lt-disk]=LTTng-UST [lt-relay]=LTTng-UST)
declare -A DEST=([st-disk]="disk (-o)" [st-relay]="relayd (--set-url)"
	[lt-disk]="disk (--output)" [lt-relay]="relayd (--set-url)")
# Per run (CONFIG,REP): WALL (s, first command to the trace complete),
# TAIL (s, the program's exit to the same), NS (the loop's ns a pair),
# EVENTS (in the trace), LOST, BYTES (of the trace); RATE (events/s);
# CPU (s: the busy time of all CPUs in WALL), RCPU (s: lttng-relayd's);
# FAILED (why the run failed). By CONFIG: SKIP (why it does not run),
# WHY (why its last run failed), WARN.
declare -A WALL=() TAIL=() NS=() EVENTS=() LOST=() BYTES=() RATE=() CPU=() RCPU=() FAILED=() SKIP=()
declare -A WHY=() WARN=()
TICK=$(getconf CLK_TCK)

# failed CONFIG REP REASON LOG: the run failed for REASON; the end of LOG
# goes to stderr beside the progress lines.
failed() {
	FAILED[$1,$2]=$3
	WHY[$1]=$3
	echo "  failed: $3" >&2
	tail -n 5 "$4" 2>/dev/null | sed 's/^/  | /' >&2
}

# ---- our relay daemon ----

RELAY_URL=
RELAY_SKIP=
# start_relayd: an lttng-relayd on three free loopback ports (another's
# may hold one: ten tries), BG_PID; RELAY_URL, or RELAY_SKIP says why not.
start_relayd() {
	local base ctrl data live
	if ! command -v lttng-relayd >/dev/null; then
		RELAY_SKIP="skipped: no lttng-relayd (Debian package lttng-tools)"
		return 1
	fi
	mkdir -p "$RELAY_OUT"
	for base in $(shuf -i 20000-60000 -n 10); do
		ctrl=$base data=$((base + 1)) live=$((base + 2))
		lttng-relayd -o "$RELAY_OUT" -C "tcp://127.0.0.1:$ctrl" -D "tcp://127.0.0.1:$data" \
			-L "tcp://127.0.0.1:$live" >relayd.log 2>&1 &
		BG_PID=$!
		for _ in $(seq 50); do
			alive "$BG_PID" || break
			# (listening: a connection to its live port is taken; and
			# it still runs after, so the port was not someone else's)
			if (exec 3<>"/dev/tcp/127.0.0.1/$live") 2>/dev/null; then
				sleep 0.2
				alive "$BG_PID" || break
				RELAY_URL=net://127.0.0.1:$ctrl:$data
				return 0
			fi
			sleep 0.1
		done
		stop_pid "$BG_PID"
		wait "$BG_PID" 2>/dev/null
		BG_PID=
	done
	RELAY_SKIP="unavailable (lttng-relayd did not start: $(last_line relayd.log))"
	return 1
}

# relay_up: our relay daemon runs: started again (on other ports) if
# something else stopped it, which RELAY_GONE counts. False, with
# RELAY_SKIP, if it cannot start.
RELAY_GONE=0
relay_up() {
	[[ -n $BG_PID ]] && alive "$BG_PID" && return 0
	if [[ -n $BG_PID ]]; then
		wait "$BG_PID" 2>/dev/null
		BG_PID=
		RELAY_GONE=$((RELAY_GONE + 1))
		echo "  lttng-relayd was stopped by something else ($(last_line relayd.log)); starting another" >&2
	fi
	start_relayd
}

# clear_relay: the relay's output emptied (it makes the directories of
# the next session again).
clear_relay() {
	[[ -d $RELAY_OUT ]] && find "$RELAY_OUT" -mindepth 1 -delete 2>/dev/null
	return 0
}

# ---- one run ----

# busy_ticks: the busy clock ticks of all CPUs since boot (/proc/stat:
# user, nice, system, irq and softirq; not idle, iowait, nor the steal of
# a virtual machine, time its host gave to others).
busy_ticks() {
	awk '$1 == "cpu" { print $2 + $3 + $4 + $7 + $8; exit }' /proc/stat
}

# relayd_ticks: the clock ticks our lttng-relayd ran (user and system);
# 0 without one.
relayd_ticks() {
	cpu_ticks "${BG_PID:-none}"
}

# cpu_from CONFIG REP BUSY0 RELAYD0: the run's CPU and RCPU, from the
# counts at its start.
cpu_from() {
	CPU[$1,$2]=$(fmt '%.3f' "($(busy_ticks) - $3) / $TICK")
	RCPU[$1,$2]=$(fmt '%.3f' "($(relayd_ticks) - $4) / $TICK")
}

# stamp_ns FILE: bash's $EPOCHREALTIME written in FILE, in ns.
stamp_ns() {
	local t
	t=$(cat "$1" 2>/dev/null)
	[[ $t =~ ^([0-9]+)[.,]([0-9]{6})$ ]] && printf '%s%s000' "${BASH_REMATCH[1]}" "${BASH_REMATCH[2]}"
}

# shimtrace_trace_numbers WHERE: "EVENTS LOST" summed over the shimtrace
# traces under WHERE (a directory with a metadata file is one), as
# `shimtrace report locks --json` reads them; "? ?" if one is not read.
shimtrace_trace_numbers() {
	local d line e l events=0 lost=0
	while IFS= read -r d; do
		line=$("$SHIMTRACE" report locks --json "$d" 2>/dev/null | head -n 1)
		e=$(sed -n 's/^{"trace": "[^"]*", "events": \([0-9]*\),.*/\1/p' <<<"$line")
		l=$(sed -n 's/.*"lost": \([0-9]*\),.*/\1/p' <<<"$line")
		if [[ -z $e || -z $l ]]; then
			printf '? ?'
			return
		fi
		events=$((events + e)) lost=$((lost + l))
	done < <(find "$1" -name metadata -printf '%h\n' | sort -u)
	printf '%s %s' "$events" "$lost"
}

# measured CONFIG REP T0 T1 END WHERE LOST: keep a run that went from T0
# to T1 (ns), its program having ended at END, its trace under WHERE;
# LOST from the tool ("" for shimtrace: read from the trace).
measured() {
	local cfg=$1 rep=$2 where=$6 lost=$7 ns events min
	local -a st
	ns=$(field ns_per_pair out)
	if ! is_num "$ns"; then
		failed "$cfg" "$rep" "unavailable (no ns_per_pair: $(last_line err))" err
		return
	fi
	events=$(lttng_count "$where")
	if [[ ${TOOL[$cfg]} == shimtrace ]]; then
		read -r -a st <<<"$(shimtrace_trace_numbers "$where")"
		lost=${st[1]:-?}
		if [[ $events == '?' ]]; then
			events=${st[0]:-?}
		elif [[ $events != "${st[0]:-}" ]]; then
			WARN[$cfg]+="${WARN[$cfg]:+; }run $rep: babeltrace2 counts $events events, shimtrace report ${st[0]:-?}"
		fi
	fi
	NS[$cfg,$rep]=$ns
	WALL[$cfg,$rep]=$(fmt '%.6f' "($4 - $3) / 1e9")
	[[ -n $5 ]] && TAIL[$cfg,$rep]=$(fmt '%.6f' "($4 - $5) / 1e9")
	EVENTS[$cfg,$rep]=$events
	LOST[$cfg,$rep]=$lost
	BYTES[$cfg,$rep]=$(du -sb "$where" | cut -f1)
	is_count "$events" && RATE[$cfg,$rep]=$(fmt '%.0f' "$events / ${WALL[$cfg,$rep]}")
	# every pair of the program is 2 events for shimtrace, 3 for LTTng
	min=$((PAIRS + WARM))
	[[ ${TOOL[$cfg]} == shimtrace ]] && min=$((2 * min)) || min=$((3 * min))
	if is_count "$events" && [[ ${lost%'*'} =~ ^[0-9]+$ ]] && ((events + ${lost%'*'} < min)); then
		WARN[$cfg]+="${WARN[$cfg]:+; }run $rep: $events recorded + $lost lost < $min expected"
	fi
}

# The program under record, through a shell that notes when it ended.
# (record -q: its summary reads the whole trace again, 0.8 s for 20M
# events, after the trace is where it goes)
STAMP="\"\$@\"; rc=\$?; echo \"\$EPOCHREALTIME\" >$(quoted "$TMP/program-end"); exit \$rc"

run_shimtrace() {
	local cfg=$1 rep=$2 where t0 t1 rc b0 r0
	local -a to
	if [[ $cfg == st-disk ]]; then
		to=(-o "$DISK")
		where=$DISK
	else
		to=(--set-url "$RELAY_URL")
		where=$RELAY_OUT
	fi
	rm -rf "$DISK" "$TMP/program-end"
	clear_relay
	b0=$(busy_ticks) r0=$(relayd_ticks)
	t0=$(now_ns)
	# (TMPDIR: record's private directory, and a trace it keeps there
	# when it cannot send it, in ours)
	env -u SHIMTRACE_RUNDIR -u SHIMTRACE_DISABLE -u LD_PRELOAD TMPDIR="$TMP" \
		"$SHIMTRACE" record -q "${to[@]}" -- bash -c "$STAMP" bash "$PROG" "$PAIRS" 1 >out 2>err
	rc=$?
	t1=$(now_ns)
	cpu_from "$cfg" "$rep" "$b0" "$r0"
	if ((rc != 0)); then
		failed "$cfg" "$rep" "unavailable (record exited $rc: $(last_line err))" err
	else
		measured "$cfg" "$rep" "$t0" "$t1" "$(stamp_ns "$TMP/program-end")" "$where" ""
	fi
	rm -rf "$DISK"
	clear_relay
}

run_lttng() {
	local cfg=$1 rep=$2 to where t0 t1 end ok=1 b0 r0
	if [[ $cfg == lt-disk ]]; then
		to=$DISK
		where=$DISK
	else
		to=$RELAY_URL
		where=$RELAY_OUT
	fi
	rm -rf "$DISK"
	clear_relay
	b0=$(busy_ticks) r0=$(relayd_ticks)
	t0=$(now_ns)
	if ! lttng_up "shimtrace-relay-$$-$cfg-$rep" "$to"; then
		failed "$cfg" "$rep" "unavailable (lttng: $(last_line lttng.log))" lttng.log
		ok=
	elif ! env "${LTTNG_ENV[@]}" "$PROG" "$PAIRS" 1 >out 2>err; then
		failed "$cfg" "$rep" "unavailable ($(last_line err))" err
		ok=
	fi
	end=$(now_ns)
	[[ -n $LTTNG_SESSION ]] && lttng_down
	t1=$(now_ns)
	cpu_from "$cfg" "$rep" "$b0" "$r0"
	[[ -n $ok ]] && measured "$cfg" "$rep" "$t0" "$t1" "$end" "$where" "$(lttng_lost)"
	rm -rf "$DISK"
	clear_relay
}

# ---- run: the four interleaved, REPS times ----

# skip CONFIG REASON: CONFIG does not run, for REASON (if not empty).
skip() {
	[[ -n $2 ]] && SKIP[$1]=$2
	return 0
}
ST_SKIP=
[[ -x $SHIMTRACE ]] || ST_SKIP="unavailable (no shimtrace CLI at $SHIMTRACE)"
start_relayd
lttng_setup
LT_SKIP=$LTTNG_SKIP
if [[ -z $LT_SKIP ]] && ! command -v babeltrace2 >/dev/null; then
	LT_SKIP="skipped: no babeltrace2 to count LTTng-UST's events"
fi
skip st-disk "$ST_SKIP"
skip st-relay "${ST_SKIP:-$RELAY_SKIP}"
skip lt-disk "$LT_SKIP"
skip lt-relay "${LT_SKIP:-$RELAY_SKIP}"

for ((rep = 1; rep <= REPS; rep++)); do
	echo "run $rep/$REPS: clock reads" >&2
	bench_clock_read
	for cfg in "${CONFIGS[@]}"; do
		[[ -n ${SKIP[$cfg]:-} ]] && continue
		echo "run $rep/$REPS: ${TOOL[$cfg]} to ${DEST[$cfg]}" >&2
		# (a relay run whose relay went away during it runs again, once)
		for try in 1 2; do
			if [[ $cfg == *-relay ]] && ! relay_up; then
				failed "$cfg" "$rep" "$RELAY_SKIP" relayd.log
				break
			fi
			unset "FAILED[$cfg,$rep]"
			case $cfg in
			st-*) run_shimtrace "$cfg" "$rep" ;;
			lt-*) run_lttng "$cfg" "$rep" ;;
			esac
			if [[ $cfg != *-relay || -z ${FAILED[$cfg,$rep]:-} ]] || alive "$BG_PID"; then
				break
			fi
			((try == 1)) && echo "run $rep/$REPS: ${TOOL[$cfg]} to ${DEST[$cfg]}, again" >&2
		done
	done
done

# ---- report ----

uv=$(ust_version)
TOOL[lt-disk]="LTTng-UST${uv:+ $uv}"
TOOL[lt-relay]=${TOOL[lt-disk]}

# MED[CONFIG]: the rep of the median run by events/s (all its numbers are
# shown); empty when none counted its events.
declare -A MED=()
for cfg in "${CONFIGS[@]}"; do
	mapfile -t reps < <(for ((rep = 1; rep <= REPS; rep++)); do
		[[ -n ${RATE[$cfg,$rep]:-} ]] && echo "$rep"
	done)
	((${#reps[@]})) || continue
	mapfile -t r < <(for rep in "${reps[@]}"; do echo "${RATE[$cfg,$rep]}"; done)
	MED[$cfg]=${reps[$(median_at "${r[@]}")]}
done

# rate_ratio A B: A's median events/s over B's, "-" when either is missing.
rate_ratio() {
	ratio "${RATE[$1,${MED[$1]:-x}]:-}" "${RATE[$2,${MED[$2]:-x}]:-}"
}

# secs VALUE: "%.3f", "-" when missing.
secs() {
	if is_num "${1:-}"; then fmt '%.3f' "$1"; else printf -- -; fi
}

echo
echo "### Streaming to lttng-relayd on loopback against writing to disk: one thread, $PAIRS lock+unlock pairs, default buffers (median of $REPS)"
echo
echo "| tool | to | wall s | after the program s | CPU s, all | CPU s, lttng-relayd | loop ns/pair | events in the trace | lost | events/s | trace MB | MB/s |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
for cfg in "${CONFIGS[@]}"; do
	rep=${MED[$cfg]:-}
	if [[ -z $rep ]]; then
		echo "| ${TOOL[$cfg]} | ${DEST[$cfg]} | ${SKIP[$cfg]:-${WHY[$cfg]:-unavailable (no event count)}} | | | | | | | | | |"
		continue
	fi
	w=${WALL[$cfg,$rep]} b=${BYTES[$cfg,$rep]}
	printf '| %s | %s | %.3f | %s | %s | %s | %.1f | %s | %s | %.0f | %.1f | %.1f |\n' "${TOOL[$cfg]}" \
		"${DEST[$cfg]}" "$w" "$(secs "${TAIL[$cfg,$rep]:-}")" "$(secs "${CPU[$cfg,$rep]:-}")" \
		"$(secs "${RCPU[$cfg,$rep]:-}")" "${NS[$cfg,$rep]}" "${EVENTS[$cfg,$rep]}" \
		"${LOST[$cfg,$rep]}" "${RATE[$cfg,$rep]}" "$(calc "$b / 1e6")" "$(calc "$b / 1e6 / $w")"
done
echo
printf -- '- shimtrace, relayd over disk, events/s: %s (issue 25: streaming keeps up with disk)\n' \
	"$(rate_ratio st-relay st-disk)"
printf -- '- shimtrace over LTTng-UST, both to relayd, events/s: %s; LTTng-UST'"'"'s wall s over shimtrace'"'"'s for the same pairs: %s\n' \
	"$(rate_ratio st-relay lt-relay)" "$(ratio "${WALL[lt-relay,${MED[lt-relay]:-x}]:-}" "${WALL[st-relay,${MED[st-relay]:-x}]:-}")"
printf -- '- LTTng-UST, relayd over disk, events/s: %s\n' "$(rate_ratio lt-relay lt-disk)"
[[ -n $CLOCK_TSC ]] && echo "- $(clock_text)"
echo "- wall s: from the run's first command (shimtrace record; lttng create) to the trace complete"
echo "  where it goes (record returned; lttng stop and destroy returned), the program's run in it;"
echo "  after the program s: the part of it after the program exited. CPU s, all: the busy time"
echo "  of all $(nproc) CPUs in wall s (/proc/stat: the whole machine, which must be otherwise idle),"
echo "  so wall s is at least that over $(nproc); CPU s, lttng-relayd: the relay daemon's part of it."
echo "  events/s: the events in the trace (babeltrace2's counter, on the trace directory or on the"
echo "  relay's output) over wall s. shimtrace writes 2 events a pair, LTTng-UST 3; $WARM warm-up"
echo "  pairs come first."
echo "- lost: shimtrace's from its trace (report locks --json), LTTng-UST's the discarded count"
echo "  that lttng stop warned about. Both in discard mode (the default)."
echo "- the median run is the one with the median events/s; all its numbers are shown."
((RELAY_GONE)) &&
	echo "- WARNING: something else stopped our lttng-relayd $RELAY_GONE times during the runs; it was started again each time."
echo "- the disk traces and the relay's output are both on $(df -T "$TMP" | awk 'NR == 2 { print $2 " (" $1 ")" }')."
garbled_note LOST

echo
echo "runs (rep order): wall s, after the program s, CPU s all/lttng-relayd, loop ns/pair, events/lost, events/s:"
for cfg in "${CONFIGS[@]}"; do
	s=
	for ((rep = 1; rep <= REPS; rep++)); do
		if [[ -n ${FAILED[$cfg,$rep]:-} ]]; then
			s+="${s:+; }${FAILED[$cfg,$rep]}"
			continue
		fi
		[[ -n ${NS[$cfg,$rep]:-} ]] || continue
		s+="${s:+; }$(secs "${WALL[$cfg,$rep]}") $(secs "${TAIL[$cfg,$rep]:-}") $(secs "${CPU[$cfg,$rep]:-}")/$(secs "${RCPU[$cfg,$rep]:-}") ${NS[$cfg,$rep]} ${EVENTS[$cfg,$rep]}/${LOST[$cfg,$rep]} $(is_num "${RATE[$cfg,$rep]:-}" && fmt '%.0f' "${RATE[$cfg,$rep]}" || printf -)"
	done
	[[ -n $s ]] && echo "  $cfg: $s"
	[[ -n ${WARN[$cfg]:-} ]] && echo "  WARNING $cfg: ${WARN[$cfg]}"
done

echo
machine_line
load_line
echo "program: ${COMPILE_SHOWN//PROG/mutex-pairs}"
echo "commands (in a temp dir; URL net://127.0.0.1:CTRL:DATA${RELAY_URL:+, here $RELAY_URL}):"
echo "  relayd: lttng-relayd -o \$TMP/relay -C tcp://127.0.0.1:CTRL -D tcp://127.0.0.1:DATA -L tcp://127.0.0.1:LIVE & (SIGTERM at the end)"
echo "  st-disk: shimtrace record -q -o DIR -- bash -c 'STAMP' bash ./mutex-pairs $PAIRS 1"
echo "  st-relay: shimtrace record -q --set-url URL -- bash -c 'STAMP' bash ./mutex-pairs $PAIRS 1"
echo "    (STAMP: \"\$@\"; rc=\$?; echo \"\$EPOCHREALTIME\" >program-end; exit \$rc: when the program ended)"
echo "  lt-disk: $(lttng_up_shown); $LTTNG_ENV_SHOWN ./mutex-pairs $PAIRS 1; lttng stop S; lttng destroy S"
echo "  lt-relay: $(lttng_up_shown | sed 's|--output=DIR|--set-url=URL|'); $LTTNG_ENV_SHOWN ./mutex-pairs $PAIRS 1; lttng stop S; lttng destroy S"
[[ -n $LTTNG_SKIP ]] || echo "  lttng-sessiond --daemonize --no-kernel was started unless one answered already"
echo "  counted: babeltrace2 DIR -c sink.utils.counter; shimtrace report locks --json DIR (lost)"
exit 0
