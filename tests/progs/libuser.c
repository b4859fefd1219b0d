/*
 * libuser: loads libraries built from dlprobe.c, then calls into them on
 * command, for the tests of files swapped under a traced process.
 *
 *   libuser N LIBRARY...
 *
 * dlopens every LIBRARY and prints "loaded K"; at the first line read,
 * calls dlprobe_work(N) of each (N lock/unlock pairs each) and prints
 * "worked"; ends at the end of its input.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	int (*work[512])(int);
	int n, k = 0;
	char line[64];

	if (argc < 3 || argc - 2 > 512) {
		fprintf(stderr, "usage: libuser N LIBRARY...\n");
		return 2;
	}
	n = atoi(argv[1]);
	for (int i = 2; i < argc; i++) {
		void *h = dlopen(argv[i], RTLD_NOW | RTLD_LOCAL);

		if (!h || !(work[k] = (int (*)(int))dlsym(h, "dlprobe_work"))) {
			fprintf(stderr, "libuser: %s: %s\n", argv[i], dlerror());
			return 1;
		}
		k++;
	}
	printf("loaded %d\n", k);
	fflush(stdout);
	if (fgets(line, sizeof(line), stdin)) {
		for (int i = 0; i < k; i++)
			work[i](n);
		printf("worked\n");
		fflush(stdout);
	}
	while (fgets(line, sizeof(line), stdin))
		;
	return 0;
}
