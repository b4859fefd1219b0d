/*
 * dlopen/dlmopen/dlclose hooks: after the loader changed the set of loaded
 * objects, tell the daemon, which reads the new mappings and writes
 * lttng_ust_lib:load/unload statedump events (so callers inside objects
 * loaded later are symbolised too). The hook waits for the daemon's answer:
 * the mappings must still be the ones to describe when the daemon looks
 * (a process that exits right after a dlclose would otherwise show none).
 *
 * A dlopen is dated before the loader runs: the library's constructors may
 * write events (its own tracepoints, or traced calls), and a reader that
 * symbolises them (babeltrace2 --debug-info) must meet the library's load
 * event first.
 *
 * These symbols interpose only when libshimtrace.so itself is preloaded
 * (or linked before libc), which `shimtrace record` does.
 */
#include <dlfcn.h>
#include <errno.h>
#include <link.h>

#include "internal.h"

static uint64_t last_adds, last_subs;

static int read_counters(struct dl_phdr_info *info, size_t size, void *arg)
{
	uint64_t *c = arg;

	if (size < offsetof(struct dl_phdr_info, dlpi_subs) + sizeof(info->dlpi_subs))
		return 1;
	c[0] = info->dlpi_adds;
	c[1] = info->dlpi_subs;
	return 1;
}

/* The loader's counters as the registration's statedump finds them: a
 * first dlopen that loads nothing new (RTLD_NOLOAD, a library loaded
 * already) must not make the process wait for the daemon to look at
 * objects it has. Called before the connection lock is taken (the
 * loader's locks come first). */
void st__dl_baseline(void)
{
	uint64_t c[2] = { 0, 0 };

	dl_iterate_phdr(read_counters, c);
	st_store_relaxed(&last_adds, c[0]);
	st_store_relaxed(&last_subs, c[1]);
}

/* ts: when the change began (before a dlopen), or 0 for now. */
static void report(uint32_t kind, const uint64_t *ts)
{
	uint64_t c[2] = { 0, 0 }, now[2];
	int saved_errno = errno;
	uint32_t busy;

	if (!st__control)
		return;
	busy = st__tls.busy;
	st__tls.busy = 2;
	/* (before the connection lock: the loader's locks come first) */
	dl_iterate_phdr(read_counters, c);
	if (c[0] != st_load_relaxed(&last_adds) || c[1] != st_load_relaxed(&last_subs)) {
		st_store_relaxed(&last_adds, c[0]);
		st_store_relaxed(&last_subs, c[1]);
		if (!ts) {
			st__reg_now(&now[0], &now[1]);
			ts = now;
		}
		st__reg_objects_changed(kind, ts[0], ts[1]);
	}
	st__tls.busy = busy;
	errno = saved_errno;
}

typedef void *(*dlopen_fn)(const char *, int);
typedef void *(*dlmopen_fn)(Lmid_t, const char *, int);
typedef int (*dlclose_fn)(void *);

#define REAL(name)                  \
	static name##_fn real_##name; \
	if (!real_##name)             \
		real_##name = (name##_fn)dlsym(RTLD_NEXT, #name);

ST_API void *dlopen(const char *file, int mode)
{
	void *h;

	uint64_t ts[2];

	REAL(dlopen);
	if (!real_dlopen)
		return NULL;
	st__reg_now(&ts[0], &ts[1]);
	h = real_dlopen(file, mode);
	if (h && file)
		report(ST_MAPS_DLOPEN, ts);
	return h;
}

ST_API void *dlmopen(Lmid_t lmid, const char *file, int mode)
{
	void *h;

	uint64_t ts[2];

	REAL(dlmopen);
	if (!real_dlmopen)
		return NULL;
	st__reg_now(&ts[0], &ts[1]);
	h = real_dlmopen(lmid, file, mode);
	if (h && file)
		report(ST_MAPS_DLOPEN, ts);
	return h;
}

ST_API int dlclose(void *handle)
{
	int ret;

	REAL(dlclose);
	if (!real_dlclose)
		return -1;
	ret = real_dlclose(handle);
	report(ST_MAPS_DLCLOSE, NULL);
	return ret;
}
