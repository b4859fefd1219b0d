/*
 * Scope decoding (decode.h). The common case, a scope of fixed-size
 * byte-aligned integers, is checked against the bounds once and then read
 * without further tests; anything else goes field by field.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "ctl/reader/decode.h"

static inline void put_int(const struct st_field_desc *f, const uint8_t *q, struct st_value *v)
{
	uint64_t x = st__read_le(q, f->size);

	if (f->kind == ST_FIELD_SINT && f->size < 8) {
		unsigned shift = 64 - 8u * f->size;

		v->i = (int64_t)(x << shift) >> shift;
	} else {
		v->u = x;
	}
}

static int decode_slow(const struct st_plan *p, const uint8_t *pkt, uint64_t end, uint64_t *pos,
		       struct st_value *out, char *why, size_t whylen)
{
	uint64_t at = *pos;

	for (uint32_t i = 0; i < p->n; i++) {
		const struct st_field_desc *f = &p->v[i];
		struct st_value *v = &out[i];
		uint64_t n;

		if (f->align > 1)
			at = (at + f->align - 1) & ~(uint64_t)(f->align - 1);
		if (at > end) {
			snprintf(why, whylen, "field '%s' does not fit in the packet", f->name);
			return -EBADMSG;
		}
		switch (f->kind) {
		case ST_FIELD_UINT:
		case ST_FIELD_SINT:
		case ST_FIELD_HEX:
			if (end - at < f->size) {
				snprintf(why, whylen, "field '%s' does not fit in the packet", f->name);
				*pos = at;
				return -EBADMSG;
			}
			put_int(f, pkt + at, v);
			at += f->size;
			break;
		case ST_FIELD_STRING: {
			const uint8_t *nul = memchr(pkt + at, 0, end - at);

			if (!nul) {
				snprintf(why, whylen,
					 "string '%s' has no terminator before the end of the packet",
					 f->name);
				*pos = at;
				return -EBADMSG;
			}
			v->ptr = pkt + at;
			v->len = (uint64_t)(nul - (pkt + at));
			at += v->len + 1;
			break;
		}
		case ST_FIELD_BYTES:
			n = f->len_field >= 0 ? out[f->len_field].u : f->count;
			if (end - at < n) {
				snprintf(why, whylen,
					 "'%s' (%llu bytes) does not fit in the packet", f->name,
					 (unsigned long long)n);
				*pos = at;
				return -EBADMSG;
			}
			v->ptr = pkt + at;
			v->len = n;
			at += n;
			break;
		}
	}
	*pos = at;
	return 0;
}

int st__decode(const struct st_plan *p, const uint8_t *pkt, uint64_t end, uint64_t *pos,
	       struct st_value *out, char *why, size_t whylen)
{
	const uint8_t *q;

	/* The slow path also finds which field does not fit. */
	if (!p->fixed || *pos > end || end - *pos < p->size)
		return decode_slow(p, pkt, end, pos, out, why, whylen);
	q = pkt + *pos;
	for (uint32_t i = 0; i < p->n; i++) {
		const struct st_field_desc *f = &p->v[i];

		if (f->kind == ST_FIELD_BYTES) {
			out[i].ptr = q;
			out[i].len = f->count;
			q += f->count;
		} else {
			put_int(f, q, &out[i]);
			q += f->size;
		}
	}
	*pos += p->size;
	return 0;
}
