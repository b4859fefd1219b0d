#!/usr/bin/env bash
# run-jvm.sh: what recording Java monitor contention costs a contended
# `synchronized` workload (bench/java/MonitorBench.java), side by side
# with JDK Flight Recorder, in one run. Each row is the median of REPS
# runs of THREADS threads x OPS enters of one shared monitor:
#
#   untraced       java, nothing else
#   agent, off     the agent loaded (-agentpath:libshimtrace-jvm.so) and
#                  no session recording: what it costs when disabled
#   shimtrace      shimtrace record --wrap jvm: every contended enter and
#                  wait, with its site (the top frame), as JFR's rows
#   shimtrace-order  the same with --lock-order: also the monitors the
#                  thread holds at each contended enter (jvm:monitor_held,
#                  the lock order, recorded on request: a walk of the stack)
#   JFR, all       -XX:StartFlightRecording with jdk.JavaMonitorEnter at
#                  threshold 0 ms (every contended enter, with its stack)
#   JFR, default   the default profile: jdk.JavaMonitorEnter above 20 ms
#
# Four workloads: `park`, where the holder parks 20 us inside the block
# every PARK-th enter, so that the others block (the contention a tracer
# must see); `yield`, where the holder gives up its CPU inside the block
# at every enter (Thread.yield), so that the others block as often as
# they can: the most contended enters a second, the tracer's cost laid
# bare; `spin`, neither: HotSpot's adaptive spinning takes most contended
# enters without blocking, and what is measured is the cost on a hot
# monitor; `deep`, yield with the loop DEPTH frames down the stack (a
# real program's stacks are deep, and a tracer may walk them at each
# enter: JFR for its stack trace, shimtrace for the monitors held).
# Columns: the loop's time (ms, from the program), the slowdown against
# untraced, the contended enters the JVM counted in the loop
# (ThreadInfo.getBlockedCount, summed over the workers) and those the
# tool recorded of the bench's monitor (shimtrace: report locks' contended
# count of MonitorBench$BenchLock; JFR: its jdk.JavaMonitorEnter events).
#
# Usage: bench/run-jvm.sh [--threads T] [--ops N] [--reps R] [--park P] [--depth D]
#                         [--workloads "W..."] [--build DIR]
#
#   --threads T  worker threads (default 4)
#   --ops N      enters per thread (default 20000)
#   --reps R     runs per row; the median is shown (default 5)
#   --park P     park inside the block every P-th enter (default 10)
#   --depth D    the deep workload's frames below the loop (default 60)
#   --workloads "W..."  these of park, yield, spin and deep only (default: all)
#   --build DIR  build directory (default .)
#
# A benchmark, not a test: it always exits 0 once it has printed its
# table; rows that cannot run say why.

BENCH=run-jvm.sh
THREADS=4
OPS=20000
REPS=5
PARK=10
DEPTH=60
WORKLOADS="park yield spin deep"
# shellcheck source=bench/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh" || exit 2
USAGE=35,44
bench_args threads:THREADS:count ops:OPS:count reps:REPS:count park:PARK:count depth:DEPTH:count \
	workloads:WORKLOADS:text -- "$@"
