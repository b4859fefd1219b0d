#!/usr/bin/env bash
# run-drain.sh: how fast the consumer writes a trace. One thread locks and
# unlocks a mutex at full speed for N pairs while a session of shimtraced
# (and then one of LTTng-UST) records it; the consumer's CPU time (utime +
# stime from /proc/PID/stat) before the program starts and after the stop
# has returned gives its busy time, the trace directory its size.
#
# Usage: bench/run-drain.sh [--pairs N] [--reps K] [--warm W] [--beside B]
#                            [--build DIR]
#
#   --pairs N    lock+unlock pairs per run (default 10000000)
#   --reps K     runs per tool; the median run is shown (default 5)
#   --warm W     untimed pairs before the timed ones (default 1000)
#   --beside B   B processes spinning on the CPU beside the program while it
#                runs, as other work on a shared machine (default 0)
#   --build DIR  build directory holding core/, wrappers/ and ctl/ (default .)
#
# Environment: SHIMTRACE_BIN (the CLI, default DIR/ctl/shimtrace),
# SHIMTRACED_BIN (the daemon, default shimtraced next to the CLI) and
# SHIMTRACE_LIBDIR (for an installed shimtrace), as for run-control.sh; CC.
#
# This is a benchmark, not a test: it always exits 0 once it has printed
# its table, whatever the numbers; rows that cannot run say why.

BENCH=run-drain.sh
PAIRS=10000000
REPS=5
WARM=1000
BESIDE=0
# shellcheck source=bench/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh" || exit 2

USAGE=8,20
bench_args pairs:PAIRS:count reps:REPS:count warm:WARM:count beside:BESIDE:text -- "$@"
[[ $BESIDE =~ ^[0-9]+$ ]] || die "bad --beside '$BESIDE'"
bench_start mutex-pairs
RUNDIR=$TMP/rundir
PROG=$TMP/mutex-pairs
HZ=$(getconf CLK_TCK) || die "no CLK_TCK"
DIR=$TMP/trace

# Per run (TOOL,REP): NS (loop ns per pair), EVENTS, LOST, BYTES, CPU
# (consumer seconds), WALL (seconds, program start to stop returned).
declare -A NS=() EVENTS=() LOST=() BYTES=() CPU=() WALL=() WHY=() IVCSW=()
SPINNERS=()

