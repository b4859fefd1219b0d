/*
 * Unit tests of the daemon's buffer memory accounting (ctl/daemon/model/memory.c):
 * grants within the session's and the daemon's bounds, shrunk, refused,
 * unclaimed buffers taken back for a newcomer, raised for a process whose
 * threads found none (from free memory, or others' unclaimed), given back when a process ends or a session goes;
 * the bounds are never exceeded, and what a process writes in its control
 * page (its claims) never raises what is counted against them; claims
 * whose buffers never get their pages are taken back after a while; a
 * user's processes are held to the user's memory quota; a pool that holds
 * more pages than the bounds let it have gets its process refused.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ctl/daemon/base/quota.h"
#include "ctl/daemon/model/memory.h"
#include "ctl/daemon/model/proc.h"
#include "ctl/daemon/model/sessbits.h"
#include "ctl/daemon/model/session.h"
#include "ctl/daemon/model/state.h"
#include "tests/unit/run.h"

#define SLOT 1000u /* bytes of a thread buffer, here */

static struct st_daemon d;

static struct st_session *session(uint32_t s, uint32_t bound_slots, uint32_t share_slots)
{
	struct st_session *ses = calloc(1, sizeof(*ses));

	ck_assert_ptr_nonnull(ses);
	ses->index = s;
	ses->generation = 100 + s;
	snprintf(ses->name, sizeof(ses->name), "s%u", s);
	ses->nslots = share_slots;
	ses->slot_bytes = SLOT;
	ses->mem.bound = (uint64_t)bound_slots * SLOT;
	ses->all_users = true;
	ses->next = d.sessions;
	d.sessions = ses;
	return ses;
}

static void session_gone(struct st_session *ses)
{
	struct st_session **pp = &d.sessions;

	st_memory_session_gone(&d, ses);
	while (*pp != ses)
		pp = &(*pp)->next;
	*pp = ses->next;
	free(ses);
}

static struct st_proc *proc(pid_t pid)
{
	struct st_proc *p = calloc(1, sizeof(*p));

	ck_assert_ptr_nonnull(p);
	p->control = calloc(1, sizeof(*p->control));
	ck_assert_ptr_nonnull(p->control);
	p->pid = pid;
	p->next = d.procs;
	d.procs = p;
	return p;
}

/* Configures p in session s, as st_session_apply does. */
static uint32_t grant(struct st_proc *p, uint32_t s)
{
	st_memory_grant(&d, p, s, false);
	ck_assert_uint_eq(p->control->slots_allowed[s], p->memory.grants[s].slots);
	ck_assert_uint_le(st_session_at(&d, s, p)->mem.granted, st_session_at(&d, s, p)->mem.bound);
	ck_assert_uint_le(d.mem.granted, d.mem.bound);
	return p->memory.grants[s].slots;
}

/* The process's threads claimed n buffers of its pool in session s. */
static void claim(struct st_proc *p, uint32_t s, uint32_t n)
{
	p->control->slots_claimed[s] = ((uint64_t)st_session_at(&d, s, p)->generation << 32) | n;
}

static void setup(void)
{
	memset(&d, 0, sizeof(d));
	d.mem.bound = UINT64_MAX;
}

START_TEST(shrunk_then_taken_back_then_refused)
{
	struct st_session *ses;
	struct st_proc *p[6];

	setup();
	ses = session(0, 5, 4);
	for (int i = 0; i < 6; i++)
		p[i] = proc(100 + i);
	ck_assert_uint_eq(grant(p[0], 0), 4); /* its share */
	/* what was left, and half of p[0]'s unclaimed beyond its first */
	ck_assert_uint_eq(grant(p[1], 0), 2);
	ck_assert_uint_eq(p[0]->memory.grants[0].slots, 3);
	ck_assert_uint_eq(p[0]->control->slots_allowed[0], 3);
	/* nothing left: from the grant with the most unclaimed, at least one */
	ck_assert_uint_eq(grant(p[2], 0), 1);
	ck_assert_uint_eq(p[0]->memory.grants[0].slots, 2);
	ck_assert_uint_eq(grant(p[3], 0), 1);
	ck_assert_uint_eq(p[1]->memory.grants[0].slots, 1);
	ck_assert_uint_eq(grant(p[4], 0), 1);
	ck_assert_uint_eq(p[0]->memory.grants[0].slots, 1); /* each keeps one */
	ck_assert_uint_eq(grant(p[5], 0), 0);	     /* refused */
	ck_assert_uint_eq(p[5]->control->slots_allowed[0], 0);
	ck_assert_uint_eq(ses->mem.granted, 5 * SLOT);
	ck_assert_uint_eq(ses->mem.granted_peak, 5 * SLOT);
	ck_assert_uint_eq(ses->memc.shrunk, 4);
	ck_assert_uint_eq(ses->memc.refused, 1);
	ck_assert_uint_eq(ses->memc.taken_back, 4);
	ck_assert_uint_eq(d.mem.granted, 5 * SLOT);
}
END_TEST

