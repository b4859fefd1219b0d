#!/bin/bash
# show-contention.sh DIR: what `./quickstart demo` prints of the trace of
# examples/contention in DIR: the events by name, the first threads that
# found the shared mutex busy and the locks they then got, and who waited,
# by function and line (babeltrace2 --debug-info). Exits 1, saying so,
# when the trace shows no wait: the example is made to always have some.
#
# Environment: SHIMTRACE (default: ctl/shimtrace beside this directory).
set -eu
dir=${1:?usage: show-contention.sh DIR}
st=${SHIMTRACE:-$(dirname "$0")/../ctl/shimtrace}
view=$(mktemp)
trap 'rm -f "$view"' EXIT

"$st" view "$dir" >"$view"
echo "what was recorded, by event (shimtrace view $dir):"
awk '{ n[$8]++ } END { for (e in n) printf "  %8d  %s\n", n[e], e }' "$view" | sort -k2
echo
waits=$(grep -c ' pthread:mutex_wait ' "$view" || true)
if [ "$waits" -eq 0 ]; then
	echo "show-contention: no thread waited for a lock in $dir" >&2
	exit 1
fi
echo "threads about to block on a busy mutex ($waits in all), and the locks they then got:"
grep -m 3 ' pthread:mutex_wait ' "$view"
grep ' pthread:mutex_lock ' "$view" | grep -v 'wait_ns=0$' | head -n 3 || true
echo
echo "who waited, by function and line (babeltrace2 --debug-info $dir):"
babeltrace2 --debug-info "$dir" | grep ' pthread:mutex_lock: ' | grep -v 'wait_ns = 0 }' |
	sed -n 's/.* tid = \([0-9]*\) }.*func = "\([^"+]*\)[^"]*", src = "\([^"]*\)".*wait_ns = \([0-9]*\).*/  thread \1 waited \4 ns in \2 (\3)/p' |
	head -n 5 || true
