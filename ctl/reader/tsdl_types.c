/*
 * TSDL types: each type checked against what the reader decodes, and a
 * scope's structure flattened into a plan (desc.h): nested structures
 * become "outer.inner" fields, a structure's alignment goes to its first
 * field, sequences point at their length field. Enumerations are
 * tsdl_enum.c's; variants tsdl_variant.c's, whose options are planned
 * with plan_field here, handed down.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl/reader/errmsg.h"
#include "ctl/reader/tsdl_enum.h"
#include "ctl/reader/tsdl_limits.h"
#include "ctl/reader/tsdl_planner.h"
#include "ctl/reader/tsdl_types.h"
#include "ctl/reader/tsdl_variant.h"

/* Alignment in bytes of a resolved type; 0 on error. */
static uint64_t type_align(struct st__planner *pl, const struct st__tnode *n, int depth)
{
	uint64_t a = 1;

	if (depth > ST__TSDL_MAX_DEPTH) {
		st__tsdl_fail(pl->err, n->off, "types nested too deep");
		return 0;
	}
	if (n->kind == ST__TN_ENUM) {
		n = st__plan_enum_container(pl, n);
		if (!n)
			return 0;
	}
	if (n->kind == ST__TN_INT || n->kind == ST__TN_FLOAT) {
		uint64_t bits = n->has_align ? n->align : 8;

		return bits >= 8 && bits % 8 == 0 ? bits / 8 : 1;
	}
	/* a variant is aligned as its selected option's first field */
	if (n->kind != ST__TN_STRUCT)
		return 1;
	if (n->struct_align >= 8)
		a = n->struct_align / 8;
	for (const struct st__tfield *f = n->fields; f; f = f->next) {
		const struct st__tnode *t = st__plan_resolve(pl, f->type, NULL);
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

/* The byte order and alignment of a number (`what`: "integers" or
 * "floating-point numbers"): little-endian, aligned on a power of two of
 * whole bytes (align is in bits, 8 when not given); the alignment in
 * bytes, 0 on error. */
static uint64_t number_align(struct st__planner *pl, const struct st__tnode *n, size_t off,
			     const char *what)
{
	uint64_t align = n->has_align ? n->align : 8;

	if (n->big_endian) {
		st__tsdl_fail(pl->err, off, "big-endian %s are not supported", what);
		return 0;
	}
	if (align == 0 || align % 8 != 0 || align > 512 || (align & (align - 1)) != 0) {
		st__tsdl_fail(pl->err, off,
			      "%s not aligned on a byte boundary are not supported (align = %llu)",
			      what, (unsigned long long)align);
		return 0;
	}
	return align / 8;
}

/* Checks an integer type; its alignment in bytes (0 on error), its clock
 * in *clk (-1 when not mapped). */
static uint64_t plan_int(struct st__planner *pl, const struct st__tnode *n, size_t off, int32_t *clk)
{
	uint64_t align = number_align(pl, n, off, "integers");

	*clk = -1;
	if (!align)
		return 0;
	if (n->size == 0 || n->size > 64 || n->size % 8 != 0) {
		st__tsdl_fail(pl->err, off,
			      "%llu-bit integers are not supported (whole bytes, 8 to 64 bits)",
			      (unsigned long long)n->size);
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
	return align;
}

/* Checks a floating-point type: an IEEE 754 binary64 or binary32, whole
 * bytes; its size in bytes (0 on error) and its alignment in *align. */
static uint8_t plan_float(struct st__planner *pl, const struct st__tnode *n, size_t off,
			  uint64_t *align)
{
	uint8_t size = 0;

	if (n->exp_dig == 11 && n->mant_dig == 53)
		size = 8;
	else if (n->exp_dig == 8 && n->mant_dig == 24)
		size = 4;
	if (!size) {
		st__tsdl_fail(pl->err, off,
			      "floating_point with exp_dig = %llu and mant_dig = %llu is not supported "
			      "(11 and 53: double, 8 and 24: float)",
			      (unsigned long long)n->exp_dig, (unsigned long long)n->mant_dig);
		return 0;
	}
	*align = number_align(pl, n, off, "floating-point numbers");
	return *align ? size : 0;
}

static bool flatten(struct st__planner *pl, const struct st__tnode *s, const char *tsdl_prefix,
		    const char *disp_prefix, uint64_t pending, int depth);

/* A sequence's length: an earlier unsigned integer, decoded whenever the
 * sequence is. */
static bool plan_sequence(struct st__planner *pl, const struct st__tfield *tf, const char *tp,
			  struct st_field_desc *f)
{
	int32_t i = st__plan_lookup_path(pl, tp, tf->len_name);

	if (i < 0 || i == (int32_t)pl->n - 1 ||
	    (pl->f[i].kind != ST_FIELD_UINT && pl->f[i].kind != ST_FIELD_HEX) ||
	    pl->f[i].is_signed || !st__plan_reachable(pl, (uint32_t)i)) {
		st__tsdl_fail(pl->err, tf->off,
			      "sequence '%s': its length '%s' is not an earlier unsigned integer field",
			      tf->name, tf->len_name);
		return false;
	}
	f->len_field = i;
	return true;
}

/* Plans field tf of a structure whose fields are named tp... (shown
 * dp...); *pending is the structure's alignment, not yet applied. */
static bool plan_field(struct st__planner *pl, const struct st__tfield *tf, const char *tp,
		       const char *dp, uint64_t *pending, int depth)
{
	const char *tag = NULL;
	const struct st__tnode *t = st__plan_resolve(pl, tf->type, &tag);
	const struct st__tnode *e = NULL;
	const struct st_enumeration *en = NULL;
	struct st_field_desc *f;
	int32_t clk;
	uint64_t align;

	if (!t)
		return false;
	if (t->kind == ST__TN_VARIANT)
		return st__plan_variant(pl, tf, t, tag, tp, dp, pending, depth, plan_field);
	if (tf->dim == ST__DIM_NONE && t->kind == ST__TN_STRUCT) {
		const char *np2, *nd2;

		if (!st__plan_prefixes(pl, tp, dp, tf->name, tf->off, &np2, &nd2))
			return false;
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
		f = st__plan_add(pl, tp, dp, tf->name, tf->off);
		if (!f)
			return false;
		f->kind = ST_FIELD_STRING;
		f->align = (uint8_t)*pending;
		*pending = 1;
		return true;
	}
	if (t->kind == ST__TN_FLOAT) {
		uint8_t size = plan_float(pl, t, tf->off, &align);

		if (!size)
			return false;
		f = st__plan_add(pl, tp, dp, tf->name, tf->off);
		if (!f)
			return false;
		if (*pending > align)
			align = *pending;
		*pending = 1;
		f->kind = ST_FIELD_FLOAT;
		f->size = size;
		f->align = (uint8_t)(align > 255 ? 128 : align);
		return true;
	}
	if (t->kind == ST__TN_ENUM) {
		e = t;
		t = st__plan_enum_container(pl, e);
		if (!t)
			return false;
	}
	align = plan_int(pl, t, tf->off, &clk);
	if (!align)
		return false;
	if (e && !(en = st__plan_enum(pl, e, t)))
		return false;
	if (*pending > align)
		align = *pending;
	*pending = 1;
	f = st__plan_add(pl, tp, dp, tf->name, tf->off);
	if (!f)
		return false;
	f->align = (uint8_t)(align > 255 ? 128 : align);
	f->size = (uint8_t)(t->size / 8);
	f->is_signed = t->is_signed;
	f->enumeration = en;
	if (tf->dim == ST__DIM_NONE) {
		f->kind = t->base == 16 ? ST_FIELD_HEX : t->is_signed ? ST_FIELD_SINT : ST_FIELD_UINT;
		f->clock = clk >= 0;
		pl->clk[pl->n - 1] = clk;
		return true;
	}
	f->kind = ST_FIELD_BYTES;
	f->size = 1;
	f->count = tf->count;
	return tf->dim != ST__DIM_SEQ || plan_sequence(pl, tf, tp, f);
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

/* The most bytes fields first .. last-1 of v can take; UINT64_MAX when
 * that depends on the record (strings, sequences) or on where it starts
 * (alignment), or is too large to care. */
static uint64_t max_bytes(const struct st_field_desc *v, uint32_t first, uint32_t last)
{
	uint64_t sum = 0;

	for (uint32_t i = first; i < last; i++) {
		const struct st_field_desc *f = &v[i];
		uint64_t n = 0;

		if (f->align > 1 || f->kind == ST_FIELD_STRING ||
		    (f->kind == ST_FIELD_BYTES && f->len_field >= 0))
			return UINT64_MAX;
		if (f->kind == ST_FIELD_VARIANT) {
			for (uint32_t k = 0; k < f->variant->nopt; k++) {
				uint64_t m = max_bytes(v, f->variant->opt[k].first, f->variant->opt[k].end);

				n = m > n ? m : n;
			}
			i = f->variant->end - 1;
		} else {
			n = f->kind == ST_FIELD_BYTES ? f->count : f->size;
		}
		if (n > UINT32_MAX || (sum += n) > UINT32_MAX)
			return UINT64_MAX;
	}
	return sum;
}

/* Sets the decoding order (desc.h) of fields first .. last-1, followed
 * by field `after`: the last field of a variant option is followed by
 * what follows the variant. */
static void link_fields(struct st_field_desc *v, uint32_t first, uint32_t last, uint32_t after)
{
	for (uint32_t i = first; i < last;) {
		uint32_t end = v[i].kind == ST_FIELD_VARIANT ? v[i].variant->end : i + 1;

		v[i].next = end < last ? end : after;
		if (v[i].kind == ST_FIELD_VARIANT)
			for (uint32_t k = 0; k < v[i].variant->nopt; k++)
				link_fields(v, v[i].variant->opt[k].first, v[i].variant->opt[k].end,
					    v[i].next);
		i = end;
	}
}

/* The absolute name of a scope, which a variant's tag may be given by. */
static const char *scope_path(const char *what)
{
	static const char *const paths[][2] = {
		{ "packet.header", "trace.packet.header" },
		{ "packet.context", "stream.packet.context" },
		{ "event.header", "stream.event.header" },
		{ "event.context", "stream.event.context" },
		{ "fields", "event.fields" },
	};

	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++)
		if (strcmp(what, paths[i][0]) == 0)
			return paths[i][1];
	return what;
}

bool st__plan_scope(struct st__planner *pl, const struct st__tnode *n, size_t off, const char *what,
		       struct st_plan *out)
{
	struct st_field_desc *v;
	uint64_t align;

	pl->scope_path = scope_path(what);
	pl->no_variants = strcmp(what, "fields") == 0;
	pl->cur_variant = -1;
	pl->cur_option = 0;
	pl->n = 0;
	memset(pl->names, 0, sizeof(pl->names));
	memset(out, 0, sizeof(*out));
	out->fixed = true;
	if (!n)
		return true;
	n = st__plan_resolve(pl, n, NULL);
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
	link_fields(v, 0, pl->n, pl->n);
	out->max_size = max_bytes(v, 0, pl->n);
	for (uint32_t i = 0; i < pl->n; i++)
		out->fixed &= v[i].kind != ST_FIELD_VARIANT;
	out->fixed &= out->max_size != UINT64_MAX;
	out->size = out->fixed ? out->max_size : 0;
	if (pl->n > pl->t->max_fields)
		pl->t->max_fields = pl->n;
	return true;
}

/* Index of the field named tsdl_name in the scope just planned, checked to
 * be an integer (unsigned when `uns`); -1 when absent, -2 on error. A
 * field of a variant option is named "variant.option", so none is one of
 * these, which every record holds. */
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
