/*
 * TSDL parser: tokens to a syntax tree (tsdl_ast.h).
 *
 * Grammar accepted, a subset of CTF 1.8 TSDL:
 *
 *   metadata   := { decl }
 *   decl       := "typealias" type ":=" ident { ident } ";"
 *               | "typedef" type ident ";"
 *               | "struct" ident "{" fields "}" [ align ] ";"
 *               | ( "trace" | "env" | "clock" | "stream" | "event" )
 *                 "{" { attr | "typealias" ... | "typedef" ... } "}" ";"
 *   attr       := key "=" value ";"  |  key ":=" type ";"
 *   key        := ident { "." ident }
 *   value      := [ "-" ] number | string | ident { "." ident }
 *   type       := "integer" "{" { key "=" value ";" } "}"
 *               | "floating_point" "{" { key "=" value ";" } "}"
 *               | "string" [ "{" { key "=" value ";" } "}" ]
 *               | "struct" [ ident ] [ "{" fields "}" ] [ "align" "(" number ")" ]
 *               | "enum" [ ident ] [ ":" type ] [ "{" enumerator { "," enumerator } [ "," ] "}" ]
 *               | "variant" [ ident ] [ "<" key ">" ] [ "{" fields "}" ]
 *               | ident { ident }                        (an alias)
 *   enumerator := ( ident | string ) [ "=" value [ "..." value ] ]
 *   fields     := { type ident [ "[" ( number | key ) "]" ] ";" | typealias | typedef }
 *
 * A named struct, enum or variant with a body declares "struct NAME" (and
 * so on); without a body it refers to one. Semantics (which keys mean
 * what, which types are allowed) are left to tsdl_plan.c.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "ctl/reader/errmsg.h"
#include "ctl/reader/tsdl_ast.h"
#include "ctl/reader/tsdl_lex.h"
#include "ctl/reader/tsdl_limits.h"
#include "ctl/reader/tsdl_syntax.h"

struct parser {
	struct st__lexer lx;
	struct st__arena *a;
	struct st__tsdl_err *err;
	struct st__ast *ast;
	struct st__block **btail;
	int depth;
};

static struct st__tok *tok(struct parser *p)
{
	return &p->lx.tok;
}

static bool advance(struct parser *p)
{
	return st__lex_next(&p->lx);
}

static bool fail(struct parser *p, size_t off, const char *what)
{
	st__tsdl_fail(p->err, off, "%s", what);
	return false;
}

/* "expected X, found Y" at the current token. */
static bool unexpected(struct parser *p, const char *expected)
{
	const struct st__tok *t = tok(p);

	if (t->kind == ST__TOK_EOF)
		st__tsdl_fail(p->err, t->off, "expected %s, found the end of the metadata (truncated?)",
			      expected);
	else
		st__tsdl_fail(p->err, t->off, "expected %s, found '%.*s'", expected,
			      (int)(t->len > 32 ? 32 : t->len), t->text);
	return false;
}

static bool expect(struct parser *p, const char *s)
{
	char what[16];

	if (st__tok_is(tok(p), s))
		return advance(p);
	snprintf(what, sizeof(what), "'%s'", s);
	return unexpected(p, what);
}

static void *alloc(struct parser *p, size_t n)
{
	void *m = st__arena_alloc(p->a, n);

	if (!m)
		fail(p, tok(p)->off, "out of memory");
	return m;
}

