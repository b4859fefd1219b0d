/*
 * The libraries an attach loads, in order: libshimtrace-attach.so (which
 * the core's constructor reads, so it comes first), libshimtrace.so, then
 * each family wrapped. record preloads the same list, but the first, into
 * a command.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "ctl/common/attachlibs.h"

/* Whether path is readable: 0, or -1 with why. */
static int readable(const char *path, char *why, size_t whylen)
{
	if (access(path, R_OK) == 0)
		return 0;
	snprintf(why, whylen, "cannot find %s: %s", path, strerror(errno));
	return -1;
}

int st_attach_libs(const char *core_dir, const char *wrappers_dir, const char *const *families,
		   uint32_t n, struct st_attach_libs *out, char *why, size_t whylen)
{
	out->n = 0;
	if (n + 2 > ST_ATTACH_LIBS_MAX) {
		snprintf(why, whylen, "too many families (%u)", n);
		return -1;
	}
	snprintf(out->path[out->n++], PATH_MAX, "%s/libshimtrace-attach.so", core_dir);
	snprintf(out->path[out->n++], PATH_MAX, "%s/libshimtrace.so", core_dir);
	for (uint32_t i = 0; i < n; i++)
		snprintf(out->path[out->n++], PATH_MAX, "%s/libshimtrace-%s.so", wrappers_dir,
			 families[i]);
	for (uint32_t i = 0; i < out->n; i++) {
		if (readable(out->path[i], why, whylen) < 0)
			return -1;
		out->p[i] = out->path[i];
	}
	return 0;
}

int st_jvm_agent(const char *dir, char *out, char *why, size_t whylen)
{
	snprintf(out, PATH_MAX, "%s/libshimtrace-" ST_JVM_FAMILY ".so", dir);
	return readable(out, why, whylen);
}
