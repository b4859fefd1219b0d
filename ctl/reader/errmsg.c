/*
 * The first error of a metadata parse, and the damage a stream's reading
 * met (see errmsg.h).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "ctl/reader/errmsg.h"
#include "ctl/reader/reader_state.h"

void st__tsdl_fail(struct st__tsdl_err *e, size_t off, const char *fmt, ...)
{
	va_list ap;

	if (e->failed)
		return;
	e->failed = true;
	e->off = off;
	va_start(ap, fmt);
	vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
	va_end(ap);
}

void st__reader_damage(struct st_reader *r, const char *skipped)
{
	if (r->ndamage < ST__DAMAGE_KEPT) {
		if (!r->damage)
			r->damage = calloc(ST__DAMAGE_KEPT, sizeof(*r->damage));
		if (r->damage)
			snprintf(r->damage[r->ndamage], sizeof(r->damage[0]), "%s: %s", r->err,
				 skipped);
	}
	r->ndamage++;
	r->err[0] = '\0';
	r->error = 0;
}
