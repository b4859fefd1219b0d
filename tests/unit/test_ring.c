/*
 * Unit tests of the per-thread ring buffers: the producer (core/writer.c,
 * core/pool.c) against the shared-memory contract of core/abi.h, with the
 * test reading the buffers as the daemon's consumer does.
 *
 * Every event of the test tracepoint carries a sequence number and a tag
 * derived from it, so a reader can tell a missing, repeated or torn record.
 * Each case: written == read + lost, every payload checked.
 */
#include <check.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

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
	uint8_t *pool;
	uint32_t slot;
	uint64_t rseq;	   /* next sub-buffer to read */
	uint32_t roff;	   /* bytes of it already read */
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

/* Reads what the consumer may read now; `partial`: the open one too. */
static void drain(struct reader *r, bool partial)
{
	const struct st_abi_pool *h = (const struct st_abi_pool *)r->pool;
	struct st_abi_slot *slot = harness_slot(r->pool, r->slot);

	for (;;) {
		uint32_t k = (uint32_t)(r->rseq % h->sb_count);
		struct st_abi_subbuf *sb = &slot->sb[k];
		uint64_t commit;
		uint32_t closed;

		if (__atomic_load_n(&sb->seq, __ATOMIC_ACQUIRE) != r->rseq + 1)
			return;
		closed = __atomic_load_n(&sb->closed, __ATOMIC_ACQUIRE);
		commit = __atomic_load_n(&sb->commit, __ATOMIC_ACQUIRE);
		if (!closed && !partial)
			return;
		check_records(r, harness_subbuf(r->pool, r->slot, k) + r->roff, commit - r->roff);
		r->roff = (uint32_t)commit;
		if (!closed)
			return;
		r->rseq++;
		r->roff = 0;
		__atomic_store_n(&slot->rseq, r->rseq, __ATOMIC_RELEASE);
	}
}

static uint8_t *first_pool(uint64_t *size)
{
	uint8_t *pool = harness_pool(daemon_sock, size);

	ck_assert_ptr_nonnull(pool);
	return pool;
}

/* Records in one 4 KiB sub-buffer of the test. */
#define PER_SB (4096 / REC)

START_TEST(wraparound)
{
	struct reader r = { 0 };
	uint64_t size;

	daemon_sock = harness_daemon();
	harness_session(0, 1, ST_MODE_DISCARD, 4096, 4, 1);
	enable();
	emit(0);
	r.pool = first_pool(&size);
	for (uint64_t i = 1; i < 10000; i++) {
		emit(i);
		drain(&r, false);
	}
	drain(&r, true);
	ck_assert_uint_eq(r.read, 10000);
	ck_assert_uint_eq(r.skipped, 0);
	ck_assert_uint_eq(harness_slot(r.pool, 0)->lost_full, 0);
	/* ~93 sub-buffers went through a ring of 4: it wrapped many times */
	ck_assert_uint_gt(r.rseq, 80);
}
END_TEST

