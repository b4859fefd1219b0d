/*
 * TSDL types: type aliases resolved (bounded chains, so a loop is an
 * error), each type checked against what the reader decodes, and a scope's
 * structure flattened into a plan (tsdl.h): nested structures become
 * "outer.inner" fields, a structure's alignment goes to its first field,
 * sequences point at their length field.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl/reader/tsdl.h"
#include "ctl/reader/tsdl_int.h"

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

static const struct st__tnode *resolve(struct st__planner *pl, const struct st__tnode *n)
{
	for (int hops = 0; n->kind == ST__TN_REF; hops++) {
		size_t i = hash_str(n->ref) & (pl->alias_cap - 1);
		const struct st__alias *found = NULL;

		if (hops == MAX_ALIAS_CHAIN) {
			st__tsdl_fail(pl->err, n->off, "type alias loop through '%s'", n->ref);
			return NULL;
		}
		for (; pl->alias[i]; i = (i + 1) & (pl->alias_cap - 1))
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
	return n;
}

/* ---- types ---- */

int st__plan_clock_index(struct st__planner *pl, const char *name)
{
	for (uint32_t i = 0; i < pl->nclocks; i++)
		if (strcmp(pl->clocks[i].name, name) == 0)
			return (int)i;
	return -1;
}

/* Alignment in bytes of a resolved type; 0 on error. */
static uint64_t type_align(struct st__planner *pl, const struct st__tnode *n, int depth)
{
	uint64_t a = 1;

	if (depth > ST__TSDL_MAX_DEPTH) {
		st__tsdl_fail(pl->err, n->off, "types nested too deep");
		return 0;
	}
	if (n->kind == ST__TN_INT) {
		uint64_t bits = n->has_align ? n->align : 8;

		return bits >= 8 && bits % 8 == 0 ? bits / 8 : 1;
	}
	if (n->kind != ST__TN_STRUCT)
		return 1;
	if (n->struct_align >= 8)
		a = n->struct_align / 8;
	for (const struct st__tfield *f = n->fields; f; f = f->next) {
		const struct st__tnode *t = resolve(pl, f->type);
		uint64_t fa;

		if (!t)
			return 0;
		fa = type_align(pl, t, depth + 1);
		if (!fa)
			return 0;
		a = fa > a ? fa : a;
	}
	return a;
}

/* Checks an integer type; its alignment in bytes, 0 on error. */
static uint64_t check_int(struct st__planner *pl, const struct st__tnode *n, size_t off, int32_t *clk)
{
	uint64_t align = n->has_align ? n->align : 8;

	*clk = -1;
	if (n->big_endian) {
		st__tsdl_fail(pl->err, off, "big-endian integers are not supported");
		return 0;
	}
	if (n->size != 8 && n->size != 16 && n->size != 32 && n->size != 64) {
		st__tsdl_fail(pl->err, off, "%llu-bit integers are not supported (8, 16, 32 or 64 bits)",
			      (unsigned long long)n->size);
		return 0;
	}
	if (align == 0 || align % 8 != 0 || align > 512 || (align & (align - 1)) != 0) {
		st__tsdl_fail(pl->err, off,
			      "integers not aligned on a byte boundary are not supported (align = %llu)",
			      (unsigned long long)align);
		return 0;
	}
	if (n->base != 10 && n->base != 16) {
		st__tsdl_fail(pl->err, off, "base %llu integers are not supported (10 or 16)",
			      (unsigned long long)n->base);
		return 0;
	}
	if (n->encoded) {
		st__tsdl_fail(pl->err, off, "text (encoded) integers are not supported");
		return 0;
	}
	if (n->map) {
		size_t len = strlen(n->map);
		char name[256];

		if (len < 13 || len - 12 >= sizeof(name) || strncmp(n->map, "clock.", 6) != 0 ||
		    strcmp(n->map + len - 6, ".value") != 0) {
			st__tsdl_fail(pl->err, off, "bad map '%s' (expected clock.NAME.value)", n->map);
			return 0;
		}
		memcpy(name, n->map + 6, len - 12);
		name[len - 12] = '\0';
		*clk = st__plan_clock_index(pl, name);
		if (*clk < 0) {
			st__tsdl_fail(pl->err, off, "map names the unknown clock '%s'", name);
			return 0;
		}
	}
	return align / 8;
}

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

