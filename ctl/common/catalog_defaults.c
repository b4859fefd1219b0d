/*
 * The tracepoints record selects when no -e is given: every tracepoint of
 * the families wrapped, but for those recorded only on request, which a
 * pattern must name (jvm:monitor_held, or a glob that matches it:
 * jvm:*). One is so when it costs the traced program far more than the
 * rest of its family and answers one question the user may not ask:
 *
 *   jvm:monitor_held  the Java monitors a thread owns when it blocks, the
 *                     lock order for report deadlocks. To tell them, the
 *                     agent reads the blocking thread's whole stack at
 *                     each contended enter (jvm/monitors.c), where it
 *                     reads one frame without: about 400 cycles more per
 *                     frame with HotSpot 17's JVMTI, 8x the cost of an
 *                     enter at 60 frames. Without it, --wrap jvm costs
 *                     what JDK Flight Recorder's monitor events cost
 *                     (bench/run-jvm.sh); with it, more under heavy
 *                     contention in deep stacks.
 */
#include <stdio.h>
#include <string.h>

#include "ctl/common/catalog.h"

static const char *const on_request[] = { "jvm:monitor_held" };

bool st_catalog_on_request(const struct st_catalog_entry *e)
{
	char full[160];

	snprintf(full, sizeof(full), "%s:%s", e->provider, e->name);
	for (size_t i = 0; i < sizeof(on_request) / sizeof(on_request[0]); i++)
		if (strcmp(full, on_request[i]) == 0)
			return true;
	return false;
}

int st_catalog_defaults(const char *family, char (*out)[ST_CATALOG_PATTERN_SIZE], int room)
{
	bool some = false;
	int n = 0;

	for (unsigned k = 0; k < st_catalog_count; k++)
		some |= strcmp(st_catalog[k].provider, family) == 0 &&
			st_catalog_on_request(&st_catalog[k]);
	if (!some) {
		if (room < 1)
			return -1;
		snprintf(out[0], ST_CATALOG_PATTERN_SIZE, "%s:*", family);
		return 1;
	}
	for (unsigned k = 0; k < st_catalog_count; k++) {
		const struct st_catalog_entry *e = &st_catalog[k];

		if (strcmp(e->provider, family) != 0 || st_catalog_on_request(e))
			continue;
		if (n == room)
			return -1;
		snprintf(out[n++], ST_CATALOG_PATTERN_SIZE, "%s:%s", e->provider, e->name);
	}
	return n;
}
