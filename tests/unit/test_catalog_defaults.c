/*
 * Unit tests of record's patterns when no -e is given
 * (ctl/common/catalog_defaults.c): "FAMILY:*" for a family whose
 * tracepoints are all recorded by default; for the jvm family, the name
 * of each tracepoint but jvm:monitor_held (the lock order, recorded on
 * request), the names' statedump among them; no room, -1.
 */
#include <check.h>
#include <string.h>

#include "ctl/common/catalog.h"
#include "tests/unit/run.h"

static char out[ST_CATALOG_DEFAULTS_MAX][ST_CATALOG_PATTERN_SIZE];

/* The patterns for family, joined by spaces ("-1" when no room). */
static const char *defaults(const char *family, int room)
{
	static char joined[ST_CATALOG_DEFAULTS_MAX * ST_CATALOG_PATTERN_SIZE];
	int n = st_catalog_defaults(family, out, room);

	if (n < 0)
		return "-1";
	joined[0] = '\0';
	for (int i = 0; i < n; i++) {
		if (i)
			strcat(joined, " ");
		strcat(joined, out[i]);
	}
	return joined;
}

static const struct st_catalog_entry *entry(const char *provider, const char *name)
{
	for (unsigned k = 0; k < st_catalog_count; k++)
		if (strcmp(st_catalog[k].provider, provider) == 0 &&
		    strcmp(st_catalog[k].name, name) == 0)
			return &st_catalog[k];
	ck_abort_msg("no %s:%s in the catalog", provider, name);
	return NULL;
}

START_TEST(whole_families)
{
	ck_assert_str_eq(defaults("pthread", 1), "pthread:*");
	ck_assert_str_eq(defaults("futex", ST_CATALOG_DEFAULTS_MAX), "futex:*");
	ck_assert_str_eq(defaults("pthread", 0), "-1");
}
END_TEST

START_TEST(jvm_without_the_order)
{
	const char *names[ST_CATALOG_NAMES_MAX];
	const char *p[ST_CATALOG_DEFAULTS_MAX];
	unsigned jvm = 0;
	int n;

	for (unsigned k = 0; k < st_catalog_count; k++)
		jvm += strcmp(st_catalog[k].provider, "jvm") == 0;
	ck_assert_str_eq(defaults("jvm", ST_CATALOG_DEFAULTS_MAX),
			 "jvm:thread_start jvm:thread_end jvm:class jvm:method jvm:method_line "
			 "jvm:monitor_contended_enter jvm:monitor_contended_entered "
			 "jvm:monitor_wait jvm:monitor_waited");
	n = st_catalog_defaults("jvm", out, ST_CATALOG_DEFAULTS_MAX);
	ck_assert_int_eq(n, (int)jvm - 1);
	/* (the names are among them: record adds none) */
	for (int i = 0; i < n; i++)
		p[i] = out[i];
	ck_assert_int_eq(st_catalog_names(p, n, names), 0);
	ck_assert_str_eq(defaults("jvm", (int)jvm - 2), "-1");
}
END_TEST

START_TEST(on_request)
{
	ck_assert(st_catalog_on_request(entry("jvm", "monitor_held")));
	ck_assert(!st_catalog_on_request(entry("jvm", "monitor_contended_enter")));
	ck_assert(!st_catalog_on_request(entry("jvm", "thread_start")));
	ck_assert(!st_catalog_on_request(entry("pthread", "mutex_lock")));
	ck_assert(st_catalog_match(entry("jvm", "monitor_held"), "jvm:*"));
}
END_TEST

int main(void)
{
	return st_run_tests("catalog_defaults",
			    ST_TESTS(whole_families, jvm_without_the_order, on_request));
}
