/*
 * What an event class's name means to a report (meaning.c): looked up
 * once per class in a table of names. The tables of the wrapper families'
 * events are generated from the specs' means= (wrappers/meanings-gen.h:
 * ST_FAMILY_MEANINGS(M) rows M(NAME, WHAT, KIND, FIELD), which a report
 * turns into entries with its own names for WHAT and KIND).
 */
#ifndef ST_REPORT_MEANING_H
#define ST_REPORT_MEANING_H

#include <stddef.h>

/* What an event class's name means to a report. */
struct st_meaning {
	const char *name;  /* "provider:name" */
	int what;	   /* an action */
	int kind;	   /* what it acts on (a kind of lock...), 0 when none */
	const char *field; /* the field naming the object acted on, or NULL */
};

/* The entry of name in table (n entries), or NULL. */
const struct st_meaning *st_meaning_find(const char *name, const struct st_meaning *table,
					 size_t n);
/* What name means in table (n entries), or dflt when it is not there. */
int st_meaning_of(const char *name, const struct st_meaning *table, size_t n, int dflt);

#endif
