#!/usr/bin/env bash
# run-mariadb.sh: a real server under the tracers. MariaDB (Debian's
# mariadb-server) under sysbench oltp_read_write with many clients:
# transactions a second, the server's peak memory, and the events recorded
# and lost, bare, under `shimtrace record` with per-thread buffers
# (--buffers per-thread) and with per-CPU ones (the default), and under LTTng-UST's pthread wrapper,
# configurations interleaved, in one run.
#
# Usage: bench/run-mariadb.sh [--clients N] [--time S] [--reps K] [--build DIR]
#
#   --clients N  sysbench threads, each a connection (default 100)
#   --time S     seconds of load per run (default 10)
#   --reps K     runs per configuration; the median run is shown (default 3)
#   --build DIR  build directory holding core/, wrappers/ and ctl/ (default .)
#
# Needs mariadbd, mariadb-install-db, mariadb-admin, mariadb and sysbench
# (Debian: mariadb-server, sysbench); without them it says so and exits 0.
# The server runs as the caller (root: --user=root), on a socket in a temp
# directory, networking off, from a copy of one prepared data directory
# each run (4 tables of 10000 rows).
#
# This is a benchmark, not a test: it always exits 0 once it has printed
# its table, whatever the numbers; rows that cannot run say why.

BENCH=run-mariadb.sh
CLIENTS=100
SECS=10
REPS=3
# shellcheck source=bench/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh" || exit 2

USAGE=9,14
bench_args clients:CLIENTS:count time:SECS:count reps:REPS:count -- "$@"

for tool in mariadbd mariadb-install-db mariadb-admin mariadb sysbench; do
	if ! command -v "$tool" >/dev/null; then
		echo "$BENCH: skipped: no $tool (Debian: apt-get install mariadb-server sysbench)"
		exit 0
	fi
done
bench_tmp
cd "$TMP" || die "cannot enter $TMP"

SOCK=$TMP/mysqld.sock
SB=(sysbench oltp_read_write --db-driver=mysql --mysql-socket="$SOCK" --mysql-user=root
	--tables=4 --table-size=10000)
# server DATADIR: the server's command line
server() {
	SERVER=(mariadbd --no-defaults --datadir="$1" --socket="$SOCK" --skip-networking
		--user="$(id -un)" --pid-file="$TMP/mysqld.pid" --log-error="$TMP/mysqld.err"
		--innodb-buffer-pool-size=256M --max-connections=$((CLIENTS + 50)))
}
# up: waits (60 s at most) for the server to answer
up() {
	for _ in $(seq 600); do
		mariadb-admin -S "$SOCK" -u root ping >/dev/null 2>&1 && return 0
		alive "$1" || return 1
		sleep 0.1
	done
	return 1
}
down() {
	mariadb-admin -S "$SOCK" -u root shutdown >/dev/null 2>&1
	wait "$1" 2>/dev/null
}

# ---- the data, prepared once ----
mariadb-install-db --no-defaults --datadir="$TMP/prepared" --user="$(id -un)" \
	--auth-root-authentication-method=normal --skip-test-db >install.log 2>&1 ||
	die "mariadb-install-db failed: $(last_line install.log)"
server "$TMP/prepared"
"${SERVER[@]}" &
BG_PID=$!
up $BG_PID || die "mariadbd did not start: $(last_line "$TMP/mysqld.err")"
mariadb -S "$SOCK" -u root -e "create database sbtest" &&
	"${SB[@]}" prepare >prepare.log 2>&1 || die "sysbench prepare failed: $(last_line prepare.log)"
down $BG_PID
BG_PID=

CONFIGS=(bare record percpu lttng)
declare -A LABEL=([bare]="bare" [record]="shimtrace, per-thread buffers (--buffers per-thread)"
	[percpu]="shimtrace, per-CPU buffers (default)"
	[lttng]="LTTng-UST pthread wrapper")
declare -A TPS=() RSS=() EV=() WHYR=()