/* ident { "." ident }, as one string. */
static const char *dotted(struct parser *p)
{
	size_t start, end;

	if (tok(p)->kind != ST__TOK_IDENT) {
		unexpected(p, "a name");
		return NULL;
	}
	start = tok(p)->off;
	end = start + tok(p)->len;
	if (!advance(p))
		return NULL;
	while (st__tok_is(tok(p), ".")) {
		if (!advance(p))
			return NULL;
		if (tok(p)->kind != ST__TOK_IDENT) {
			unexpected(p, "a name after '.'");
			return NULL;
		}
		end = tok(p)->off + tok(p)->len;
		if (!advance(p))
			return NULL;
	}
	/* Spaces around the dots are allowed; drop them. */
	{
		char *s = alloc(p, end - start + 1), *o = s;

		if (!s)
			return NULL;
		for (size_t i = start; i < end; i++)
			if (p->lx.src[i] != ' ' && p->lx.src[i] != '\t' && p->lx.src[i] != '\n' &&
			    p->lx.src[i] != '\r')
				*o++ = p->lx.src[i];
		*o = '\0';
		return s;
	}
}

/* "key = value ;" after the key, into kv. */
static bool parse_value(struct parser *p, struct st__kv *kv)
{
	struct st__tok *t = tok(p);

	if (st__tok_is(t, "-")) {
		if (!advance(p))
			return false;
		if (t->kind != ST__TOK_NUM)
			return unexpected(p, "a number after '-'");
		kv->negative = t->num != 0;
	}
	if (t->kind == ST__TOK_NUM) {
		kv->kind = ST__VAL_NUM;
		kv->num = t->num;
		return advance(p);
	}
	if (kv->negative)
		return unexpected(p, "a number");
	if (t->kind == ST__TOK_STR) {
		kv->kind = ST__VAL_STR;
		kv->str = t->str;
		return advance(p);
	}
	if (t->kind == ST__TOK_IDENT) {
		kv->kind = ST__VAL_IDENT;
		kv->str = dotted(p);
		return kv->str != NULL;
	}
	return unexpected(p, "a value");
}

/* { key "=" value ";" } "}" : the attributes of integer, floating_point
 * and string. */
static bool parse_attrs(struct parser *p, struct st__kv **out)
{
	struct st__kv **tail = out;

	while (!st__tok_is(tok(p), "}")) {
		struct st__kv *kv = alloc(p, sizeof(*kv));

		if (!kv)
			return false;
		kv->off = tok(p)->off;
		kv->key = dotted(p);
		if (!kv->key || !expect(p, "=") || !parse_value(p, kv) || !expect(p, ";"))
			return false;
		*tail = kv;
		tail = &kv->next;
	}
	return advance(p);
}

static bool kv_bool(struct parser *p, const struct st__kv *kv, bool *out)
{
	if (kv->kind == ST__VAL_NUM && !kv->negative && kv->num <= 1) {
		*out = kv->num == 1;
		return true;
	}
	if (kv->kind == ST__VAL_IDENT && (!strcmp(kv->str, "true") || !strcmp(kv->str, "TRUE"))) {
		*out = true;
		return true;
	}
	if (kv->kind == ST__VAL_IDENT && (!strcmp(kv->str, "false") || !strcmp(kv->str, "FALSE"))) {
		*out = false;
		return true;
	}
	st__tsdl_fail(p->err, kv->off, "%s: expected true or false", kv->key);
	return false;
}

static bool ident_in(const char *s, const char *const *list)
{
	for (; *list; list++)
		if (strcmp(s, *list) == 0)
			return true;
	return false;
}

static const char *const big_endian[] = { "be", "big", "network", NULL };
static const char *const little_endian[] = { "le", "little", "native", NULL };

