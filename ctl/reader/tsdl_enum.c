/*
 * Enumerations (desc.h), planned: an enumeration's labels get their values
 * (a label without one takes the previous value + 1, the first 0), checked
 * against its integer type; planned once however many fields use it.
 */
#include <stdint.h>

#include "ctl/reader/errmsg.h"
#include "ctl/reader/tsdl_enum.h"
#include "ctl/reader/tsdl_planner.h"

const struct st__tnode *st__plan_enum_container(struct st__planner *pl, const struct st__tnode *n)
{
	/* CTF: an enumeration without a type is of the type named "int" */
	struct st__tnode int_ref = { .kind = ST__TN_REF, .off = n->off, .ref = "int" };
	const struct st__tnode *c = st__plan_resolve(pl, n->container ? n->container : &int_ref, NULL);

	if (c && c->kind != ST__TN_INT) {
		st__tsdl_fail(pl->err, n->off, "the type of an enumeration must be an integer");
		return NULL;
	}
	return c;
}

/* An enumerator's value, as the bits of c's values; false when c cannot
 * hold it. */
static bool enum_value(struct st__planner *pl, const struct st__enumerator *e,
		       const struct st__tnode *c, uint64_t v, bool neg, uint64_t *out)
{
	unsigned bits = (unsigned)c->size;
	bool ok;

	if (c->is_signed) {
		int64_t min = bits == 64 ? INT64_MIN : -((int64_t)1 << (bits - 1));
		int64_t max = bits == 64 ? INT64_MAX : ((int64_t)1 << (bits - 1)) - 1;
		int64_t x = neg ? (int64_t)(0 - v) : (int64_t)v;

		ok = (neg || v <= (uint64_t)INT64_MAX) && x >= min && x <= max;
		*out = (uint64_t)x;
	} else {
		ok = !neg && (bits == 64 || v < (1ull << bits));
		*out = v;
	}
	if (!ok)
		st__tsdl_fail(pl->err, e->off, "enumerator '%s': %s%llu is out of the range of its %u-bit %s integer",
			      e->label, neg ? "-" : "", (unsigned long long)v, bits,
			      c->is_signed ? "signed" : "unsigned");
	return ok;
}

static bool below(bool is_signed, uint64_t a, uint64_t b)
{
	return is_signed ? (int64_t)a < (int64_t)b : a < b;
}

const struct st_enumeration *st__plan_enum(struct st__planner *pl, const struct st__tnode *n,
					   const struct st__tnode *c)
{
	struct st_enumeration *en;
	struct st_enum_mapping *m;
	uint64_t next = 0, count = 0;
	bool next_ok = true;

	if (n->cache->planned)
		return n->cache->planned;
	for (const struct st__enumerator *e = n->enums; e; e = e->next)
		count++;
	if (!st__plan_budget(pl, count, n->off))
		return NULL;
	en = st__arena_alloc(pl->a, sizeof(*en));
	m = st__arena_alloc(pl->a, count * sizeof(*m));
	if (!en || !m) {
		st__plan_oom(pl, n->off);
		return NULL;
	}
	en->v = m;
	en->is_signed = c->is_signed;
	for (const struct st__enumerator *e = n->enums; e; e = e->next, m++) {
		m->label = e->label;
		if (!e->has_value && !next_ok) {
			st__tsdl_fail(pl->err, e->off, "enumerator '%s': no value follows the previous one",
				      e->label);
			return NULL;
		}
		if (!e->has_value) {
			m->lo = m->hi = next;
		} else if (!enum_value(pl, e, c, e->lo, e->lo_neg, &m->lo) ||
			   !enum_value(pl, e, c, e->hi, e->hi_neg, &m->hi)) {
			return NULL;
		}
		if (below(c->is_signed, m->hi, m->lo)) {
			st__tsdl_fail(pl->err, e->off, "enumerator '%s': its range is empty", e->label);
			return NULL;
		}
		/* the next label's value; checked against the type when used */
		next = m->hi + 1;
		next_ok = !below(c->is_signed, next, m->hi) &&
			  (c->size == 64 || (c->is_signed ? (int64_t)next < (int64_t)1 << (c->size - 1)
							  : next < 1ull << c->size));
		en->n++;
	}
	n->cache->planned = en;
	return en;
}
