/*
 * The tracepoints recorded only on request: record's default (no -e)
 * enables every tracepoint of the families wrapped, FAMILY:*, and then
 * disables these, unless --lock-order (or a pattern) asks for them. One
 * is so when it costs the traced program far more than the rest of its
 * family and answers one question the user may not ask:
 *
 *   jvm:monitor_held  the Java monitors a thread owns when it blocks, the
 *                     lock order for report deadlocks. To tell them, the
 *                     agent reads the blocking thread's whole stack at
 *                     each contended enter (jvm/monitors.c), where it
 *                     reads one frame without: 300 to 400 cycles more
 *                     per frame with HotSpot 17's JVMTI, about 9x the
 *                     cost of an enter at 60 frames. Without it, --wrap jvm costs
 *                     what JDK Flight Recorder's monitor events cost
 *                     (bench/run-jvm.sh); with it, more under heavy
 *                     contention in deep stacks.
 */
#include <string.h>

#include "ctl/common/catalog.h"

static const char *const on_request[] = { "jvm:monitor_held" };

int st_catalog_on_request(const char *family, const char **out, int room)
{
	size_t len = strlen(family);
	int n = 0;

	for (size_t i = 0; i < sizeof(on_request) / sizeof(on_request[0]); i++) {
		if (strncmp(on_request[i], family, len) != 0 || on_request[i][len] != ':')
			continue;
		if (n == room)
			return -1;
		out[n++] = on_request[i];
	}
	return n;
}