static bool int_attr(struct parser *p, struct st__tnode *n, const struct st__kv *kv)
{
	static const char *const dec[] = { "decimal", "dec", "d", "i", "u", NULL };
	static const char *const hex[] = { "hexadecimal", "hex", "x", "X", "p", NULL };
	static const char *const oct[] = { "octal", "oct", "o", NULL };
	static const char *const bin[] = { "binary", "b", NULL };
	static const char *const enc[] = { "UTF8", "ASCII", NULL };
	static const char *const noenc[] = { "none", "NONE", NULL };
	const char *k = kv->key;
	bool id = kv->kind == ST__VAL_IDENT, num = kv->kind == ST__VAL_NUM && !kv->negative;

	if (!strcmp(k, "size") && num) {
		n->size = kv->num;
		n->has_size = true;
	} else if (!strcmp(k, "align") && num) {
		n->align = kv->num;
		n->has_align = true;
	} else if (!strcmp(k, "signed")) {
		return kv_bool(p, kv, &n->is_signed);
	} else if (!strcmp(k, "byte_order") && id &&
		   (ident_in(kv->str, big_endian) || ident_in(kv->str, little_endian))) {
		n->big_endian = ident_in(kv->str, big_endian);
	} else if (!strcmp(k, "base") && num) {
		n->base = kv->num;
	} else if (!strcmp(k, "base") && id && ident_in(kv->str, dec)) {
		n->base = 10;
	} else if (!strcmp(k, "base") && id && ident_in(kv->str, hex)) {
		n->base = 16;
	} else if (!strcmp(k, "base") && id && ident_in(kv->str, oct)) {
		n->base = 8;
	} else if (!strcmp(k, "base") && id && ident_in(kv->str, bin)) {
		n->base = 2;
	} else if (!strcmp(k, "encoding") && id && (ident_in(kv->str, enc) || ident_in(kv->str, noenc))) {
		n->encoded = ident_in(kv->str, enc);
	} else if (!strcmp(k, "map") && id) {
		n->map = kv->str;
	} else if (!strcmp(k, "size") || !strcmp(k, "align") || !strcmp(k, "byte_order") ||
		   !strcmp(k, "base") || !strcmp(k, "encoding") || !strcmp(k, "map")) {
		st__tsdl_fail(p->err, kv->off, "bad value for integer attribute '%s'", k);
		return false;
	} else {
		st__tsdl_fail(p->err, kv->off, "unknown integer attribute '%s'", k);
		return false;
	}
	return true;
}

/* exp_dig, mant_dig, byte_order and align: what CTF 1.8 gives a
 * floating_point (which sizes are read is the planner's to say). */
static bool float_attr(struct parser *p, struct st__tnode *n, const struct st__kv *kv)
{
	const char *k = kv->key;
	bool id = kv->kind == ST__VAL_IDENT, num = kv->kind == ST__VAL_NUM && !kv->negative;

	if (!strcmp(k, "exp_dig") && num) {
		n->exp_dig = kv->num;
	} else if (!strcmp(k, "mant_dig") && num) {
		n->mant_dig = kv->num;
	} else if (!strcmp(k, "align") && num) {
		n->align = kv->num;
		n->has_align = true;
	} else if (!strcmp(k, "byte_order") && id &&
		   (ident_in(kv->str, big_endian) || ident_in(kv->str, little_endian))) {
		n->big_endian = ident_in(kv->str, big_endian);
	} else if (!strcmp(k, "exp_dig") || !strcmp(k, "mant_dig") || !strcmp(k, "align") ||
		   !strcmp(k, "byte_order")) {
		st__tsdl_fail(p->err, kv->off, "bad value for floating_point attribute '%s'", k);
		return false;
	} else {
		st__tsdl_fail(p->err, kv->off, "unknown floating_point attribute '%s'", k);
		return false;
	}
	return true;
}

static bool parse_type(struct parser *p, struct st__tnode **out);
static bool parse_alias_decl(struct parser *p);

/* ident { ident }: the words of an alias name, joined by one space.
 * With `decl`, the last word is a declarator and returned in *last. */