# one CONFIG REP: a run of the server under CONFIG and sysbench against it
one() {
	local key=$1 rep=$2 dir=$TMP/trace pid tps rss
	local -a pre=() sum
	rm -rf "$TMP/data" "$dir" "$SOCK"
	cp -a "$TMP/prepared" "$TMP/data" || die "cannot copy the data directory"
	server "$TMP/data"
	case $key in
	record) pre=("$SHIMTRACE" record --buffers per-thread -o "$dir" --) ;;
	percpu) pre=("$SHIMTRACE" record -o "$dir" --) ;;
	lttng)
		if [[ -n $LTTNG_SKIP ]]; then
			WHYR[$key]=$LTTNG_SKIP
			return
		fi
		lttng_up "shimtrace-bench-$$" "$dir" || {
			WHYR[$key]="unavailable ($(last_line lttng.log))"
			return
		}
		pre=(env "${LTTNG_ENV[@]}")
		;;
	esac
	env -u LD_PRELOAD "${pre[@]}" "${SERVER[@]}" >server.out 2>server.err &
	BG_PID=$!
	if ! up $BG_PID; then
		WHYR[$key]="unavailable (the server did not start: $(last_line server.err))"
		kill $BG_PID 2>/dev/null
		wait $BG_PID 2>/dev/null
		BG_PID=
		[[ $key == lttng ]] && lttng_down
		return
	fi
	pid=$(cat "$TMP/mysqld.pid")
	"${SB[@]}" --threads="$CLIENTS" --time="$SECS" run >sysbench.out 2>&1
	tps=$(sed -n 's/.*transactions:.*(\([0-9.]*\) per sec.).*/\1/p' sysbench.out)
	rss=$(awk '/^VmHWM:/ { printf "%.0f", $2 / 1024 }' "/proc/$pid/status" 2>/dev/null)
	down $BG_PID
	BG_PID=
	TPS[$key,$rep]=${tps:-?}
	RSS[$key,$rep]=${rss:-?}
	case $key in
	record | percpu)
		read -r -a sum <<<"$(record_summary server.err)"
		EV[$key,$rep]="${sum[0]:-?}/${sum[1]:-?}"
		;;
	lttng)
		lttng_down
		EV[$key,$rep]="$(lttng_count "$dir")/$(lttng_lost)"
		;;
	esac
	rm -rf "$dir"
}

lttng_setup
for ((rep = 1; rep <= REPS; rep++)); do
	for key in "${CONFIGS[@]}"; do
		echo "run $rep/$REPS: ${LABEL[$key]}" >&2
		one "$key" "$rep"
	done
done

# the median run of KEY, by transactions a second: its rep
median_rep() {
	local key=$1 m
	m=$(for ((r = 1; r <= REPS; r++)); do
		is_num "${TPS[$key,$r]:-}" && echo "${TPS[$key,$r]} $r"
	done | sort -g | awk '{ v[NR] = $2 } END { if (NR) print v[int((NR + 1) / 2)] }')
	printf '%s' "$m"
}

uv=$(ust_version)
echo
echo "### MariaDB under sysbench oltp_read_write, $CLIENTS clients, $SECS s (median of $REPS runs)"
echo
echo "| configuration | transactions/s | vs bare | server peak RSS, MiB | events recorded/lost |"
echo "|---|---|---|---|---|"
bare_rep=$(median_rep bare)
for key in "${CONFIGS[@]}"; do
	label=${LABEL[$key]}
	[[ $key == lttng && -n $uv ]] && label="LTTng-UST $uv pthread wrapper"
	r=$(median_rep "$key")
	if [[ -z $r ]]; then
		echo "| $label | ${WHYR[$key]:-unavailable} | | | |"
		continue
	fi
	vs=-
	[[ -n $bare_rep ]] && vs=$(ratio "${TPS[$key,$r]}" "${TPS[bare,$bare_rep]}")
	echo "| $label | ${TPS[$key,$r]} | $vs | ${RSS[$key,$r]} | ${EV[$key,$r]:--} |"
done
echo
echo "- transactions/s: sysbench's; vs bare: over the bare median's (below 1: slower)."
echo "- server peak RSS: VmHWM of mariadbd before its shutdown (trace buffers included)."
echo "- events: shimtrace's from record's summary (2 a lock pair); LTTng's counted by"
echo "  babeltrace2, lost from lttng stop (3 a lock pair: lock_req, lock_acq, unlock)."
garbled_note EV
echo
echo "runs (rep order): transactions/s, peak RSS MiB, events"
for key in "${CONFIGS[@]}"; do
	line="  $key:"
	for ((r = 1; r <= REPS; r++)); do
		line+=" ${TPS[$key,$r]:--}/${RSS[$key,$r]:--}/${EV[$key,$r]:--}"
	done
	echo "$line"
done
echo
machine_line
load_line
echo "server: $(mariadbd --version 2>/dev/null | head -n 1)"
echo "commands (in a temp dir; SERVER: mariadbd --no-defaults --datadir=DATA --socket=SOCK"
echo "  --skip-networking --user=$(id -un) --innodb-buffer-pool-size=256M --max-connections=$((CLIENTS + 50))):"
echo "  load: ${SB[*]//$TMP/TMP} --threads=$CLIENTS --time=$SECS run"
echo "  bare: SERVER"
echo "  shimtrace per-thread: $(quoted "$SHIMTRACE") record --buffers per-thread -o DIR -- SERVER"
echo "  shimtrace per-CPU: $(quoted "$SHIMTRACE") record -o DIR -- SERVER"
echo "  LTTng: $(lttng_up_shown); $LTTNG_ENV_SHOWN SERVER; lttng stop S; lttng destroy S"
exit 0
