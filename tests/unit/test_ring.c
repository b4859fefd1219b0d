/*
 * Unit tests of the per-thread ring buffers: the producer (core/writer.c,
 * core/pool.c) against the shared-memory contract of core/abi.h, read by
 * the daemon's own consumer of shared memory (ctl/daemon/ring.c).
 *
 * Every event of the test tracepoint carries a sequence number and a tag
 * derived from it, so a reader can tell a missing, repeated or torn record.
 * Each case: written == read + lost, every payload checked.
 */
#include <check.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "ctl/daemon/ring.h"
#include "tests/unit/harness.h"
#include "tests/unit/run.h"

#define UT_TRACEPOINTS(TP, F) TP(ut, ev, F(U64, seq) F(U32, tag))
ST_PROVIDER_DECLARE(ut, UT_TRACEPOINTS)
ST_PROVIDER_DEFINE(ut, UT_TRACEPOINTS)

#define EVENT_ID 77
#define REC (ST_ABI_RECORD_HDR + 12)
#define TAG(seq) ((uint32_t)(seq) ^ 0x5a5a5a5au)

static int daemon_sock;

static void enable(void)
{
	st__state_ut.id[st__slot_ut_ev] = EVENT_ID;
	__atomic_store_n(&st__state_ut.mask[st__slot_ut_ev], 1, __ATOMIC_RELEASE);
}

static void emit(uint64_t seq)
{
	st_tracepoint(ut, ev, seq, TAG(seq));
}

struct reader {
	struct st_ring ring;
	uint32_t slot;
	struct st_ring_cursor cur; /* what to read next */
	uint64_t next;	   /* sequence number expected next */
	uint64_t read;	   /* records read */
	uint64_t skipped;  /* sequence numbers jumped over (lost) */
};

/* Checks the records of [p, p + n) and counts them. */
static void check_records(struct reader *r, const uint8_t *p, uint64_t n)
{
	ck_assert_uint_eq(n % REC, 0);
	for (uint64_t off = 0; off < n; off += REC) {
		struct st_abi_record h;
		uint64_t seq;
		uint32_t tag;

		memcpy(&h, p + off, sizeof(h));
		memcpy(&seq, p + off + ST_ABI_RECORD_HDR, 8);
		memcpy(&tag, p + off + ST_ABI_RECORD_HDR + 8, 4);
		ck_assert_uint_eq(h.id, EVENT_ID);
		ck_assert_int_eq(h.vpid, getpid());
		ck_assert_uint_eq(tag, TAG(seq));
		ck_assert_uint_ge(seq, r->next);
		r->skipped += seq - r->next;
		r->next = seq + 1;
		r->read++;
	}
}

/* Reads what the consumer may read now; `partial`: the open one too. The
 * daemon's discard-mode drain, without the trace. */
static void drain(struct reader *r, bool partial)
{
	static uint8_t copy[1 << 20];
	struct st_ring_range g;

	while (st_ring_next(&r->ring, r->slot, &r->cur, partial, &g)) {
		ck_assert(!g.impossible);
		ck_assert_uint_le(g.len, sizeof(copy));
		ck_assert(st_ring_copy(&r->ring, r->slot, g.idx, g.seq, g.off, g.len, copy));
		check_records(r, copy, g.len);
		st_ring_taken(&r->ring, r->slot, &r->cur, &g);
		if (!g.closed)
			return;
	}
}

/* The session's pool, as the daemon maps it: the geometry is the one the
 * test configured (harness_session), checked against the mapping. */
static struct st_ring ring_of(uint8_t *pool, uint64_t size, uint32_t mode, uint32_t sb_size,
			      uint32_t sb_count, uint32_t nslots)
{
	struct st_ring r;

	ck_assert_ptr_nonnull(pool);
	ck_assert_int_eq(st_ring_init(&r, pool, size, mode, sb_size, sb_count, nslots), 0);
	return r;
}

static struct st_ring first_pool(uint32_t mode, uint32_t sb_size, uint32_t sb_count,
				 uint32_t nslots)
{
	uint64_t size;
	uint8_t *pool = harness_pool(daemon_sock, &size);

	return ring_of(pool, size, mode, sb_size, sb_count, nslots);
}

/* Records in one 4 KiB sub-buffer of the test. */
#define PER_SB (4096 / REC)

