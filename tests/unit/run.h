/*
 * The main() of every unit test: one suite of one case, each test in its
 * own forked process (libcheck's default) with a time limit; the exit
 * status says whether all passed.
 */
#ifndef ST_TEST_RUN_H
#define ST_TEST_RUN_H

#include <check.h>
#include <stddef.h>

/*
 * A check that passes says nothing. libcheck's ck_assert_msg, on which
 * all its checks are built, marks its place at each success (a write to
 * the parent process, so that a crash is told at the last check passed):
 * the loops of a million checks (the ring's, the rseq and reader tests')
 * spent most of their time in those system calls, 20 s a test on a VM
 * where one costs 7 us. A failure still says its file and line; a crash
 * says the test.
 */
#undef ck_assert_msg
#define ck_assert_msg(expr, ...)                                                           \
	((expr) ? (void)0                                                                  \
		: _ck_assert_failed(__FILE__, __LINE__, "Assertion '" #expr "' failed",      \
				    ##__VA_ARGS__))

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
