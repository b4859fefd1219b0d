# Helpers for the integration tests (sourced). Each test runs the real CLI
# on real programs, in its own temporary directory, and asserts exact
# counts and values.
#
# From the environment (Makefile.am): top_builddir, top_srcdir.

set -eu

: "${top_builddir:?}" "${top_srcdir:?}"
SHIMTRACE=$top_builddir/ctl/shimtrace
SHIMTRACED=$top_builddir/ctl/shimtraced
PROGS=$top_builddir/tests/progs
LIBCORE=$top_builddir/core/.libs/libshimtrace.so
LIBPTHREAD=$top_builddir/wrappers/.libs/libshimtrace-pthread.so
PRELOAD=$LIBCORE:$LIBPTHREAD

WORK=$(mktemp -d "${TMPDIR:-/tmp}/shimtrace-test.XXXXXX")
# Processes of the test look for the test's own daemon (daemon_start), if
# any: never another test's, nor the machine's.
export SHIMTRACE_RUNDIR=$WORK/run
DAEMON_PID=
BACKGROUND=()
FIFO_FDS=()
cleanup() {
	for p in "${BACKGROUND[@]}"; do kill -9 "$p" 2>/dev/null || true; done
	[ -n "$DAEMON_PID" ] && kill -9 "$DAEMON_PID" 2>/dev/null
	rm -rf "$WORK"
}
trap cleanup EXIT
cd "$WORK"

fail() {
	echo "FAIL: $*" >&2
	exit 1
}

skip() {
	echo "SKIP: $*" >&2
	exit 77
}

# assert_eq WHAT EXPECTED ACTUAL
assert_eq() {
	[ "$2" = "$3" ] || fail "$1: expected '$2', got '$3'"
	echo "ok: $1 = $3"
}

# assert_gt WHAT LIMIT ACTUAL
assert_gt() {
	[ "$3" -gt "$2" ] || fail "$1: expected more than $2, got $3"
	echo "ok: $1 = $3 (> $2)"
}

# record DIR [OPTIONS] -- COMMAND...: shimtrace record, summary kept in DIR.summary
record() {
	dir=$1
	shift
	set +e
	"$SHIMTRACE" record -o "$dir" "$@" 2>"$dir.summary"
	rc=$?
	set -e
	cat "$dir.summary" >&2
	return $rc
}

# Number of events named NAME (provider:name) as babeltrace2 reads them.
bt_count() {
	babeltrace2 "$1" 2>/dev/null | grep -c " $2: " || true
}

# Number of events named NAME as `shimtrace view` reads them.
view_count() {
	"$SHIMTRACE" view "$1" 2>/dev/null | grep -c " $2 " || true
}

# Events recorded and lost, from the summary line of `record`.
summary_events() {
	sed -n 's/^shimtrace record: \([0-9]*\) events recorded.*/\1/p' "$1.summary"
}

summary_lost() {
	sed -n 's/^shimtrace record: [0-9]* events recorded, \([0-9]*\) lost.*/\1/p' "$1.summary"
}

# babeltrace2 must read the whole trace without an error or warning line.
bt_clean() {
	babeltrace2 "$1" >/dev/null 2>"$WORK/bt.err" || fail "babeltrace2 cannot read $1: $(head -3 "$WORK/bt.err")"
	if grep -v 'discarded' "$WORK/bt.err" | grep -q .; then
		fail "babeltrace2 complains about $1: $(head -3 "$WORK/bt.err")"
	fi
}

# Events babeltrace2 says the tracer discarded in trace $1, in total; a
# notice without a count ("may have discarded") fails: every loss we
# declare must be counted by the reader.
bt_discarded() {
	babeltrace2 "$1" 2>"$WORK/bt.disc" >/dev/null || fail "babeltrace2 cannot read $1"
	if grep -q 'may have discarded' "$WORK/bt.disc"; then
		fail "babeltrace2 cannot count a loss in $1: $(grep -m1 'may have discarded' "$WORK/bt.disc")"
	fi
	# ("1 event", "2 events")
	sed -n 's/.*Tracer discarded \([0-9]*\) events\{0,1\} between.*/\1/p' "$WORK/bt.disc" |
		awk '{ s += $1 } END { print s + 0 }'
}

# Whether this machine's glibc registers rseq areas here (not under
# GLIBC_TUNABLES=glibc.pthread.rseq=0, the fallback pass of `quickstart
# check`): per-CPU buffers, and the default buffers per CPU.
have_rseq() {
	[ "$("$top_builddir/tests/unit/test_rseq" --usable)" = usable ]
}

# Both readers see the same number of events.
readers_agree() {
	a=$(babeltrace2 "$1" 2>/dev/null | wc -l)
	b=$("$SHIMTRACE" view "$1" 2>/dev/null | wc -l)
	assert_eq "events seen by babeltrace2 and by shimtrace view" "$a" "$b"
}

# ---- a session daemon of the test's own ----

# daemon_start [OPTIONS]: shimtraced in $WORK/run, for every command after.
daemon_start() {
	export SHIMTRACE_RUNDIR=$WORK/run
	"$SHIMTRACED" --rundir "$SHIMTRACE_RUNDIR" --log-level warning "$@" ||
		fail "shimtraced does not start"
	DAEMON_PID=$(cat "$SHIMTRACE_RUNDIR/shimtraced.pid")
}

# daemon_stop: SIGTERM, and wait until it is gone (it closes every trace).
daemon_stop() {
	kill -TERM "$DAEMON_PID"
	wait_gone "$DAEMON_PID"
	DAEMON_PID=
}

