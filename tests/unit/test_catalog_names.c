/*
 * Unit tests of the names record and enable add to the patterns
 * (ctl/common/catalog_names.c): patterns naming the jvm provider that
 * select an event that numbers classes and methods get jvm:class,
 * jvm:method and jvm:method_line, those a pattern already selects are not
 * added twice, and patterns that select no such event (other families,
 * the thread events, the names alone) or do not name the provider
 * ('*wait*', which must not make a session want a JVM) get nothing.
 */
#include <check.h>
#include <string.h>

#include "ctl/common/catalog.h"
#include "tests/unit/run.h"

/* The names added to patterns, joined by spaces. */
static const char *added(const char *const *patterns, int n)
{
	static char out[256];
	const char *add[ST_CATALOG_NAMES_MAX];
	int k = st_catalog_names(patterns, n, add);

	out[0] = '\0';
	for (int i = 0; i < k; i++) {
		if (i)
			strcat(out, " ");
		strcat(out, add[i]);
	}
	return out;
}

#define ADDED(...) added((const char *const[]){ __VA_ARGS__ }, \
			 (int)(sizeof((const char *const[]){ __VA_ARGS__ }) / sizeof(const char *)))

START_TEST(jvm_events)
{
	ck_assert_str_eq(ADDED("jvm:monitor_contended_*"), "jvm:class jvm:method jvm:method_line");
	ck_assert_str_eq(ADDED("pthread:*", "jvm:monitor_wait"), "jvm:class jvm:method jvm:method_line");
	ck_assert_str_eq(ADDED("jvm:monitor_*", "jvm:class"), "jvm:method jvm:method_line");
	ck_assert_str_eq(ADDED("jvm:monitor_*", "jvm:method*"), "jvm:class");
}
END_TEST

START_TEST(nothing)
{
	ck_assert_str_eq(ADDED("jvm:*"), "");
	ck_assert_str_eq(ADDED("*"), "");
	ck_assert_str_eq(ADDED("pthread:*", "malloc:*"), "");
	ck_assert_str_eq(ADDED("jvm:class"), "");
	ck_assert_str_eq(ADDED("jvm:thread_*"), "");
	ck_assert_str_eq(ADDED("*wait*"), "");
	ck_assert_str_eq(ADDED("*:monitor_contended_enter"), "");
	ck_assert_str_eq(added(NULL, 0), "");
}
END_TEST

int main(void)
{
	return st_run_tests("catalog_names", ST_TESTS(jvm_events, nothing));
}
