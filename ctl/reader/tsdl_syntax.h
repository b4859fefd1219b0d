/*
 * The TSDL parser (tsdl_syntax.c): metadata text to a syntax tree.
 */
#ifndef ST_READER_TSDL_SYNTAX_H
#define ST_READER_TSDL_SYNTAX_H

#include <stdbool.h>
#include <stddef.h>

#include "ctl/reader/arena.h"
#include "ctl/reader/errmsg.h"
#include "ctl/reader/tsdl_ast.h"

/* Parses the whole text into *ast (allocated in a); false with err set on
 * a syntax error. */
bool st__tsdl_syntax(const char *text, size_t len, struct st__arena *a, struct st__ast *ast,
		     struct st__tsdl_err *err);

#endif
