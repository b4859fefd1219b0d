/*
 * heapy: a heap whose report is known, for report.test (report malloc).
 *
 * Leaks 7 blocks of 100 bytes at LINE: leak, and 3 calloc'd blocks of
 * 4 x 64 bytes at LINE: leak-calloc; everything else is freed: blocks
 * that grow by realloc (the last one freed), an aligned one, and 50
 * short-lived ones. First, two frees the trace must call invalid, made
 * without crashing glibc: of a block from __libc_malloc (an allocation
 * no wrapper sees: "never allocated"), and, after that block was freed
 * and __libc_malloc handed the same address out again, of that address a
 * second time ("double free" to the trace, which saw one free of it).
 * Built with -fno-builtin: each call is made as written.
 */
#include <stdio.h>
#include <stdlib.h>

void *__libc_malloc(size_t size);

static void *keep[16];

static void leak(void)
{
	for (int i = 0; i < 7; i++)
		keep[i] = malloc(100); /* LINE: leak */
	for (int i = 0; i < 3; i++)
		keep[7 + i] = calloc(4, 64); /* LINE: leak-calloc */
}

static void tidy(void)
{
	char *p = malloc(10);
	void *a = NULL;

	for (int i = 0; i < 5; i++)
		p = realloc(p, 1000 * (size_t)(i + 1));
	free(p);
	if (posix_memalign(&a, 64, 200) == 0)
		free(a);
	for (int i = 0; i < 50; i++)
		free(malloc(16 + (size_t)i)); /* LINE: short-lived */
}

int main(void)
{
	void *u, *again;

	/* first: no traced free of these addresses can come before */
	u = __libc_malloc(48);
	free(u); /* LINE: unknown-free */
	again = __libc_malloc(48);
	free(again); /* LINE: double-free */
	leak();
	tidy();
	printf("same address again: %s\n", again == u ? "yes" : "no");
	return 0;
}