static int32_t lookup_name(struct st__planner *pl, const char *tsdl_name)
{
	size_t i = hash_str(tsdl_name) & (ST__NAME_HASH - 1);

	for (; pl->names[i]; i = (i + 1) & (ST__NAME_HASH - 1))
		if (strcmp(pl->f[pl->names[i] - 1].tsdl_name, tsdl_name) == 0)
			return pl->names[i] - 1;
	return -1;
}

/* Appends a field; *align is consumed (the pending structure alignment). */
static struct st_field_desc *add(struct st__planner *pl, const char *tsdl_prefix, const char *disp_prefix,
			    const char *name, size_t off)
{
	struct st_field_desc *f;
	size_t i;

	if (pl->n == ST__TSDL_MAX_FIELDS) {
		st__tsdl_fail(pl->err, off, "more than %u fields in one scope", ST__TSDL_MAX_FIELDS);
		return NULL;
	}
	if (++pl->total > ST__TSDL_MAX_TOTAL) {
		st__tsdl_fail(pl->err, off, "the metadata describes too many fields");
		return NULL;
	}
	f = &pl->f[pl->n];
	memset(f, 0, sizeof(*f));
	f->tsdl_name = join(pl, tsdl_prefix, name, false);
	f->name = join(pl, disp_prefix, name, true);
	if (!f->tsdl_name || !f->name) {
		st__plan_oom(pl, off);
		return NULL;
	}
	if (lookup_name(pl, f->tsdl_name) >= 0) {
		st__tsdl_fail(pl->err, off, "field '%s' is declared twice", f->tsdl_name);
		return NULL;
	}
	i = hash_str(f->tsdl_name) & (ST__NAME_HASH - 1);
	while (pl->names[i])
		i = (i + 1) & (ST__NAME_HASH - 1);
	pl->names[i] = (uint16_t)(pl->n + 1);
	f->len_field = -1;
	pl->clk[pl->n] = -1;
	pl->n++;
	return f;
}

static bool flatten(struct st__planner *pl, const struct st__tnode *s, const char *tsdl_prefix,
		    const char *disp_prefix, uint64_t pending, int depth);

static bool plan_field(struct st__planner *pl, const struct st__tfield *tf, const char *tp,
		       const char *dp, uint64_t *pending, int depth)
{
	const struct st__tnode *t = resolve(pl, tf->type);
	struct st_field_desc *f;
	int32_t clk;
	uint64_t align;

	if (!t)
		return false;
	if (tf->dim == ST__DIM_NONE && t->kind == ST__TN_STRUCT) {
		const char *np = join(pl, tp, tf->name, false), *nd = join(pl, dp, tf->name, true);
		char *np2, *nd2;

		if (!np || !nd)
			return st__plan_oom(pl, tf->off);
		np2 = st__arena_alloc(pl->a, strlen(np) + 2);
		nd2 = st__arena_alloc(pl->a, strlen(nd) + 2);
		if (!np2 || !nd2)
			return st__plan_oom(pl, tf->off);
		sprintf(np2, "%s.", np);
		sprintf(nd2, "%s.", nd);
		align = type_align(pl, t, depth + 1);
		if (!align)
			return false;
		if (!flatten(pl, t, np2, nd2, align > *pending ? align : *pending, depth + 1))
			return false;
		*pending = 1;
		return true;
	}
	if (tf->dim != ST__DIM_NONE && (t->kind != ST__TN_INT || t->size != 8)) {
		st__tsdl_fail(pl->err, tf->off,
			      "'%s': only arrays and sequences of 8-bit integers are supported",
			      tf->name);
		return false;
	}
	if (t->kind == ST__TN_STRING) {
		f = add(pl, tp, dp, tf->name, tf->off);
		if (!f)
			return false;
		f->kind = ST_FIELD_STRING;
		f->align = (uint8_t)*pending;
		*pending = 1;
		return true;
	}
	align = check_int(pl, t, tf->off, &clk);
	if (!align)
		return false;
	if (*pending > align)
		align = *pending;
	*pending = 1;
	f = add(pl, tp, dp, tf->name, tf->off);
	if (!f)
		return false;
	f->align = (uint8_t)(align > 255 ? 128 : align);
	f->size = (uint8_t)(t->size / 8);
	f->is_signed = t->is_signed;
	if (tf->dim == ST__DIM_NONE) {
		f->kind = t->base == 16 ? ST_FIELD_HEX : t->is_signed ? ST_FIELD_SINT : ST_FIELD_UINT;
		f->clock = clk >= 0;
		pl->clk[pl->n - 1] = clk;
		return true;
	}
	f->kind = ST_FIELD_BYTES;
	f->size = 1;
	f->count = tf->count;
	if (tf->dim == ST__DIM_SEQ) {
		char *rel = st__arena_alloc(pl->a, strlen(tp) + strlen(tf->len_name) + 1);
		int32_t i;

		if (!rel)
			return st__plan_oom(pl, tf->off);
		sprintf(rel, "%s%s", tp, tf->len_name);
		i = lookup_name(pl, rel);
		if (i < 0)
			i = lookup_name(pl, tf->len_name);
		if (i < 0 || i == (int32_t)pl->n - 1 ||
		    (pl->f[i].kind != ST_FIELD_UINT && pl->f[i].kind != ST_FIELD_HEX) ||
		    pl->f[i].is_signed) {
			st__tsdl_fail(pl->err, tf->off,
				      "sequence '%s': its length '%s' is not an earlier unsigned "
				      "integer field",
				      tf->name, tf->len_name);
			return false;
		}
		f->len_field = i;
	}
	return true;
}

