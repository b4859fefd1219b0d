/*
 * Finding the real function behind a wrapper, for generated code.
 *
 * dlsym(RTLD_NEXT) must be called from the wrapper library itself (RTLD_NEXT
 * is relative to the caller's object), hence a static inline. It runs on the
 * first call of each wrapper, which may come before any constructor. If
 * dlsym re-enters a wrapper of this library on the same thread (it does not
 * for the pthread family, it might for malloc), the inner call gets NULL and
 * its wrapper returns the spec's failure value instead of recursing.
 *
 * Lock and unlock wrappers do not return without doing their job: most
 * callers ignore the result, and would run unprotected. They say why and
 * abort (st__wrap_unresolved).
 *
 * The tracer never calls a function a family wraps, so no wrapper needs to
 * tell the tracer's calls from the program's: libshimtrace.so makes system
 * calls itself (core/sys.h), the hand-written helpers of the families call
 * the real functions they are given (via) or system calls, and what dlsym
 * allocates goes to the bootstrap arena (malloc family). An event a
 * wrapper writes while the tracer runs on its thread (a signal handler's
 * call, say) is dropped by the busy flag of st_event_write.
 */
#ifndef ST_WRAPPERS_RESOLVE_H
#define ST_WRAPPERS_RESOLVE_H

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/atomic.h"

static __thread int st__resolving __attribute__((tls_model("initial-exec")));

static inline void *st__wrap_resolve(const char *name)
{
	void *f;

	if (st__resolving)
		return NULL;
	st__resolving = 1;
	f = dlsym(RTLD_NEXT, name);
	st__resolving = 0;
	return f;
}

static inline __attribute__((noreturn, cold)) void st__wrap_unresolved(const char *name)
{
	static const char a[] = "shimtrace: cannot find the real ", b[] = "(): aborting\n";

	syscall(SYS_write, 2, a, sizeof(a) - 1);
	syscall(SYS_write, 2, name, strlen(name));
	syscall(SYS_write, 2, b, sizeof(b) - 1);
	abort();
}

#endif