static bool ident_words(struct parser *p, bool decl, const char **words, const char **last,
			size_t *last_off)
{
	char buf[256];
	size_t n = 0, plen = 0, poff = 0;
	const char *prev = NULL;

	while (tok(p)->kind == ST__TOK_IDENT) {
		if (prev) {
			if (n + plen + 2 > sizeof(buf))
				return fail(p, poff, "type name too long");
			if (n)
				buf[n++] = ' ';
			memcpy(buf + n, prev, plen);
			n += plen;
		}
		prev = tok(p)->text;
		plen = tok(p)->len;
		poff = tok(p)->off;
		if (!advance(p))
			return false;
	}
	if (!decl && prev) {
		if (n + plen + 2 > sizeof(buf))
			return fail(p, poff, "type name too long");
		if (n)
			buf[n++] = ' ';
		memcpy(buf + n, prev, plen);
		n += plen;
		prev = NULL;
	}
	if (n == 0)
		return unexpected(p, decl ? "a type and a field name" : "a type name");
	*words = st__arena_strndup(p->a, buf, n);
	if (decl) {
		*last = st__arena_strndup(p->a, prev, plen);
		*last_off = poff;
	}
	if (!*words || (decl && !*last))
		return fail(p, poff, "out of memory");
	return true;
}

static bool add_alias(struct parser *p, const char *name, struct st__tnode *type, size_t off)
{
	struct st__alias *al = alloc(p, sizeof(*al));

	if (!al)
		return false;
	al->name = name;
	al->type = type;
	al->off = off;
	al->next = p->ast->aliases;
	p->ast->aliases = al;
	return true;
}

/* The fields of a struct, after "{", through "}". */
static bool parse_fields(struct parser *p, struct st__tnode *s)
{
	struct st__tfield **tail = &s->fields;

	while (!st__tok_is(tok(p), "}")) {
		struct st__tfield *f;
		struct st__tok *t = tok(p);

		if (st__tok_is(t, "typealias") || st__tok_is(t, "typedef")) {
			if (!parse_alias_decl(p))
				return false;
			continue;
		}
		f = alloc(p, sizeof(*f));
		if (!f)
			return false;
		f->off = t->off;
		if (t->kind == ST__TOK_IDENT && !st__tok_is(t, "integer") && !st__tok_is(t, "string") &&
		    !st__tok_is(t, "struct") && !st__tok_is(t, "floating_point") &&
		    !st__tok_is(t, "enum") && !st__tok_is(t, "variant")) {
			const char *words;

			f->type = alloc(p, sizeof(*f->type));
			if (!f->type)
				return false;
			f->type->kind = ST__TN_REF;
			f->type->off = t->off;
			if (!ident_words(p, true, &words, &f->name, &f->off))
				return false;
			f->type->ref = words;
		} else {
			if (!parse_type(p, &f->type))
				return false;
			if (tok(p)->kind != ST__TOK_IDENT)
				return unexpected(p, "a field name");
			f->off = tok(p)->off;
			f->name = st__arena_strndup(p->a, tok(p)->text, tok(p)->len);
			if (!f->name)
				return fail(p, f->off, "out of memory");
			if (!advance(p))
				return false;
		}
		if (st__tok_is(tok(p), "[")) {
			if (!advance(p))
				return false;
			if (tok(p)->kind == ST__TOK_NUM) {
				f->dim = ST__DIM_FIXED;
				f->count = tok(p)->num;
				if (!advance(p))
					return false;
			} else if (tok(p)->kind == ST__TOK_IDENT) {
				f->dim = ST__DIM_SEQ;
				f->len_name = dotted(p);
				if (!f->len_name)
					return false;
			} else {
				return unexpected(p, "an array length");
			}
			if (!expect(p, "]"))
				return false;
			if (st__tok_is(tok(p), "["))
				return fail(p, tok(p)->off, "multi-dimensional arrays are not supported");
		}
		if (!expect(p, ";"))
			return false;
		*tail = f;
		tail = &f->next;
	}
	return advance(p);
}

/* After "struct", "enum" or "variant": the optional name, as the alias
 * "KIND NAME" in *name (NULL when none). */
