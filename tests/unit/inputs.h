/*
 * Inputs for the unit tests of decoders that read untrusted bytes: each
 * in a heap block of exactly its size, so that a read one byte past it is
 * one AddressSanitizer sees (a sanitized build: --enable-sanitizers).
 */
#ifndef ST_TEST_INPUTS_H
#define ST_TEST_INPUTS_H

#include <stdlib.h>
#include <string.h>

#include "tests/unit/run.h"

/* A block of exactly n bytes (1 when n is 0), to free. */
static inline unsigned char *st_test_block(size_t n)
{
	unsigned char *b = malloc(n ? n : 1);

	ck_assert_ptr_nonnull(b);
	return b;
}

/* The n bytes at src, in a block of their own (st_test_block). */
static inline unsigned char *st_test_copy(const void *src, size_t n)
{
	return memcpy(st_test_block(n), src, n);
}

/* n bytes of random(), in a block of their own (st_test_block). */
static inline unsigned char *st_test_random(size_t n)
{
	unsigned char *b = st_test_block(n);

	for (size_t k = 0; k < n; k++)
		b[k] = (unsigned char)random();
	return b;
}

#endif
