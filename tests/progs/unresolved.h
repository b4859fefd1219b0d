/* The functions of tests/progs/unres.spec, which nothing defines: the
 * wrappers in libunres are all there is. */
#ifndef ST_TESTS_UNRESOLVED_H
#define ST_TESTS_UNRESOLVED_H

int st_test_missing_call(int *x);
int st_test_missing_lock(int *x);

#endif
