/*
 * The TSDL syntax tree: what tsdl_syntax.c builds from the text and the
 * planner (tsdl_plan.c and the files it uses) reads. Everything lives in
 * the parse's arena.
 */
#ifndef ST_READER_TSDL_AST_H
#define ST_READER_TSDL_AST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ctl/reader/desc.h"

enum st__tn_kind { ST__TN_INT, ST__TN_STRING, ST__TN_STRUCT, ST__TN_ENUM, ST__TN_VARIANT,
		   ST__TN_REF, ST__TN_FLOAT };

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

/* An enumeration is planned once (tsdl_enum.c), however many fields use
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
	/* ST__TN_INT (attributes as written; checked when planned); of these
	 * ST__TN_FLOAT has align and big_endian */
	uint64_t size, align, base;
	bool has_size, has_align, is_signed, big_endian, encoded;
	/* ST__TN_FLOAT: the exponent's bits, and the mantissa's with its
	 * implicit leading bit (as written; checked when planned) */
	uint64_t exp_dig, mant_dig;
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

#endif