# wait_gone PID: until the process no longer runs (zombies count as gone).
wait_gone() {
	for _ in $(seq 200); do
		st=$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null || true)
		[ -z "$st" ] || [ "$st" = Z ] && return 0
		sleep 0.05
	done
	fail "process $1 does not end"
}

# st VERB ARGS...: the shimtrace command, which must succeed.
st() {
	"$SHIMTRACE" "$@" >"$WORK/st.out" 2>"$WORK/st.err" ||
		fail "shimtrace $*: exit $?: $(cat "$WORK/st.err")"
	cat "$WORK/st.out"
}

# st_fails STATUS MESSAGE VERB ARGS...: must exit with STATUS and print one
# line on stderr containing MESSAGE.
st_fails() {
	want=$1 msg=$2
	shift 2
	rc=0
	"$SHIMTRACE" "$@" >"$WORK/st.out" 2>"$WORK/st.err" || rc=$?
	assert_eq "exit status of shimtrace $*" "$want" "$rc"
	assert_eq "error lines of shimtrace $*" 1 "$(wc -l <"$WORK/st.err")"
	grep -qF -- "$msg" "$WORK/st.err" || fail "shimtrace $*: '$(cat "$WORK/st.err")' lacks '$msg'"
}

# traced_bg OUT PROG ARGS...: starts PROG preloaded in the background with
# standard input from the fifo OUT.in; waits for its "ready PID" line.
# (untraced_bg: the same, not preloaded: a program that registers by hand)
traced_bg() {
	out=$1
	shift
	mkfifo "$out.in"
	# (without the write ends of the other programs' fifos: they would
	# never see the end of their input)
	(
		for f in "${FIFO_FDS[@]}"; do eval "exec $f>&-"; done
		LD_PRELOAD=${BG_PRELOAD-$PRELOAD} exec "$@" <"$out.in" >"$out" 2>&1
	) &
	BACKGROUND+=($!)
	exec {fd}>"$out.in"
	FIFO_FDS+=("$fd")
	eval "FIFO_${out//[^a-zA-Z0-9]/_}=$fd"
	wait_line "$out" '^ready' "$* does not start"
}

untraced_bg() {
	BG_PRELOAD= traced_bg "$@"
}

# wait_line FILE REGEX WHY: until a line of FILE matches (10 s at most).
wait_line() {
	for _ in $(seq 500); do
		grep -q "$2" "$1" 2>/dev/null && return 0
		sleep 0.02
	done
	fail "$3"
}

# poke OUT N: one line to the sleeper started by traced_bg OUT, which runs
# its round N; returns when the round is over.
poke() {
	v="FIFO_${1//[^a-zA-Z0-9]/_}"
	echo go >&"${!v}"
	wait_line "$1" "^round $2\$" "round $2 of the program writing $1 does not end"
}

# finish OUT: end of input for that program; waits for its "done" line.
finish() {
	v="FIFO_${1//[^a-zA-Z0-9]/_}"
	eval "exec ${!v}>&-"
	wait_line "$1" '^done' "the program writing $1 does not finish"
}

# ---- an lttng-relayd of the test's own ----

# relayd_start: lttng-relayd on free ports (another test's, or anyone's,
# may hold some) writing under $WORK/out, without the write ends of the
# test's fifos: RELAY_CTRL, RELAY_DATA, RELAY_LIVE, RELAYD_PID, URL. Again
# after relayd_kill: on the same ports (a relay that comes back).
relayd_start() {
	command -v lttng-relayd >/dev/null || skip "no lttng-relayd (Debian package lttng-tools)"
	bases=${RELAY_CTRL:-$(shuf -i 20000-60000 -n 10)}
	for base in $bases; do
		(
			for f in "${FIFO_FDS[@]}"; do eval "exec $f>&-"; done
			exec lttng-relayd -o "$WORK/out" -C "tcp://127.0.0.1:$base" \
				-D "tcp://127.0.0.1:$((base + 1))" -L "tcp://127.0.0.1:$((base + 2))"
		) >>"$WORK/relayd.log" 2>&1 &
		RELAYD_PID=$!
		BACKGROUND+=("$RELAYD_PID")
		for _ in $(seq 1 100); do
			kill -0 "$RELAYD_PID" 2>/dev/null || break
			# (listening: a connection to its live port is taken)
			if (exec 3<>"/dev/tcp/127.0.0.1/$((base + 2))") 2>/dev/null; then
				RELAY_CTRL=$base RELAY_DATA=$((base + 1)) RELAY_LIVE=$((base + 2))
				URL=net://127.0.0.1:$RELAY_CTRL:$RELAY_DATA
				return 0
			fi
			sleep 0.1
		done
		kill "$RELAYD_PID" 2>/dev/null || true
	done
	fail "lttng-relayd did not start: $(tail -3 "$WORK/relayd.log")"
}

# relayd_kill: SIGKILL, as a crash; waits until it is gone.
relayd_kill() {
	kill -9 "$RELAYD_PID"
	wait "$RELAYD_PID" 2>/dev/null || true
}

pid_of() {
	sed -n 's/^ready //p' "$1"
}

# java_marker PROGRAM NAME: the line of tests/java/PROGRAM.java that ends
# in "// NAME" (the Java tests find their known lines so).
java_marker() {
	grep -n "// $2\$" "$top_srcdir/tests/java/$1.java" | cut -d: -f1
}
