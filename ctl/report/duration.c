/*
 * Durations for people (see duration.h).
 */
#include <inttypes.h>
#include <stdio.h>

#include "ctl/report/duration.h"

const char *st_fmt_ns(uint64_t ns, char *buf, size_t n)
{
	if (ns == 0)
		snprintf(buf, n, "0");
	else if (ns < 1000)
		snprintf(buf, n, "%" PRIu64 "ns", ns);
	else if (ns < 1000000)
		snprintf(buf, n, "%.3gus", (double)ns / 1e3);
	else if (ns < 1000000000)
		snprintf(buf, n, "%.3gms", (double)ns / 1e6);
	else if (ns < 1000000000000ull)
		snprintf(buf, n, "%.3gs", (double)ns / 1e9);
	else
		snprintf(buf, n, "%.0fs", (double)ns / 1e9);
	return buf;
}
