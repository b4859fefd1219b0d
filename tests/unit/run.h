/*
 * The main() of every unit test: one suite of one case, each test in its
 * own forked process (libcheck's default) with a time limit; the exit
 * status says whether all passed.
 */
#ifndef ST_TEST_RUN_H
#define ST_TEST_RUN_H

#include <check.h>
#include <stddef.h>

#define ST_TESTS(...) ((const TTest *const[]){ __VA_ARGS__ }), \
	sizeof((const TTest *const[]){ __VA_ARGS__ }) / sizeof(const TTest *)

static inline int st_run_tests(const char *name, const TTest *const *tests, size_t n)
{
	Suite *s = suite_create(name);
	TCase *tc = tcase_create(name);
	SRunner *sr;
	int failed;

	tcase_set_timeout(tc, 120);
	for (size_t i = 0; i < n; i++)
		tcase_add_test(tc, tests[i]);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}

#endif
