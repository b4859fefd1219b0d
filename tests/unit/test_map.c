/*
 * The reports' pair-keyed hash map (ctl/report/map.c): against a plain
 * table, through growth and many deletions (backward shift must keep every
 * remaining key findable).
 */
#include <check.h>
#include <stdlib.h>

#include "ctl/report/map.h"
#include "tests/unit/run.h"

#define KEYS 20000

START_TEST(put_get_del)
{
	static int64_t want[KEYS];
	struct st_map m = { 0 };
	unsigned seed = 7;
	int bad = 0;

	for (int i = 0; i < KEYS; i++)
		want[i] = -1;
	/* keys (i % 7, i * 4096): addresses in a few processes, clustered */
	for (int round = 0; round < 200000; round++) {
		int i = (int)(rand_r(&seed) % KEYS);
		uint64_t a = (uint64_t)(i % 7), b = (uint64_t)i * 4096;

		if (rand_r(&seed) % 3) {
			ck_assert_int_eq(st_map_put(&m, a, b, (uint32_t)round), 0);
			want[i] = round;
		} else {
			bad += st_map_del(&m, a, b) != want[i];
			want[i] = -1;
		}
	}
	for (int i = 0; i < KEYS; i++)
		bad += st_map_get(&m, (uint64_t)(i % 7), (uint64_t)i * 4096) != want[i];
	ck_assert_int_eq(bad, 0);
	for (int i = 0; i < KEYS; i++)
		if (want[i] >= 0)
			ck_assert_int_eq(st_map_del(&m, (uint64_t)(i % 7), (uint64_t)i * 4096), want[i]);
	ck_assert_uint_eq(m.n, 0);
	ck_assert_int_eq(st_map_get(&m, 0, 0), -1);
	st_map_free(&m);
}
END_TEST

START_TEST(empty)
{
	struct st_map m = { 0 };

	ck_assert_int_eq(st_map_get(&m, 1, 2), -1);
	ck_assert_int_eq(st_map_del(&m, 1, 2), -1);
	ck_assert_int_eq(st_map_put(&m, 1, 2, 3), 0);
	ck_assert_int_eq(st_map_put(&m, 1, 2, 4), 0); /* replaced, not added */
	ck_assert_uint_eq(m.n, 1);
	ck_assert_int_eq(st_map_get(&m, 1, 2), 4);
	ck_assert_int_eq(st_map_get(&m, 2, 1), -1);
	st_map_free(&m);
}
END_TEST

int main(void)
{
	return st_run_tests("map", ST_TESTS(put_get_del, empty));
}
