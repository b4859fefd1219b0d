/*
 * The TSDL metadata reader (tsdl.c): metadata text to a trace description
 * (desc.h), in stages:
 *
 *   tsdl_lex.c      text -> tokens (comments and whitespace dropped)
 *   tsdl_syntax.c   tokens -> a syntax tree (tsdl_ast.h) of blocks,
 *                   attributes and types
 *   tsdl_plan.c     tree -> struct st_tsdl: the blocks interpreted
 *   tsdl_types.c    each scope's structure flattened into a plan, its
 *                   variants by tsdl_variant.c, its enumerations by
 *                   tsdl_enum.c, on the planner of tsdl_planner.c
 *                   (aliases resolved, fields added and looked up)
 *
 * The tree is resolved only once the whole text is read, so blocks and
 * type aliases may come in any order. Every stage bounds its work
 * (tsdl_limits.h) so that no input runs away.
 */
#ifndef ST_READER_TSDL_H
#define ST_READER_TSDL_H

#include <stddef.h>

#include "ctl/reader/desc.h"

/*
 * Parses `len` bytes of metadata text into t. Returns 0, or a negative
 * errno with a one-line description in err: "line L: what (at offset N)".
 * On error t holds nothing to free.
 */
int st_tsdl_parse(struct st_tsdl *t, const char *text, size_t len, char *err, size_t errlen);
void st_tsdl_free(struct st_tsdl *t);

#endif
