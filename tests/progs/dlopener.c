/*
 * dlopener: loads LIBRARY with dlopen, calls its dlprobe_work(N), closes
 * it, and takes a lock of its own before and after.
 *
 *   dlopener LIBRARY N            once
 *   dlopener --stdin LIBRARY N    prints "ready PID", then once per line
 *                                 read (a round, ending with the line
 *                                 "round K"), until the end of input
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

/* Not inlined, with a local the compiler keeps: at any optimisation level
 * the caller is a function of its own whose lines babeltrace2 can find. */
static __attribute__((noinline)) void main_work(void)
{
	volatile int touched = 0;

	pthread_mutex_lock(&lock);
	touched++;
	pthread_mutex_unlock(&lock);
}

static int one_round(const char *lib, int n)
{
	int (*work)(int);
	void *h;

	main_work();
	h = dlopen(lib, RTLD_NOW);
	if (!h) {
		fprintf(stderr, "dlopen: %s\n", dlerror());
		return 1;
	}
	work = (int (*)(int))dlsym(h, "dlprobe_work");
	if (!work)
		return 1;
	printf("dlprobe_work: %d\n", work(n));
	dlclose(h);
	main_work();
	return 0;
}

int main(int argc, char **argv)
{
	char line[64];
	long r = 0;

	if (argc > 1 && strcmp(argv[1], "--stdin") == 0) {
		if (argc < 3)
			return 2;
		printf("ready %d\n", (int)getpid());
		fflush(stdout);
		while (fgets(line, sizeof(line), stdin)) {
			if (one_round(argv[2], argc > 3 ? atoi(argv[3]) : 10))
				return 1;
			printf("round %ld\n", ++r);
			fflush(stdout);
		}
		printf("done\n");
		return 0;
	}
	if (argc < 2)
		return 2;
	return one_round(argv[1], argc > 2 ? atoi(argv[2]) : 10);
}
