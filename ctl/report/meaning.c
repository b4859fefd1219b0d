/*
 * What an event class's name means to a report (see meaning.h).
 */
#include <string.h>

#include "ctl/report/meaning.h"

const struct st_meaning *st_meaning_find(const char *name, const struct st_meaning *table,
					 size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(name, table[i].name) == 0)
			return &table[i];
	return NULL;
}

int st_meaning_of(const char *name, const struct st_meaning *table, size_t n, int dflt)
{
	const struct st_meaning *m = st_meaning_find(name, table, n);

	return m ? m->what : dflt;
}
