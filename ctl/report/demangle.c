/*
 * C++ names demangled (see demangle.h) with __cxa_demangle, libstdc++'s:
 * the demangler of the GCC that built the programs traced here, kept in
 * step with the Itanium C++ ABI they follow, and already on any machine
 * that runs C++ (libiberty's, its twin, is only a static library in
 * Debian). A name it does not take (a C name, a truncated or foreign
 * one) is shown as it is.
 */
#include <stdlib.h>
#include <string.h>

#include "ctl/report/demangle.h"
#include "ctl/report/grow.h"

/* libstdc++'s (cxxabi.h, for C++): a malloc'd string, or NULL with
 * *status set. */
extern char *__cxa_demangle(const char *mangled, char *out, size_t *len, int *status);

bool st_demangle_names = true;

const char *st_demangle(struct st_demangler *d, const char *name)
{
	int64_t i;
	int status = 0;
	char *out;

	/* (the Itanium ABI's mangled names begin _Z) */
	if (!st_demangle_names || !name || strncmp(name, "_Z", 2) != 0)
		return name;
	i = st_map_get(&d->ix, (uint64_t)(uintptr_t)name, 0);
	if (i >= 0)
		return d->names[i] ? d->names[i] : name;
	out = __cxa_demangle(name, NULL, NULL, &status);
	if (status != 0) {
		free(out);
		out = NULL;
	}
	if (st_grow(&d->names, &d->cap, d->n, sizeof(*d->names)) < 0 ||
	    st_map_put(&d->ix, (uint64_t)(uintptr_t)name, 0, d->n) < 0) {
		free(out);
		return name;
	}
	d->names[d->n++] = out; /* (NULL: not demangled, and not tried again) */
	return out ? out : name;
}

void st_demangler_free(struct st_demangler *d)
{
	for (uint32_t i = 0; i < d->n; i++)
		free(d->names[i]);
	free(d->names);
	st_map_free(&d->ix);
	memset(d, 0, sizeof(*d));
}