static bool type_name(struct parser *p, const char *kind, const char **name)
{
	char buf[300];

	*name = NULL;
	if (tok(p)->kind != ST__TOK_IDENT || st__tok_is(tok(p), "align"))
		return true;
	snprintf(buf, sizeof(buf), "%s %.*s", kind, (int)(tok(p)->len > 256 ? 256 : tok(p)->len),
		 tok(p)->text);
	*name = st__arena_strndup(p->a, buf, strlen(buf));
	if (!*name)
		return fail(p, tok(p)->off, "out of memory");
	return advance(p);
}

/* A named type without a body: a reference to the one of that name. */
static bool type_ref(struct parser *p, struct st__tnode *n, const char *name, const char *kind)
{
	char what[32];

	if (!name) {
		snprintf(what, sizeof(what), "'{' after %s", kind);
		return unexpected(p, what);
	}
	n->kind = ST__TN_REF;
	n->ref = name;
	return true;
}

static bool parse_struct(struct parser *p, struct st__tnode *n)
{
	const char *name;
	size_t off = tok(p)->off;

	n->kind = ST__TN_STRUCT;
	if (!advance(p) || !type_name(p, "struct", &name))
		return false;
	if (!st__tok_is(tok(p), "{"))
		return type_ref(p, n, name, "struct");
	if (!advance(p) || !parse_fields(p, n))
		return false;
	if (st__tok_is(tok(p), "align")) {
		if (!advance(p) || !expect(p, "("))
			return false;
		if (tok(p)->kind != ST__TOK_NUM)
			return unexpected(p, "an alignment");
		n->struct_align = tok(p)->num;
		if (n->struct_align == 0)
			return fail(p, tok(p)->off, "alignment 0");
		if (!advance(p) || !expect(p, ")"))
			return false;
	}
	return !name || add_alias(p, name, n, off);
}

/* An enumerator's value: [ "-" ] number. */
static bool parse_enum_value(struct parser *p, uint64_t *v, bool *neg)
{
	*neg = false;
	if (st__tok_is(tok(p), "-")) {
		if (!advance(p))
			return false;
		*neg = true;
	}
	if (tok(p)->kind != ST__TOK_NUM)
		return unexpected(p, "an enumeration value");
	*v = tok(p)->num;
	*neg = *neg && *v != 0;
	if (*neg && *v > (uint64_t)INT64_MAX + 1)
		return fail(p, tok(p)->off, "enumeration value too small");
	return advance(p);
}

/* The enumerators, after "{", through "}". */
static bool parse_enumerators(struct parser *p, struct st__tnode *n)
{
	struct st__enumerator **tail = &n->enums;

	while (!st__tok_is(tok(p), "}")) {
		struct st__enumerator *e = alloc(p, sizeof(*e));

		if (!e)
			return false;
		e->off = tok(p)->off;
		if (tok(p)->kind == ST__TOK_IDENT)
			e->label = st__arena_strndup(p->a, tok(p)->text, tok(p)->len);
		else if (tok(p)->kind == ST__TOK_STR)
			e->label = tok(p)->str;
		else
			return unexpected(p, "an enumeration label");
		if (!e->label)
			return fail(p, e->off, "out of memory");
		if (!advance(p))
			return false;
		if (st__tok_is(tok(p), "=")) {
			e->has_value = true;
			if (!advance(p) || !parse_enum_value(p, &e->lo, &e->lo_neg))
				return false;
			e->hi = e->lo;
			e->hi_neg = e->lo_neg;
			if (st__tok_is(tok(p), "...") &&
			    (!advance(p) || !parse_enum_value(p, &e->hi, &e->hi_neg)))
				return false;
		}
		*tail = e;
		tail = &e->next;
		if (st__tok_is(tok(p), ",")) {
			if (!advance(p))
				return false;
		} else if (!st__tok_is(tok(p), "}")) {
			return unexpected(p, "',' or '}' after an enumerator");
		}
	}
	if (!n->enums)
		return fail(p, tok(p)->off, "enumeration without labels");
	return advance(p);
}

