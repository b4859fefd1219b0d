/*
 * mangled: takes a lock in a function whose symbol is a C++ mangled name
 * (_ZN4conn10take_tableEi, conn::take_table(int)), built without debug
 * information, so that a report names it from the symbol table alone:
 * demangled, or raw with --no-demangle.
 *
 *   mangled N     N lock/unlock pairs from conn::take_table
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;

void take_table(int n) __asm__("_ZN4conn10take_tableEi");

__attribute__((noinline)) void take_table(int n)
{
	for (int i = 0; i < n; i++) {
		pthread_mutex_lock(&table_lock);
		pthread_mutex_unlock(&table_lock);
	}
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 10;

	take_table(n);
	printf("%d pairs\n", n);
	return 0;
}
