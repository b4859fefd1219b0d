/*
 * The tracepoints that name what others number: the JVM agent's
 * statedump (jvm:class, jvm:method, jvm:method_line) gives the names,
 * sources and line tables of the classes and methods that its monitor
 * events carry as numbers. Patterns that select a jvm event but none of
 * these would make a trace whose reports say "java method 13633 (bci 5)"
 * where they could say "Pool.take (Pool.java:88)": record and enable add
 * them (a statedump is written once per method and session, not per
 * event). Only for a pattern that names the jvm provider (jvm:...), the
 * one that loads the JVM agent into a process attached to (sessattach.c):
 * '*wait*' must not make a session want a JVM.
 */
#include <string.h>

#include "ctl/common/catalog.h"

static const char *const names[] = { "jvm:class", "jvm:method", "jvm:method_line" };
#define NNAMES (sizeof(names) / sizeof(names[0]))

static bool is_name(const struct st_catalog_entry *e)
{
	char full[160];

	snprintf(full, sizeof(full), "%s:%s", e->provider, e->name);
	for (size_t i = 0; i < NNAMES; i++)
		if (strcmp(full, names[i]) == 0)
			return true;
	return false;
}

static bool matched(const char *const *patterns, int n, const char *full)
{
	for (int i = 0; i < n; i++)
		if (fnmatch(patterns[i], full, 0) == 0)
			return true;
	return false;
}

/* Whether the entry has a field called name ("TYPE name, TYPE name"). */
static bool has_field(const struct st_catalog_entry *e, const char *name)
{
	size_t len = strlen(name);

	for (const char *f = e->fields; (f = strstr(f, name)); f += len)
		if (f > e->fields && f[-1] == ' ' && (f[len] == ',' || f[len] == '\0'))
			return true;
	return false;
}

/* Whether pattern (one that names the jvm provider) selects an event
 * that numbers a class or a method. */
static bool numbers(const char *pattern)
{
	if (strncmp(pattern, "jvm:", 4) != 0)
		return false;
	for (unsigned e = 0; e < st_catalog_count; e++)
		if (strcmp(st_catalog[e].provider, "jvm") == 0 && !is_name(&st_catalog[e]) &&
		    (has_field(&st_catalog[e], "class") || has_field(&st_catalog[e], "method")) &&
		    st_catalog_match(&st_catalog[e], pattern))
			return true;
	return false;
}

int st_catalog_names(const char *const *patterns, int n, const char **add)
{
	bool numbered = false;
	int k = 0;

	for (int i = 0; i < n && !numbered; i++)
		numbered = numbers(patterns[i]);
	if (!numbered)
		return 0;
	for (size_t i = 0; i < NNAMES; i++)
		if (!matched(patterns, n, names[i]))
			add[k++] = names[i];
	return k;
}
