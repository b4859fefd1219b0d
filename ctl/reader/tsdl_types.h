/*
 * A scope's structure, flattened into a plan (tsdl_types.c).
 */
#ifndef ST_READER_TSDL_TYPES_H
#define ST_READER_TSDL_TYPES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ctl/reader/desc.h"
#include "ctl/reader/tsdl_ast.h"
#include "ctl/reader/tsdl_planner.h"

/* Plans the scope `what` of type n (NULL: empty) into *out; pl->clk then
 * holds the clock of each field until the next scope is planned. */
bool st__plan_scope(struct st__planner *pl, const struct st__tnode *n, size_t off,
		    const char *what, struct st_plan *out);
/* Index of the integer field named `name` in p (its TSDL name, or its shown
 * name with by_display), checked unsigned when `uns`; -1 when absent, -2
 * on error. */
int32_t st__plan_special(struct st__planner *pl, const struct st_plan *p, const char *name,
			 bool by_display, bool uns, const char *what, size_t off);

#endif
