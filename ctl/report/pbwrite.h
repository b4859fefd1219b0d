/*
 * Protocol buffers, written (pbwrite.c): the wire format's varints, doubles
 * and length-delimited fields, into a buffer that grows; for the Perfetto
 * export, which needs nothing of protobuf's libraries but this.
 *
 * A nested message is begun (st_pb_begin) and ended (st_pb_end): its
 * length goes in front of it when it ends, in one byte reserved at the
 * beginning, its bytes moved up when the length takes more. Out of memory
 * is kept (failed) and said once, by the caller, at the end: the fields
 * in between are dropped, so that a writer need not check each call.
 */
#ifndef ST_REPORT_PBWRITE_H
#define ST_REPORT_PBWRITE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct st_pb {
	uint8_t *v;
	size_t n, cap;
	bool failed; /* out of memory: v holds less than was written */
};

/* Field field, wire type varint: uint32/64, bool, enum; an int64 or
 * int32 as its two's complement (negative: ten bytes), as protobuf has it. */
void st_pb_varint(struct st_pb *b, uint32_t field, uint64_t v);
/* Field field, wire type I64: a double, its 8 bytes little-endian (NaN
 * and the infinities as they are). */
void st_pb_double(struct st_pb *b, uint32_t field, double v);
/* Field field, length-delimited: bytes, a string (without its NUL), or
 * a message written before. */
void st_pb_bytes(struct st_pb *b, uint32_t field, const void *p, size_t n);
void st_pb_string(struct st_pb *b, uint32_t field, const char *s);

/* A nested message in field field: its fields follow, until
 * st_pb_end(b, the mark returned). Nesting ends innermost first. */
size_t st_pb_begin(struct st_pb *b, uint32_t field);
void st_pb_end(struct st_pb *b, size_t mark);

void st_pb_free(struct st_pb *b);

#endif