START_TEST(claimed_buffers_are_kept)
{
	struct st_session *ses;
	struct st_proc *a, *b, *c, *e;

	setup();
	ses = session(0, 6, 4);
	a = proc(1);
	b = proc(2);
	c = proc(3);
	e = proc(4);
	ck_assert_uint_eq(grant(a, 0), 4);
	claim(a, 0, 3);
	ck_assert_uint_eq(grant(b, 0), 3); /* the two left, and a's fourth */
	ck_assert_uint_eq(a->memory.grants[0].slots, 3);
	claim(b, 0, 2);
	ck_assert_uint_eq(st_memory_committed(&d, ses), 5 * SLOT);
	ck_assert_uint_eq(grant(c, 0), 1); /* b's third, never claimed */
	ck_assert_uint_eq(a->memory.grants[0].slots, 3);
	ck_assert_uint_eq(b->memory.grants[0].slots, 2);
	ck_assert_uint_eq(grant(e, 0), 0);
	/* a claim count of another pool (generation), or beyond the pool,
	 * counts for nothing, or for the pool at most */
	b->control->slots_claimed[0] = ((uint64_t)(ses->generation + 1) << 32) | 2;
	ck_assert_uint_eq(st_memory_claimed(b, 0, ses->generation, ses->nslots), 0);
	claim(b, 0, 1000);
	ck_assert_uint_eq(st_memory_claimed(b, 0, ses->generation, ses->nslots), 4);
	/* ... and never in what is granted against the bound */
	ck_assert_uint_eq(ses->mem.granted, 6 * SLOT);
}
END_TEST

START_TEST(given_back_and_raised)
{
	struct st_session *ses;
	struct st_proc *a, *b;

	setup();
	ses = session(0, 4, 4);
	a = proc(1);
	b = proc(2);
	ck_assert_uint_eq(grant(a, 0), 4);
	claim(a, 0, 4);
	ck_assert_uint_eq(grant(b, 0), 0);
	/* its threads lose events; nothing is free: no raise */
	b->control->lost_no_memory[0] = 10;
	st_memory_tick(&d);
	ck_assert_uint_eq(b->memory.grants[0].slots, 0);
	ck_assert_uint_eq(ses->mem.committed_peak, 4 * SLOT);
	/* a ends: its grant is free, but b lost nothing since */
	st_memory_release(&d, a);
	a->conn.ended = true;
	ck_assert_uint_eq(ses->mem.granted, 0);
	ck_assert_uint_eq(d.mem.granted, 0);
	st_memory_tick(&d);
	ck_assert_uint_eq(b->memory.grants[0].slots, 0);
	/* b's threads lose more: one buffer, then twice as many, at most its
	 * share */
	b->control->lost_no_memory[0] = 11;
	st_memory_tick(&d);
	ck_assert_uint_eq(b->memory.grants[0].slots, 1);
	ck_assert_uint_eq(b->control->slots_allowed[0], 1);
	b->control->lost_no_memory[0] = 12;
	st_memory_tick(&d);
	ck_assert_uint_eq(b->memory.grants[0].slots, 2);
	b->control->lost_no_memory[0] = 13;
	st_memory_tick(&d);
	ck_assert_uint_eq(b->memory.grants[0].slots, 4);
	b->control->lost_no_memory[0] = 14;
	st_memory_tick(&d);
	ck_assert_uint_eq(b->memory.grants[0].slots, 4);
	ck_assert_uint_eq(ses->memc.raised, 3);
	ck_assert_uint_eq(ses->memc.refused, 1);
	ck_assert_uint_eq(ses->mem.granted, 4 * SLOT);
	ck_assert_uint_eq(ses->mem.granted_peak, 4 * SLOT);
}
END_TEST