read -r -a WLS <<<"$WORKLOADS"
((${#WLS[@]})) || die "--workloads is empty"
for wl in "${WLS[@]}"; do
	[[ " park yield spin deep " == *" $wl "* ]] || die "--workloads: no workload '$wl' (park, yield, spin, deep)"
done
JVM_LIB=$(dirname "$PTHREAD_LIB")/libshimtrace-jvm.so
command -v javac >/dev/null || die "no javac: install openjdk-17-jdk-headless"
JFR=$(dirname "$(readlink -f "$(command -v javac)")")/jfr
bench_tmp
cd "$TMP" || die "cannot enter $TMP"
javac -d . "$HERE/java/MonitorBench.java" || die "cannot compile MonitorBench.java"
cat >all.jfc <<'XML'
<?xml version="1.0" encoding="UTF-8"?>
<configuration version="2.0" label="monitor enters">
  <event name="jdk.JavaMonitorEnter">
    <setting name="enabled">true</setting>
    <setting name="stackTrace">true</setting>
    <setting name="threshold">0 ms</setting>
  </event>
</configuration>
XML
export SHIMTRACE_RUNDIR=$TMP/run # no daemon there: the agent, off, finds none

# run ROW WORKLOAD REP: one run; "ms blocked events" appended to ROW.WORKLOAD
run() {
	local row=$1 wl=$2 rep=$3 park=0 yield=0 depth=0 events=- out=$TMP/out.$1.$2.$3
	[[ $wl == park ]] && park=$PARK
	[[ $wl == yield || $wl == deep ]] && yield=1
	[[ $wl == deep ]] && depth=$DEPTH
	local props=(-Dinside=200 -Doutside=2000 -DparkEvery=$park -DyieldEvery=$yield -Ddepth=$depth -cp "$TMP"
		MonitorBench "$THREADS" "$OPS")
	case $row in
	untraced) java "${props[@]}" >"$out" 2>/dev/null ;;
	agent-off) java "-agentpath:$JVM_LIB" "${props[@]}" >"$out" 2>/dev/null ;;
	shimtrace | shimtrace-order)
		local order=()
		[[ $row == shimtrace-order ]] && order=(--lock-order)
		rm -rf "trace.$rep"
		"$SHIMTRACE" record -q --wrap jvm "${order[@]}" -o "trace.$rep" -- java "${props[@]}" >"$out" 2>/dev/null
		events=$("$SHIMTRACE" report locks --json "trace.$rep" 2>/dev/null | python3 -c '
import json, sys
print(sum(l["contended"] for l in json.load(sys.stdin)["locks"] if l.get("class") == "MonitorBench$BenchLock"))')
		;;
	jfr-all | jfr-default)
		local settings=$TMP/all.jfc
		[[ $row == jfr-default ]] && settings=default
		rm -f rec.jfr
		java "-XX:StartFlightRecording=filename=$TMP/rec.jfr,settings=$settings" "${props[@]}" \
			>"$out" 2>/dev/null
		events=$("$JFR" print --events jdk.JavaMonitorEnter rec.jfr 2>/dev/null |
			grep -c 'monitorClass = MonitorBench\$BenchLock (')
		;;
	esac
	local ms blocked
	ms=$(sed -n 's/^ms \([0-9.]*\) .*/\1/p' "$out")
	blocked=$(sed -n 's/.* blocked \([0-9]*\)$/\1/p' "$out")
	[[ -n $ms ]] || { echo "$row $wl: $(last_line "$out")" >&2; return; }
	echo "$ms ${blocked:-?} ${events:-0}" >>"$TMP/$row.$wl"
}

ROWS=(untraced agent-off shimtrace shimtrace-order jfr-all jfr-default)
declare -A WHY
[[ -r $JVM_LIB ]] || {
	WHY[agent-off]="no $JVM_LIB (build with a JDK)"
	WHY[shimtrace]=${WHY[agent-off]} WHY[shimtrace-order]=${WHY[agent-off]}
}
[[ -x $JFR ]] || { WHY[jfr-all]="no jfr tool"; WHY[jfr-default]="no jfr tool"; }

for wl in "${WLS[@]}"; do
	for ((rep = 0; rep < REPS; rep++)); do
		for row in "${ROWS[@]}"; do # interleaved: a busy moment hits every row
			[[ -n ${WHY[$row]:-} ]] || run "$row" "$wl" "$rep"
		done
	done
done

# the run with the median time of ROW.WL: its three values
med_run() {
	[[ -s $TMP/$1.$2 ]] || return 1
	sort -n "$TMP/$1.$2" | awk '{ l[NR] = $0 } END { print l[int((NR + 1) / 2)] }'
}

echo "# run-jvm.sh: $THREADS threads x $OPS enters of one monitor, median of $REPS ($(java -version 2>&1 | head -n 1))"
echo "# $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1), $(nproc) CPUs"
echo
echo "| workload | tool | loop ms | slowdown | contended enters (JVM) | recorded |"
echo "|---|---|---|---|---|---|"
for wl in "${WLS[@]}"; do
	base=$(med_run untraced "$wl" | cut -d' ' -f1)
	for row in "${ROWS[@]}"; do
		if [[ -n ${WHY[$row]:-} ]]; then
			echo "| $wl | $row | - | - | - | ${WHY[$row]} |"
			continue
		fi
		read -r ms blocked events < <(med_run "$row" "$wl") || { echo "| $wl | $row | failed | | | |"; continue; }
		slow=-
		[[ -n $base ]] && slow=$(fmt '%.2fx' "$ms / $base")
		echo "| $wl | $row | $ms | $slow | $blocked | $events |"
	done
done
exit 0
