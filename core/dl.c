/*
 * dlopen/dlmopen/dlclose hooks: after the loader changed the set of loaded
 * objects, tell the daemon, which reads the new mappings and writes
 * lttng_ust_lib:load/unload statedump events (so callers inside objects
 * loaded later are symbolised too). The hook waits for the daemon's answer:
 * the mappings must still be the ones to describe when the daemon looks
 * (a process that exits right after a dlclose would otherwise show none).
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

static void report(uint32_t kind)
{
	uint64_t c[2] = { 0, 0 };
	int saved_errno = errno;
	uint32_t busy;

	if (st__ctl_fd < 0)
		return;
	busy = st__tls.busy;
	st__tls.busy = 2;
	dl_iterate_phdr(read_counters, c);
	if (c[0] != last_adds || c[1] != last_subs) {
		last_adds = c[0];
		last_subs = c[1];
		st__control_maps_changed(kind);
		st__control_sync();
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

	REAL(dlopen);
	if (!real_dlopen)
		return NULL;
	h = real_dlopen(file, mode);
	if (h && file)
		report(ST_MAPS_DLOPEN);
	return h;
}

ST_API void *dlmopen(Lmid_t lmid, const char *file, int mode)
{
	void *h;

	REAL(dlmopen);
	if (!real_dlmopen)
		return NULL;
	h = real_dlmopen(lmid, file, mode);
	if (h && file)
		report(ST_MAPS_DLOPEN);
	return h;
}

ST_API int dlclose(void *handle)
{
	int ret;

	REAL(dlclose);
	if (!real_dlclose)
		return -1;
	ret = real_dlclose(handle);
	report(ST_MAPS_DLCLOSE);
	return ret;
}
