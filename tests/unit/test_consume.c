/*
 * Unit tests of the consumer (ctl/daemon/drain/consumer.c, with ring.c and
 * evclass.c) on the example pools of tests/fuzz/consume.c, whose stand-in
 * trace checks every packet as babeltrace2 reads it (consume.h): every
 * event of a valid pool reaches the trace at the time it was written;
 * forged times are clamped (issue 21: one record with a time of 2^64-6 made
 * a trace of every user unreadable) and the events kept; a record of no
 * class ends its range, counted as corrupt; and each example goes through
 * the fuzz input's encoding unharmed (fz_run).
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "tests/fuzz/consume.h"
#include "tests/unit/run.h"

/* What a reader reads at most: the clock now plus the margin. */
#define LATEST (FZ_NOW + 1000000000ull / 10)
#define T (FZ_SINCE + 1000)

static void drain_all(struct fz_env *e)
{
	if (e->p.pools[0].ring.mode == ST_MODE_DISCARD) {
		fz_drain(e, ST_DRAIN_CLOSED);
		fz_drain(e, ST_DRAIN_FLUSH);
	}
	fz_drain(e, ST_DRAIN_FINAL);
}

static void event_is(const struct fz_env *e, size_t k, uint32_t cls, uint64_t ts, uint64_t u)
{
	ck_assert_uint_lt(k, e->nev);
	ck_assert_uint_eq(e->ev[k].cls, cls);
	ck_assert_uint_eq(e->ev[k].ts, ts);
	ck_assert_uint_eq(e->ev[k].u, u);
}

/* The example through the fuzz input: the same pool, every check again. */
static void as_fuzz_input(enum fz_example which)
{
	static uint8_t in[1 << 16];
	struct fz_env e;
	size_t n;

	ck_assert_int_eq(fz_example(&e, which), 0);
	n = fz_input(&e, in, sizeof(in));
	fz_env_fini(&e);
	ck_assert_uint_gt(n, 0);
	fz_run(in, n);
	/* and every shorter input */
	for (size_t k = 0; k < n; k += 1 + k / 16)
		fz_run(in, k);
	/* read from a memfd with pread, as the daemon does */
	in[0] |= 16;
	fz_run(in, n);
}

START_TEST(valid_discard)
{
	struct fz_env e;

	ck_assert_int_eq(fz_example(&e, FZ_EX_DISCARD), 0);
	drain_all(&e);
	ck_assert_uint_eq(e.nev, 9);
	event_is(&e, 0, FZ_U64, T + 10, 1);
	event_is(&e, 1, FZ_WIDE, T + 20, 2);
	event_is(&e, 2, FZ_STR, T + 30, 5);
	event_is(&e, 3, FZ_MIXED, T + 40, 4);
	event_is(&e, 4, FZ_U64, T + 40 + (1u << 20), 5);
	for (uint64_t k = 1; k <= 3; k++)
		event_is(&e, 4 + k, FZ_U64, T + (1u << 21) + k, 5 + k);
	event_is(&e, 8, FZ_STR, T + (1u << 22) + 5, 4);
	/* (a packet per sub-buffer: the thread records) */
	ck_assert_uint_eq(e.packets, 3);
	fz_env_fini(&e);
	as_fuzz_input(FZ_EX_DISCARD);
}
END_TEST

START_TEST(valid_overwrite)
{
	struct fz_env e;

	ck_assert_int_eq(fz_example(&e, FZ_EX_OVERWRITE), 0);
	drain_all(&e);
	ck_assert_uint_eq(e.nev, 4);
	event_is(&e, 0, FZ_U64, T + 1, 1);
	event_is(&e, 1, FZ_U64, T + 2, 2);
	event_is(&e, 2, FZ_U64, T + 101, 3);
	event_is(&e, 3, FZ_U64, T + 102, 4);
	fz_env_fini(&e);
	as_fuzz_input(FZ_EX_OVERWRITE);
}
END_TEST

/* 0 and 1: not before the stream's last time; 2^64-6, 2^64-1, compact
 * times wrapping past 2^64, far in the future: at most now plus the
 * margin; before the record before: not back. Each event kept. */
START_TEST(forged_times_clamped)
{
	struct fz_env e;

	ck_assert_int_eq(fz_example(&e, FZ_EX_FORGED), 0);
	drain_all(&e);
	ck_assert_uint_eq(e.nev, 161);
	event_is(&e, 0, FZ_U64, T + 10, 0);
	event_is(&e, 1, FZ_U64, T + 10, 1);
	event_is(&e, 2, FZ_U64, T + 10, 2);
	for (uint64_t k = 3; k < 161; k++)
		event_is(&e, k, FZ_U64, LATEST, k);
	fz_env_fini(&e);
	as_fuzz_input(FZ_EX_FORGED);
}
END_TEST

