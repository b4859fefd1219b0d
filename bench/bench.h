/*
 * bench.h: what the benchmark programs of bench/ share (each is one .c file
 * built by its script with cc, including this header from its directory):
 * a count argument checked, a clock in ns, and which object a function
 * resolved to.
 */
#ifndef SHIMTRACE_BENCH_H
#define SHIMTRACE_BENCH_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* dladdr */
#endif
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* s as a count from 1 to max; else "PROG: bad WHAT 'S'" and exit 2. */
static inline unsigned long bench_count(const char *prog, const char *what, const char *s,
					unsigned long max)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || end == s || *end || v == 0 || v > max || s[0] == '-') {
		fprintf(stderr, "%s: bad %s '%s'\n", prog, what, s);
		exit(2);
	}
	return v;
}

static inline double bench_clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/*
 * Short name of the object defining fn, as the dynamic linker bound it:
 * the programs print it as impl=, so that a script can tell whether a
 * preloaded wrapper really interposed.
 */
static inline const char *bench_impl_of(void *fn)
{
	Dl_info info;
	const char *slash;

	if (!dladdr(fn, &info) || !info.dli_fname || !*info.dli_fname)
		return "?";
	slash = strrchr(info.dli_fname, '/');
	return slash ? slash + 1 : info.dli_fname;
}

#endif
