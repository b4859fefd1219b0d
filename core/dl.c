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
 * (or linked before libc), which `shimtrace record` does, or in a process
 * attached, whose calls to them attach.c redirects here. There, a dlopen
 * has what it loaded redirected too, and a dlclose what it unloaded
 * forgotten.
 */
#include <dlfcn.h>
#include <errno.h>
#include <link.h>

#include "attach.h"
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

/* The real functions: the loader's (RTLD_NEXT), or those attach found
 * the calls it redirected reached (attach.c). */
static dlopen_fn real_dlopen;
static dlmopen_fn real_dlmopen;
static dlclose_fn real_dlclose;

#define REAL(name)                                                         \
	name##_fn f_##name = st_load_acquire(&real_##name);                 \
	if (!f_##name) {                                                   \
		f_##name = (name##_fn)dlsym(RTLD_NEXT, #name);             \
		st_store_release(&real_##name, f_##name);                 \
	}

ST_API void *dlopen(const char *file, int mode)
{
	void *h;

	uint64_t ts[2];

	REAL(dlopen);
	if (!f_dlopen)
		return NULL;
	st__reg_now(&ts[0], &ts[1]);
	h = f_dlopen(file, mode);
	if (h && file) {
		report(ST_MAPS_DLOPEN, ts);
		st__attach_rebind();
	}
	return h;
}

ST_API void *dlmopen(Lmid_t lmid, const char *file, int mode)
{
	void *h;

	uint64_t ts[2];

	REAL(dlmopen);
	if (!f_dlmopen)
		return NULL;
	st__reg_now(&ts[0], &ts[1]);
	h = f_dlmopen(lmid, file, mode);
	if (h && file) {
		report(ST_MAPS_DLOPEN, ts);
		st__attach_rebind();
	}
	return h;
}

ST_API int dlclose(void *handle)
{
	int ret;

	REAL(dlclose);
	if (!f_dlclose)
		return -1;
	ret = f_dlclose(handle);
	report(ST_MAPS_DLCLOSE, NULL);
	st__attach_prune();
	return ret;
}

/* For attach: the hooks, so that objects a process attached loads later
 * are redirected too (local aliases: in a core loaded late, the exported
 * names resolve to the loader's). */
extern __typeof(dlopen) st__dl_dlopen
	__attribute__((alias("dlopen"), copy(dlopen), visibility("hidden")));
extern __typeof(dlmopen) st__dl_dlmopen
	__attribute__((alias("dlmopen"), copy(dlmopen), visibility("hidden")));
extern __typeof(dlclose) st__dl_dlclose
	__attribute__((alias("dlclose"), copy(dlclose), visibility("hidden")));

static struct st__wrap hooks[] = {
	{ "dlopen", (void *)st__dl_dlopen, (void **)&real_dlopen, NULL },
	{ "dlmopen", (void *)st__dl_dlmopen, (void **)&real_dlmopen, NULL },
	{ "dlclose", (void *)st__dl_dlclose, (void **)&real_dlclose, NULL },
};

static void __attribute__((constructor)) offer_hooks(void)
{
	st__attach_offer(hooks, sizeof(hooks) / sizeof(hooks[0]));
}
