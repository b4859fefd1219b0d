/*
 * Unit tests of the ring buffers: the producer (core/writer.c, core/pool.c,
 * core/percpu.c) against the shared-memory contract of core/abi.h, read by
 * the daemon's own consumer of shared memory (ctl/daemon/wire/ring.c).
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
#include <sys/wait.h>
#include <unistd.h>

#include "core/abi.h"
#include "ctl/daemon/wire/record.h"
#include "ctl/daemon/wire/ring.h"
#include "core/rseq.h"
#include "tests/unit/harness.h"
#include "tests/unit/run.h"

#define UT_TRACEPOINTS(TP, F) TP(ut, ev, F(U64, seq) F(U32, tag))
ST_PROVIDER_DECLARE(ut, UT_TRACEPOINTS)
ST_PROVIDER_DEFINE(ut, UT_TRACEPOINTS)

#define EVENT_ID 77
/* An event's record: compact or extended header, ip, 12 bytes of fields. */
#define REC_COMPACT (ST_ABI_HDR_COMPACT + ST_ABI_IP_BYTES + 12)
#define REC_EXTENDED (ST_ABI_HDR_EXTENDED + ST_ABI_IP_BYTES + 12)
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
	uint64_t ts;	   /* time of the record before it */
	uint64_t next;	   /* sequence number expected next */
	uint64_t read;	   /* records read */
	uint64_t skipped;  /* sequence numbers jumped over (lost) */
	uint64_t threads;  /* thread records read */
};

/* Checks the records of [p, p + n) and counts them. */
static void check_records(struct reader *r, const uint8_t *p, uint64_t n)
{
	for (uint64_t off = 0; off < n;) {
		struct st_ring_rec h;
		uint64_t seq;
		uint32_t tag;

		ck_assert(st_ring_rec_decode(p + off, n - off, &r->ts, &h));
		off += h.hdr;
		if (h.id == ST_ABI_ID_THREAD) {
			ck_assert_int_gt(h.tid, 0);
			r->threads++;
			continue;
		}
		ck_assert_uint_le(off + 12, n);
		memcpy(&seq, p + off, 8);
		memcpy(&tag, p + off + 8, 4);
		off += 12;
		ck_assert_uint_eq(h.id, EVENT_ID);
		ck_assert_uint_ne(h.ip, 0);
		ck_assert_uint_eq(tag, TAG(seq));
		ck_assert_uint_ge(seq, r->next);
		r->skipped += seq - r->next;
		r->next = seq + 1;
		r->read++;
	}
}

