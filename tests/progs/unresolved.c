/*
 * unresolved: calls the wrappers of tests/progs/unres.spec, whose real
 * functions exist nowhere.
 * usage: unresolved call|lock
 * call: prints what the call wrapper returned (the spec's `fail` value);
 * lock: the lock wrapper must not return without locking: it aborts.
 */
#include <stdio.h>
#include <string.h>

#include "tests/progs/unresolved.h"

int main(int argc, char **argv)
{
	int x = 0;

	if (argc == 2 && strcmp(argv[1], "call") == 0) {
		printf("call returned %d\n", st_test_missing_call(&x));
		return 0;
	}
	if (argc == 2 && strcmp(argv[1], "lock") == 0) {
		printf("lock returned %d\n", st_test_missing_lock(&x));
		return 0;
	}
	return 2;
}