static bool parse_enum(struct parser *p, struct st__tnode *n)
{
	const char *name;
	size_t off = tok(p)->off;

	n->kind = ST__TN_ENUM;
	if (!advance(p) || !type_name(p, "enum", &name))
		return false;
	if (st__tok_is(tok(p), ":") && (!advance(p) || !parse_type(p, &n->container)))
		return false;
	if (!st__tok_is(tok(p), "{")) {
		if (n->container)
			return unexpected(p, "'{' after the enumeration's type");
		return type_ref(p, n, name, "enum");
	}
	n->cache = alloc(p, sizeof(*n->cache));
	if (!n->cache || !advance(p) || !parse_enumerators(p, n))
		return false;
	return !name || add_alias(p, name, n, off);
}

static bool parse_variant(struct parser *p, struct st__tnode *n)
{
	const char *name;
	size_t off = tok(p)->off;

	n->kind = ST__TN_VARIANT;
	if (!advance(p) || !type_name(p, "variant", &name))
		return false;
	if (st__tok_is(tok(p), "<")) {
		if (!advance(p))
			return false;
		n->tag = dotted(p);
		if (!n->tag || !expect(p, ">"))
			return false;
	}
	if (!st__tok_is(tok(p), "{"))
		return type_ref(p, n, name, "variant");
	if (!advance(p) || !parse_fields(p, n))
		return false;
	if (!n->fields)
		return fail(p, off, "variant without options");
	return !name || add_alias(p, name, n, off);
}

/* A type specifier (not the field name after it). */
static bool parse_type(struct parser *p, struct st__tnode **out)
{
	struct st__tok *t = tok(p);
	struct st__tnode *n;
	bool ok;

	if (++p->depth > ST__TSDL_MAX_DEPTH)
		return fail(p, t->off, "types nested too deep");
	n = alloc(p, sizeof(*n));
	if (!n)
		return false;
	n->off = t->off;
	*out = n;
	if (st__tok_is(t, "integer")) {
		struct st__kv *kv = NULL;

		n->kind = ST__TN_INT;
		n->base = 10;
		ok = advance(p) && expect(p, "{") && parse_attrs(p, &kv);
		for (; ok && kv; kv = kv->next)
			ok = int_attr(p, n, kv);
		if (ok && !n->has_size)
			ok = fail(p, n->off, "integer without a size");
	} else if (st__tok_is(t, "string")) {
		struct st__kv *kv = NULL;

		n->kind = ST__TN_STRING;
		ok = advance(p);
		if (ok && st__tok_is(tok(p), "{"))
			ok = advance(p) && parse_attrs(p, &kv);
		for (; ok && kv; kv = kv->next)
			if (strcmp(kv->key, "encoding") != 0)
				ok = fail(p, kv->off, "unknown string attribute");
	} else if (st__tok_is(t, "struct")) {
		ok = parse_struct(p, n);
	} else if (st__tok_is(t, "floating_point")) {
		struct st__kv *kv = NULL;

		n->kind = ST__TN_FLOAT;
		ok = advance(p) && expect(p, "{") && parse_attrs(p, &kv);
		for (; ok && kv; kv = kv->next)
			ok = float_attr(p, n, kv);
		if (ok && (!n->exp_dig || !n->mant_dig))
			ok = fail(p, n->off, "floating_point without exp_dig and mant_dig");
	} else if (st__tok_is(t, "enum")) {
		ok = parse_enum(p, n);
	} else if (st__tok_is(t, "variant")) {
		ok = parse_variant(p, n);
	} else if (t->kind == ST__TOK_IDENT) {
		n->kind = ST__TN_REF;
		ok = ident_words(p, false, &n->ref, NULL, NULL);
	} else {
		ok = unexpected(p, "a type");
	}
	p->depth--;
	return ok;
}

