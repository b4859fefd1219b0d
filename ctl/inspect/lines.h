/*
 * LINES (lines.c): the DWARF line table of one object handed over by the
 * objects inspector, as sorted rows in a sealed memfd.
 */
#ifndef ST_INSPECT_LINES_H
#define ST_INSPECT_LINES_H

#include "ctl/inspect/proto.h"

/* Answers a LINES request. */
void st_insp_lines(const struct st_insp_lines_req *r);

#endif /* ST_INSPECT_LINES_H */
