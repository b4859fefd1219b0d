/*
 * The first error of a metadata parse (see errmsg.h).
 */
#include <stdarg.h>
#include <stdio.h>

#include "ctl/reader/errmsg.h"

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