START_TEST(raised_from_unclaimed)
{
	struct st_session *ses;
	struct st_proc *a, *b;

	setup();
	ses = session(0, 4, 4);
	a = proc(1);
	b = proc(2);
	ck_assert_uint_eq(grant(a, 0), 4);
	claim(a, 0, 1);
	ck_assert_uint_eq(grant(b, 0), 1);
	ck_assert_uint_eq(a->memory.grants[0].slots, 3);
	/* b's threads claim its buffer and want more: a's unclaimed go to b,
	 * one, then two more; a keeps the one it claimed */
	claim(b, 0, 1);
	b->control->lost_no_memory[0] = 5;
	st_memory_tick(&d);
	ck_assert_uint_eq(b->memory.grants[0].slots, 2);
	ck_assert_uint_eq(a->memory.grants[0].slots, 2);
	ck_assert_uint_eq(a->control->slots_allowed[0], 2);
	claim(b, 0, 2);
	b->control->lost_no_memory[0] = 9;
	st_memory_tick(&d);
	ck_assert_uint_eq(b->memory.grants[0].slots, 3);
	ck_assert_uint_eq(a->memory.grants[0].slots, 1);
	claim(b, 0, 3);
	b->control->lost_no_memory[0] = 12;
	st_memory_tick(&d);
	ck_assert_uint_eq(b->memory.grants[0].slots, 3);
	ck_assert_uint_eq(ses->memc.taken_back, 3);
	ck_assert_uint_eq(ses->memc.raised, 2);
	ck_assert_uint_eq(ses->mem.granted, 4 * SLOT);
}
END_TEST

START_TEST(configured_again_keeps_its_grant)
{
	struct st_session *ses;
	struct st_proc *a, *b;

	setup();
	ses = session(0, 5, 4);
	a = proc(1);
	b = proc(2);
	ck_assert_uint_eq(grant(a, 0), 4);
	ck_assert_uint_eq(grant(b, 0), 2);
	ck_assert_uint_eq(a->memory.grants[0].slots, 3);
	/* stopped and started: configured again, same pool, same grant */
	a->control->slots_allowed[0] = 0;
	ck_assert_uint_eq(grant(a, 0), 3);
	ck_assert_uint_eq(grant(b, 0), 2);
	ck_assert_uint_eq(ses->mem.granted, 5 * SLOT);
	ck_assert_uint_eq(ses->memc.shrunk, 1);
}
END_TEST

START_TEST(daemon_bound_over_sessions)
{
	struct st_session *s0, *s1;
	struct st_proc *a, *b, *c;

	setup();
	d.mem.bound = 3 * SLOT;
	s0 = session(0, 10, 3);
	s1 = session(1, 10, 3);
	a = proc(1);
	b = proc(2);
	c = proc(3);
	ck_assert_uint_eq(grant(a, 0), 3);
	/* session 1 has room, the daemon has none: taken back in session 0 */
	ck_assert_uint_eq(grant(b, 1), 1);
	ck_assert_uint_eq(a->memory.grants[0].slots, 2);
	ck_assert_uint_eq(s0->memc.taken_back, 1);
	ck_assert_uint_eq(s1->memc.shrunk, 1);
	claim(a, 0, 2);
	ck_assert_uint_eq(grant(c, 1), 0);
	ck_assert_uint_eq(s1->memc.refused, 1);
	ck_assert_uint_eq(d.mem.granted, 3 * SLOT);
	/* session 0 goes: what it granted is the daemon's again */
	session_gone(s0);
	ck_assert_uint_eq(d.mem.granted, SLOT);
	ck_assert_uint_eq(a->memory.grants[0].generation, 0);
	c->control->lost_no_memory[1] = 1;
	st_memory_tick(&d);
	ck_assert_uint_eq(c->memory.grants[1].slots, 1);
	ck_assert_uint_eq(d.mem.granted, 2 * SLOT);
	ck_assert_uint_eq(d.mem.granted_peak, 3 * SLOT);
}
END_TEST

START_TEST(session_bound_takes_back_in_its_session)
{
	struct st_session *s1;
	struct st_proc *a, *b, *c;

	setup();
	d.mem.bound = 100 * SLOT;
	session(0, 10, 8);
	s1 = session(1, 2, 2);
	a = proc(1);
	b = proc(2);
	c = proc(3);
	ck_assert_uint_eq(grant(a, 0), 8);
	ck_assert_uint_eq(grant(b, 1), 2);
	/* session 1's own bound is short: session 0's unclaimed do not help */
	ck_assert_uint_eq(grant(c, 1), 1);
	ck_assert_uint_eq(a->memory.grants[0].slots, 8);
	ck_assert_uint_eq(b->memory.grants[1].slots, 1);
	ck_assert_uint_eq(s1->memc.taken_back, 1);
}
END_TEST