# spin_start / spin_stop: the --beside processes, around a program's run.
spin_start() {
	local k
	for ((k = 0; k < BESIDE; k++)); do
		(while :; do :; done) &
		SPINNERS+=($!)
	done
}
spin_stop() {
	((${#SPINNERS[@]})) && kill "${SPINNERS[@]}" 2>/dev/null
	((${#SPINNERS[@]})) && wait "${SPINNERS[@]}" 2>/dev/null
	SPINNERS=()
}
TOOLS=(shimtrace lttng)
declare -A LABEL=([shimtrace]="shimtraced" [lttng]="LTTng-UST (lttng-consumerd)")

# measured TOOL REP C0 C1 T0 T1 RECORDED LOST: keep a run.
measured() {
	local ns
	ns=$(field ns_per_pair out)
	if ! is_num "$ns"; then
		WHY[$1]="unavailable (no ns_per_pair: $(last_line err))"
		return
	fi
	NS[$1,$2]=$ns
	IVCSW[$1,$2]=$(field ivcsw out)
	CPU[$1,$2]=$(calc "($4 - $3) / $HZ")
	WALL[$1,$2]=$(calc "($6 - $5) / 1e9")
	EVENTS[$1,$2]=$7
	LOST[$1,$2]=$8
	BYTES[$1,$2]=$(du -sb "$DIR" | cut -f1)
}

run_shimtrace() {
	local rep=$1 c0 c1 t0 t1
	local -a sum
	rm -rf "$DIR"
	: >session.log
	if ! st create drain -o "$DIR" >>session.log 2>&1 ||
		! st enable -s drain 'pthread:*' >>session.log 2>&1 ||
		! st start drain >>session.log 2>&1; then
		WHY[shimtrace]="unavailable ($(last_line session.log))"
		st destroy drain >/dev/null 2>&1
		return
	fi
	c0=$(cpu_ticks "$DAEMON_PID")
	spin_start
	t0=$(now_ns)
	env -u SHIMTRACE_DISABLE -u LD_PRELOAD SHIMTRACE_RUNDIR="$RUNDIR" LD_PRELOAD="$PRELOAD" \
		"$PROG" --warm "$WARM" "$PAIRS" 1 >out 2>err
	spin_stop
	st stop drain >stop.log 2>&1
	t1=$(now_ns)
	c1=$(cpu_ticks "$DAEMON_PID")
	st destroy drain >>session.log 2>&1
	read -r -a sum <<<"$(record_summary stop.log)"
	if ((${#sum[@]} < 2)); then
		WHY[shimtrace]="unavailable (no summary from stop: $(last_line stop.log))"
		return
	fi
	measured shimtrace "$rep" "$c0" "$c1" "$t0" "$t1" "${sum[0]}" "${sum[1]}"
}

run_lttng() {
	local rep=$1 c0 c1 t0 t1 ok=1
	local -a pids
	if ! lttng_up "shimtrace-drain-$$" "$DIR"; then
		WHY[lttng]="unavailable ($(last_line lttng.log))"
		ok=
	else
		mapfile -t pids < <(lttng_consumerd_pids)
		((${#pids[@]})) || WHY[lttng]="unavailable (no lttng-consumerd under the session daemon)"
		c0=$(cpu_ticks "${pids[@]}")
		spin_start
		t0=$(now_ns)
		env "${LTTNG_ENV[@]}" "$PROG" --warm "$WARM" "$PAIRS" 1 >out 2>err
		spin_stop
	fi
	lttng_down
	t1=$(now_ns)
	[[ -n $ok && -z ${WHY[lttng]:-} ]] || return
	c1=$(cpu_ticks "${pids[@]}")
	measured lttng "$rep" "$c0" "$c1" "$t0" "$t1" "$(lttng_count "$DIR")" "$(lttng_lost)"
}

DAEMON_SKIP=
start_shimtraced || WHY[shimtrace]=$DAEMON_SKIP
lttng_setup
[[ -n $LTTNG_SKIP ]] && WHY[lttng]=$LTTNG_SKIP
for ((rep = 1; rep <= REPS; rep++)); do
	for tool in "${TOOLS[@]}"; do
		[[ -n ${WHY[$tool]:-} ]] && continue
		echo "run $rep/$REPS: $tool" >&2
		case $tool in
		shimtrace) run_shimtrace "$rep" ;;
		lttng) run_lttng "$rep" ;;
		esac
	done
done
rm -rf "$DIR"
DAEMON_END=
stop_shimtraced

# ---- report ----

# rate TOOL REP: events per consumer CPU second.
rate() {
	calc "${EVENTS[$1,$2]} / (${CPU[$1,$2]} > 0 ? ${CPU[$1,$2]} : 1e-9)"
}

uv=$(ust_version)
LABEL[lttng]="LTTng-UST${uv:+ $uv} (lttng-consumerd)"
echo
echo "### Consumer drain rate: one thread, $PAIRS lock+unlock pairs, default buffers, $BESIDE spinning processes beside (median of $REPS)"
echo
echo "| consumer | loop ns/pair | events recorded/lost | trace MB | bytes/event | consumer CPU s | events/s per CPU s | MB/s per CPU s | wall s | events/s over wall | MB/s over wall |"
echo "|---|---|---|---|---|---|---|---|---|---|---|"
for tool in "${TOOLS[@]}"; do
	mapfile -t reps < <(for ((rep = 1; rep <= REPS; rep++)); do
		[[ -n ${NS[$tool,$rep]:-} ]] && echo "$rep"
	done)
	if ((${#reps[@]} == 0)) || ! is_num "${EVENTS[$tool,${reps[0]}]}"; then
		echo "| ${LABEL[$tool]} | ${WHY[$tool]:-unavailable (no event count)} | | | | | | | | | |"
		continue
	fi
	mapfile -t r < <(for rep in "${reps[@]}"; do rate "$tool" "$rep"; done)
	rep=${reps[$(median_at "${r[@]}")]}
	e=${EVENTS[$tool,$rep]} b=${BYTES[$tool,$rep]} c=${CPU[$tool,$rep]} w=${WALL[$tool,$rep]}
	printf '| %s | %.1f | %s/%s | %.1f | %.1f | %.2f | %s | %s | %.2f | %.0f | %.1f |\n' "${LABEL[$tool]}" \
		"${NS[$tool,$rep]}" "$e" "${LOST[$tool,$rep]}" "$(calc "$b / 1e6")" "$(calc "$b / $e")" "$c" \
		"$( (($(calc "$c > 0"))) && fmt '%.0f' "$e / $c" || echo -)" \
		"$( (($(calc "$c > 0"))) && fmt '%.1f' "$b / 1e6 / $c" || echo -)" \
		"$w" "$(calc "$e / $w")" "$(calc "$b / 1e6 / $w")"
done
echo
echo "- consumer CPU s: user + system time of the consumer (shimtraced; LTTng's lttng-consumerd"
echo "  processes under the session daemon) from just before the program starts to just after"
echo "  the stop command returned: draining, and also registering the process and sizing its"
echo "  buffers (LTTng's session daemon is not counted). Clock ticks of 1/$HZ s."
echo "- per CPU s: what one busy second of the consumer writes; over wall: over the time from"
echo "  the program's start to the stop's return (production and the drain that follows)."
echo "- trace MB: the trace directory (du -sb, 10^6 bytes); bytes/event: its size over the"
echo "  events recorded. shimtrace writes 2 events a pair, LTTng 3."
echo "- the median run is the one with the median events/s per CPU s; all its numbers are shown."
garbled_note LOST

echo
echo "runs (rep order): loop ns/pair, events recorded/lost, MB, consumer CPU s, wall s, the program's preemptions (ivcsw):"
for tool in "${TOOLS[@]}"; do
	s=
	for ((rep = 1; rep <= REPS; rep++)); do
		[[ -n ${NS[$tool,$rep]:-} ]] || continue
		s+="${s:+; }${NS[$tool,$rep]} ${EVENTS[$tool,$rep]}/${LOST[$tool,$rep]} $(fmt '%.1f' "${BYTES[$tool,$rep]} / 1e6") ${CPU[$tool,$rep]} $(fmt '%.2f' "${WALL[$tool,$rep]}") ${IVCSW[$tool,$rep]:--}"
	done
	[[ -n $s ]] && echo "  $tool: $s"
done

echo
machine_line
load_line
echo "program: ${COMPILE_SHOWN//PROG/mutex-pairs}"
echo "commands (in a temp dir):"
echo "  daemon: $(quoted "$SHIMTRACED") --rundir \$TMP/rundir --foreground --log-level warning & (SIGTERM at the end)"
echo "  shimtrace: shimtrace create S -o DIR; shimtrace enable -s S 'pthread:*'; shimtrace start S;"
echo "    SHIMTRACE_RUNDIR=\$TMP/rundir LD_PRELOAD=$PRELOAD ./mutex-pairs --warm $WARM $PAIRS 1;"
echo "    shimtrace stop S; shimtrace destroy S  (every shimtrace command with SHIMTRACE_RUNDIR=\$TMP/rundir)"
echo "  LTTng: $(lttng_up_shown); $LTTNG_ENV_SHOWN ./mutex-pairs --warm $WARM $PAIRS 1; lttng stop S; lttng destroy S"
[[ -n $LTTNG_SKIP ]] || echo "  lttng-sessiond --daemonize --no-kernel was started unless one answered already"
echo "daemon: ${DAEMON_END:-not started}; its log (warnings and errors): $(grep -c . shimtraced.log 2>/dev/null) lines"
head -n 10 shimtraced.log 2>/dev/null | sed 's/^/  /'
exit 0