/* The fields of struct s, appended to the scope being planned. */
static bool flatten(struct st__planner *pl, const struct st__tnode *s, const char *tsdl_prefix,
		    const char *disp_prefix, uint64_t pending, int depth)
{
	if (depth > ST__TSDL_MAX_DEPTH) {
		st__tsdl_fail(pl->err, s->off, "types nested too deep");
		return false;
	}
	for (const struct st__tfield *tf = s->fields; tf; tf = tf->next)
		if (!plan_field(pl, tf, tsdl_prefix, disp_prefix, &pending, depth))
			return false;
	return true;
}

/* Plans the scope `what` of type n (NULL: empty) into *out. */
bool st__plan_scope(struct st__planner *pl, const struct st__tnode *n, size_t off, const char *what,
		       struct st_plan *out)
{
	struct st_field_desc *v;
	uint64_t align;

	pl->n = 0;
	memset(pl->names, 0, sizeof(pl->names));
	memset(out, 0, sizeof(*out));
	out->fixed = true;
	if (!n)
		return true;
	n = resolve(pl, n);
	if (!n)
		return false;
	if (n->kind != ST__TN_STRUCT) {
		st__tsdl_fail(pl->err, off, "%s must be a structure", what);
		return false;
	}
	align = type_align(pl, n, 0);
	if (!align || !flatten(pl, n, "", "", align, 0))
		return false;
	v = st__arena_alloc(pl->a, (pl->n ? pl->n : 1) * sizeof(*v));
	if (!v)
		return st__plan_oom(pl, off);
	memcpy(v, pl->f, pl->n * sizeof(*v));
	out->v = v;
	out->n = pl->n;
	for (uint32_t i = 0; i < pl->n; i++) {
		if (v[i].align > 1 || v[i].kind == ST_FIELD_STRING ||
		    (v[i].kind == ST_FIELD_BYTES && v[i].len_field >= 0))
			out->fixed = false;
		else
			out->size += v[i].kind == ST_FIELD_BYTES ? v[i].count : v[i].size;
	}
	if (out->size > UINT32_MAX)
		out->fixed = false;
	if (pl->n > pl->t->max_fields)
		pl->t->max_fields = pl->n;
	return true;
}

/* Index of the field named tsdl_name in the scope just planned, checked to
 * be an integer (unsigned when `uns`); -1 when absent, -2 on error. */
int32_t st__plan_special(struct st__planner *pl, const struct st_plan *p, const char *tsdl_name,
		       bool by_display, bool uns, const char *what, size_t off)
{
	for (uint32_t i = 0; i < p->n; i++) {
		const struct st_field_desc *f = &p->v[i];

		if (strcmp(by_display ? f->name : f->tsdl_name, tsdl_name) != 0)
			continue;
		if ((f->kind != ST_FIELD_UINT && f->kind != ST_FIELD_HEX && f->kind != ST_FIELD_SINT) ||
		    (uns && f->is_signed)) {
			st__tsdl_fail(pl->err, off, "%s field '%s' must be %s integer", what,
				      tsdl_name, uns ? "an unsigned" : "an");
			return -2;
		}
		return (int32_t)i;
	}
	return -1;
}
