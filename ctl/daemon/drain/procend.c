/*
 * How a process ended, in its traces: shimtrace:process_end.
 *
 * A process killed (SIGKILL, a crash) leaves in its buffers everything it
 * committed, which the final drain takes (consumer.c); but a record a
 * thread was writing at that instant is lost, and nothing is left in the
 * process to count it. What it held or waited for at the end also looks,
 * to a report, as if still held. So when the daemon learns that a process
 * is gone, after its final drain, it writes into each session trace the
 * process was recorded in (it has a pool there):
 *
 *   exited   1: its exit path ran (exit(), a return from main:
 *            libshimtrace's destructor; _exit and _Exit through the proc
 *            family's wrappers), which its control page says, with or
 *            without a connection;
 *            0: it is gone and its exit path did not run: killed by a
 *            signal, crashed, or _exit without the proc family
 *   threads  its threads holding a buffer of the session at the end. Each
 *            may have been writing one record (a signal handler's records
 *            within it are dropped and counted: core/writer.c), so at most
 *            that many events are missing. (A thread taking its first
 *            buffer at that instant is not counted. With exited 1: the
 *            threads exit() ended while they ran, which could lose one
 *            each just the same. Per-CPU buffers have no owner:
 *            ST_THREADS_UNKNOWN, ctl/common/tracevalues.h.)
 *
 * Of what the process writes, only that word is taken, and it can make
 * only its own traces say that it exited.
 *
 * Nothing is written when how it ended is not known:
 *   - it is not gone: the daemon let it go (a protocol error, a quota, the
 *     daemon stopping), or its connection closed while it runs. After an
 *     exec the same pid goes on as a new image, which registers again if
 *     it is traced: its end is the one written, the old image has none
 *     (exec is not an end; its events lost in threads exec ended are not
 *     said);
 *   - its exit path did not run and it had no connection when it ended:
 *     found running and never connected (discover.c), or its connection
 *     closed while it ran (it closed our descriptor, or exec'd a program
 *     that is not traced: an image that never runs our exit path).
 *
 * Gone: its pidfd is readable, or /proc says every thread of it is
 * exiting (not only the main one, which may have left with pthread_exit
 * while the others run on). The second is for a connection that closes
 * first: a killed process's descriptors are closed before its pidfd
 * becomes readable, and the daemon may see the one before the other.
 *
 * Dated by the daemon's clock when written, as the statedump is, and never
 * before the last event of any of the process's streams in the trace
 * (whose times never go back): after everything the process wrote.
 *
 * Owns: nothing kept: it writes process_end records.
 * Thread: the daemon's, the reactor's one thread.
 * Calls: base, model, wire.
 */
#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "ctl/common/tracevalues.h"
#include "ctl/daemon/base/clock.h"
#include "ctl/daemon/drain/procend.h"
#include "ctl/daemon/model/metastream.h"
#include "ctl/daemon/model/proc.h"
#include "ctl/daemon/model/sessbits.h"
#include "ctl/daemon/model/session.h"
#include "ctl/daemon/model/state.h"
#include "ctl/daemon/out/evclass.h"
#include "ctl/daemon/wire/record.h"
#include "ctl/daemon/wire/ring.h"

#define PF_EXITING 0x00000004 /* <linux/sched.h>: set as do_exit() begins */

int st_proc_stat_at(const char *path, char *state, unsigned int *flags)
{
	char buf[1024], *paren;
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	/* (the name before them, in parentheses, is the process's to choose) */
	paren = strrchr(buf, ')');
	if (!paren || sscanf(paren + 1, " %c %*d %*d %*d %*d %*d %u", state, flags) != 2)
		return -1;
	return 0;
}

int st_proc_stat(pid_t pid, char *state, unsigned int *flags)
{
	char path[64];

	if (pid <= 0)
		return -1;
	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	return st_proc_stat_at(path, state, flags);
}

