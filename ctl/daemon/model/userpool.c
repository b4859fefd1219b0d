/*
 * Per-user buffers (--buffers per-user, doc/percpu.md): in a session that
 * asks for them, all the traced processes of one user write into one
 * per-CPU pool, which the daemon makes when the session first traces a
 * process of that user. Buffer memory is then users x CPUs x buffer size,
 * however many processes and threads there are, as with LTTng's per-UID
 * buffers.
 *
 * The pool is a memfd of the daemon's, sealed (it can neither shrink nor
 * grow: no process can make the daemon's mapping fault), with every CPU's
 * buffer granted and its pages allocated by the daemon (the memory tick,
 * memory.c). It is sent to each process on its connection (ST_MSG_USER_POOL)
 * with a writer number, before the session is configured in the process's
 * control page: a writer that reads that configuration finds the pool on
 * its socket (core/pool.c). A process the daemon cannot send it to (found
 * running without a connection, its socket full) is configured
 * per-process instead, and so is one without rseq (its HELLO says), which
 * makes a pool of per-thread buffers of its own.
 *
 * What a process may do with it: write anything into its user's pool,
 * including records that name another process of the same user by its
 * writer number. That spoils that user's records only: no other user's
 * process has the pool, and the consumer checks every record as it checks
 * a process's own pool (an id must be one of the process the record names,
 * fields must fit), so a forged record is dropped or decoded as an event
 * of one of that user's processes.
 *
 * The pool is held by a stand-in process record (`holder`, never in the
 * daemon's list of processes), on which the consumer keeps what it keeps
 * for a process's own pool: slot states, streams, statistics, warnings. A
 * run of records names its process by writer number, which
 * st_user_pool_writer maps back; a process that ends has what the pool
 * holds drained first, with its event classes still there, and its number
 * is then free for another process.
 *
 * Owns: the per-user pools and their writer numbers.
 * Thread: the daemon's, the reactor's one thread.
 * Calls: base, model, wire.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/abi.h"
#include "ctl/common/fdpass.h"
#include "ctl/daemon/base/clock.h"
#include "ctl/daemon/base/log.h"
#include "ctl/daemon/model/memory.h"
#include "ctl/daemon/model/proc.h"
#include "ctl/daemon/model/session.h"
#include "ctl/daemon/model/state.h"
#include "ctl/daemon/model/userpool.h"
#include "ctl/daemon/wire/ring.h"

bool st_user_pool_serves(const struct st_user_pool *up, const struct st_session *ses)
{
	return up->session == ses->index && up->generation == ses->generation;
}

static struct st_user_pool *find(const struct st_daemon *d, const struct st_session *ses, uid_t uid)
{
	for (struct st_user_pool *up = d->user_pools; up; up = up->next)
		if (st_user_pool_serves(up, ses) && up->uid == uid)
			return up;
	return NULL;
}

/* The pool's shared memory: a sealed memfd of the session's geometry,
 * its header written, mapped at *base. The descriptor, or -1. */
