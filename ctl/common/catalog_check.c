/*
 * Patterns checked against the families' tracepoints (catalog.h): a
 * typo in a family's tracepoint name is found before anything runs.
 */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "ctl/common/catalog.h"

/* Edit distance between a and b (short names: the catalog's). */
static unsigned distance(const char *a, const char *b)
{
	unsigned row[64], n = (unsigned)strlen(b);

	if (n >= sizeof(row) / sizeof(row[0]))
		return UINT32_MAX;
	for (unsigned j = 0; j <= n; j++)
		row[j] = j;
	for (unsigned i = 1; a[i - 1]; i++) {
		unsigned diag = row[0];

		row[0] = i;
		for (unsigned j = 1; j <= n; j++) {
			unsigned up = row[j], best = diag + (a[i - 1] != b[j - 1]);

			if (up + 1 < best)
				best = up + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			diag = up;
			row[j] = best;
		}
	}
	return row[n];
}

int st_catalog_typo(const char *pattern, char *msg, size_t n)
{
	const char *colon = strchr(pattern, ':'), *best = NULL;
	unsigned best_d = UINT32_MAX;
	size_t plen = colon ? (size_t)(colon - pattern) : 0;
	bool family = false;

	if (!colon || strcspn(pattern, "*?[") < plen)
		return 0;
	for (unsigned k = 0; k < st_catalog_count; k++) {
		const struct st_catalog_entry *e = &st_catalog[k];
		unsigned d;

		if (strlen(e->provider) != plen || strncmp(e->provider, pattern, plen) != 0)
			continue;
		family = true;
		if (st_catalog_match(e, pattern))
			return 0;
		d = distance(colon + 1, e->name);
		if (d < best_d) {
			best_d = d;
			best = e->name;
		}
	}
	if (!family)
		return 0;
	if (best && best_d <= 3)
		snprintf(msg, n,
			 "pattern '%s' matches no %.*s tracepoint (did you mean %.*s:%s? shimtrace "
			 "list-events shows them)",
			 pattern, (int)plen, pattern, (int)plen, pattern, best);
	else
		snprintf(msg, n, "pattern '%s' matches no %.*s tracepoint (shimtrace list-events shows "
			 "them)", pattern, (int)plen, pattern);
	return 1;
}

