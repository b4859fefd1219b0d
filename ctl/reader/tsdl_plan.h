/*
 * From the TSDL syntax tree to a trace description (tsdl_plan.c).
 */
#ifndef ST_READER_TSDL_PLAN_H
#define ST_READER_TSDL_PLAN_H

#include <stdbool.h>

#include "ctl/reader/desc.h"
#include "ctl/reader/errmsg.h"
#include "ctl/reader/tsdl_ast.h"

/* Builds t from the tree; false with err set. */
bool st__tsdl_plan(const struct st__ast *ast, struct st_tsdl *t, struct st__tsdl_err *err);

#endif
