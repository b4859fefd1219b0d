/*
 * Decoding one scope (a plan of tsdl.h) from packet bytes, bounds-checked.
 */
#ifndef ST_READER_DECODE_H
#define ST_READER_DECODE_H

#include <endian.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "ctl/reader/tsdl.h"

/*
 * Decodes the fields of p from pkt + *pos into out[0 .. p->n), reading
 * nothing at or past pkt + end. Positions are offsets from the packet
 * start, which alignments count from. Returns 0 with *pos after the
 * fields, or -EBADMSG with *pos at the faulty field and `why` saying what.
 * String and byte values point into pkt.
 */
int st__decode(const struct st_plan *p, const uint8_t *pkt, uint64_t end, uint64_t *pos,
	       struct st_value *out, char *why, size_t whylen);

/* A little-endian unsigned integer of 1, 2, 4 or 8 bytes. */
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
	case 4:
		memcpy(&v32, q, 4);
		return le32toh(v32);
	default:
		memcpy(&v64, q, 8);
		return le64toh(v64);
	}
}

#endif
