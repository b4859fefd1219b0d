/*
 * Variants, planned (tsdl_variant.c).
 */
#ifndef ST_READER_TSDL_VARIANT_H
#define ST_READER_TSDL_VARIANT_H

#include <stdbool.h>
#include <stdint.h>

#include "ctl/reader/tsdl_ast.h"
#include "ctl/reader/tsdl_planner.h"

/* Plans field tf of a structure whose fields are named tp... (shown
 * dp...); *pending is the structure's alignment, not yet applied. A
 * variant's options are planned with the planner of structures above
 * (tsdl_types.c), which plans variants with this. */
typedef bool (*st__plan_field_fn)(struct st__planner *pl, const struct st__tfield *tf,
				  const char *tp, const char *dp, uint64_t *pending, int depth);

/* Plans variant field tf of type t, tagged by `tag` (NULL: none given),
 * each of its options with plan_field. */
bool st__plan_variant(struct st__planner *pl, const struct st__tfield *tf,
		      const struct st__tnode *t, const char *tag, const char *tp, const char *dp,
		      uint64_t *pending, int depth, st__plan_field_fn plan_field);

#endif
