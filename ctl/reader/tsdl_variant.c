/*
 * Enumerations and variants (tsdl.h), planned:
 *
 * - an enumeration's labels get their values (a label without one takes
 *   the previous value + 1, the first 0), checked against its integer
 *   type; planned once however many fields use it;
 * - a variant becomes a field holding the selected option's index, then
 *   the fields of each option in turn, then a table from tag values to
 *   options: for each option in declaration order, the values of the
 *   tag's labels of its name, then the values of labels that name no
 *   option (for the decoder to say so). That is the order babeltrace2
 *   searches in, should labels overlap.
 *
 * The tag must be an earlier enumeration of the same scope, decoded
 * whenever the variant is.
 */
#include <stdlib.h>
#include <string.h>

#include "ctl/reader/tsdl.h"
#include "ctl/reader/tsdl_int.h"

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

static int cmp_option(const void *a, const void *b)
{
	return strcmp((*(const struct st_variant_option *const *)a)->name,
		      (*(const struct st_variant_option *const *)b)->name);
}

static int cmp_label(const void *key, const void *elem)
{
	return strcmp(key, (*(const struct st_variant_option *const *)elem)->name);
}

/* The tag value table of vr (see the top of this file). */
static bool plan_ranges(struct st__planner *pl, const struct st__tfield *tf,
			struct st_variant *vr, const struct st_enumeration *en)
{
	const struct st_variant_option **by_name = malloc((vr->nopt + 1) * sizeof(*by_name));
	int32_t *opt_of = malloc((en->n + 1) * sizeof(*opt_of));
	uint32_t *start = calloc(vr->nopt + 2, sizeof(*start));
	struct st_variant_range *r = NULL;
	bool ok = false;

	if (!by_name || !opt_of || !start) {
		st__plan_oom(pl, tf->off);
		goto out;
	}
	for (uint32_t k = 0; k < vr->nopt; k++)
		by_name[k] = &vr->opt[k];
	qsort(by_name, vr->nopt, sizeof(*by_name), cmp_option);
	for (uint32_t k = 1; k < vr->nopt; k++)
		if (strcmp(by_name[k - 1]->name, by_name[k]->name) == 0) {
			st__tsdl_fail(pl->err, tf->off, "variant '%s': option '%s' is declared twice",
				      tf->name, by_name[k]->name);
			goto out;
		}
	/* options by label, then a counting sort on the option (none last) */
	for (uint32_t j = 0; j < en->n; j++) {
		const struct st_variant_option *const *o =
			bsearch(en->v[j].label, by_name, vr->nopt, sizeof(*by_name), cmp_label);

		opt_of[j] = o ? (int32_t)(*o - vr->opt) : -1;
		start[(o ? (uint32_t)opt_of[j] : vr->nopt) + 1]++;
	}
	for (uint32_t k = 1; k <= vr->nopt + 1; k++)
		start[k] += start[k - 1];
	if (!st__plan_budget(pl, en->n, tf->off))
		goto out;
	r = st__arena_alloc(pl->a, (en->n + 1) * sizeof(*r));
	if (!r) {
		st__plan_oom(pl, tf->off);
		goto out;
	}
	for (uint32_t j = 0; j < en->n; j++) {
		uint32_t k = opt_of[j] >= 0 ? (uint32_t)opt_of[j] : vr->nopt;
		struct st_variant_range *x = &r[start[k]++];

		x->lo = en->v[j].lo;
		x->hi = en->v[j].hi;
		x->option = opt_of[j];
		x->label = en->v[j].label;
	}
	vr->range = r;
	vr->nrange = en->n;
	ok = true;
out:
	free(by_name);
	free(opt_of);
	free(start);
	return ok;
}

/* The tag of a variant: an earlier enumeration, decoded whenever it is. */
static int32_t plan_tag(struct st__planner *pl, const struct st__tfield *tf, const char *tag,
			const char *tp)
{
	int32_t i;

	if (!tag) {
		st__tsdl_fail(pl->err, tf->off, "variant '%s' has no tag", tf->name);
		return -1;
	}
	i = st__plan_lookup_path(pl, tp, tag);
	if (i < 0)
		st__tsdl_fail(pl->err, tf->off, "variant '%s': its tag '%s' is not an earlier field of %s",
			      tf->name, tag, pl->scope_path);
	else if (!pl->f[i].enumeration)
		st__tsdl_fail(pl->err, tf->off, "variant '%s': its tag '%s' is not an enumeration",
			      tf->name, tag);
	else if (!st__plan_reachable(pl, (uint32_t)i))
		st__tsdl_fail(pl->err, tf->off,
			      "variant '%s': its tag '%s' is in an option of another variant", tf->name,
			      tag);
	else
		return i;
	return -1;
}

bool st__plan_variant(struct st__planner *pl, const struct st__tfield *tf,
		      const struct st__tnode *t, const char *tag, const char *tp, const char *dp,
		      uint64_t *pending, int depth)
{
	int32_t saved_variant = pl->cur_variant, tag_i, vi;
	uint32_t saved_option = pl->cur_option, nopt = 0, k = 0;
	const char *np, *nd;
	struct st_variant_option *opt;
	struct st_field_desc *f;
	struct st_variant *vr;

	if (depth > ST__TSDL_MAX_DEPTH) {
		st__tsdl_fail(pl->err, tf->off, "types nested too deep");
		return false;
	}
	if (pl->no_variants) {
		st__tsdl_fail(pl->err, tf->off,
			      "'%s': variants are not supported in event payloads (only in stream "
			      "and trace scopes)",
			      tf->name);
		return false;
	}
	if (tf->dim != ST__DIM_NONE) {
		st__tsdl_fail(pl->err, tf->off, "'%s': arrays of variants are not supported", tf->name);
		return false;
	}
	tag_i = plan_tag(pl, tf, tag, tp);
	if (tag_i < 0)
		return false;
	for (const struct st__tfield *o = t->fields; o; o = o->next)
		nopt++;
	if (!st__plan_budget(pl, nopt, tf->off) ||
	    !st__plan_prefixes(pl, tp, dp, tf->name, tf->off, &np, &nd))
		return false;
	f = st__plan_add(pl, tp, dp, tf->name, tf->off);
	vr = st__arena_alloc(pl->a, sizeof(*vr));
	opt = st__arena_alloc(pl->a, nopt * sizeof(*opt));
	if (!f || !vr || !opt)
		return f ? st__plan_oom(pl, tf->off) : false;
	vi = (int32_t)pl->n - 1;
	f->kind = ST_FIELD_VARIANT;
	f->align = 1;
	f->variant = vr;
	vr->tag = (uint32_t)tag_i;
	vr->is_signed = pl->f[tag_i].enumeration->is_signed;
	vr->opt = opt;
	vr->nopt = nopt;
	for (const struct st__tfield *o = t->fields; o; o = o->next, k++) {
		/* the alignment of the structure around goes to each option */
		uint64_t pend = *pending;

		pl->cur_variant = vi;
		pl->cur_option = k;
		opt[k].name = o->name;
		opt[k].first = pl->n;
		if (!st__plan_field(pl, o, np, nd, &pend, depth + 1))
			return false;
		opt[k].end = pl->n;
	}
	pl->cur_variant = saved_variant;
	pl->cur_option = saved_option;
	vr->end = pl->n;
	*pending = 1;
	return plan_ranges(pl, tf, vr, pl->f[tag_i].enumeration);
}
