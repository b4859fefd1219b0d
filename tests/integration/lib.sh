# Helpers for the integration tests (sourced). Each test runs the real CLI
# on real programs, in its own temporary directory, and asserts exact
# counts and values.
#
# From the environment (Makefile.am): top_builddir, top_srcdir.

set -eu

: "${top_builddir:?}" "${top_srcdir:?}"
SHIMTRACE=$top_builddir/ctl/shimtrace
PROGS=$top_builddir/tests/progs
LIBCORE=$top_builddir/core/.libs/libshimtrace.so
LIBPTHREAD=$top_builddir/wrappers/.libs/libshimtrace-pthread.so
PRELOAD=$LIBCORE:$LIBPTHREAD

WORK=$(mktemp -d "${TMPDIR:-/tmp}/shimtrace-test.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
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

# Both readers see the same number of events.
readers_agree() {
	a=$(babeltrace2 "$1" 2>/dev/null | wc -l)
	b=$("$SHIMTRACE" view "$1" 2>/dev/null | wc -l)
	assert_eq "events seen by babeltrace2 and by shimtrace view" "$a" "$b"
}
