/*
 * The libraries an attach loads into a process, in order (attachlibs.c):
 * what record --pid and the daemon's sessions that attach both build.
 */
#ifndef ST_COMMON_ATTACHLIBS_H
#define ST_COMMON_ATTACHLIBS_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#define ST_ATTACH_LIBS_MAX 18 /* the two of the core, and the families */

struct st_attach_libs {
	char path[ST_ATTACH_LIBS_MAX][PATH_MAX];
	const char *p[ST_ATTACH_LIBS_MAX];
	uint32_t n;
};

/*
 * libshimtrace-attach.so and libshimtrace.so in core_dir, then
 * libshimtrace-FAMILY.so in wrappers_dir for each of the n families: each
 * must be readable. 0, or -1 with the one that is not and why in why.
 * (The preload of a command is the same list but its first.)
 */
int st_attach_libs(const char *core_dir, const char *wrappers_dir, const char *const *families,
		   uint32_t n, struct st_attach_libs *out, char *why, size_t whylen);

/*
 * The JVM family: not a preload library but a JVMTI agent,
 * libshimtrace-jvm.so, which an attach loads into a JVM through its attach
 * mechanism once the rest is loaded (ctl/inspect/jvmattach.c).
 */
#define ST_JVM_FAMILY "jvm"

/* The agent in dir, in out (PATH_MAX bytes), which must be readable: 0,
 * or -1 with why. */
int st_jvm_agent(const char *dir, char *out, char *why, size_t whylen);

#endif /* ST_COMMON_ATTACHLIBS_H */
