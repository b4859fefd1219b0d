#!/usr/bin/env bash
# run-peruser.sh: buffer memory of a system-wide session with many
# processes of one user, by kind of buffers (--buffers per-thread,
# per-process, per-user), in one run:
#   committed   the session's committed buffer memory while every process
#               lives, as `shimtrace status --json` says (MiB)
#   write       wall time from the start until every thread of every
#               process wrote its pairs (ms)
#   events/lost what the session recorded and lost, after stop
#
# The program is tests/progs/procs: PROCS processes of THREADS threads,
# PAIRS lock+unlock pairs each, all alive until the numbers are read.
#
# Usage: bench/run-peruser.sh [--procs P] [--threads T] [--pairs N]
#                             [--buffer-size SIZE] [--build DIR]
#
#   --procs P          processes (default 100)
#   --threads T        threads per process (default 8)
#   --pairs N          pairs per thread (default 1000)
#   --buffer-size SIZE each buffer's size (default 8M)
#   --build DIR        build directory holding core/, wrappers/ and ctl/
#
# This is a benchmark, not a test: it always exits 0 once it has printed
# its table, whatever the numbers.

BENCH=run-peruser.sh
PROCS=100
THREADS=8
PAIRS=1000
BUFSIZE=8M
# shellcheck source=bench/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh" || exit 2

USAGE=15,20
bench_args procs:PROCS:count threads:THREADS:count pairs:PAIRS:count buffer-size:BUFSIZE -- "$@"
bench_tmp
compile "$TMP/procs" "$HERE/../tests/progs/procs.c"
cd "$TMP" || die "cannot enter $TMP"
RUNDIR=$TMP/run

# one KIND: the session's committed memory (MiB), the write time (ms),
# events and lost, as "committed write events lost"
one() {
	local kind=$1 t0 t1 committed summary pid
	st create m -o "$TMP/trace-$kind" --buffers "$kind" --buffer-size "$BUFSIZE" \
		>create.out 2>&1 || { echo "- - - - ($(last_line create.out))"; return; }
	st enable -s m 'pthread:mutex_*' >/dev/null 2>&1
	st start m >/dev/null 2>&1
	rm -f procs.in procs.out
	mkfifo procs.in
	t0=$(now_ns)
	env -u SHIMTRACE_DISABLE SHIMTRACE_RUNDIR="$RUNDIR" SHIMTRACE_TIMEOUT_MS=20000 \
		LD_PRELOAD="$PRELOAD" "$TMP/procs" "$PROCS" "$THREADS" "$PAIRS" --stdin \
		<procs.in >procs.out 2>&1 &
	pid=$!
	exec {fd}>procs.in
	for _ in $(seq 3000); do
		grep -q '^written' procs.out 2>/dev/null && break
		sleep 0.01
	done
	t1=$(now_ns)
	committed=$(st status --json m 2>/dev/null |
		sed -n 's/.*"memory": {"bound": [0-9]*, "committed": \([0-9]*\),.*/\1/p')
	exec {fd}>&-
	wait "$pid"
	summary=$(st stop m 2>&1)
	st destroy m >/dev/null 2>&1
	echo "$(fmt %.1f "${committed:-0} / 1048576") $(fmt %.0f "($t1 - $t0) / 1000000")" \
		"$(echo "$summary" | sed -n 's/.* \([0-9]*\) events recorded, \([0-9]*\) lost.*/\1 \2/p')"
}

start_shimtraced || die "$DAEMON_SKIP"
printf '%s processes x %s threads x %s pairs, buffers of %s, %s CPUs\n' "$PROCS" "$THREADS" \
	"$PAIRS" "$BUFSIZE" "$(getconf _NPROCESSORS_CONF)"
printf '%-12s %14s %10s %12s %12s\n' buffers "committed MiB" "write ms" events lost
for kind in per-thread per-process per-user; do
	read -r committed write events lost < <(one "$kind")
	printf '%-12s %14s %10s %12s %12s\n' "$kind" "$committed" "$write" "${events:--}" "${lost:--}"
done
stop_shimtraced
echo "$DAEMON_END"
exit 0
