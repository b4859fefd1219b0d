/*
 * Variants (desc.h), planned: a variant becomes a field holding the
 * selected option's index, then the fields of each option in turn (planned
 * with the caller's plan_field: tsdl_types.c's), then a table from tag
 * values to options: for each option in declaration order, the values of
 * the tag's labels of its name, then the values of labels that name no
 * option (for the decoder to say so). That is the order babeltrace2
 * searches in, should labels overlap.
 *
 * The tag must be an earlier enumeration of the same scope, decoded
 * whenever the variant is.
 */
#include <stdlib.h>
#include <string.h>

#include "ctl/reader/errmsg.h"
#include "ctl/reader/tsdl_limits.h"
#include "ctl/reader/tsdl_planner.h"
#include "ctl/reader/tsdl_variant.h"

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
		      uint64_t *pending, int depth, st__plan_field_fn plan_field)
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
		if (!plan_field(pl, o, np, nd, &pend, depth + 1))
			return false;
		opt[k].end = pl->n;
	}
	pl->cur_variant = saved_variant;
	pl->cur_option = saved_option;
	vr->end = pl->n;
	*pending = 1;
	return plan_ranges(pl, tf, vr, pl->f[tag_i].enumeration);
}
