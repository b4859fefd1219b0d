/*
 * Decoding one scope (a plan of desc.h) from packet bytes, bounds-checked.
 */
#ifndef ST_READER_DECODE_H
#define ST_READER_DECODE_H

#include <endian.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "ctl/reader/desc.h"

/* A little-endian unsigned integer of 1 to 8 bytes. */
static inline uint64_t st__read_le(const uint8_t *q, unsigned size)
{
	uint16_t v16;
	uint32_t v32;
	uint64_t v64;

	switch (size) {
	case 1:
		return q[0];
	case 2:
		memcpy(&v16, q, 2);
		return le16toh(v16);
	case 3:
		memcpy(&v16, q, 2);
		return le16toh(v16) | (uint64_t)q[2] << 16;
	case 4:
		memcpy(&v32, q, 4);
		return le32toh(v32);
	case 5:
		memcpy(&v32, q, 4);
		return le32toh(v32) | (uint64_t)q[4] << 32;
	case 6:
		memcpy(&v32, q, 4);
		memcpy(&v16, q + 4, 2);
		return le32toh(v32) | (uint64_t)le16toh(v16) << 32;
	case 7:
		memcpy(&v32, q, 4);
		memcpy(&v16, q + 4, 2);
		return le32toh(v32) | (uint64_t)le16toh(v16) << 32 | (uint64_t)q[6] << 48;
	default:
		memcpy(&v64, q, 8);
		return le64toh(v64);
	}
}

/* An integer field at q into v, sign-extended when signed; a float's
 * bits (desc.h: st_value_double). */
static inline void st__put_int(const struct st_field_desc *f, const uint8_t *q, struct st_value *v)
{
	uint64_t x = st__read_le(q, f->size);

	if (f->kind == ST_FIELD_SINT && f->size < 8) {
		unsigned shift = 64 - 8u * f->size;

		v->i = (int64_t)(x << shift) >> shift;
	} else {
		v->u = x;
	}
}

/* The option of variant vr that the tag value x selects, -1 when none. */
int32_t st__option_of(const struct st_variant *vr, uint64_t x);

/* st__decode, for any scope (decode.c). */
int st__decode_any(const struct st_plan *p, const uint8_t *pkt, uint64_t end, uint64_t *pos,
		   struct st_value *out, char *why, size_t whylen);

/*
 * Decodes the fields of p from pkt + *pos into out[0 .. p->n), reading
 * nothing at or past pkt + end. Positions are offsets from the packet
 * start, which alignments count from. Returns 0 with *pos after the
 * fields, or -EBADMSG with *pos at the faulty field and `why` saying what.
 * String and byte values point into pkt. The fields of variant options
 * not selected keep what they held (st_field_present tells).
 *
 * Inline for the common case, a fixed scope (integers in a row) with room
 * for it: one check, then reads.
 */
static inline int st__decode(const struct st_plan *p, const uint8_t *pkt, uint64_t end,
			     uint64_t *pos, struct st_value *out, char *why, size_t whylen)
{
	const uint8_t *q = pkt + *pos;

	if (!p->fixed || *pos > end || end - *pos < p->size)
		return st__decode_any(p, pkt, end, pos, out, why, whylen);
	for (uint32_t i = 0; i < p->n; i++) {
		const struct st_field_desc *f = &p->v[i];

		if (f->kind == ST_FIELD_BYTES) {
			out[i].ptr = q;
			out[i].len = f->count;
			q += f->count;
		} else {
			st__put_int(f, q, &out[i]);
			q += f->size;
		}
	}
	*pos += p->size;
	return 0;
}

#endif
