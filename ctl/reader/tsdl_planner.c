/*
 * The planner's primitives (see tsdl_planner.h): type aliases resolved
 * (bounded chains, so a loop is an error), fields added to the scope being
 * planned and found by name, the budget of fields every scope draws on.
 */
#include <stdlib.h>
#include <string.h>

#include "ctl/reader/tsdl_planner.h"

#define MAX_ALIAS_CHAIN 64

static uint64_t hash_str(const char *s)
{
	uint64_t h = 1469598103934665603ull;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

bool st__plan_oom(struct st__planner *pl, size_t off)
{
	st__tsdl_fail(pl->err, off, "out of memory");
	return false;
}

/* ---- aliases ---- */

bool st__plan_aliases(struct st__planner *pl, const struct st__alias *list)
{
	size_t n = 0;

	for (const struct st__alias *al = list; al; al = al->next)
		n++;
	pl->alias_cap = 16;
	while (pl->alias_cap < 2 * n)
		pl->alias_cap *= 2;
	pl->alias = st__arena_alloc(pl->a, pl->alias_cap * sizeof(*pl->alias));
	if (!pl->alias)
		return st__plan_oom(pl, 0);
	for (const struct st__alias *al = list; al; al = al->next) {
		size_t i = hash_str(al->name) & (pl->alias_cap - 1);

		for (; pl->alias[i]; i = (i + 1) & (pl->alias_cap - 1)) {
			if (strcmp(pl->alias[i]->name, al->name) == 0) {
				/* The list is newest first: report the second one. */
				const struct st__alias *second =
					pl->alias[i]->off > al->off ? pl->alias[i] : al;

				st__tsdl_fail(pl->err, second->off, "type '%s' is declared twice",
					      al->name);
				return false;
			}
		}
		pl->alias[i] = al;
	}
	return true;
}

const struct st__tnode *st__plan_resolve(struct st__planner *pl, const struct st__tnode *n,
					 const char **tag)
{
	for (int hops = 0;; hops++) {
		const struct st__alias *found = NULL;
		size_t i;

		if (tag && !*tag)
			*tag = n->tag;
		if (n->kind != ST__TN_REF)
			return n;
		if (hops == MAX_ALIAS_CHAIN) {
			st__tsdl_fail(pl->err, n->off, "type alias loop through '%s'", n->ref);
			return NULL;
		}
		for (i = hash_str(n->ref) & (pl->alias_cap - 1); pl->alias[i];
		     i = (i + 1) & (pl->alias_cap - 1))
			if (strcmp(pl->alias[i]->name, n->ref) == 0) {
				found = pl->alias[i];
				break;
			}
		if (!found) {
			st__tsdl_fail(pl->err, n->off, "unknown type '%s'", n->ref);
			return NULL;
		}
		n = found->type;
	}
}

/* ---- clocks ---- */

int st__plan_clock_index(struct st__planner *pl, const char *name)
{
	for (uint32_t i = 0; i < pl->nclocks; i++)
		if (strcmp(pl->clocks[i].name, name) == 0)
			return (int)i;
	return -1;
}

/* ---- the fields of a scope ---- */

static const char *join(struct st__planner *pl, const char *prefix, const char *name, bool strip)
{
	size_t pn = strlen(prefix), nn;
	char *s;

	if (strip && name[0] == '_')
		name++;
	nn = strlen(name);
	s = st__arena_alloc(pl->a, pn + nn + 1);
	if (s) {
		memcpy(s, prefix, pn);
		memcpy(s + pn, name, nn + 1);
	}
	return s;
}

int32_t st__plan_lookup(struct st__planner *pl, const char *tsdl_name)
{
	size_t i = hash_str(tsdl_name) & (ST__NAME_HASH - 1);

	for (; pl->names[i]; i = (i + 1) & (ST__NAME_HASH - 1))
		if (strcmp(pl->f[pl->names[i] - 1].tsdl_name, tsdl_name) == 0)
			return pl->names[i] - 1;
	return -1;
}

int32_t st__plan_lookup_path(struct st__planner *pl, const char *tp, const char *path)
{
	size_t tl = strlen(tp), n = strlen(path), sl = strlen(pl->scope_path);
	char *buf = malloc(tl + n + 1);
	int32_t i = -1;

	if (!buf)
		return -1;
	for (;;) {
		memcpy(buf, tp, tl);
		memcpy(buf + tl, path, n + 1);
		i = st__plan_lookup(pl, buf);
		if (i >= 0 || tl == 0)
			break;
		/* "a.b." -> "a." */
		for (tl--; tl > 0 && tp[tl - 1] != '.'; tl--)
			;
	}
	free(buf);
	if (i < 0 && n > sl && strncmp(path, pl->scope_path, sl) == 0 && path[sl] == '.')
		i = st__plan_lookup(pl, path + sl + 1);
	return i;
}

bool st__plan_reachable(const struct st__planner *pl, uint32_t i)
{
	const struct st_field_desc *d = &pl->f[i];
	int32_t v = pl->cur_variant;
	uint32_t o = pl->cur_option;

	if (d->in_variant < 0)
		return true;
	for (; v >= 0; o = pl->f[v].option, v = pl->f[v].in_variant)
		if (v == d->in_variant && o == d->option)
			return true;
	return false;
}

struct st_field_desc *st__plan_add(struct st__planner *pl, const char *tsdl_prefix,
				   const char *disp_prefix, const char *name, size_t off)
{
	struct st_field_desc *f;
	size_t i;

	if (pl->n == ST__TSDL_MAX_FIELDS) {
		st__tsdl_fail(pl->err, off, "more than %u fields in one scope", ST__TSDL_MAX_FIELDS);
		return NULL;
	}
	if (!st__plan_budget(pl, 1, off))
		return NULL;
	f = &pl->f[pl->n];
	memset(f, 0, sizeof(*f));
	f->tsdl_name = join(pl, tsdl_prefix, name, false);
	f->name = join(pl, disp_prefix, name, true);
	if (!f->tsdl_name || !f->name) {
		st__plan_oom(pl, off);
		return NULL;
	}
	if (st__plan_lookup(pl, f->tsdl_name) >= 0) {
		st__tsdl_fail(pl->err, off, "field '%s' is declared twice", f->tsdl_name);
		return NULL;
	}
	i = hash_str(f->tsdl_name) & (ST__NAME_HASH - 1);
	while (pl->names[i])
		i = (i + 1) & (ST__NAME_HASH - 1);
	pl->names[i] = (uint16_t)(pl->n + 1);
	f->len_field = -1;
	f->in_variant = pl->cur_variant;
	f->option = pl->cur_option;
	pl->clk[pl->n] = -1;
	pl->n++;
	return f;
}

bool st__plan_budget(struct st__planner *pl, uint64_t n, size_t off)
{
	pl->total += n;
	if (pl->total > ST__TSDL_MAX_TOTAL) {
		st__tsdl_fail(pl->err, off, "the metadata describes too many fields");
		return false;
	}
	return true;
}

bool st__plan_prefixes(struct st__planner *pl, const char *tp, const char *dp, const char *name,
		       size_t off, const char **np, const char **nd)
{
	const char *a = join(pl, tp, name, false), *b = join(pl, dp, name, true);

	*np = a ? join(pl, a, ".", false) : NULL;
	*nd = b ? join(pl, b, ".", false) : NULL;
	return *np && *nd ? true : st__plan_oom(pl, off);
}