START_TEST(wraparound)
{
	struct reader r = { 0 };

	daemon_sock = harness_daemon();
	harness_session(0, 1, ST_MODE_DISCARD, 4096, 4, 1);
	enable();
	emit(0);
	r.ring = first_pool(ST_MODE_DISCARD, 4096, 4, 1);
	for (uint64_t i = 1; i < 10000; i++) {
		emit(i);
		drain(&r, false);
	}
	drain(&r, true);
	ck_assert_uint_eq(r.read, 10000);
	ck_assert_uint_eq(r.skipped, 0);
	ck_assert_uint_eq(st_ring_slot(&r.ring, 0)->lost_full, 0);
	/* ~93 sub-buffers went through a ring of 4: it wrapped many times */
	ck_assert_uint_gt(r.cur.rseq, 80);
}
END_TEST

START_TEST(discard_when_full)
{
	struct reader r = { 0 };
	struct st_abi_slot *slot;

	daemon_sock = harness_daemon();
	harness_session(0, 1, ST_MODE_DISCARD, 4096, 4, 1);
	enable();
	for (uint64_t i = 0; i < 1000; i++)
		emit(i);
	r.ring = first_pool(ST_MODE_DISCARD, 4096, 4, 1);
	slot = st_ring_slot(&r.ring, 0);
	/* four sub-buffers held, every later event dropped and counted */
	ck_assert_uint_eq(slot->lost_full, 1000 - 4 * PER_SB);
	drain(&r, true);
	ck_assert_uint_eq(r.read, 4 * PER_SB);
	ck_assert_uint_eq(r.next, 4 * PER_SB);
	/* room again: recording goes on, after a gap of exactly the loss */
	for (uint64_t i = 1000; i < 1010; i++)
		emit(i);
	drain(&r, true);
	ck_assert_uint_eq(r.read, 4 * PER_SB + 10);
	ck_assert_uint_eq(r.skipped, slot->lost_full);
	ck_assert_uint_eq(r.read + slot->lost_full, 1010);
	/* each sub-buffer records the losses as of its close: none for the
	 * first four, all of them for the next one */
	for (uint32_t k = 0; k < 4; k++)
		ck_assert_uint_eq(slot->sb[k].lost, 0);
	/* sequence 4 (in sub-buffer 0) holds 10 events: fill it, then one
	 * more event closes it */
	for (uint64_t i = 1010; i < 1000 + PER_SB; i++)
		emit(i);
	ck_assert_uint_eq(slot->sb[0].seq, 4 + 1);
	ck_assert_uint_eq(slot->sb[0].closed, 0);
	emit(1000 + PER_SB);
	ck_assert_uint_eq(slot->sb[0].closed, 1);
	ck_assert_uint_eq(slot->sb[0].lost, slot->lost_full);
}
END_TEST

/* Reads an overwrite-mode ring as the daemon's final drain and snapshots
 * do: oldest sub-buffer first, each copy kept only if not reused during
 * it. Each kept sub-buffer s must hold exactly the records of sequence s
 * (PER_SB events each, from s * PER_SB), whole. Returns the records kept. */
static uint64_t read_overwrite(const struct st_ring *ring, uint64_t *first_seq)
{
	static uint8_t copy[1 << 20];
	uint64_t (*order)[2], kept = 0;
	int n = st_ring_order(ring, 0, &order);

	ck_assert_int_ge(n, 0);
	for (int k = 0; k < n; k++) {
		uint32_t idx = (uint32_t)order[k][1];
		uint64_t seq = order[k][0], commit = st_ring_commit(ring, 0, idx, seq);
		struct reader r = { 0 };

		if (!commit || !st_ring_copy(ring, 0, idx, seq, 0, commit, copy))
			continue; /* reused meanwhile: not kept */
		r.next = (seq - 1) * PER_SB;
		check_records(&r, copy, commit);
		ck_assert_uint_eq(r.skipped, 0);
		if (kept == 0 && first_seq)
			*first_seq = (seq - 1) * PER_SB;
		kept += r.read;
	}
	free(order);
	return kept;
}

START_TEST(overwrite_keeps_newest)
{
	struct st_abi_slot *slot;
	struct st_ring ring;
	uint64_t first = 0;

	daemon_sock = harness_daemon();
	harness_session(0, 1, ST_MODE_OVERWRITE, 4096, 4, 1);
	enable();
	for (uint64_t i = 0; i < 1000; i++)
		emit(i);
	ring = first_pool(ST_MODE_OVERWRITE, 4096, 4, 1);
	slot = st_ring_slot(&ring, 0);
	ck_assert_uint_eq(slot->lost_full, 0);
	/* 1000 events fill 10 sub-buffers: the first 6 were overwritten;
	 * sequences 6..9 are held, the newest still open */
	ck_assert_uint_eq(slot->overwritten, 6 * PER_SB);
	ck_assert_uint_eq(read_overwrite(&ring, &first) + slot->overwritten, 1000);
	ck_assert_uint_eq(first, 6 * PER_SB);
}
END_TEST

