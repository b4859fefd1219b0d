/*
 * Records of a fixed shape, decoded without walking their plans.
 *
 * Nearly every record of a shimtrace trace is a one-byte id-or-tag
 * header, a variant option of a few integers (a 16-bit timestamp, or a
 * wider id and the whole clock), then an event context and a payload of
 * integers. The plans (desc.h) decode any such record field by field;
 * here the same record is decoded from tables computed once per trace:
 *
 *  - per stream class, for each value of a one-byte first header field,
 *    how long the header is, and where its id and timestamp are: found by
 *    following the plan as the decoder would for that tag value;
 *  - per event class whose context and payload are fixed (desc.h), the
 *    offset, size and sign of each value.
 *
 * A record these tables do not describe, one too close to the end of its
 * packet to read a whole 8-byte word past each field, or one that breaks
 * a rule (time going back, an unknown id) is left to the plan decoder,
 * which then gives the same values or the same error as it always does.
 */
#ifndef ST_READER_FAST_H
#define ST_READER_FAST_H

#include <endian.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "ctl/reader/desc.h"

/* The header of a record whose first byte is a given tag value. */
struct st__fast_head {
	uint8_t ok;	 /* the table describes it */
	uint8_t len;	 /* bytes */
	uint8_t id_from; /* 0: no id (0); 1: the tag itself; 2: at id_off */
	uint8_t id_off, id_shift; /* st__fast_int's shift: 64 - bits */
	uint8_t ts_off, ts_bytes; /* the clock's low ts_bytes bytes */
};

struct st__fast_stream {
	bool ok; /* the stream class's header starts with a one-byte tag */
	uint32_t maxlen; /* the longest header the table describes */
	struct st__fast_head head[256];
};

/* One value of an event's context or payload. */
struct st__fast_value {
	uint16_t off;
	uint8_t shift;	/* 64 - bits: left then back, zero- or sign-extended */
	uint8_t is_signed;
	uint8_t is_bytes; /* an array: ptr and len, `count` bytes */
	uint8_t in_payload; /* else in the event context */
	uint16_t index; /* in its scope's values */
	uint32_t count;
};

struct st__fast_event {
	bool ok;
	uint32_t size; /* context and payload, bytes */
	uint32_t n;
	struct st__fast_value *v;
};

struct st__fast {
	struct st__fast_stream *streams; /* by position in st_tsdl.streams */
	struct st__fast_event *events;	 /* by st_event_class.index */
	uint32_t nevents;
};

/* False: every record goes to the plan decoder (tests compare the two). */
extern bool st__fast_enabled;
/* Records the fast decoder read (tests check that it ran). */
extern uint64_t st__fast_decoded;

/* Builds the tables for t; -ENOMEM or 0. */
int st__fast_build(struct st__fast *f, const struct st_tsdl *t);
void st__fast_free(struct st__fast *f);

/* The little-endian integer in the first 64 - shift bits of the 8 bytes
 * at q (all readable), zero- or sign-extended. */
static inline uint64_t st__fast_int(const uint8_t *q, unsigned shift, bool is_signed)
{
	uint64_t x;

	memcpy(&x, q, 8);
	x = le64toh(x) << shift;
	return is_signed ? (uint64_t)((int64_t)x >> shift) : x >> shift;
}

#endif
