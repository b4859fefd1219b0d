/*
 * Buffer pools of processes without a connection.
 *
 * A process hands its pools over its control socket. One that has none (a
 * daemon found it running, or the program closed our socket: core/
 * registration.c) offers each pool in its control page instead: the
 * descriptor number and generation (abi.h, pool_offer). Each tick, the
 * daemon asks the owner's objects inspector to take that descriptor with
 * pidfd_getfd (ctl/inspect/discover.c), checks what comes back as it checks
 * a POOL message, and writes pool_taken so that the process may close its
 * descriptor. The process writes events into the pool from its creation:
 * what it wrote before the daemon had it is read all the same.
 *
 * One request per process at a time; an offer that fails is not asked for
 * again in the same generation (the process's word is all it has, and a
 * process that lies about it spoils only its own trace).
 *
 * Owns: a process's pickup part (the pools offered and being taken).
 * Thread: the daemon's, the reactor's one thread.
 * Calls: base, loop, model, objects.
 */
#include <string.h>
#include <unistd.h>

#include "core/abi.h"
#include "ctl/daemon/base/fdsafe.h"
#include "ctl/daemon/base/log.h"
#include "ctl/daemon/drain/pickup.h"
#include "ctl/daemon/loop/reactor.h"
#include "ctl/daemon/model/proc.h"
#include "ctl/daemon/model/sessbits.h"
#include "ctl/daemon/model/session.h"
#include "ctl/daemon/model/state.h"
#include "ctl/daemon/objects/inspect.h"
#include "ctl/daemon/objects/maps.h"
#include "ctl/daemon/wire/inspect_msg.h"

#define PICKUP_DEADLINE_MS 2000

static void on_taken(struct st_daemon *d, void *ctx, const struct st_insp_reply *r, int fd)
{
	struct st_proc *p = ctx;

	if (r && r->type == ST_INSP_FOUND && fd >= 0 && !p->conn.ended) {
		if (st_proc_pool_adopt(d, p, p->pickup.session, p->pickup.gen, fd) > 0)
			st_statedump_session(d, p, p->pickup.session);
		st_fd_drop(fd, p->uid);
		return;
	}
	st_fd_drop(fd, p->uid);
	if (r && r->type != ST_INSP_DONE)
		return;
	if (r && r->done.status != 0)
		st_log_user(p->uid, ST_LOG_WARN, "process %d (%s): its buffer pool could not be taken: %s", p->pid,
		       p->name, r->done.text);
	p->pickup.pending = false;
	st_pickup(d, p);     /* another session's, if any */
	st_loop_news(&d->loop, ST_NEWS_POOL); /* a stop may wait for this one */
}

/*
 * The pool p offers for session s that the daemon has yet to take: its
 * control page's word ((generation << 32) | descriptor), or 0 when there
 * is none (p has a connection to send it on, or the daemon has it).
 */
static uint64_t offered(const struct st_daemon *d, const struct st_proc *p, uint32_t s)
{
	const struct st_session *ses = st_session_at(d, s, p);
	uint64_t offer;
	uint32_t gen;

	if (!ses || p->conn.ended || p->conn.fd >= 0 || !p->control || p->pidfd < 0)
		return 0;
	offer = __atomic_load_n(&p->control->pool_offer[s], __ATOMIC_ACQUIRE);
	gen = (uint32_t)(offer >> 32);
	if (gen == 0 || gen != ses->generation ||
	    (p->pools[s].ring.base && p->pools[s].generation == gen))
		return 0;
	return offer;
}

bool st_pickup_due(const struct st_daemon *d, const struct st_proc *p, uint32_t s)
{
	uint32_t gen = (uint32_t)(offered(d, p, s) >> 32);

	/* not asked for yet (and its user may still hand descriptors over),
	 * or under way (a failed request is not waited for) */
	return gen && ((p->pickup.tried[s] != gen && st_fd_room(p->uid)) ||
		       (p->pickup.pending && p->pickup.session == s));
}

void st_pickup(struct st_daemon *d, struct st_proc *p)
{
	/* (what an inspector takes from the process may be a descriptor the
	 * daemon must keep: none for a user at its quota of those) */
	if (!st_fd_room(p->uid))
		return;
	for (uint32_t s = 0; s < ST_ABI_MAX_SESSIONS && !p->pickup.pending; s++) {
		struct st_session *ses = st_session_at(d, s, p);
		uint64_t offer = offered(d, p, s);
		uint32_t gen = (uint32_t)(offer >> 32);
		struct st_insp_take_pool t;
		struct st_abi_geometry g;
		struct st_owner owner;

		if (!gen || p->pickup.tried[s] == gen ||
		    st_abi_geometry(ses->mode, ses->sb_size, ses->sb_count, ses->nslots, &g) < 0)
			continue;
		memset(&t, 0, sizeof(t));
		t.t.hdr.type = ST_INSP_TAKE_POOL;
		t.t.hdr.len = sizeof(t);
		t.t.pid = p->pid;
		t.t.uid = p->uid;
		t.t.gid = p->gid;
		t.fd = (int32_t)(uint32_t)offer;
		t.size = g.size;
		st_owner_of(&t.t, p->pidfd, &owner);
		/* (set first: the handler may run before the request returns) */
		p->pickup.tried[s] = gen;
		p->pickup.session = s;
		p->pickup.gen = gen;
		p->pickup.pending = true;
		if (st_insp_request(d, &owner, ST_INSP_ROLE_OBJECTS, &t, sizeof(t), p->pidfd,
				    PICKUP_DEADLINE_MS, on_taken, p) < 0)
			p->pickup.pending = false;
		return; /* one request at a time */
	}
}