START_TEST(overwrite_copy_of_reused_subbuf_refused)
{
	static uint8_t copy[4096];
	uint64_t (*order)[2], seq;
	struct st_ring ring;
	uint32_t idx;

	daemon_sock = harness_daemon();
	harness_session(0, 1, ST_MODE_OVERWRITE, 4096, 4, 1);
	enable();
	for (uint64_t i = 0; i < 4 * PER_SB; i++)
		emit(i);
	ring = first_pool(ST_MODE_OVERWRITE, 4096, 4, 1);
	ck_assert_int_eq(st_ring_order(&ring, 0, &order), 4);
	seq = order[0][0];
	idx = (uint32_t)order[0][1];
	free(order);
	ck_assert_uint_eq(st_ring_commit(&ring, 0, idx, seq), PER_SB * REC);
	ck_assert(st_ring_copy(&ring, 0, idx, seq, 0, PER_SB * REC, copy));
	/* the producer laps the ring: the oldest sub-buffer is reused, and a
	 * copy of it taken as if before is refused */
	for (uint64_t i = 4 * PER_SB; i < 4 * PER_SB + 2; i++)
		emit(i);
	ck_assert_uint_eq(st_ring_commit(&ring, 0, idx, seq), 0);
	ck_assert(!st_ring_copy(&ring, 0, idx, seq, 0, PER_SB * REC, copy));
}
END_TEST

struct storm {
	struct st_ring ring;
	bool have_ring;
	volatile bool done;
	uint64_t reads, kept;
};

static void *overwrite_writer(void *arg)
{
	struct storm *w = arg;

	emit(0);
	w->ring = first_pool(ST_MODE_OVERWRITE, 4096, 4, 1);
	__atomic_store_n(&w->have_ring, true, __ATOMIC_RELEASE);
	for (uint64_t i = 1; !__atomic_load_n(&w->done, __ATOMIC_ACQUIRE); i++)
		emit(i);
	return NULL;
}

/* Reads while the producer laps the ring as fast as it can: whatever is
 * kept is whole and in order (read_overwrite checks every record against
 * the sub-buffer's sequence), which a copy kept without the sequence
 * check would not be. */
START_TEST(overwrite_read_during_writes)
{
	struct storm w = { 0 };
	pthread_t t;

	daemon_sock = harness_daemon();
	harness_session(0, 1, ST_MODE_OVERWRITE, 4096, 4, 1);
	enable();
	ck_assert_int_eq(pthread_create(&t, NULL, overwrite_writer, &w), 0);
	while (!__atomic_load_n(&w.have_ring, __ATOMIC_ACQUIRE))
		sched_yield();
	for (w.reads = 0; w.reads < 2000; w.reads++)
		w.kept += read_overwrite(&w.ring, NULL);
	__atomic_store_n(&w.done, true, __ATOMIC_RELEASE);
	pthread_join(t, NULL);
	ck_assert_uint_gt(w.kept, 0);
}
END_TEST

struct concurrent {
	struct reader r;
	volatile bool done;
};

static void *consumer(void *arg)
{
	struct concurrent *c = arg;

	while (!__atomic_load_n(&c->done, __ATOMIC_ACQUIRE))
		drain(&c->r, true);
	drain(&c->r, true);
	return NULL;
}

START_TEST(concurrent_reader)
{
	struct concurrent c = { 0 };
	pthread_t t;
	uint64_t n = 2000000;

	daemon_sock = harness_daemon();
	harness_session(0, 1, ST_MODE_DISCARD, 65536, 8, 1);
	enable();
	emit(0);
	c.r.ring = first_pool(ST_MODE_DISCARD, 65536, 8, 1);
	ck_assert_int_eq(pthread_create(&t, NULL, consumer, &c), 0);
	for (uint64_t i = 1; i < n; i++)
		emit(i);
	__atomic_store_n(&c.done, true, __ATOMIC_RELEASE);
	pthread_join(t, NULL);
	/* every record whole, in order; what is missing is counted: the gaps
	 * between records read, and the events after the last one read */
	ck_assert_uint_gt(c.r.read, 0);
	ck_assert_uint_eq(c.r.read + st_ring_slot(&c.r.ring, 0)->lost_full, n);
	ck_assert_uint_eq(c.r.skipped + (n - c.r.next), st_ring_slot(&c.r.ring, 0)->lost_full);
}
END_TEST

