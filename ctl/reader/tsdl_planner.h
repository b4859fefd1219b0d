/*
 * The planner (tsdl_planner.c): the state a trace description is planned
 * in from the syntax tree (tsdl_plan.c, tsdl_types.c, tsdl_variant.c,
 * tsdl_enum.c), and its primitives: the type aliases, the clocks, the
 * fields of the scope being planned, the budget of fields and labels.
 */
#ifndef ST_READER_TSDL_PLANNER_H
#define ST_READER_TSDL_PLANNER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ctl/reader/arena.h"
#include "ctl/reader/desc.h"
#include "ctl/reader/errmsg.h"
#include "ctl/reader/tsdl_ast.h"
#include "ctl/reader/tsdl_limits.h"

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

/* Sets the error "out of memory" at off; false. */
bool st__plan_oom(struct st__planner *pl, size_t off);
/* Indexes the aliases; false when one is declared twice. */
bool st__plan_aliases(struct st__planner *pl, const struct st__alias *list);
/* The type n names, through aliases; with `tag`, the first tag met on the
 * way ("variant NAME <tag>" where it is used wins over its declaration's)
 * goes to *tag, which the caller sets to NULL. */
const struct st__tnode *st__plan_resolve(struct st__planner *pl, const struct st__tnode *n,
					 const char **tag);
/* Index of the clock named name, or -1. */
int st__plan_clock_index(struct st__planner *pl, const char *name);
/* Counts n more fields (or labels, options) against ST__TSDL_MAX_TOTAL. */
bool st__plan_budget(struct st__planner *pl, uint64_t n, size_t off);
/* Appends a field named prefix + name to the scope, in the current variant
 * option; NULL on error. */
struct st_field_desc *st__plan_add(struct st__planner *pl, const char *tsdl_prefix,
				   const char *disp_prefix, const char *name, size_t off);
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

#endif
