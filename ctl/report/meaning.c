/*
 * What an event class's name means to a report (see meaning.h).
 */
#include <string.h>

#include "ctl/report/meaning.h"

int st_meaning_of(const char *name, const struct st_meaning *table, size_t n, int dflt)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(name, table[i].name) == 0)
			return table[i].what;
	return dflt;
}