START_TEST(nested_write_counted)
{
	struct st_abi_slot *slot;
	struct st_ring ring;

	daemon_sock = harness_daemon();
	harness_session(0, 1, ST_MODE_DISCARD, 4096, 4, 1);
	enable();
	emit(0);
	ring = first_pool(ST_MODE_DISCARD, 4096, 4, 1);
	slot = st_ring_slot(&ring, 0);
	/* a tracepoint hit while an event is being written (a signal
	 * handler): dropped and counted */
	st__tls.busy = 1;
	emit(1);
	st__tls.busy = 0;
	ck_assert_uint_eq(slot->lost_nested, 1);
	/* hit from tracer code: passes through, not an event of the program */
	st__tls.busy = 2;
	emit(2);
	st__tls.busy = 0;
	ck_assert_uint_eq(slot->lost_nested, 1);
	ck_assert_uint_eq(slot->sb[0].commit, REC);
}
END_TEST

static void *emit_ten(void *arg)
{
	uint64_t base = (uint64_t)(uintptr_t)arg;

	for (uint64_t i = 0; i < 10; i++)
		emit(base + i);
	return NULL;
}

START_TEST(buffer_reused_after_thread_exit)
{
	struct reader r = { 0 };
	pthread_t t;

	daemon_sock = harness_daemon();
	harness_session(0, 1, ST_MODE_DISCARD, 4096, 4, 2);
	enable();
	pthread_create(&t, NULL, emit_ten, (void *)0);
	pthread_join(t, NULL);
	r.ring = first_pool(ST_MODE_DISCARD, 4096, 4, 2);
	ck_assert_uint_eq(st_ring_slot(&r.ring, 0)->owner, 0); /* given back */
	pthread_create(&t, NULL, emit_ten, (void *)10);
	pthread_join(t, NULL);
	/* the second thread took the same buffer and went on in the same
	 * sub-buffer; the other slot was never used */
	ck_assert_uint_eq(st_ring_slot(&r.ring, 1)->sb[0].seq, 0);
	ck_assert_uint_eq(st_ring_slot(&r.ring, 0)->sb[0].commit, 20 * REC);
	drain(&r, true);
	ck_assert_uint_eq(r.read, 20);
	ck_assert_uint_eq(r.skipped, 0);
}
END_TEST

static pthread_barrier_t hold;

static void *emit_and_hold(void *arg)
{
	(void)arg;
	emit(0);
	pthread_barrier_wait(&hold);
	pthread_barrier_wait(&hold);
	return NULL;
}

START_TEST(no_free_buffer_counted)
{
	pthread_t t;
	struct st_ring ring;

	daemon_sock = harness_daemon();
	harness_session(0, 1, ST_MODE_DISCARD, 4096, 4, 1);
	enable();
	pthread_barrier_init(&hold, NULL, 2);
	pthread_create(&t, NULL, emit_and_hold, NULL);
	pthread_barrier_wait(&hold);
	/* the only buffer belongs to a live thread */
	emit(1);
	emit(2);
	ck_assert_uint_eq(st__control->lost_no_buffer[0], 2);
	pthread_barrier_wait(&hold);
	pthread_join(t, NULL);
	emit(3);
	ring = first_pool(ST_MODE_DISCARD, 4096, 4, 1);
	ck_assert_uint_eq(st_ring_slot(&ring, 0)->sb[0].commit, 2 * REC);
}
END_TEST

static uint64_t claimed_count(uint32_t gen, uint32_t n)
{
	return ((uint64_t)gen << 32) | n;
}

START_TEST(claims_within_the_grant)
{
	pthread_t t;
	struct st_ring ring;

	daemon_sock = harness_daemon();
	harness_session(0, 1, ST_MODE_DISCARD, 4096, 4, 3);
	st__control->slots_allowed[0] = 1; /* the daemon grants one of the three */
	enable();
	pthread_barrier_init(&hold, NULL, 2);
	pthread_create(&t, NULL, emit_and_hold, NULL);
	pthread_barrier_wait(&hold);
	/* buffer 1 is free, but beyond the grant: a loss of its own cause,
	 * and the claim it tried is not counted */
	emit(1);
	emit(2);
	ck_assert_uint_eq(st__control->lost_no_memory[0], 2);
	ck_assert_uint_eq(st__control->lost_no_buffer[0], 0);
	ck_assert_uint_eq(st__control->slots_claimed[0], claimed_count(1, 1));
	/* the daemon grants one more: the next event takes it */
	st__control->slots_allowed[0] = 2;
	emit(3);
	ck_assert_uint_eq(st__control->lost_no_memory[0], 2);
	ck_assert_uint_eq(st__control->slots_claimed[0], claimed_count(1, 2));
	pthread_barrier_wait(&hold);
	pthread_join(t, NULL);
	ring = first_pool(ST_MODE_DISCARD, 4096, 4, 3);
	ck_assert_uint_eq(st_ring_slot(&ring, 0)->sb[0].commit, REC);
	ck_assert_uint_eq(st_ring_slot(&ring, 1)->sb[0].commit, REC);
	ck_assert_uint_eq(st_ring_slot(&ring, 2)->sb[0].seq, 0);
	ck_assert_uint_eq(st_ring_slots_used(&ring), 2);
}
END_TEST

