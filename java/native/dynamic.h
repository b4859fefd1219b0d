/*
 * Tracepoints defined at run time: what ST_PROVIDER_DEFINE builds into an
 * object, built in memory for a program that learns its tracepoints while
 * it runs (the Java tracepoints, java/org/shimtrace/Tracepoint.java).
 */
#ifndef ST_JAVA_DYNAMIC_H
#define ST_JAVA_DYNAMIC_H

#include <stdint.h>

#include <shimtrace/tracepoint.h>

/*
 * Defines tracepoint provider:name with nfields fields (names[i] of type
 * types[i], enum st_type), registers it and returns its descriptor, which
 * lives as long as the process; NULL when it cannot be made (a provider
 * full, no memory), and it stays off. Names are checked by the caller.
 * Callers serialise: the provider table has no lock of its own.
 */
const struct st_tracepoint *st_dyn_define(const char *provider, const char *name, uint32_t nfields,
					  const char *const *names, const uint32_t *types);

#endif