/* The events sub-buffer idx of slot i holds (checked). */
static uint64_t sb_events(const struct st_ring *ring, uint32_t i, uint32_t idx)
{
	struct st_abi_subbuf *sb = &st_ring_slot(ring, i)->sb[idx];
	struct reader r = { .next = 0 };

	check_records(&r, st_ring_data(ring, i, idx), sb->commit);
	return r.read;
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
 * test configured (harness_session), checked against the mapping; records
 * are read with pread of fd (-1: from the mapping). */
static struct st_ring ring_of(uint8_t *pool, int fd, uint64_t size, uint32_t mode,
			      uint32_t sb_size, uint32_t sb_count, uint32_t nslots)
{
	struct st_ring r;

	ck_assert_ptr_nonnull(pool);
	ck_assert_int_eq(st_ring_init(&r, pool, fd, size, mode, sb_size, sb_count, nslots), 0);
	return r;
}

static struct st_ring first_pool(uint32_t mode, uint32_t sb_size, uint32_t sb_count,
				 uint32_t nslots)
{
	uint64_t size;
	int fd = -1;
	uint8_t *pool = harness_pool_fd(daemon_sock, &size, &fd);

	return ring_of(pool, fd, size, mode, sb_size, sb_count, nslots);
}

/* A daemon, session 0 (generation 1) of this geometry for one thread,
 * the tracepoint enabled and one event written: the pool the process
 * sent, as the daemon maps it. */
static struct st_ring started_pool(uint32_t mode, uint32_t sb_size, uint32_t sb_count)
{
	daemon_sock = harness_daemon();
	harness_session(0, 1, mode, sb_size, sb_count, 1);
	enable();
	emit(0);
	return first_pool(mode, sb_size, sb_count, 1);
}

/* Events in one 4 KiB sub-buffer of the test: after its thread record,
 * all compact (at most) or all extended (at least: more than 2^24 clock
 * ticks between two events, a thread preempted on a busy machine). */
#define SB_ROOM (4096 - ST_ABI_THREAD_REC - 12 - ST_ABI_RECORD_MAX_HDR - ST_PAYLOAD_SLACK)
#define PER_SB_MAX (SB_ROOM / REC_COMPACT + 1)
#define PER_SB_MIN (SB_ROOM / REC_EXTENDED + 1)

/* Events 1 to 9999 after event 0, each read as soon as the reader may:
 * all 10000 read, none skipped, and ~55 sub-buffers went through a ring of
 * 4: it wrapped many times. */
static void round_the_ring(struct reader *r)
{
	for (uint64_t i = 1; i < 10000; i++) {
		emit(i);
		drain(r, false);
	}
	drain(r, true);
	ck_assert_uint_eq(r->read, 10000);
	ck_assert_uint_eq(r->skipped, 0);
	ck_assert_uint_gt(r->cur.rseq, 40);
}

START_TEST(wraparound)
{
	struct reader r = { 0 };

	r.ring = started_pool(ST_MODE_DISCARD, 4096, 4);
	round_the_ring(&r);
	ck_assert_uint_eq(st_ring_slot(&r.ring, 0)->lost_full, 0);
}
END_TEST

/* The copy the daemon makes with pread of the pool's memfd holds what the
 * mapping holds, and refuses a range past the sub-buffer. */
START_TEST(copy_by_pread_is_the_mapping)
{
	static uint8_t a[4096], b[4096];
	struct st_ring mapped;
	struct st_ring_range g;
	struct st_ring_cursor cur = { 0 };
	struct reader r = { 0 };

	r.ring = started_pool(ST_MODE_DISCARD, 4096, 4);
	ck_assert_int_ge(r.ring.fd, 0);
	for (uint64_t i = 1; i < 100; i++)
		emit(i);
	mapped = r.ring;
	mapped.fd = -1;
	ck_assert(st_ring_next(&r.ring, 0, &cur, true, &g));
	ck_assert_uint_gt(g.len, 1000);
	memset(a, 1, sizeof(a));
	memset(b, 2, sizeof(b));
	ck_assert(st_ring_copy(&r.ring, 0, g.idx, g.seq, g.off, g.len, a));
	ck_assert(st_ring_copy(&mapped, 0, g.idx, g.seq, g.off, g.len, b));
	ck_assert_mem_eq(a, b, g.len);
	check_records(&r, a, g.len);
	ck_assert_uint_eq(r.read, 100);
	ck_assert(!st_ring_copy(&r.ring, 0, g.idx, g.seq, 4000, 200, a));
	/* (and a descriptor that is not the pool's fails the copy) */
	r.ring.fd = 1000;
	ck_assert(!st_ring_copy(&r.ring, 0, g.idx, g.seq, g.off, g.len, a));
}
END_TEST

START_TEST(discard_when_full)
{
	struct reader r = { 0 };
	struct st_abi_slot *slot;
	uint64_t held;

	daemon_sock = harness_daemon();
	harness_session(0, 1, ST_MODE_DISCARD, 4096, 4, 1);
	enable();
	for (uint64_t i = 0; i < 1000; i++)
		emit(i);
	r.ring = first_pool(ST_MODE_DISCARD, 4096, 4, 1);
	slot = st_ring_slot(&r.ring, 0);
	/* four sub-buffers held, every later event dropped and counted */
	drain(&r, true);
	ck_assert_uint_ge(r.read, 4 * PER_SB_MIN);
	ck_assert_uint_le(r.read, 4 * PER_SB_MAX);
	ck_assert_uint_eq(slot->lost_full, 1000 - r.read);
	ck_assert_uint_eq(r.next, r.read);
	held = r.read;
	/* room again: recording goes on, after a gap of exactly the loss */
	for (uint64_t i = 1000; i < 1010; i++)
		emit(i);
	drain(&r, true);
	ck_assert_uint_eq(r.read, held + 10);
	ck_assert_uint_eq(r.skipped, slot->lost_full);
	ck_assert_uint_eq(r.read + slot->lost_full, 1010);
	/* each sub-buffer records the losses as of its close: none for the
	 * first four, all of them for the next one */
	for (uint32_t k = 0; k < 4; k++)
		ck_assert_uint_eq(slot->sb[k].lost, 0);
	/* sequence 4 (in sub-buffer 0) holds 10 events: fill it, and the
	 * event that does not fit closes it */
	ck_assert_uint_eq(slot->sb[0].seq, 4 + 1);
	for (uint64_t i = 1010; !slot->sb[0].closed && i < 1000 + 2 * PER_SB_MAX; i++)
		emit(i);
	ck_assert_uint_eq(slot->sb[0].closed, 1);
	ck_assert_uint_ge(slot->sb[0].events, PER_SB_MIN);
	ck_assert_uint_le(slot->sb[0].events, PER_SB_MAX);
	ck_assert_uint_eq(slot->sb[0].lost, slot->lost_full);
}
END_TEST

/* Reads an overwrite-mode ring as the daemon's final drain and snapshots
 * do: oldest sub-buffer first, each copy kept only if not reused during
 * it. What is kept must be whole records, in order, without a gap from one
 * kept sub-buffer to the next. Returns the records kept (*first_seq: the
 * first one's sequence number). */
static uint64_t read_overwrite(const struct st_ring *ring, uint64_t *first_seq)
{
	static uint8_t copy[1 << 20];
	uint64_t (*order)[2];
	struct reader r = { 0 };
	int n = st_ring_order(ring, 0, &order);

	ck_assert_int_ge(n, 0);
	for (int k = 0; k < n; k++) {
		uint32_t idx = (uint32_t)order[k][1];
		uint64_t seq = order[k][0], commit = st_ring_commit(ring, 0, idx, seq), seq0;

		if (!commit || !st_ring_copy(ring, 0, idx, seq, 0, commit, copy))
			continue; /* reused meanwhile: not kept */
		/* (a sub-buffer begins with a thread record, then an event) */
		memcpy(&seq0, copy + ST_ABI_THREAD_REC + ST_ABI_HDR_COMPACT + ST_ABI_IP_BYTES, 8);
		if (copy[ST_ABI_THREAD_REC] == ST_ABI_ID_EXTENDED)
			memcpy(&seq0, copy + ST_ABI_THREAD_REC + ST_ABI_HDR_EXTENDED + ST_ABI_IP_BYTES, 8);
		if (r.read == 0) {
			r.next = seq0;
			if (first_seq)
				*first_seq = seq0;
		} else if (seq0 != r.next) {
			/* a later one was reused meanwhile: the kept ones end
			 * here (the next lap's are newer still) */
			break;
		}
		check_records(&r, copy, commit);
		ck_assert_uint_eq(r.skipped, 0);
	}
	free(order);
	return r.read;
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
	/* 1000 events fill more than 4 sub-buffers: the oldest were
	 * overwritten, the newest 4 are held, the last one still open */
	ck_assert_uint_ge(slot->overwritten, 1000 - 4 * PER_SB_MAX);
	ck_assert_uint_le(slot->overwritten, 1000 - 3 * PER_SB_MIN);
	ck_assert_uint_eq(read_overwrite(&ring, &first) + slot->overwritten, 1000);
	ck_assert_uint_eq(first, slot->overwritten);
}
END_TEST

START_TEST(overwrite_copy_of_reused_subbuf_refused)
{
	static uint8_t copy[4096];
	uint64_t (*order)[2], seq, commit;
	struct st_ring ring;
	uint32_t idx;

	ring = started_pool(ST_MODE_OVERWRITE, 4096, 4);
	/* the four sub-buffers in use, the fourth open */
	for (uint64_t i = 1; st_ring_slot(&ring, 0)->sb[3].seq == 0; i++)
		emit(i);
	ck_assert_int_eq(st_ring_order(&ring, 0, &order), 4);
	seq = order[0][0];
	idx = (uint32_t)order[0][1];
	free(order);
	commit = st_ring_commit(&ring, 0, idx, seq);
	ck_assert_uint_gt(commit, 0);
	ck_assert(st_ring_copy(&ring, 0, idx, seq, 0, commit, copy));
	/* the producer laps the ring: the oldest sub-buffer is reused, and a
	 * copy of it taken as if before is refused */
	for (uint64_t i = 0; st_ring_slot(&ring, 0)->sb[idx].seq == seq; i++)
		emit(i);
	ck_assert_uint_eq(st_ring_commit(&ring, 0, idx, seq), 0);
	ck_assert(!st_ring_copy(&ring, 0, idx, seq, 0, commit, copy));
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

	c.r.ring = started_pool(ST_MODE_DISCARD, 65536, 8);
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

	ring = started_pool(ST_MODE_DISCARD, 4096, 4);
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
	ck_assert_uint_eq(sb_events(&ring, 0, 0), 1);
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
	ck_assert_uint_eq(sb_events(&r.ring, 0, 0), 20);
	drain(&r, true);
	ck_assert_uint_eq(r.read, 20);
	/* each thread's records begin with its thread record */
	ck_assert_uint_eq(r.threads, 2);
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
	ck_assert_uint_eq(sb_events(&ring, 0, 0), 2);
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
	ck_assert_uint_eq(sb_events(&ring, 0, 0), 1);
	ck_assert_uint_eq(sb_events(&ring, 1, 0), 1);
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
	ck_assert_uint_eq(sb_events(&ring, 0, 0), 20);
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

	ring = started_pool(ST_MODE_DISCARD, 4096, 4);
	/* pretend the owner died without giving the buffer back */
	st__thread_forget();
	st__live->pid = getpid();
	st_ring_slot(&ring, 0)->owner = 0x3fffffff; /* no such thread */
	emit(1);
	ck_assert_uint_eq(st__control->lost_no_buffer[0], 0);
	ck_assert_uint_eq(st_ring_slot(&ring, 0)->owner, (uint32_t)syscall(SYS_gettid));
	ck_assert_uint_eq(sb_events(&ring, 0, 0), 2);
}
END_TEST

static void *sleep_forever(void *arg)
{
	*(volatile int32_t *)arg = (int32_t)syscall(SYS_gettid);
	for (;;)
		pause();
	return NULL;
}

/* A thread that found no buffer does not look through the slots again on
 * each event: only once a buffer was given back or the grant changed, or
 * after ST_NOBUF_RETRY events (which is how the buffer of a thread that
 * died without giving it back is found). */
START_TEST(no_buffer_costs_a_check)
{
	volatile int32_t helper_tid = 0;
	struct st_ring ring;
	pthread_t helper;

	ring = started_pool(ST_MODE_DISCARD, 4096, 4);
	st__thread_forget();
	st__live->pid = getpid();
	pthread_create(&helper, NULL, sleep_forever, (void *)&helper_tid);
	while (!helper_tid)
		sched_yield();
	/* the only buffer is a live thread's */
	st_ring_slot(&ring, 0)->owner = (uint32_t)helper_tid;
	emit(1);
	ck_assert_uint_eq(st__control->lost_no_buffer[0], 1);
	/* its owner dies without giving it back: a scan would find that, but
	 * nothing the thread watches changed */
	st_ring_slot(&ring, 0)->owner = 0x3fffffff;
	for (int i = 0; i < ST_NOBUF_RETRY; i++)
		emit(2);
	ck_assert_uint_eq(st__control->lost_no_buffer[0], 1 + ST_NOBUF_RETRY);
	/* the retry after ST_NOBUF_RETRY events takes the dead owner's buffer */
	emit(3);
	ck_assert_uint_eq(st__control->lost_no_buffer[0], 1 + ST_NOBUF_RETRY);
	ck_assert_uint_eq(st_ring_slot(&ring, 0)->owner, (uint32_t)syscall(SYS_gettid));
	/* a buffer given back is looked for at the next event */
	st__thread_forget();
	st_ring_slot(&ring, 0)->owner = (uint32_t)helper_tid;
	emit(4);
	ck_assert_uint_eq(st__control->lost_no_buffer[0], 2 + ST_NOBUF_RETRY);
	{
		struct st__pool *pool = st__pool_get(0, true);
		struct st__writer *w = &pool->writers[0];

		st__writer_release(w);
	}
	emit(5);
	ck_assert_uint_eq(st__control->lost_no_buffer[0], 2 + ST_NOBUF_RETRY);
	ck_assert_uint_eq(sb_events(&ring, 0, 0), 3);
	pthread_cancel(helper);
	pthread_join(helper, NULL);
}
END_TEST

/* Per-CPU pools (core/percpu.c), read by the daemon's reader as such
 * (ring.percpu): pinned to CPU 0, the thread's records go round that
 * CPU's buffer, read as each sub-buffer closes (slot.cur past it) and the
 * open one in part, none missing; then, with nothing read, the buffer
 * fills, the losses are counted, and the sub-buffer before the losses
 * carries them (its next sub-buffer's control says how many at its
 * opening). */
START_TEST(per_cpu_buffers)
{
	long ncpus = sysconf(_SC_NPROCESSORS_CONF);
	struct reader r = { 0 };
	struct st_ring_range g;
	cpu_set_t cpu0;
	uint64_t lost;

	st__rseq_init();
	if (!st__rseq_usable())
		return; /* (the fallback pass: rseq-off.test and percpu.test say it) */
	CPU_ZERO(&cpu0);
	CPU_SET(0, &cpu0);
	ck_assert_int_eq(sched_setaffinity(0, sizeof(cpu0), &cpu0), 0);
	daemon_sock = harness_daemon();
	harness_session(0, 1, ST_MODE_DISCARD, 4096, 4, (uint32_t)ncpus);
	st__control->session[0].buffers = ST_BUFFERS_PER_CPU;
	enable();
	emit(0);
	r.ring = first_pool(ST_MODE_DISCARD, 4096, 4, (uint32_t)ncpus);
	ck_assert_uint_eq(((struct st_abi_pool *)r.ring.base)->buffers, ST_BUFFERS_PER_CPU);
	r.ring.percpu = true;
	round_the_ring(&r);
	/* nothing read: the 4 sub-buffers fill, then events are lost */
	for (uint64_t i = 10000; i < 12000; i++)
		emit(i);
	lost = st_ring_lost(st_ring_slot(&r.ring, 0));
	ck_assert_uint_gt(lost, 0);
	ck_assert(st_ring_next(&r.ring, 0, &r.cur, false, &g));
	ck_assert(g.closed);
	ck_assert_uint_eq(g.lost, 0); /* (before its next opened, none lost) */
	drain(&r, true);
	/* every event there up to the losses, the last ones lost */
	ck_assert_uint_eq(r.read + lost, 12000);
	ck_assert_uint_eq(r.skipped, 0);
	ck_assert_uint_eq(r.next, 12000 - lost);
}
END_TEST

START_TEST(session_recreated_gets_new_pool)
{
	struct st_ring old, fresh;

	old = started_pool(ST_MODE_DISCARD, 4096, 4);
	harness_session(0, 2, ST_MODE_DISCARD, 8192, 4, 1);
	emit(1);
	fresh = first_pool(ST_MODE_DISCARD, 8192, 4, 1);
	ck_assert_ptr_ne(old.base, fresh.base);
	ck_assert_uint_eq(((struct st_abi_pool *)fresh.base)->generation, 2);
	ck_assert_uint_eq(sb_events(&old, 0, 0), 1);
	ck_assert_uint_eq(sb_events(&fresh, 0, 0), 1);
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

/* The ring's encoding, read back: compact timestamps are the first time
 * after the previous record with their low 24 bits, across a wrap. */
START_TEST(ring_record_decode)
{
	uint8_t b[64] = { 0 };
	uint64_t prev = 0x12fffff0, ip = 0x7f0011223344;
	uint32_t id = ST_ABI_ID_THREAD, big = 300;
	uint64_t ts = 0x13000005; /* 21 ticks later: low bits wrapped */
	int32_t tid = 4321;
	struct st_ring_rec r;

	b[0] = 7;
	b[1] = ts & 0xff;
	b[2] = (ts >> 8) & 0xff;
	b[3] = (ts >> 16) & 0xff;
	memcpy(b + 4, &ip, 6);
	ck_assert(st_ring_rec_decode(b, 10, &prev, &r));
	ck_assert_uint_eq(r.id, 7);
	ck_assert_uint_eq(r.ts, ts);
	ck_assert_uint_eq(prev, ts);
	ck_assert_uint_eq(r.ip, ip);
	ck_assert_uint_eq(r.hdr, 10);
	ck_assert(!st_ring_rec_decode(b, 9, &prev, &r)); /* cut short */
	/* extended: any id, the whole time (even an earlier one) */
	b[0] = ST_ABI_ID_EXTENDED;
	memcpy(b + 1, &big, 4);
	ts = 5;
	memcpy(b + 5, &ts, 8);
	memcpy(b + 13, &ip, 6);
	ck_assert(!st_ring_rec_decode(b, 18, &prev, &r));
	ck_assert(st_ring_rec_decode(b, 19, &prev, &r));
	ck_assert_uint_eq(r.id, 300);
	ck_assert_uint_eq(r.ts, 5);
	ck_assert_uint_eq(r.hdr, 19);
	/* a thread record */
	memcpy(b + 1, &id, 4);
	memcpy(b + 13, &tid, 4);
	ck_assert(st_ring_rec_decode(b, ST_ABI_THREAD_REC, &prev, &r));
	ck_assert_uint_eq(r.id, ST_ABI_ID_THREAD);
	ck_assert_int_eq(r.tid, 4321);
	ck_assert_uint_eq(r.hdr, ST_ABI_THREAD_REC);
}
END_TEST

/* The trace's: 3 bytes when the id is below 255 and less than 2^16 ticks
 * went by, 13 otherwise; then s32 vpid and u64 ip. */
START_TEST(trace_record_header)
{
	uint8_t b[ST_TRACE_REC_MAX_HDR];
	uint64_t prev = 1000, ip;
	uint32_t id;
	int32_t vpid;

	ck_assert_uint_eq(st_trace_rec_header(b, 9, 1000 + 65535, &prev, 42, 0xabc), 3 + 12);
	ck_assert_uint_eq(b[0], 9);
	ck_assert_uint_eq(b[1] | b[2] << 8, (1000 + 65535) & 0xffff);
	memcpy(&vpid, b + 3, 4);
	memcpy(&ip, b + 7, 8);
	ck_assert_int_eq(vpid, 42);
	ck_assert_uint_eq(ip, 0xabc);
	ck_assert_uint_eq(prev, 1000 + 65535);
	/* too long after */
	ck_assert_uint_eq(st_trace_rec_header(b, 9, prev + 65536, &prev, 42, 0), 13 + 12);
	ck_assert_uint_eq(b[0], 255);
	memcpy(&id, b + 1, 4);
	ck_assert_uint_eq(id, 9);
	/* an id that does not fit; and no packet time known */
	ck_assert_uint_eq(st_trace_rec_header(b, 255, prev, &prev, 42, 0), 13 + 12);
	ck_assert_uint_eq(st_trace_rec_header(b, 1, prev, NULL, 42, 0), 13 + 12);
}
END_TEST

/* A blocking session (--blocking), its daemon this process: alive. */
static void blocking_session(uint32_t block_ms, uint32_t nslots)
{
	st__control->daemon_pid = getpid();
	st__control->session[0].block_ms = block_ms;
	harness_session(0, 1, ST_MODE_DISCARD, 4096, 4, nslots);
}

/* The daemon took the pool (after the test received it: the process no
 * longer sends a pool the daemon has). */
static void taken(void)
{
	__atomic_store_n(&st__control->pool_taken[0], 1, __ATOMIC_RELEASE);
}

/* The daemon's part: drains until done, and keeps its heartbeat going. */
static void *blocking_consumer(void *arg)
{
	struct concurrent *c = arg;

	while (!__atomic_load_n(&c->done, __ATOMIC_ACQUIRE)) {
		__atomic_fetch_add(&st__control->heartbeat, 1, __ATOMIC_RELAXED);
		drain(&c->r, false);
		sched_yield();
	}
	drain(&c->r, true);
	return NULL;
}

START_TEST(blocking_loses_nothing)
{
	struct concurrent c = { 0 };
	pthread_t t;
	uint64_t n = 1000000;

	daemon_sock = harness_daemon();
	blocking_session(ST_ABI_BLOCK_FOREVER, 1);
	enable();
	emit(0);
	c.r.ring = first_pool(ST_MODE_DISCARD, 4096, 4, 1);
	taken();
	ck_assert_int_eq(pthread_create(&t, NULL, blocking_consumer, &c), 0);
	/* 16 KiB of buffer for 24 MB of events: the writer waits, often */
	for (uint64_t i = 1; i < n; i++)
		emit(i);
	__atomic_store_n(&c.done, true, __ATOMIC_RELEASE);
	pthread_join(t, NULL);
	ck_assert_uint_eq(st_ring_slot(&c.r.ring, 0)->lost_full, 0);
	ck_assert_uint_eq(c.r.skipped, 0);
	ck_assert_uint_eq(c.r.read, n);
	ck_assert_uint_eq(st_ring_slot(&c.r.ring, 0)->waiting, 0);
}
END_TEST

START_TEST(blocking_timeout_counted)
{
	struct reader r = { 0 };
	struct st_abi_slot *slot;

	daemon_sock = harness_daemon();
	blocking_session(20, 1);
	enable();
	/* nobody drains: the first event that finds the buffer full waits
	 * 20 ms and is lost; the next ones are lost without a wait */
	for (uint64_t i = 0; i < 1000; i++)
		emit(i);
	r.ring = first_pool(ST_MODE_DISCARD, 4096, 4, 1);
	slot = st_ring_slot(&r.ring, 0);
	ck_assert_uint_eq(slot->waiting, 0);
	/* room again: the thread writes (and would wait) again */
	drain(&r, true);
	ck_assert_uint_eq(slot->lost_full, 1000 - r.read);
	ck_assert_uint_ge(r.read, 4 * PER_SB_MIN);
	for (uint64_t i = 1000; i < 1010; i++)
		emit(i);
	drain(&r, true);
	ck_assert_uint_eq(r.read + slot->lost_full, 1010);
	ck_assert_uint_eq(r.skipped, slot->lost_full);
}
END_TEST

START_TEST(blocking_daemon_gone)
{
	struct st_ring ring;
	pid_t dead = fork();

	if (dead == 0)
		_exit(0);
	ck_assert_int_gt(dead, 0);
	waitpid(dead, NULL, 0);
	daemon_sock = harness_daemon();
	blocking_session(ST_ABI_BLOCK_FOREVER, 1);
	/* a daemon that has exited, and whose heartbeat stands still */
	st__control->daemon_pid = dead;
	enable();
	for (uint64_t i = 0; i < 1000; i++)
		emit(i);
	ring = first_pool(ST_MODE_DISCARD, 4096, 4, 1);
	ck_assert_uint_eq(st_ring_slot(&ring, 0)->lost_full,
			  1000 - sb_events(&ring, 0, 0) - sb_events(&ring, 0, 1) -
				  sb_events(&ring, 0, 2) - sb_events(&ring, 0, 3));
	ck_assert_uint_eq(st_ring_slot(&ring, 0)->waiting, 0);
}
END_TEST

/* Fills the buffer, then one more event (that waits). */
static void *emit_until_blocked(void *arg)
{
	volatile struct st_abi_slot **slot = arg;
	uint64_t i = 0;

	emit(i++);
	while (!*slot)
		sched_yield();
	while ((*slot)->sb[3].seq == 0)
		emit(i++);
	while (!(*slot)->sb[3].closed)
		emit(i++);
	return NULL;
}

START_TEST(blocking_session_stopped)
{
	struct st_ring ring;
	struct st_abi_slot *slot = NULL;
	uint8_t *pool;
	uint64_t size;
	pthread_t t;

	daemon_sock = harness_daemon();
	blocking_session(ST_ABI_BLOCK_FOREVER, 1);
	enable();
	ck_assert_int_eq(pthread_create(&t, NULL, emit_until_blocked, (void *)&slot), 0);
	while (!(pool = harness_pool(daemon_sock, &size)))
		sched_yield();
	ring = ring_of(pool, -1, size, ST_MODE_DISCARD, 4096, 4, 1);
	taken();
	__atomic_store_n(&slot, st_ring_slot(&ring, 0), __ATOMIC_RELEASE);
	/* the thread's last event waits for room... */
	while (!__atomic_load_n(&slot->waiting, __ATOMIC_ACQUIRE))
		sched_yield();
	/* ...until the session stops: it is not written, and not lost */
	__atomic_store_n(&st__control->session[0].generation, 0, __ATOMIC_RELEASE);
	pthread_join(t, NULL);
	ck_assert_uint_eq(slot->lost_full, 0);
	ck_assert_uint_eq(st__control->lost_no_buffer[0], 0);
	ck_assert_uint_eq(slot->waiting, 0);
	ck_assert_uint_ge(sb_events(&ring, 0, 3), PER_SB_MIN);
}
END_TEST

int main(void)
{
	return st_run_tests("ring", ST_TESTS(wraparound, copy_by_pread_is_the_mapping, discard_when_full,
						overwrite_keeps_newest,
						overwrite_copy_of_reused_subbuf_refused,
						overwrite_read_during_writes, concurrent_reader,
						nested_write_counted,
						buffer_reused_after_thread_exit,
						no_free_buffer_counted, claims_within_the_grant,
						claimed_buffers_need_no_grant, dead_owner_taken_over,
					     no_buffer_costs_a_check, per_cpu_buffers,
						session_recreated_gets_new_pool,
						bad_config_refused, ring_record_decode,
						trace_record_header, blocking_loses_nothing,
						blocking_timeout_counted, blocking_daemon_gone,
						blocking_session_stopped));
}