START_TEST(discard_when_full)
{
	struct reader r = { 0 };
	struct st_abi_slot *slot;
	uint64_t size;

	daemon_sock = harness_daemon();
	harness_session(0, 1, ST_MODE_DISCARD, 4096, 4, 1);
	enable();
	for (uint64_t i = 0; i < 1000; i++)
		emit(i);
	r.pool = first_pool(&size);
	slot = harness_slot(r.pool, 0);
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

START_TEST(overwrite_keeps_newest)
{
	struct st_abi_slot *slot;
	uint64_t size, seen[4][2], held = 0, n = 0;
	uint8_t *pool;

	daemon_sock = harness_daemon();
	harness_session(0, 1, ST_MODE_OVERWRITE, 4096, 4, 1);
	enable();
	for (uint64_t i = 0; i < 1000; i++)
		emit(i);
	pool = first_pool(&size);
	slot = harness_slot(pool, 0);
	ck_assert_uint_eq(slot->lost_full, 0);
	/* 1000 events fill 10 sub-buffers: the first 6 were overwritten */
	ck_assert_uint_eq(slot->overwritten, 6 * PER_SB);
	for (uint32_t k = 0; k < 4; k++) {
		seen[n][0] = slot->sb[k].seq;
		seen[n][1] = k;
		n++;
	}
	/* sequences 6..9 (seq field is s + 1), oldest first */
	for (uint64_t s = 7; s <= 10; s++) {
		for (uint32_t k = 0; k < 4; k++) {
			struct reader r = { 0 };

			if (seen[k][0] != s)
				continue;
			r.next = (s - 1) * PER_SB;
			check_records(&r, harness_subbuf(pool, 0, (uint32_t)seen[k][1]),
				      slot->sb[seen[k][1]].commit);
			ck_assert_uint_eq(r.skipped, 0);
			held += r.read;
		}
	}
	ck_assert_uint_eq(held + slot->overwritten, 1000);
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
	uint64_t size, n = 2000000;

	daemon_sock = harness_daemon();
	harness_session(0, 1, ST_MODE_DISCARD, 65536, 8, 1);
	enable();
	emit(0);
	c.r.pool = first_pool(&size);
	ck_assert_int_eq(pthread_create(&t, NULL, consumer, &c), 0);
	for (uint64_t i = 1; i < n; i++)
		emit(i);
	__atomic_store_n(&c.done, true, __ATOMIC_RELEASE);
	pthread_join(t, NULL);
	/* every record whole, in order; what is missing is counted: the gaps
	 * between records read, and the events after the last one read */
	ck_assert_uint_gt(c.r.read, 0);
	ck_assert_uint_eq(c.r.read + harness_slot(c.r.pool, 0)->lost_full, n);
	ck_assert_uint_eq(c.r.skipped + (n - c.r.next), harness_slot(c.r.pool, 0)->lost_full);
}
END_TEST

START_TEST(nested_write_counted)
{
	struct st_abi_slot *slot;
	uint64_t size;
	uint8_t *pool;

	daemon_sock = harness_daemon();
	harness_session(0, 1, ST_MODE_DISCARD, 4096, 4, 1);
	enable();
	emit(0);
	pool = first_pool(&size);
	slot = harness_slot(pool, 0);
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
	uint64_t size;

	daemon_sock = harness_daemon();
	harness_session(0, 1, ST_MODE_DISCARD, 4096, 4, 2);
	enable();
	pthread_create(&t, NULL, emit_ten, (void *)0);
	pthread_join(t, NULL);
	r.pool = first_pool(&size);
	ck_assert_uint_eq(harness_slot(r.pool, 0)->owner, 0); /* given back */
	pthread_create(&t, NULL, emit_ten, (void *)10);
	pthread_join(t, NULL);
	/* the second thread took the same buffer and went on in the same
	 * sub-buffer; the other slot was never used */
	ck_assert_uint_eq(harness_slot(r.pool, 1)->sb[0].seq, 0);
	ck_assert_uint_eq(harness_slot(r.pool, 0)->sb[0].commit, 20 * REC);
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
	uint64_t size;
	uint8_t *pool;

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
	pool = first_pool(&size);
	ck_assert_uint_eq(harness_slot(pool, 0)->sb[0].commit, 2 * REC);
}
END_TEST

START_TEST(dead_owner_taken_over)
{
	uint64_t size;
	uint8_t *pool;

	daemon_sock = harness_daemon();
	harness_session(0, 1, ST_MODE_DISCARD, 4096, 4, 1);
	enable();
	emit(0);
	pool = first_pool(&size);
	/* pretend the owner died without giving the buffer back */
	st__thread_forget();
	st__live->pid = getpid();
	harness_slot(pool, 0)->owner = 0x3fffffff; /* no such thread */
	emit(1);
	ck_assert_uint_eq(st__control->lost_no_buffer[0], 0);
	ck_assert_uint_eq(harness_slot(pool, 0)->owner, (uint32_t)syscall(SYS_gettid));
	ck_assert_uint_eq(harness_slot(pool, 0)->sb[0].commit, 2 * REC);
}
END_TEST

START_TEST(session_recreated_gets_new_pool)
{
	uint64_t size;
	uint8_t *old, *fresh;

	daemon_sock = harness_daemon();
	harness_session(0, 1, ST_MODE_DISCARD, 4096, 4, 1);
	enable();
	emit(0);
	old = first_pool(&size);
	harness_session(0, 2, ST_MODE_DISCARD, 8192, 4, 1);
	emit(1);
	fresh = first_pool(&size);
	ck_assert_ptr_ne(old, fresh);
	ck_assert_uint_eq(((struct st_abi_pool *)fresh)->generation, 2);
	ck_assert_uint_eq(harness_slot(old, 0)->sb[0].commit, REC);
	ck_assert_uint_eq(harness_slot(fresh, 0)->sb[0].commit, REC);
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
						overwrite_keeps_newest, concurrent_reader,
						nested_write_counted,
						buffer_reused_after_thread_exit,
						no_free_buffer_counted, dead_owner_taken_over,
						session_recreated_gets_new_pool,
						bad_config_refused));
}
