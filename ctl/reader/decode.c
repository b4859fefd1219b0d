/*
 * Scope decoding (decode.h) but for fixed scopes far from the end of their
 * packet, which decode.h does inline. A scope of fixed-size byte-aligned
 * fields and variants of those is checked once against the most bytes it
 * can take, then read without further tests; anything else (strings,
 * sequences, alignment, a record near the end of its packet) goes field
 * by field, with a check for each.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "ctl/reader/decode.h"

/* The option the tag value x selects, -1 when none; the range that
 * holds x (NULL: no label does) in *hit. */
static inline int32_t option_of(const struct st_variant *vr, uint64_t x,
				const struct st_variant_range **hit)
{
	const struct st_variant_range *r = vr->range, *e = r + vr->nrange;

	/* signed: compare x - INT64_MIN, which orders as the values do */
	if (vr->is_signed) {
		for (x ^= 1ull << 63; r < e; r++)
			if (x >= (r->lo ^ 1ull << 63) && x <= (r->hi ^ 1ull << 63))
				break;
	} else {
		for (; r < e; r++)
			if (x >= r->lo && x <= r->hi)
				break;
	}
	*hit = r < e ? r : NULL;
	return r < e ? r->option : -1;
}

int32_t st__option_of(const struct st_variant *vr, uint64_t x)
{
	const struct st_variant_range *hit;

	return option_of(vr, x, &hit);
}

static void no_option(const struct st_plan *p, const struct st_field_desc *f, uint64_t x,
		      const struct st_variant_range *hit, char *why, size_t whylen)
{
	const struct st_field_desc *tag = &p->v[f->variant->tag];
	char val[32];

	if (f->variant->is_signed)
		snprintf(val, sizeof(val), "%lld", (long long)x);
	else
		snprintf(val, sizeof(val), "%llu", (unsigned long long)x);
	if (hit)
		snprintf(why, whylen, "variant '%s': its tag '%s' is %s ('%s'), which names no option",
			 f->name, tag->name, val, hit->label);
	else
		snprintf(why, whylen, "variant '%s': its tag '%s' is %s, which has no label", f->name,
			 tag->name, val);
}

/* Decodes field by field, each checked against the end, in decoding
 * order (desc.h: a variant's selected option, then what follows it). */
static int decode_slow(const struct st_plan *p, const uint8_t *pkt, uint64_t end, uint64_t *pos,
		       struct st_value *out, char *why, size_t whylen)
{
	uint64_t at = *pos;

	for (uint32_t i = 0; i < p->n;) {
		const struct st_field_desc *f = &p->v[i];
		struct st_value *v = &out[i];
		const struct st_variant_range *hit;
		const struct st_variant_option *o;
		int32_t k;
		uint64_t n;

		if (f->align > 1)
			at = (at + f->align - 1) & ~(uint64_t)(f->align - 1);
		*pos = at;
		if (at > end) {
			snprintf(why, whylen, "field '%s' does not fit in the packet", f->name);
			*pos = end;
			return -EBADMSG;
		}
		i = f->next;
		switch (f->kind) {
		case ST_FIELD_UINT:
		case ST_FIELD_SINT:
		case ST_FIELD_HEX:
		case ST_FIELD_FLOAT:
			if (end - at < f->size) {
				snprintf(why, whylen, "field '%s' does not fit in the packet", f->name);
				return -EBADMSG;
			}
			st__put_int(f, pkt + at, v);
			at += f->size;
			break;
		case ST_FIELD_STRING: {
			const uint8_t *nul = memchr(pkt + at, 0, end - at);

			if (!nul) {
				snprintf(why, whylen,
					 "string '%s' has no terminator before the end of the packet",
					 f->name);
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
				return -EBADMSG;
			}
			v->ptr = pkt + at;
			v->len = n;
			at += n;
			break;
		case ST_FIELD_VARIANT:
			k = option_of(f->variant, out[f->variant->tag].u, &hit);
			if (k < 0) {
				no_option(p, f, out[f->variant->tag].u, hit, why, whylen);
				return -EBADMSG;
			}
			v->u = (uint64_t)k;
			o = &f->variant->opt[k];
			if (o->first < o->end)
				i = o->first;
			break;
		}
	}
	*pos = at;
	return 0;
}

/* Fields of a scope with variants, all fitting from q on (its max_size
 * was checked): the end of the fields, or NULL for a tag that selects no
 * option (decode_slow then says why). */
static const uint8_t *decode_bounded(const struct st_plan *p, const uint8_t *q,
				     struct st_value *out)
{
	for (uint32_t i = 0; i < p->n;) {
		const struct st_field_desc *f = &p->v[i];
		struct st_value *v = &out[i];
		const struct st_variant_range *hit;
		const struct st_variant_option *o;
		int32_t k;

		i = f->next;
		if (f->kind == ST_FIELD_BYTES) {
			v->ptr = q;
			v->len = f->count;
			q += f->count;
		} else if (f->kind != ST_FIELD_VARIANT) {
			st__put_int(f, q, v);
			q += f->size;
		} else {
			k = option_of(f->variant, out[f->variant->tag].u, &hit);
			if (k < 0)
				return NULL;
			v->u = (uint64_t)k;
			o = &f->variant->opt[k];
			if (o->first < o->end)
				i = o->first;
		}
	}
	return q;
}

int st__decode_any(const struct st_plan *p, const uint8_t *pkt, uint64_t end, uint64_t *pos,
		   struct st_value *out, char *why, size_t whylen)
{
	const uint8_t *q;

	/* Most records are far from the end of their packet: checked once.
	 * The slow path also finds which field does not fit, or which tag
	 * selects nothing. */
	if (p->max_size == UINT64_MAX || *pos > end || end - *pos < p->max_size)
		return decode_slow(p, pkt, end, pos, out, why, whylen);
	q = decode_bounded(p, pkt + *pos, out);
	if (!q)
		return decode_slow(p, pkt, end, pos, out, why, whylen);
	*pos = (uint64_t)(q - pkt);
	return 0;
}
