/*
 * Finding the real function behind a wrapper, for generated code.
 *
 * dlsym(RTLD_NEXT) must be called from the wrapper library itself (RTLD_NEXT
 * is relative to the caller's object), hence a static inline. It runs on the
 * first call of each wrapper, which may come before any constructor. If
 * dlsym re-enters a wrapper of this library on the same thread (it does not
 * for the pthread family, it might for malloc), the inner call gets NULL and
 * its wrapper returns the spec's failure value instead of recursing.
 */
#ifndef ST_WRAPPERS_RESOLVE_H
#define ST_WRAPPERS_RESOLVE_H

#include <dlfcn.h>

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

#endif
