/*
 * Internals of the TSDL reader, shared by its stages:
 *
 *   tsdl_lex.c   text -> tokens (comments and whitespace dropped)
 *   tsdl.c       tokens -> a syntax tree of blocks, attributes and types
 *   tsdl_plan.c  tree -> struct st_tsdl: the blocks interpreted
 *   tsdl_types.c aliases resolved (declared in any order), types checked,
 *                each scope flattened into a plan
 *
 * The tree is resolved only once the whole text is read, so blocks and
 * type aliases may come in any order. Every stage bounds its work (nesting
 * depth, alias chains, field counts) so that no input runs away.
 */
#ifndef ST_READER_TSDL_INT_H
#define ST_READER_TSDL_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ctl/reader/arena.h"
#include "ctl/reader/tsdl.h"

#define ST__TSDL_MAX_DEPTH 16	     /* nested types */
#define ST__TSDL_MAX_FIELDS 4096     /* fields of one scope, flattened */
#define ST__TSDL_MAX_TOTAL (1u << 20) /* fields of all scopes */
#define ST__TSDL_MAX_ID (1u << 20)   /* event ids are table indices */

/* The first error wins; later ones are consequences. */
struct st__tsdl_err {
	bool failed;
	size_t off;
	char msg[256];
};

void st__tsdl_fail(struct st__tsdl_err *e, size_t off, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* ---- tokens ---- */

enum st__tok_kind {
	ST__TOK_EOF,
	ST__TOK_IDENT,
	ST__TOK_NUM,
	ST__TOK_STR,
	ST__TOK_PUNCT, /* { } [ ] ( ) ; = : := . , < > + - * ... */
};

struct st__tok {
	enum st__tok_kind kind;
	size_t off;	  /* byte offset in the text */
	const char *text; /* IDENT, PUNCT: in the text, not terminated */
	size_t len;
	uint64_t num;	  /* NUM */
	char *str;	  /* STR: unescaped, in the arena */
};

struct st__lexer {
	const char *src;
	size_t len, pos;
	struct st__tok tok; /* the current token */
	struct st__arena *arena;
	struct st__tsdl_err *err;
};

void st__lex_init(struct st__lexer *lx, const char *src, size_t len, struct st__arena *a,
		  struct st__tsdl_err *err);
/* Moves to the next token; false (error set) when the text does not lex. */
bool st__lex_next(struct st__lexer *lx);
bool st__tok_is(const struct st__tok *t, const char *s);

/* ---- syntax tree ---- */

enum st__tn_kind { ST__TN_INT, ST__TN_STRING, ST__TN_STRUCT, ST__TN_ENUM, ST__TN_VARIANT,
		   ST__TN_REF };

struct st__tnode;

/* One label of an enumeration, as written: "label", "label = v" or
 * "label = lo ... hi" (has_value false for the first; values are -num when
 * the *_neg flag is set). */
struct st__enumerator {
	const char *label;
	size_t off;
	bool has_value, lo_neg, hi_neg;
	uint64_t lo, hi;
	struct st__enumerator *next;
};

/* An enumeration is planned once (tsdl_types.c), however many fields use
 * it through an alias: the node points at this, filled on first use. */
struct st__enum_cache {
	const struct st_enumeration *planned;
};

struct st__tfield {
	const char *name;
	struct st__tnode *type;
	enum { ST__DIM_NONE, ST__DIM_FIXED, ST__DIM_SEQ } dim;
	uint64_t count;	      /* ST__DIM_FIXED */
	const char *len_name; /* ST__DIM_SEQ */
	size_t off;
	struct st__tfield *next;
};

struct st__tnode {
	enum st__tn_kind kind;
	size_t off;
	/* ST__TN_INT (attributes as written; checked when planned) */
	uint64_t size, align, base;
	bool has_size, has_align, is_signed, big_endian, encoded;
	const char *map; /* "clock.NAME.value" */
	/* ST__TN_STRUCT; ST__TN_VARIANT: its options */
	struct st__tfield *fields;
	uint64_t struct_align; /* align(N), 0 when not given */
	/* ST__TN_ENUM: container NULL means the alias "int" */
	struct st__tnode *container;
	struct st__enumerator *enums;
	struct st__enum_cache *cache;
	/* ST__TN_VARIANT, and ST__TN_REF to one ("variant NAME <tag>"): the
	 * tag's path as written, NULL when not given here */
	const char *tag;
	/* ST__TN_REF: an alias name, or "struct NAME", "enum NAME", "variant NAME" */
	const char *ref;
};

enum st__val_kind { ST__VAL_NUM, ST__VAL_STR, ST__VAL_IDENT, ST__VAL_TYPE };

struct st__kv {
	const char *key; /* may be dotted: packet.header */
	size_t off;
	enum st__val_kind kind;
	uint64_t num;
	bool negative; /* ST__VAL_NUM: the value is -num */
	const char *str; /* ST__VAL_STR, ST__VAL_IDENT (may be dotted) */
	struct st__tnode *type; /* ST__VAL_TYPE: key := type */
	struct st__kv *next;
};

enum st__block_kind { ST__BLK_TRACE, ST__BLK_ENV, ST__BLK_CLOCK, ST__BLK_STREAM, ST__BLK_EVENT };

struct st__block {
	enum st__block_kind kind;
	size_t off;
	struct st__kv *kvs;
	struct st__block *next;
};

struct st__alias {
	const char *name;
	struct st__tnode *type;
	size_t off;
	struct st__alias *next;
};

struct st__ast {
	struct st__block *blocks; /* in text order */
	struct st__alias *aliases;
};

/* tsdl.c: parses the whole text; false with err set on a syntax error. */
bool st__tsdl_syntax(const char *text, size_t len, struct st__arena *a, struct st__ast *ast,
		     struct st__tsdl_err *err);


/* ---- planning (tsdl_plan.c, tsdl_types.c) ---- */

#define ST__NAME_HASH 8192 /* > 2 * ST__TSDL_MAX_FIELDS, a power of two */

struct st__planner {
	struct st_tsdl *t;
	struct st__tsdl_err *err;
	struct st__arena *a;
	/* aliases: open addressing, capacity a power of two */
	const struct st__alias **alias;
	size_t alias_cap;
	struct st_clock_class *clocks;
	uint32_t nclocks;
	uint64_t total; /* fields planned so far, all scopes */
	/* the scope being planned */
	const char *scope_path; /* its absolute name, "stream.event.header" */
	bool no_variants;	/* event payloads: the view shows every field */
	int32_t cur_variant;	/* the variant option fields are added to, -1 */
	uint32_t cur_option;
	struct st_field_desc f[ST__TSDL_MAX_FIELDS];
	int32_t clk[ST__TSDL_MAX_FIELDS]; /* clock of each field, -1 */
	uint32_t n;
	uint16_t names[ST__NAME_HASH]; /* index + 1 of fields by tsdl_name */
};

bool st__plan_oom(struct st__planner *pl, size_t off);
/* Indexes the aliases; false when one is declared twice. */
bool st__plan_aliases(struct st__planner *pl, const struct st__alias *list);
const struct st__tnode *st__plan_resolve(struct st__planner *pl, const struct st__tnode *n,
					 const char **tag);
int st__plan_clock_index(struct st__planner *pl, const char *name);
/* Counts n more fields (or labels, options) against ST__TSDL_MAX_TOTAL. */
bool st__plan_budget(struct st__planner *pl, uint64_t n, size_t off);
/* Checks an integer type; its alignment in bytes (0 on error), its clock
 * in *clk (-1 when not mapped). */
uint64_t st__plan_int(struct st__planner *pl, const struct st__tnode *n, size_t off, int32_t *clk);
/* Appends a field named prefix + name to the scope, in the current variant
 * option; NULL on error. */
struct st_field_desc *st__plan_add(struct st__planner *pl, const char *tsdl_prefix,
				   const char *disp_prefix, const char *name, size_t off);
/* Plans field tf of a structure whose fields are named tp... (shown
 * dp...); *pending is the structure's alignment, not yet applied. */
bool st__plan_field(struct st__planner *pl, const struct st__tfield *tf, const char *tp,
		    const char *dp, uint64_t *pending, int depth);
/* "tp" + name + ".", and the same shown, for the fields inside `name`. */
bool st__plan_prefixes(struct st__planner *pl, const char *tp, const char *dp, const char *name,
		       size_t off, const char **np, const char **nd);
/* Index of the field named tsdl_name, or -1. */
int32_t st__plan_lookup(struct st__planner *pl, const char *tsdl_name);
/* Index of the field `path` names from inside the structure whose fields
 * are named tp...: the innermost enclosing structure that has it, else the
 * path taken as absolute ("stream.event.header.id"); -1 when none. */
int32_t st__plan_lookup_path(struct st__planner *pl, const char *tp, const char *path);
/* Whether field i is decoded whenever a field added now is: it is outside
 * any variant, or in an option that holds the current one. */
bool st__plan_reachable(const struct st__planner *pl, uint32_t i);

/* tsdl_variant.c: enumerations and variants. */
/* The integer type of enumeration n; NULL (error set) when not one. */
const struct st__tnode *st__plan_enum_container(struct st__planner *pl, const struct st__tnode *n);
/* The labels of enumeration n, whose container c is checked; planned once. */
const struct st_enumeration *st__plan_enum(struct st__planner *pl, const struct st__tnode *n,
					   const struct st__tnode *c);
/* Plans variant field tf of type t, tagged by `tag` (NULL: none given). */
bool st__plan_variant(struct st__planner *pl, const struct st__tfield *tf,
		      const struct st__tnode *t, const char *tag, const char *tp, const char *dp,
		      uint64_t *pending, int depth);
/* Plans the scope `what` of type n (NULL: empty) into *out; pl->clk then
 * holds the clock of each field until the next scope is planned. */
bool st__plan_scope(struct st__planner *pl, const struct st__tnode *n, size_t off,
		    const char *what, struct st_plan *out);
/* Index of the integer field named `name` in p (its TSDL name, or its shown
 * name with by_display), checked unsigned when `uns`; -1 when absent, -2
 * on error. */
int32_t st__plan_special(struct st__planner *pl, const struct st_plan *p, const char *name,
			 bool by_display, bool uns, const char *what, size_t off);

/* tsdl_plan.c: builds t from the tree; false with err set. */
bool st__tsdl_plan(const struct st__ast *ast, struct st_tsdl *t, struct st__tsdl_err *err);

#endif