/*
 * Whether /proc says every thread of process pid is exiting, or a zombie:
 * a process killed, or exiting, has every thread in do_exit() before its
 * descriptors are closed (the last thread out closes them). Every thread,
 * not its main one: a main thread that called pthread_exit is a zombie
 * while the others run on. False if none can be read.
 */
static bool stat_exiting(pid_t pid)
{
	char path[64];
	struct dirent *e;
	bool any = false, all = true;
	DIR *dir;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	dir = opendir(path);
	if (!dir)
		return false;
	while (all && (e = readdir(dir))) {
		unsigned int flags;
		char state;

		if (e->d_name[0] < '1' || e->d_name[0] > '9' || strlen(e->d_name) > 10)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%s/stat", pid, e->d_name);
		/* (one that cannot be read is gone meanwhile: it exited) */
		if (st_proc_stat_at(path, &state, &flags) < 0)
			continue;
		any = true;
		all = state == 'Z' || state == 'X' || (flags & PF_EXITING);
	}
	closedir(dir);
	return any && all;
}

/* Whether p's pidfd says it has exited. */
bool st_proc_exited(const struct st_proc *p)
{
	struct pollfd pf = { p->pidfd, POLLIN, 0 };

	return p->pidfd >= 0 && poll(&pf, 1, 0) > 0;
}

bool st_proc_gone(const struct st_proc *p)
{
	bool exiting;

	if (p->pidfd < 0)
		return false;
	if (st_proc_exited(p))
		return true;
	exiting = stat_exiting(p->pid);
	/* (/proc first, then the pidfd: still not readable, p had not even
	 * exited, so the pid was p's while it was read) */
	return st_proc_exited(p) || exiting;
}

/* Threads holding a buffer of the pool (their tid in it, at the end). */
static uint32_t threads_holding(const struct st_proc_pool *pool)
{
	uint32_t n = 0;

	for (uint32_t i = 0, used = st_ring_slots_used(&pool->ring); i < used; i++)
		n += __atomic_load_n(&st_ring_slot(&pool->ring, i)->owner, __ATOMIC_RELAXED) != 0;
	return n;
}

/* Now, or the last time of the pool's streams if later. */
static uint64_t end_time(struct st_daemon *d, const struct st_proc_pool *pool)
{
	uint64_t ts = st_clock_now(&d->clock);

	for (uint32_t i = 0; pool->slots && i < pool->ring.nslots; i++)
		if (pool->slots[i].has_stream && pool->slots[i].stream.last_ts > ts)
			ts = pool->slots[i].stream.last_ts;
	if (pool->has_meta && pool->meta.last_ts > ts)
		ts = pool->meta.last_ts;
	return ts;
}

void st_proc_end_event(struct st_daemon *d, struct st_proc *p, uint32_t s)
{
	struct st_session *ses = st_session_at(d, s, p);
	struct st_proc_pool *pool = &p->pools[s];
	uint8_t rec[ST_TRACE_REC_MAX_HDR + 1 + 4];
	bool exited = p->control && __atomic_load_n(&p->control->exited, __ATOMIC_ACQUIRE) != 0;
	uint32_t n, threads;
	uint64_t ts;

	/* (its own pool, or its user's: userpool.c) */
	bool user = p->user_gen[s] && ses && p->user_gen[s] == ses->generation;

	if (!p->conn.gone || (!exited && p->discovered) || !ses || !ses->active ||
	    (!user && (!pool->ring.base || pool->generation != ses->generation)))
		return;
	ts = end_time(d, pool);
	threads = user || pool->ring.percpu ? ST_THREADS_UNKNOWN : threads_holding(pool);
	n = st_trace_rec_header(rec, ST_EV_PROCESS_END, ts, NULL, p->pid, 0);
	rec[n] = exited;
	memcpy(rec + n + 1, &threads, 4);
	st_meta_write(d, p, s, rec, n + 1 + 4, 1, ts, ts);
}

