/*
 * Unit tests of the tracepoints recorded only on request
 * (ctl/common/catalog_defaults.c), which record's default disables after
 * FAMILY:*: for the jvm family, jvm:monitor_held (what --lock-order asks
 * for), a tracepoint of the catalog; none for the other families; no
 * room, -1.
 */
#include <check.h>
#include <string.h>

#include "ctl/common/catalog.h"
#include "tests/unit/run.h"

static bool in_catalog(const char *full)
{
	for (unsigned k = 0; k < st_catalog_count; k++)
		if (st_catalog_match(&st_catalog[k], full))
			return true;
	return false;
}

START_TEST(jvm_lock_order)
{
	const char *out[ST_CATALOG_ON_REQUEST_MAX];

	ck_assert_int_eq(st_catalog_on_request("jvm", out, ST_CATALOG_ON_REQUEST_MAX), 1);
	ck_assert_str_eq(out[0], "jvm:monitor_held");
	ck_assert_str_eq(out[0], ST_CATALOG_LOCK_ORDER);
	ck_assert(in_catalog(out[0]));
	ck_assert_int_eq(st_catalog_on_request("jvm", out, 0), -1);
}
END_TEST

START_TEST(other_families)
{
	const char *out[ST_CATALOG_ON_REQUEST_MAX];

	ck_assert_int_eq(st_catalog_on_request("pthread", out, ST_CATALOG_ON_REQUEST_MAX), 0);
	ck_assert_int_eq(st_catalog_on_request("futex", out, 0), 0);
	/* (a family whose name begins another's is not it) */
	ck_assert_int_eq(st_catalog_on_request("jv", out, ST_CATALOG_ON_REQUEST_MAX), 0);
	ck_assert_int_eq(st_catalog_on_request("jvm:", out, ST_CATALOG_ON_REQUEST_MAX), 0);
}
END_TEST

int main(void)
{
	return st_run_tests("catalog_defaults", ST_TESTS(jvm_lock_order, other_families));
}
