/*
 * A call site as a report prints it (site.c), symbolised (symbols.h).
 */
#ifndef ST_REPORT_SITE_H
#define ST_REPORT_SITE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "ctl/report/symbols.h"

/* A call site of process pid as text ("function (file:line)"...), or as a
 * JSON object {text, function, file, line, object, offset, ip}, and for a
 * Java site java: {method, bci}. */
void st_site_text(struct st_syms *syms, int32_t pid, uint64_t ip, char *buf, size_t n);
void st_site_json(struct st_syms *syms, int32_t pid, uint64_t ip, FILE *out);

#endif