START_TEST(claimed_buffers_need_no_grant)
{
	pthread_t t;
	struct st_ring ring;

	daemon_sock = harness_daemon();
	harness_session(0, 1, ST_MODE_DISCARD, 4096, 4, 2);
	enable();
	pthread_create(&t, NULL, emit_ten, (void *)0);
	pthread_join(t, NULL);
	/* the grant taken back to nothing: the buffer a thread claimed
	 * before is its process's all the same, and the next thread takes it */
	st__control->slots_allowed[0] = 0;
	pthread_create(&t, NULL, emit_ten, (void *)10);
	pthread_join(t, NULL);
	ck_assert_uint_eq(st__control->lost_no_memory[0], 0);
	ring = first_pool(ST_MODE_DISCARD, 4096, 4, 2);
	ck_assert_uint_eq(st_ring_slot(&ring, 0)->sb[0].commit, 20 * REC);
	/* a claim count of another generation (a pool of an earlier session)
	 * is not this pool's */
	st__control->slots_claimed[0] = claimed_count(7, 2);
	emit(20);
	ck_assert_uint_eq(st__control->lost_no_memory[0], 1);
}
END_TEST

START_TEST(dead_owner_taken_over)
{
	struct st_ring ring;

	daemon_sock = harness_daemon();
	harness_session(0, 1, ST_MODE_DISCARD, 4096, 4, 1);
	enable();
	emit(0);
	ring = first_pool(ST_MODE_DISCARD, 4096, 4, 1);
	/* pretend the owner died without giving the buffer back */
	st__thread_forget();
	st__live->pid = getpid();
	st_ring_slot(&ring, 0)->owner = 0x3fffffff; /* no such thread */
	emit(1);
	ck_assert_uint_eq(st__control->lost_no_buffer[0], 0);
	ck_assert_uint_eq(st_ring_slot(&ring, 0)->owner, (uint32_t)syscall(SYS_gettid));
	ck_assert_uint_eq(st_ring_slot(&ring, 0)->sb[0].commit, 2 * REC);
}
END_TEST

START_TEST(session_recreated_gets_new_pool)
{
	struct st_ring old, fresh;

	daemon_sock = harness_daemon();
	harness_session(0, 1, ST_MODE_DISCARD, 4096, 4, 1);
	enable();
	emit(0);
	old = first_pool(ST_MODE_DISCARD, 4096, 4, 1);
	harness_session(0, 2, ST_MODE_DISCARD, 8192, 4, 1);
	emit(1);
	fresh = first_pool(ST_MODE_DISCARD, 8192, 4, 1);
	ck_assert_ptr_ne(old.base, fresh.base);
	ck_assert_uint_eq(((struct st_abi_pool *)fresh.base)->generation, 2);
	ck_assert_uint_eq(st_ring_slot(&old, 0)->sb[0].commit, REC);
	ck_assert_uint_eq(st_ring_slot(&fresh, 0)->sb[0].commit, REC);
}
END_TEST

START_TEST(bad_config_refused)
{
	/* a sub-buffer size the process must not accept: nothing written,
	 * the event counted as lost for want of a buffer */
	daemon_sock = harness_daemon();
	harness_session(0, 1, ST_MODE_DISCARD, 1000, 4, 1);
	enable();
	emit(0);
	ck_assert_uint_eq(st__control->lost_no_buffer[0], 1);
	harness_session(0, 2, 7, 4096, 4, 1);
	emit(1);
	ck_assert_uint_eq(st__control->lost_no_buffer[0], 2);
}
END_TEST

int main(void)
{
	return st_run_tests("ring", ST_TESTS(wraparound, discard_when_full,
						overwrite_keeps_newest,
						overwrite_copy_of_reused_subbuf_refused,
						overwrite_read_during_writes, concurrent_reader,
						nested_write_counted,
						buffer_reused_after_thread_exit,
						no_free_buffer_counted, claims_within_the_grant,
						claimed_buffers_need_no_grant, dead_owner_taken_over,
						session_recreated_gets_new_pool,
						bad_config_refused));
}
