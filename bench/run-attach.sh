#!/usr/bin/env bash
# run-attach.sh: how long `shimtrace record --pid` takes to attach to a
# running process started without shimtrace, and to detach from it, by the
# number of objects the process has loaded (each calls pthread_mutex_lock,
# pthread_mutex_unlock, pthread_cond_signal, malloc and free through its
# PLT, built -z now -z relro as Debian builds most: its GOT read-only).
#
# Usage: bench/run-attach.sh [--objects LIST] [--reps K] [--build DIR]
#
#   --objects LIST  object counts (besides the program and its libraries),
#                   one row each (default "0 10 100")
#   --reps K        attaches per row; the median is shown (default 5)
#   --build DIR     build directory holding core/, wrappers/ and ctl/ (default .)
#
# attach ms: from record's start to its "attached" line: record's own
# start (its private daemon and session, a probe inspector), then the
# inspector's work (a thread stopped at a safe point, the tracer's three
# libraries loaded, the process's registration with the daemon, the GOT
# rewrite). The 0-object row is what does not depend on the objects.
# detach ms: from SIGINT to record's "detached" line (a safe point again,
# and the undo). After each attach the program makes one round of calls in
# every object, which the trace holds (events column: 2 statedump events
# and 5 calls an object, and 20 of the program's own).
#
# Environment: SHIMTRACE_BIN (the CLI, default DIR/ctl/shimtrace); CC
# (default cc).
#
# This is a benchmark, not a test: it always exits 0 once it has printed
# its table, whatever the numbers; rows that cannot run say why.

BENCH=run-attach.sh
OBJECTS="0 10 100"
REPS=5
# shellcheck source=bench/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh" || exit 2

USAGE=8,13
bench_args objects:OBJECTS:text reps:REPS:count -- "$@"
read -r -a COUNTS <<<"$OBJECTS"
for n in "${COUNTS[@]}"; do
	[[ $n =~ ^[0-9]+$ ]] && ((n <= 2000)) || die "--objects: '$n' is not a count from 0 to 2000"
done
((${#COUNTS[@]})) || die "--objects: an empty list"
bench_start attachee

cat >obj.c <<'EOF'
#include <pthread.h>
#include <stdlib.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t c = PTHREAD_COND_INITIALIZER;
static void *volatile block;

void obj_work(void);
void obj_work(void)
{
	block = malloc(32);
	pthread_mutex_lock(&m);
	pthread_cond_signal(&c);
	pthread_mutex_unlock(&m);
	free(block);
}
EOF
"${CC:-cc}" -O2 -fPIC -shared -Wl,-z,now -Wl,-z,relro -o libobj.so obj.c -lpthread ||
	die "cannot build the objects"

# one_run N K: attaches to attachee with N objects; "ATTACH_MS DETACH_MS
# SLOTS EVENTS", or a reason starting with "-".
one_run() {
	local n=$1 k=$2 p t0 t1 ta td slots events
	rm -rf "run$k" && mkdir "run$k" && cd "run$k" || return
	mkfifo in
	"$TMP/attachee" "$TMP/objs$n" "$n" <in >out 2>&1 &
	BG_PID=$!
	exec 7>in
	for _ in $(seq 500); do grep -q '^ready' out && break; sleep 0.01; done
	p=$(sed -n 's/^ready //p' out)
	if [[ -z $p ]]; then
		echo "- attachee does not start: $(last_line out)"
		exec 7>&-
		cd "$TMP" || return
		return
	fi
	t0=$(now_ns)
	# (each line of record's standard error dated as it comes)
	"$SHIMTRACE" record -o tr --wrap pthread,malloc --blocking --pid "$p" 7>&- 2> >(
		while IFS= read -r l; do printf '%s %s\n' "$(now_ns)" "$l"; done >rec.log) &
	local r=$!
	for _ in $(seq 3000); do grep -q ' attached: \| cannot ' rec.log 2>/dev/null && break; sleep 0.002; done
	ta=$(sed -n 's/^\([0-9]*\) .* attached: .*/\1/p' rec.log)
	slots=$(sed -n 's/.* attached: \([0-9]*\) calls redirected/\1/p' rec.log)
	if [[ -z $ta ]]; then
		kill "$r" 2>/dev/null
		wait "$r" 2>/dev/null
		echo "- no attach: $(last_line rec.log)"
	else
		echo go >&7
		for _ in $(seq 1000); do grep -q '^round 1' out && break; sleep 0.002; done
		t1=$(now_ns)
		kill -INT "$r"
		wait "$r"
		# (the last lines, through the dating loop)
		for _ in $(seq 500); do grep -q ' trace written to ' rec.log && break; sleep 0.01; done
		td=$(sed -n 's/^\([0-9]*\) .* detached: .*/\1/p' rec.log)
		events=$(record_summary rec.log | awk '{ print $1 }')
		echo "$(fmt '%.1f' "($ta - $t0) / 1e6") $(fmt '%.1f' "(${td:-$t1} - $t1) / 1e6") $slots ${events:-?}"
	fi
	exec 7>&-
	wait "$BG_PID" 2>/dev/null
	BG_PID=
	cd "$TMP" || return
}

ROWS=()
for n in "${COUNTS[@]}"; do
	mkdir -p "objs$n"
	for i in $(seq 0 $((n - 1))); do cp libobj.so "objs$n/libobj$i.so"; done
	att=() det=() slots=- events=- why=
	for k in $(seq "$REPS"); do
		echo "run $k/$REPS: $n objects" >&2
		res=$(one_run "$n" "$k")
		if [[ $res == -* ]]; then
			why=${res#- }
			break
		fi
		read -r a d s e <<<"$res"
		att+=("$a") det+=("$d") slots=$s events=$e
	done
	if [[ -n $why ]]; then
		ROWS+=("$(printf '%-9s %s' "$n" "$why")")
		continue
	fi
	ROWS+=("$(printf '%-9s %10s %10s %8s %8s %8s' "$n" \
		"$(printf '%s\n' "${att[@]}" | median)" "$(printf '%s\n' "${det[@]}" | median)" \
		"$(printf '%s\n' "${att[@]}" | sort -g | head -1)" "$slots" "$events")")
done

echo
printf '%-9s %10s %10s %8s %8s %8s\n' objects "attach ms" "detach ms" "best" slots events
printf '%s\n' "${ROWS[@]}"
echo
echo "median of $REPS runs each (best: the fastest attach); slots: GOT entries redirected"
echo "(and put back); events: all the trace holds: the statedump (2 an object) and the"
echo "round of calls made while attached (5 an object)"
machine_line
echo "objects: ${CC:-cc} -O2 -fPIC -shared -Wl,-z,now -Wl,-z,relro -o libobj.so obj.c -lpthread, copied N times"
echo "command: $SHIMTRACE record -o tr --wrap pthread,malloc --blocking --pid PID, then SIGINT"