/* A pool of nslots buffers of one header page and two data pages each,
 * for p in session s, as on_pool maps it; the data pages of the first
 * `paged` buffers are given pages. */
#define PG 4096u
static void pool(struct st_proc *p, uint32_t s, uint32_t nslots, uint32_t paged)
{
	struct st_proc_pool *pool = &p->pools[s];
	uint64_t slot = 3 * PG, size = PG + nslots * slot;
	int fd = memfd_create("pool", MFD_CLOEXEC);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(ftruncate(fd, (off_t)size), 0);
	pool->ring.base = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	ck_assert_ptr_ne(pool->ring.base, MAP_FAILED);
	pool->ring.fd = fd;
	pool->ring.size = size;
	pool->ring.nslots = nslots;
	pool->ring.slot_size = slot;
	pool->ring.hdr_size = PG;
	pool->generation = st_session_at(&d, s, p)->generation;
	for (uint32_t i = 0; i < nslots; i++)
		pool->ring.base[PG + i * slot] = 1; /* (headers: the process reads them all) */
	for (uint32_t i = 0; i < paged; i++)
		memset(pool->ring.base + PG + i * slot + PG, 1, 2 * PG);
}

START_TEST(claims_without_pages_are_taken_back)
{
	struct st_session *ses;
	struct st_proc *a, *b;

	setup();
	ses = session(0, 4, 4);
	a = proc(1);
	b = proc(2);
	ck_assert_uint_eq(grant(a, 0), 4);
	claim(a, 0, 4); /* and no pool, ever */
	st_memory_tick_at(&d, 1000);
	ck_assert_uint_eq(grant(b, 0), 0);
	b->control->lost_no_memory[0] = 1;
	st_memory_tick_at(&d, 5999); /* honoured until UNBACKED_MS */
	ck_assert_uint_eq(b->memory.grants[0].slots, 0);
	ck_assert_uint_eq(st_memory_committed(&d, ses), 4 * SLOT);
	b->control->lost_no_memory[0] = 2;
	st_memory_tick_at(&d, 6000);
	ck_assert_uint_eq(b->memory.grants[0].slots, 1);
	ck_assert_uint_eq(a->memory.grants[0].slots, 3);
	ck_assert_uint_eq(a->control->slots_allowed[0], 3); /* below its claims */
	b->control->lost_no_memory[0] = 3;
	st_memory_tick_at(&d, 6100);
	ck_assert_uint_eq(b->memory.grants[0].slots, 2);
	ck_assert_uint_eq(st_memory_committed(&d, ses), 0);
	ck_assert_uint_eq(ses->mem.granted, 4 * SLOT);
}
END_TEST

START_TEST(claims_with_pages_are_kept)
{
	struct st_session *ses;
	struct st_proc *a, *b;

	setup();
	ses = session(0, 4, 4);
	a = proc(1);
	b = proc(2);
	ck_assert_uint_eq(grant(a, 0), 4);
	pool(a, 0, 4, 2);
	claim(a, 0, 3); /* the third never gets its pages */
	st_memory_tick_at(&d, 1000);
	st_memory_tick_at(&d, 7000);
	ck_assert_uint_eq(a->memory.grants[0].backed, 2);
	ck_assert_uint_eq(st_memory_committed(&d, ses), 2 * SLOT);
	/* b: the two a has no pages for, beyond the two it has */
	ck_assert_uint_eq(grant(b, 0), 1);
	b->control->lost_no_memory[0] = 1;
	st_memory_tick_at(&d, 7100);
	ck_assert_uint_eq(b->memory.grants[0].slots, 2);
	ck_assert_uint_eq(a->memory.grants[0].slots, 2);
	ck_assert(!a->memory.over);
	/* its third buffer gets its pages at last: honoured again */
	memset(a->pools[0].ring.base + PG + 2 * 3 * PG + PG, 1, 2 * PG);
	st_memory_tick_at(&d, 7200);
	ck_assert_uint_eq(a->memory.grants[0].backed, 3);
	ck_assert_uint_eq(a->memory.grants[0].unbacked_since, 0);
}
END_TEST

