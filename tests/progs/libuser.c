/*
 * libuser: loads libraries built from dlprobe.c, then calls into them on
 * command, for the tests of files swapped under a traced process.
 *
 *   libuser N [--map FILE] LIBRARY... [-- LATER...]
 *
 * With --map, FILE is mapped (from its offset 0, read-only) and never
 * touched again: a mapping the daemon finds among the process's objects.
 * dlopens every LIBRARY and prints "loaded K"; at the first line read,
 * calls dlprobe_work(N) of each (N lock/unlock pairs each) and prints
 * "worked"; at the second, dlopens every LATER library, calls its
 * dlprobe_work(N) and prints "worked later"; ends at the end of its
 * input.
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static int (*work[512])(int);
static int k;

/* Loads argv[from..to) into work[]; 0, or 1 after an error line. */
static int load(char **argv, int from, int to)
{
	for (int i = from; i < to; i++) {
		void *h = dlopen(argv[i], RTLD_NOW | RTLD_LOCAL);

		if (!h || !(work[k] = (int (*)(int))dlsym(h, "dlprobe_work"))) {
			fprintf(stderr, "libuser: %s: %s\n", argv[i], dlerror());
			return 1;
		}
		k++;
	}
	return 0;
}

int main(int argc, char **argv)
{
	int n, later = argc, first_lib = 2;
	char line[64];

	if (argc < 3 || argc - 2 > 512) {
		fprintf(stderr, "usage: libuser N LIBRARY... [-- LATER...]\n");
		return 2;
	}
	n = atoi(argv[1]);
	for (int i = 2; i < argc; i++)
		if (strcmp(argv[i], "--") == 0)
			later = i;
	if (argc > 3 && strcmp(argv[2], "--map") == 0) {
		int fd = open(argv[3], O_RDONLY);

		if (fd < 0 || mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fd, 0) == MAP_FAILED) {
			perror(argv[3]);
			return 1;
		}
		close(fd);
		first_lib = 4;
	}
	if (load(argv, first_lib, later))
		return 1;
	printf("loaded %d\n", k);
	fflush(stdout);
	if (fgets(line, sizeof(line), stdin)) {
		for (int i = 0; i < k; i++)
			work[i](n);
		printf("worked\n");
		fflush(stdout);
	}
	if (later < argc && fgets(line, sizeof(line), stdin)) {
		int first = k;

		if (load(argv, later + 1, argc))
			return 1;
		for (int i = first; i < k; i++)
			work[i](n);
		printf("worked later\n");
		fflush(stdout);
	}
	while (fgets(line, sizeof(line), stdin))
		;
	return 0;
}
