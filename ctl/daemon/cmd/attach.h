/*
 * Attach and detach (attach.c): a running process started without the
 * preload given the tracer by an inspector, and its calls given back.
 */
#ifndef ST_DAEMON_CMD_ATTACH_H
#define ST_DAEMON_CMD_ATTACH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "ctl/daemon/model/state.h"

/* How a request ended: status an exit status (ctl/common/control.h),
 * count the calls redirected (or put back), text the inspector's line. */
typedef void (*st_attach_cb)(struct st_daemon *d, void *ctx, pid_t pid, int status, uint32_t count,
			     const char *text);

/* What an attach loads into a process, and what it tells its tracer. */
struct st_attach_what {
	/* libshimtrace-attach.so, libshimtrace.so and the families; to
	 * detach: libshimtrace.so */
	const char *const *libs;
	uint32_t nlibs;
	uint32_t stack_depth;  /* 1 + its SHIMTRACE_STACK_DEPTH; 0: its own */
	uint64_t stack_sample; /* its SHIMTRACE_STACK_SAMPLE; 0: its own */
	/* a JVMTI agent (an absolute path) and its options, loaded through
	 * the JVM's attach mechanism once the rest is; NULL: none */
	const char *jvm_agent, *jvm_options;
};

/*
 * Attaches process pid, for user as_uid (who must be root or its owner),
 * which then registers with the daemon of rundir (this one), loading and
 * telling it what w says; or detaches it. Returns 0, and cb is
 * called once, later (requests are carried out one at a time, in order);
 * or -errno with the reason in why (a process that is gone, not
 * dumpable, running a setuid program, another user's).
 */
int st_attach_start(struct st_daemon *d, uid_t as_uid, pid_t pid, bool detach, const char *rundir,
		    const struct st_attach_what *w, st_attach_cb cb, void *ctx, char *why,
		    size_t whylen);

/* Every tick: a request that waits for room for its inspector tries again. */
void st_attach_tick(struct st_daemon *d);

#endif /* ST_DAEMON_CMD_ATTACH_H */
