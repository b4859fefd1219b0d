/*
 * Stopping a session: waiting for the event writes already under way.
 *
 * The session's enable bits are cleared first (st_session_apply). A writer
 * may have read its bit just before: each record is bracketed by the
 * slot's `writing` flag, and between setting it and committing, the writer
 * reads its bit again (core/writer.c). membarrier(MEMBARRIER_CMD_GLOBAL)
 * then puts a full memory barrier in every running thread of the system,
 * the writers' half of the exchange: after it, every writer either saw the
 * bit clear or has set `writing`, and the daemon waits for those flags to
 * drop. A process stopped (SIGSTOP, a debugger) in the middle of a record
 * is not waited for beyond the deadline: its record, if it ever commits,
 * comes after the final drain.
 *
 * Owns: nothing kept: it waits on the processes' writing flags.
 * Thread: the daemon's, the reactor's one thread.
 * Calls: model, wire.
 */
#include <errno.h>
#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "core/abi.h"
#include "core/monotime.h"
#include "ctl/daemon/drain/quiesce.h"
#include "ctl/daemon/model/proc.h"
#include "ctl/daemon/model/sessbits.h"
#include "ctl/daemon/model/session.h"
#include "ctl/daemon/model/state.h"
#include "ctl/daemon/wire/ring.h"

#define QUIESCE_DEADLINE_MS 200

static bool any_writing(struct st_daemon *d, const struct st_session *ses)
{
	for (struct st_proc *p = d->procs; p; p = p->next) {
		const struct st_proc_pool *pool = &p->pools[ses->index];

		if (p->conn.ended || !pool->ring.base || !st_session_covers(ses, p))
			continue;
		for (uint32_t i = 0, n = st_ring_slots_used(&pool->ring); i < n; i++) {
			const struct st_abi_slot *slot = st_ring_slot(&pool->ring, i);

			if (__atomic_load_n(&slot->writing, __ATOMIC_ACQUIRE))
				return true;
		}
	}
	return false;
}

void st_writers_quiesce(struct st_daemon *d, const struct st_session *ses)
{
	static int global = -1; /* whether the kernel has MEMBARRIER_CMD_GLOBAL */
	uint64_t deadline = st_now_ms() + QUIESCE_DEADLINE_MS;

	if (global < 0) {
		long cmds = syscall(SYS_membarrier, MEMBARRIER_CMD_QUERY, 0);

		global = cmds > 0 && (cmds & MEMBARRIER_CMD_GLOBAL);
	}
	if (global) {
		syscall(SYS_membarrier, MEMBARRIER_CMD_GLOBAL, 0);
	} else {
		/* (no barrier to rely on: give writers time instead) */
		struct timespec grace = { 0, 10000000 };

		nanosleep(&grace, NULL);
	}
	while (any_writing(d, ses) && st_now_ms() < deadline) {
		struct timespec pause = { 0, 200000 };

		nanosleep(&pause, NULL);
	}
}