/* A first record before the session traced the process: moved to then. */
START_TEST(first_time_not_before_the_session)
{
	struct fz_env e;
	uint8_t *d;
	uint64_t v = 7, off;

	ck_assert_int_eq(fz_env_init(&e, ST_MODE_DISCARD, 2, 1, FZ_NOW, FZ_SINCE), 0);
	d = fz_data(&e, 0, 0);
	off = fz_rec_thread(d, 5, 1);
	off += fz_rec(d + off, FZ_U64, 6, true, 0x401000, &v, 8);
	fz_slot(&e, 0)->sb[0].seq = 1;
	fz_slot(&e, 0)->sb[0].commit = off;
	drain_all(&e);
	ck_assert_uint_eq(e.nev, 1);
	event_is(&e, 0, FZ_U64, FZ_SINCE, 7);
	fz_env_fini(&e);
}
END_TEST

/* A clock that went back (now below what the stream holds): the stream
 * stays where it is, nothing goes back. */
START_TEST(now_behind_the_stream)
{
	struct fz_env e;
	uint8_t *d;
	uint64_t v = 1, off;

	ck_assert_int_eq(fz_env_init(&e, ST_MODE_DISCARD, 2, 1, FZ_NOW, FZ_SINCE), 0);
	d = fz_data(&e, 0, 0);
	off = fz_rec_thread(d, T, 1);
	off += fz_rec(d + off, FZ_U64, UINT64_MAX, false, 0x401000, &v, 8);
	fz_slot(&e, 0)->sb[0].seq = 1;
	fz_slot(&e, 0)->sb[0].commit = off;
	fz_drain(&e, ST_DRAIN_FLUSH_NOW);
	event_is(&e, 0, FZ_U64, LATEST, 1);
	e.now = FZ_SINCE;
	v = 2;
	off += fz_rec(d + off, FZ_U64, T + 1, false, 0x401000, &v, 8);
	fz_slot(&e, 0)->sb[0].commit = off;
	fz_drain(&e, ST_DRAIN_FINAL);
	ck_assert_uint_eq(e.nev, 2);
	event_is(&e, 1, FZ_U64, LATEST, 2);
	fz_env_fini(&e);
}
END_TEST

START_TEST(corrupt_records_end_their_range)
{
	struct fz_env e;
	uint64_t corrupt = fz_stats()->corrupt_bytes;

	ck_assert_int_eq(fz_example(&e, FZ_EX_CORRUPT), 0);
	drain_all(&e);
	/* the first of each sub-buffer; the rest of each range is dropped */
	ck_assert_uint_eq(e.nev, 2);
	event_is(&e, 0, FZ_U64, T + 1, 1);
	event_is(&e, 1, FZ_U64, T + 11, 3);
	ck_assert_uint_eq(fz_stats()->corrupt_bytes - corrupt, (10 + 8) * 2 + (10 + 6));
	fz_env_fini(&e);
	as_fuzz_input(FZ_EX_CORRUPT);
}
END_TEST

START_TEST(two_slots_and_a_wait)
{
	struct fz_env e;

	ck_assert_int_eq(fz_example(&e, FZ_EX_TWO_SLOTS), 0);
	fz_drain(&e, ST_DRAIN_CLOSED);
	/* a caller whose line table is on its way: left where it is */
	ck_assert_uint_eq(e.nev, 0);
	ck_assert(e.p.objects.lines_waiting);
	fz_drain(&e, ST_DRAIN_FINAL);
	ck_assert_uint_eq(e.nev, 3);
	ck_assert_uint_eq(e.ev[0].cls + e.ev[1].cls + e.ev[2].cls, FZ_U64 + 2 * FZ_MIXED);
	fz_env_fini(&e);
	as_fuzz_input(FZ_EX_TWO_SLOTS);
}
END_TEST

START_TEST(later_laps)
{
	struct fz_env e;

	ck_assert_int_eq(fz_example(&e, FZ_EX_LAPS), 0);
	drain_all(&e);
	ck_assert_uint_eq(e.nev, 2);
	event_is(&e, 0, FZ_U64, T + 1, 1);
	event_is(&e, 1, FZ_STR, T + 3, 3);
	fz_env_fini(&e);
	as_fuzz_input(FZ_EX_LAPS);
}
END_TEST

/* Random inputs, from the examples with bytes changed: what the fuzzer
 * does, a little, in every `make check`. */
START_TEST(random_changes)
{
	static uint8_t in[1 << 16];

	srand(21);
	for (int k = 0; k < FZ_EX_COUNT; k++) {
		struct fz_env e;
		size_t n;

		ck_assert_int_eq(fz_example(&e, (enum fz_example)k), 0);
		n = fz_input(&e, in, sizeof(in));
		fz_env_fini(&e);
		for (int round = 0; round < 300; round++) {
			static uint8_t mut[1 << 16];

			memcpy(mut, in, n);
			for (int c = 0; c < 1 + rand() % 8; c++)
				mut[(size_t)rand() % n] = (uint8_t)rand();
			fz_run(mut, n);
		}
	}
}
END_TEST

int main(void)
{
	return st_run_tests("consume",
			    ST_TESTS(valid_discard, valid_overwrite, forged_times_clamped,
				     first_time_not_before_the_session, now_behind_the_stream,
				     corrupt_records_end_their_range, two_slots_and_a_wait, later_laps,
				     random_changes));
}
