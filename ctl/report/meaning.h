/*
 * What an event class's name means to a report (meaning.c): looked up
 * once per class in a table of names.
 */
#ifndef ST_REPORT_MEANING_H
#define ST_REPORT_MEANING_H

#include <stddef.h>

/* What an event class's name means to a report (an action, a kind). */
struct st_meaning {
	const char *name; /* "provider:name" */
	int what;
};

/* What name means in table (n entries), or dflt when it is not there. */
int st_meaning_of(const char *name, const struct st_meaning *table, size_t n, int dflt);

#endif
