/*
 * Protocol buffers, written (see pbwrite.h).
 */
#include <stdlib.h>
#include <string.h>

#include "ctl/report/pbwrite.h"

enum { WIRE_VARINT = 0, WIRE_I64 = 1, WIRE_LEN = 2 };

/* Room for n more bytes; false when out of memory (then failed). */
static bool room(struct st_pb *b, size_t n)
{
	size_t cap = b->cap ? b->cap : 256;
	uint8_t *v;

	if (b->failed)
		return false;
	if (b->n + n <= b->cap)
		return true;
	while (cap < b->n + n)
		cap *= 2;
	v = realloc(b->v, cap);
	if (!v) {
		b->failed = true;
		return false;
	}
	b->v = v;
	b->cap = cap;
	return true;
}

static size_t varint_len(uint64_t v)
{
	size_t n = 1;

	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}

/* v at p, 7 bits a byte, low first, the high bit saying more follow. */
static void put_varint(uint8_t *p, uint64_t v)
{
	while (v >= 0x80) {
		*p++ = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	*p = (uint8_t)v;
}

static void raw_varint(struct st_pb *b, uint64_t v)
{
	if (!room(b, 10))
		return;
	put_varint(b->v + b->n, v);
	b->n += varint_len(v);
}

void st_pb_varint(struct st_pb *b, uint32_t field, uint64_t v)
{
	raw_varint(b, (uint64_t)field << 3 | WIRE_VARINT);
	raw_varint(b, v);
}

void st_pb_double(struct st_pb *b, uint32_t field, double v)
{
	uint64_t bits;

	memcpy(&bits, &v, 8);
	raw_varint(b, (uint64_t)field << 3 | WIRE_I64);
	if (!room(b, 8))
		return;
	for (int i = 0; i < 8; i++)
		b->v[b->n++] = (uint8_t)(bits >> 8 * i); /* little-endian */
}

void st_pb_bytes(struct st_pb *b, uint32_t field, const void *p, size_t n)
{
	raw_varint(b, (uint64_t)field << 3 | WIRE_LEN);
	raw_varint(b, n);
	if (n && room(b, n)) {
		memcpy(b->v + b->n, p, n);
		b->n += n;
	}
}

void st_pb_string(struct st_pb *b, uint32_t field, const char *s)
{
	st_pb_bytes(b, field, s, strlen(s));
}

size_t st_pb_begin(struct st_pb *b, uint32_t field)
{
	raw_varint(b, (uint64_t)field << 3 | WIRE_LEN);
	if (room(b, 1))
		b->v[b->n++] = 0; /* the length's first byte, for now */
	return b->n;
}

void st_pb_end(struct st_pb *b, size_t mark)
{
	size_t len, extra;

	if (b->failed)
		return;
	len = b->n - mark;
	extra = varint_len(len) - 1;
	if (extra) {
		if (!room(b, extra))
			return;
		memmove(b->v + mark + extra, b->v + mark, len);
		b->n += extra;
	}
	put_varint(b->v + mark - 1, len);
}

void st_pb_free(struct st_pb *b)
{
	free(b->v);
	memset(b, 0, sizeof(*b));
}
