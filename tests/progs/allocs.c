/*
 * Calls every C allocation function of the malloc family, and mmap (and
 * mmap64), mremap and munmap, with sizes no library uses (1001, 1003,
 * ...), so that malloc.test finds the program's own calls among the C
 * library's, and prints what must not change when traced: failures and
 * their errno, a fixed mremap (the optional argument passed on), bytes a
 * realloc kept.
 * (Built with -fno-builtin: the compiler would otherwise drop a malloc
 * freed at once, or call malloc for realloc(NULL, n).)
 *
 * allocs --no-pvalloc leaves pvalloc out, for allocators that do not
 * define it (jemalloc): the C library's then serves it from its own heap,
 * and the allocator's free crashes on the block, traced or not.
 */
#include <errno.h>
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

int main(int argc, char **argv)
{
	void *p = NULL, *q;
	char *s;
	int r;

	free(malloc(1001));
	free(calloc(7, 1003));
	s = realloc(NULL, 1005);
	strcpy(s, "kept");
	s = realloc(s, 100007);
	printf("realloc kept: %s\n", s);
	free(s);
	free(reallocarray(NULL, 3, 1009));
	r = posix_memalign(&p, 256, 1011);
	printf("posix_memalign: %d aligned %d\n", r, ((uintptr_t)p & 255) == 0);
	free(p);
	printf("posix_memalign bad alignment: %d\n", posix_memalign(&p, 3, 1013));
	free(aligned_alloc(64, 1017));
	free(memalign(512, 1019));
	free(valloc(1021));
	if (argc < 2 || strcmp(argv[1], "--no-pvalloc") != 0)
		free(pvalloc(1023));
	free(NULL);
	errno = 0;
	p = malloc(SIZE_MAX / 2);
	printf("huge malloc: %s %d\n", p ? "ptr" : "null", errno);

	p = mmap(NULL, 3 << 16, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	q = mremap(p, 3 << 16, 5 << 16, MREMAP_MAYMOVE);
	munmap(q, 5 << 16);
	errno = 0;
	p = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, 12345, 0);
	printf("mmap bad fd: %s %d\n", p == MAP_FAILED ? "failed" : "mapped", errno);
	/* a fixed mremap: the new address is the optional argument */
	p = mmap(NULL, 1 << 16, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	q = mmap(NULL, 1 << 16, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	((char *)p)[0] = 'x';
	s = mremap(p, 1 << 16, 1 << 16, MREMAP_MAYMOVE | MREMAP_FIXED, q);
	printf("mremap fixed: %s %c\n", s == q ? "moved there" : "elsewhere", s[0]);
	munmap(s, 1 << 16);
	/* mmap's other name, which programs built with 64-bit file offsets
	 * call */
	p = mmap64(NULL, 1 << 17, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	printf("mmap64: %s\n", p == MAP_FAILED ? "failed" : "mapped");
	munmap(p, 1 << 17);
	return 0;
}
