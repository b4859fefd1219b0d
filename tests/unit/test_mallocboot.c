/*
 * Unit tests of the malloc family's bootstrap arena and of the free and
 * realloc helpers that keep its blocks from the real allocator
 * (wrappers/malloc-boot.c).
 */
#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/run.h"
#include "wrappers/malloc-helpers.h"

static void *freed[8];
static int nfreed;

static void fake_free(void *p)
{
	ck_assert_int_lt(nfreed, 8);
	freed[nfreed++] = p;
}

static size_t asked;

static void *fake_realloc(void *old, size_t size)
{
	asked = size;
	return realloc(old, size);
}

static void *fake_reallocarray(void *old, size_t n, size_t size)
{
	asked = n * size;
	return realloc(old, n * size);
}

START_TEST(blocks_are_aligned_owned_and_apart)
{
	char *a = st__boot_malloc(3), *b = st__boot_malloc(100);

	ck_assert_ptr_nonnull(a);
	ck_assert_ptr_nonnull(b);
	ck_assert_uint_eq((uintptr_t)a % 16, 0);
	ck_assert_uint_eq((uintptr_t)b % 16, 0);
	ck_assert(st__boot_owns(a) && st__boot_owns(b));
	ck_assert(b >= a + 3 || a >= b + 100);
	ck_assert(!st__boot_owns(&nfreed));
}
END_TEST

START_TEST(calloc_is_zero_and_checks_overflow)
{
	unsigned char *z = st__boot_calloc(10, 7);

	ck_assert_ptr_nonnull(z);
	for (int i = 0; i < 70; i++)
		ck_assert_uint_eq(z[i], 0);
	errno = 0;
	ck_assert_ptr_null(st__boot_calloc(SIZE_MAX / 2, 3));
	ck_assert_int_eq(errno, ENOMEM);
}
END_TEST

START_TEST(boot_realloc_keeps_bytes)
{
	char *a = st__boot_malloc(8), *b, x = 0;

	memcpy(a, "abcdefg", 8);
	b = st__boot_realloc(a, 64);
	ck_assert_ptr_nonnull(b);
	ck_assert_str_eq(b, "abcdefg");
	b = st__boot_realloc(b, 3);
	ck_assert_int_eq(memcmp(b, "abc", 3), 0);
	/* a real block, the real allocator not known: it fails, the block
	 * stays whole */
	errno = 0;
	ck_assert_ptr_null(st__boot_realloc(&x, 16));
	ck_assert_int_eq(errno, ENOMEM);
}
END_TEST

START_TEST(arena_blocks_never_reach_the_real_free)
{
	char *a = st__boot_malloc(32), real;

	nfreed = 0;
	st__free_via(fake_free, a);
	ck_assert_int_eq(nfreed, 0);
	st__boot_free(a); /* (nothing either) */
	st__free_via(fake_free, &real);
	ck_assert_int_eq(nfreed, 1);
	ck_assert_ptr_eq(freed[0], &real);
}
END_TEST

START_TEST(real_block_freed_while_booting_is_freed_later)
{
	char early, later;

	nfreed = 0;
	st__boot_free(&early); /* free being looked up: kept */
	ck_assert_int_eq(nfreed, 0);
	st__free_via(fake_free, &later);
	ck_assert_int_eq(nfreed, 2);
	ck_assert_ptr_eq(freed[0], &early);
	ck_assert_ptr_eq(freed[1], &later);
	st__free_via(fake_free, NULL);
	ck_assert_int_eq(nfreed, 3); /* (once only) */
}
END_TEST

START_TEST(arena_block_reallocated_moves_to_the_real_allocator)
{
	char *a = st__boot_malloc(6), *b;

	memcpy(a, "hello", 6);
	b = st__realloc_via(fake_realloc, a, 100);
	ck_assert_ptr_nonnull(b);
	ck_assert(!st__boot_owns(b));
	ck_assert_uint_eq(asked, 100);
	ck_assert_str_eq(b, "hello");
	free(b);
	ck_assert_ptr_null(st__realloc_via(fake_realloc, st__boot_malloc(4), 0));
	a = st__boot_malloc(6);
	memcpy(a, "array", 6);
	b = st__reallocarray_via(fake_reallocarray, a, 4, 5);
	ck_assert_uint_eq(asked, 20);
	ck_assert_str_eq(b, "array");
	free(b);
	errno = 0;
	ck_assert_ptr_null(st__reallocarray_via(fake_reallocarray, st__boot_malloc(4), SIZE_MAX, 2));
	ck_assert_int_eq(errno, ENOMEM);
	/* a real block goes to the real function untouched */
	b = st__realloc_via(fake_realloc, NULL, 10);
	ck_assert_uint_eq(asked, 10);
	free(b);
}
END_TEST

START_TEST(a_full_arena_says_enomem)
{
	int n = 0;

	errno = 0;
	while (st__boot_malloc(4000))
		ck_assert_int_lt(++n, 100);
	ck_assert_int_eq(errno, ENOMEM);
	ck_assert_int_gt(n, 10);
	ck_assert_ptr_null(st__boot_malloc((size_t)1 << 40));
}
END_TEST

int main(void)
{
	return st_run_tests("mallocboot",
			    ST_TESTS(blocks_are_aligned_owned_and_apart, calloc_is_zero_and_checks_overflow,
				     boot_realloc_keeps_bytes, arena_blocks_never_reach_the_real_free,
				     real_block_freed_while_booting_is_freed_later,
				     arena_block_reallocated_moves_to_the_real_allocator,
				     a_full_arena_says_enomem));
}