START_TEST(a_user_is_held_to_its_quota)
{
	struct st_session *ses;
	struct st_proc *a, *b, *c;

	setup();
	ses = session(0, 10, 4);
	st_quota_default(ST_Q_MEMORY, 3 * SLOT);
	a = proc(1);
	b = proc(2);
	c = proc(3);
	a->uid = b->uid = 1001;
	c->uid = 1002;
	a->user = b->user = st_user_of(1001);
	c->user = st_user_of(1002);
	ck_assert_uint_eq(grant(a, 0), 3);
	/* the user's bound is short: taken back from the user's own */
	ck_assert_uint_eq(grant(b, 0), 1);
	ck_assert_uint_eq(a->memory.grants[0].slots, 2);
	ck_assert_uint_eq(a->user->used[ST_Q_MEMORY], 3 * SLOT);
	/* another user is held to its own quota, not to the first's use */
	ck_assert_uint_eq(grant(c, 0), 3);
	ck_assert_uint_eq(ses->mem.granted, 6 * SLOT);
	st_memory_release(&d, a);
	ck_assert_uint_eq(b->user->used[ST_Q_MEMORY], SLOT);
}
END_TEST

START_TEST(pages_beyond_the_bounds_are_refused)
{
	struct st_proc *a, *b;

	setup();
	session(0, 2, 4);
	a = proc(1);
	b = proc(2);
	a->user = st_user_of(0);
	ck_assert_uint_eq(grant(a, 0), 2);
	claim(a, 0, 2);
	ck_assert_uint_eq(grant(b, 0), 0);
	/* a writes into four buffers, claiming two: what the bounds have is
	 * granted (nothing), the rest is over them */
	pool(a, 0, 4, 4);
	st_memory_tick_at(&d, 1000);
	ck_assert(!a->memory.over);
	st_memory_tick_at(&d, 10999);
	ck_assert(!a->memory.over);
	st_memory_tick_at(&d, 11100); /* (pages are counted once a second) */
	ck_assert(!a->memory.over);
	st_memory_tick_at(&d, 12000);
	ck_assert(a->memory.over);
	ck_assert_uint_eq(a->user->refused[ST_Q_MEMORY], 1);
	/* within its grant it is not */
	ck_assert(!b->memory.over);
}
END_TEST

/* Per-CPU pools: the daemon allocates the pages of the buffers claimed,
 * first sub-buffers first, and nothing of a buffer not claimed. */
START_TEST(per_cpu_pages_allocated_within_the_claims)
{
	struct st_proc_pool pool = { 0 };
	struct st_abi_geometry g;
	struct stat st;
	int fd;

	ck_assert_int_eq(st_abi_geometry(ST_MODE_DISCARD, 4096, 4, 2, &g), 0);
	fd = memfd_create("pool", MFD_CLOEXEC);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(ftruncate(fd, (off_t)g.size), 0);
	ck_assert_int_eq(st_ring_init(&pool.ring, (uint8_t *)1, fd, g.size, ST_MODE_DISCARD, 4096,
				      4, 2),
			 0);
	pool.ring.percpu = true;
	/* nothing claimed: nothing allocated */
	st_memory_fill(&pool, 0, 100);
	ck_assert_int_eq(fstat(fd, &st), 0);
	ck_assert_int_eq(st.st_blocks, 0);
	/* one buffer of two claimed: its header and first sub-buffer, then
	 * all of it, never the other's */
	st_memory_fill(&pool, 1, 1);
	ck_assert_int_eq(fstat(fd, &st), 0);
	ck_assert_uint_eq((uint64_t)st.st_blocks * 512, g.hdr_size + 4096);
	st_memory_fill(&pool, 1, 100);
	ck_assert_int_eq(fstat(fd, &st), 0);
	ck_assert_uint_eq((uint64_t)st.st_blocks * 512, g.slot_size);
	close(fd);
}
END_TEST

int main(void)
{
	return st_run_tests("memory", ST_TESTS(per_cpu_pages_allocated_within_the_claims,
					       shrunk_then_taken_back_then_refused,
					       claimed_buffers_are_kept, given_back_and_raised,
					       raised_from_unclaimed,
					       configured_again_keeps_its_grant,
					       daemon_bound_over_sessions,
					       session_bound_takes_back_in_its_session,
					       claims_without_pages_are_taken_back,
					       claims_with_pages_are_kept, a_user_is_held_to_its_quota,
					       pages_beyond_the_bounds_are_refused));
}