static int make_memfd(const struct st_session *ses, const struct st_abi_geometry *g,
		      uint8_t **base)
{
	struct st_abi_pool *hdr;
	int fd = memfd_create("shimtrace-user-pool", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	void *at;

	if (fd < 0)
		return -1;
	if (ftruncate(fd, (off_t)g->size) < 0 ||
	    fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) < 0)
		goto fail;
	at = mmap(NULL, g->size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (at == MAP_FAILED)
		goto fail;
	*base = at;
	hdr = (struct st_abi_pool *)at;
	st_abi_pool_header(hdr, ses->index, ses->generation, ses->mode, ses->sb_size, ses->sb_count,
			   ses->nslots, g, ST_BUFFERS_PER_USER);
	hdr->slots_used = ses->nslots;
	return fd;
fail:
	close(fd);
	return -1;
}

static void pool_free(struct st_daemon *d, struct st_session *ses, struct st_user_pool *up)
{
	uint64_t size = up->holder->pools[up->session].ring.size;

	for (uint32_t k = 0; k < up->nwriters; k++)
		if (up->writers[k]) {
			up->writers[k]->user_gen[up->session] = 0;
			free(up->writers[k]->held_cur[up->session]);
			up->writers[k]->held_cur[up->session] = NULL;
		}
	st_proc_pool_unmap(&up->holder->pools[up->session]);
	free(up->holder);
	/* Its pages go back with its memory in the bounds: the processes
	 * that still map it write no more (the session is gone), and one
	 * that does anyway gets pages of its own, not the daemon's. */
	fallocate(up->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, (off_t)size);
	st_memory_give(d, ses, up->uid, up->bytes);
	close(up->fd);
	free(up->writers);
	free(up);
}

static struct st_user_pool *create(struct st_daemon *d, struct st_session *ses, uid_t uid,
				   gid_t gid)
{
	struct st_user_pool *up;
	struct st_proc_pool *pool;
	struct st_abi_geometry g;
	uint8_t *base = NULL;
	int keep;

	if (st_abi_geometry(ses->mode, ses->sb_size, ses->sb_count, ses->nslots, &g) < 0)
		return NULL;
	up = calloc(1, sizeof(*up));
	if (!up)
		return NULL;
	up->session = ses->index;
	up->generation = ses->generation;
	up->uid = uid;
	up->bytes = (uint64_t)ses->nslots * ses->slot_bytes;
	if (!st_memory_take(d, ses, uid, up->bytes)) {
		st_log_user(uid, ST_LOG_INFO,
			    "session %s: no memory for the buffers of user %u within the bounds: "
			    "its processes get buffers of their own, granted as the bounds allow",
			    ses->name, (unsigned)uid);
		free(up);
		return NULL;
	}
	up->fd = make_memfd(ses, &g, &base);
	/* (a record of its own, as st_proc_new makes one: pid 0, no
	 * descriptors) */
	up->holder = up->fd >= 0 ? calloc(1, sizeof(*up->holder)) : NULL;
	if (!up->holder)
		goto fail;
	up->holder->d = d;
	up->holder->uid = uid;
	up->holder->gid = gid;
	up->holder->instance = d->next_instance++;
	up->holder->pidfd = up->holder->status_fd = up->holder->conn.fd = -1;
	up->holder->user_pool = up;
	snprintf(up->holder->name, sizeof(up->holder->name), "uid%u", (unsigned)uid);
	up->holder->traced_since[ses->index] = st_clock_now(&d->clock);
	pool = &up->holder->pools[ses->index];
	pool->slots = calloc(ses->nslots, sizeof(*pool->slots));
	/* (read with pread, as a process's pool: ring.h) */
	keep = fcntl(up->fd, F_DUPFD_CLOEXEC, 0);
	if (!pool->slots || st_ring_init(&pool->ring, base, keep, g.size, ses->mode, ses->sb_size,
					 ses->sb_count, ses->nslots) < 0) {
		if (keep >= 0)
			close(keep);
		free(pool->slots);
		pool->slots = NULL;
		goto fail;
	}
	pool->ring.percpu = true;
	pool->generation = ses->generation;
	/* the first sub-buffer of every CPU's buffer now, the rest by ticks */
	st_memory_fill(pool, ses->nslots, ses->nslots);
	up->next = d->user_pools;
	d->user_pools = up;
	return up;
fail:
	if (base && !(up->holder && up->holder->pools[ses->index].ring.base))
		munmap(base, g.size);
	if (up->holder) {
		st_proc_pool_unmap(&up->holder->pools[ses->index]);
		free(up->holder);
	}
	if (up->fd >= 0)
		close(up->fd);
	st_memory_give(d, ses, uid, up->bytes);
	free(up);
	return NULL;
}

/* A free writer number of up for p (1 and up), or 0 without memory. */
static uint32_t take_number(struct st_user_pool *up, struct st_proc *p)
{
	for (uint32_t k = 0; k < up->nwriters; k++)
		if (!up->writers[k]) {
			up->writers[k] = p;
			return k + 1;
		}
	if (up->nwriters == up->writers_cap) {
		uint32_t cap = up->writers_cap ? up->writers_cap * 2 : 16;
		struct st_proc **n = realloc(up->writers, cap * sizeof(*n));

		if (!n)
			return 0;
		up->writers = n;
		up->writers_cap = cap;
	}
	up->writers[up->nwriters++] = p;
	return up->nwriters;
}

bool st_user_pool_give(struct st_daemon *d, struct st_session *ses, struct st_proc *p)
{
	struct st_user_pool *up;
	struct st_abi_user_pool_msg m = { .hdr = { ST_MSG_USER_POOL, sizeof(m) } };
	uint32_t s = ses->index, n;

	if (p->user_gen[s] == ses->generation && find(d, ses, p->uid))
		return true; /* (it has it: a session started again) */
	/* (without rseq it writes per-thread buffers of its own anyway) */
	if (p->conn.fd < 0 || p->discovered || !p->rseq)
		return false;
	up = find(d, ses, p->uid);
	if (!up && !(up = create(d, ses, p->uid, p->gid)))
		return false;
	n = take_number(up, p);
	if (!n)
		return false;
	m.session = s;
	m.generation = ses->generation;
	m.writer = n;
	m.size = up->holder->pools[s].ring.size;
	/* (never waits: a process whose socket is full gets a pool of its own) */
	if (st_send_fd(p->conn.fd, &m, sizeof(m), up->fd, MSG_DONTWAIT) < 0) {
		up->writers[n - 1] = NULL;
		return false;
	}
	p->user_writer[s] = n;
	p->user_gen[s] = ses->generation;
	return true;
}

void st_user_pools_hold(struct st_daemon *d, struct st_proc *p)
{
	for (uint32_t s = 0; s < ST_ABI_MAX_SESSIONS; s++) {
		struct st_user_pool *up = p->user_gen[s] ? st_user_pool_of(d, p, s) : NULL;
		const struct st_ring *r;

		if (!up || p->held_cur[s] || up->holder->pools[s].ring.mode != ST_MODE_OVERWRITE ||
		    up->held >= USER_POOL_HELD_MAX)
			continue;
		r = &up->holder->pools[s].ring;
		p->held_cur[s] = malloc(r->nslots * sizeof(uint64_t));
		if (!p->held_cur[s])
			continue;
		for (uint32_t i = 0; i < r->nslots; i++)
			p->held_cur[s][i] = __atomic_load_n(&st_ring_slot(r, i)->cur, __ATOMIC_RELAXED);
		up->held++;
	}
}

bool st_user_pools_held(struct st_daemon *d, struct st_proc *p)
{
	bool held = false;

	for (uint32_t s = 0; s < ST_ABI_MAX_SESSIONS; s++) {
		struct st_user_pool *up = p->held_cur[s] ? st_user_pool_of(d, p, s) : NULL;
		bool round = true;

		if (up) {
			const struct st_ring *r = &up->holder->pools[s].ring;

			/* (the processes' word: a number that never moves keeps
			 * the record until the session goes, one of at most
			 * USER_POOL_HELD_MAX) */
			for (uint32_t i = 0; i < r->nslots && round; i++)
				round = __atomic_load_n(&st_ring_slot(r, i)->cur, __ATOMIC_RELAXED) >=
					p->held_cur[s][i] + r->sb_count;
			if (!round) {
				held = true;
				continue;
			}
			up->held--;
		}
		free(p->held_cur[s]);
		p->held_cur[s] = NULL;
	}
	return held;
}

void st_user_pools_forget(struct st_daemon *d, struct st_proc *p)
{
	for (uint32_t s = 0; s < ST_ABI_MAX_SESSIONS; s++) {
		struct st_user_pool *up = p->user_gen[s] ? st_user_pool_of(d, p, s) : NULL;

		if (up)
			up->writers[p->user_writer[s] - 1] = NULL;
		p->user_gen[s] = p->user_writer[s] = 0;
	}
}

struct st_user_pool *st_user_pool_of(const struct st_daemon *d, const struct st_proc *p,
				     uint32_t s)
{
	for (struct st_user_pool *up = d->user_pools; up; up = up->next)
		if (up->session == s && p->user_gen[s] == up->generation && up->uid == p->uid &&
		    st_user_pool_writer(up, p->user_writer[s]) == p)
			return up;
	return NULL;
}

void st_user_pools_destroy(struct st_daemon *d, struct st_session *ses)
{
	for (struct st_user_pool **pp = &d->user_pools; *pp;) {
		struct st_user_pool *up = *pp;

		if (!st_user_pool_serves(up, ses)) {
			pp = &up->next;
			continue;
		}
		*pp = up->next;
		pool_free(d, ses, up);
	}
}
