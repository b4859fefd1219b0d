/*
 * Enumerations, planned (tsdl_enum.c).
 */
#ifndef ST_READER_TSDL_ENUM_H
#define ST_READER_TSDL_ENUM_H

#include "ctl/reader/desc.h"
#include "ctl/reader/tsdl_ast.h"
#include "ctl/reader/tsdl_planner.h"

/* The integer type of enumeration n; NULL (error set) when not one. */
const struct st__tnode *st__plan_enum_container(struct st__planner *pl, const struct st__tnode *n);
/* The labels of enumeration n, whose container c is checked; planned once. */
const struct st_enumeration *st__plan_enum(struct st__planner *pl, const struct st__tnode *n,
					   const struct st__tnode *c);

#endif