/* "typealias" type ":=" words ";"  or  "typedef" type name ";" */
static bool parse_alias_decl(struct parser *p)
{
	bool is_typedef = st__tok_is(tok(p), "typedef");
	struct st__tnode *type;
	const char *name, *last;
	size_t off;

	if (!advance(p) || !parse_type(p, &type))
		return false;
	if (!is_typedef && !expect(p, ":="))
		return false;
	off = tok(p)->off;
	if (tok(p)->kind != ST__TOK_IDENT)
		return unexpected(p, "the new type name");
	if (!ident_words(p, false, &name, &last, &off))
		return false;
	if (st__tok_is(tok(p), "["))
		return fail(p, tok(p)->off, "array type aliases are not supported");
	return expect(p, ";") && add_alias(p, name, type, off);
}

static bool parse_block(struct parser *p, enum st__block_kind kind)
{
	struct st__block *b = alloc(p, sizeof(*b));
	struct st__kv **tail;

	if (!b)
		return false;
	b->kind = kind;
	b->off = tok(p)->off;
	tail = &b->kvs;
	if (!advance(p) || !expect(p, "{"))
		return false;
	while (!st__tok_is(tok(p), "}")) {
		struct st__kv *kv;

		if (st__tok_is(tok(p), "typealias") || st__tok_is(tok(p), "typedef")) {
			if (!parse_alias_decl(p))
				return false;
			continue;
		}
		kv = alloc(p, sizeof(*kv));
		if (!kv)
			return false;
		kv->off = tok(p)->off;
		kv->key = dotted(p);
		if (!kv->key)
			return false;
		if (st__tok_is(tok(p), ":=")) {
			kv->kind = ST__VAL_TYPE;
			if (!advance(p) || !parse_type(p, &kv->type))
				return false;
		} else if (!expect(p, "=") || !parse_value(p, kv)) {
			return false;
		}
		if (!expect(p, ";"))
			return false;
		*tail = kv;
		tail = &kv->next;
	}
	if (!advance(p) || !expect(p, ";"))
		return false;
	*p->btail = b;
	p->btail = &b->next;
	return true;
}

static bool parse_decl(struct parser *p)
{
	static const struct {
		const char *name;
		enum st__block_kind kind;
	} blocks[] = {
		{ "trace", ST__BLK_TRACE },   { "env", ST__BLK_ENV },	{ "clock", ST__BLK_CLOCK },
		{ "stream", ST__BLK_STREAM }, { "event", ST__BLK_EVENT },
	};
	struct st__tok *t = tok(p);

	for (size_t i = 0; i < sizeof(blocks) / sizeof(blocks[0]); i++)
		if (st__tok_is(t, blocks[i].name))
			return parse_block(p, blocks[i].kind);
	if (st__tok_is(t, "typealias") || st__tok_is(t, "typedef"))
		return parse_alias_decl(p);
	if (st__tok_is(t, "struct") || st__tok_is(t, "floating_point") || st__tok_is(t, "enum") ||
	    st__tok_is(t, "variant")) {
		struct st__tnode *n;

		return parse_type(p, &n) && expect(p, ";");
	}
	if (t->kind == ST__TOK_IDENT) {
		st__tsdl_fail(p->err, t->off, "unknown block '%.*s'", (int)(t->len > 32 ? 32 : t->len),
			      t->text);
		return false;
	}
	return unexpected(p, "a declaration");
}

bool st__tsdl_syntax(const char *text, size_t len, struct st__arena *a, struct st__ast *ast,
		     struct st__tsdl_err *err)
{
	struct parser p = { .a = a, .err = err, .ast = ast };

	memset(ast, 0, sizeof(*ast));
	p.btail = &ast->blocks;
	st__lex_init(&p.lx, text, len, a, err);
	if (!advance(&p))
		return false;
	while (tok(&p)->kind != ST__TOK_EOF)
		if (!parse_decl(&p))
			return false;
	return !err->failed;
}
