/*
 * The protobuf writer of the Perfetto export (ctl/report/pbwrite.c): the
 * bytes of known encodings (protobuf's documented examples), nested
 * messages whose length takes one byte, two, three, nested in each other,
 * a negative int64 in ten bytes, and doubles in eight.
 */
#include <check.h>
#include <math.h>
#include <string.h>

#include "ctl/report/pbwrite.h"
#include "tests/unit/run.h"

#define BYTES(b, ...)                                                              \
	do {                                                                       \
		static const uint8_t want[] = { __VA_ARGS__ };                     \
		ck_assert_uint_eq((b)->n, sizeof(want));                           \
		ck_assert_int_eq(memcmp((b)->v, want, sizeof(want)), 0);           \
	} while (0)

START_TEST(known)
{
	struct st_pb b = { 0 };
	size_t m;

	st_pb_varint(&b, 1, 150);
	BYTES(&b, 0x08, 0x96, 0x01);
	b.n = 0;
	st_pb_string(&b, 2, "testing");
	BYTES(&b, 0x12, 0x07, 't', 'e', 's', 't', 'i', 'n', 'g');
	b.n = 0;
	m = st_pb_begin(&b, 3);
	st_pb_varint(&b, 1, 150);
	st_pb_end(&b, m);
	BYTES(&b, 0x1a, 0x03, 0x08, 0x96, 0x01);
	b.n = 0;
	st_pb_varint(&b, 4, (uint64_t)(int64_t)-1);
	BYTES(&b, 0x20, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01);
	b.n = 0;
	st_pb_varint(&b, 60, 0); /* (a field number of two bytes) */
	BYTES(&b, 0xe0, 0x03, 0x00);
	b.n = 0;
	st_pb_double(&b, 5, 1.0); /* wire type 1: 8 bytes, little-endian */
	BYTES(&b, 0x29, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xf0, 0x3f);
	b.n = 0;
	st_pb_double(&b, 5, -INFINITY);
	BYTES(&b, 0x29, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xf0, 0xff);
	ck_assert(!b.failed);
	st_pb_free(&b);
}
END_TEST

/* A message of n bytes of payload in field 5, nested in field 1. */
START_TEST(nested_lengths)
{
	static const size_t sizes[] = { 0, 1, 125, 126, 127, 128, 300, 16381, 16382, 16383, 16384, 70000 };
	static const uint8_t tags[3] = { 0x0a, 0x2a, 0x4a }; /* fields 1, 5, 9: length-delimited */
	static uint8_t payload[70000];

	for (size_t i = 0; i < sizeof(payload); i++)
		payload[i] = (uint8_t)(i * 7);
	for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		struct st_pb b = { 0 };
		size_t n = sizes[k], outer, inner, at = 0;
		uint64_t len;

		outer = st_pb_begin(&b, 1);
		inner = st_pb_begin(&b, 5);
		st_pb_bytes(&b, 9, payload, n);
		st_pb_end(&b, inner);
		st_pb_end(&b, outer);
		ck_assert(!b.failed);
		/* read it back: tag 1, length, tag 5, length, tag 9, length, bytes */
		for (int level = 0; level < 3; level++) {
			ck_assert_uint_eq(b.v[at++], tags[level]);
			len = 0;
			for (int shift = 0;; shift += 7) {
				len |= (uint64_t)(b.v[at] & 0x7f) << shift;
				if (!(b.v[at++] & 0x80))
					break;
			}
			ck_assert_uint_eq(len, b.n - at);
		}
		ck_assert_uint_eq(b.n - at, n);
		ck_assert_int_eq(memcmp(b.v + at, payload, n), 0);
		st_pb_free(&b);
	}
}
END_TEST

int main(void)
{
	return st_run_tests("pbwrite", ST_TESTS(known, nested_lengths));
}
